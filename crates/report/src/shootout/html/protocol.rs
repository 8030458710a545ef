//! The Protocol section: how the run was measured, its levels, kernel settings, toolchains,
//! commands and the suite file, so it can be repeated.

use std::fmt::Write as _;

use super::numbers::short;
use super::utc;
use crate::shootout::markdown::cpus;
use crate::shootout::svg::esc;
use crate::shootout::{ShootoutResults, TargetResult};
use crate::units::bytes_compact;

/// The whole Protocol section.
pub(super) fn protocol(out: &mut String, r: &ShootoutResults) {
    let p = &r.protocol;
    out.push_str("<section id=\"protocol\">\n<h2>Protocol</h2>\n<dl class=\"kv\">\n");
    let mut kv = |k: &str, v: String| {
        let _ = writeln!(out, "<dt>{}</dt><dd>{}</dd>", esc(k), v);
    };
    kv("command", format!("<code>{}</code>", esc(&p.command)));
    kv(
        "suite",
        format!("{} ({})", esc(&r.suite.name), esc(&r.suite.source)),
    );
    kv("foxbench", esc(&p.foxbench_version));
    kv("started", esc(&utc(p.started_unix_s)));
    kv(
        "run time",
        format!(
            "{:.0} s{}",
            r.elapsed_s,
            if r.interrupted { " (interrupted)" } else { "" }
        ),
    );
    kv("CPU", format!("{} · {} online", esc(&p.cpu_model), p.nproc));
    kv("memory", esc(&bytes_compact(p.mem_total_bytes)));
    kv("kernel", esc(&p.kernel));
    kv(
        "ulimit -n",
        format!("{} (hard {})", p.ulimit_nofile.0, p.ulimit_nofile.1),
    );
    kv(
        "pinning",
        format!(
            "load generator on CPU {} with {} thread{}; servers on CPU {}",
            esc(&cpus(&p.client_cpus)),
            p.client_threads,
            if p.client_threads == 1 { "" } else { "s" },
            esc(&cpus(&p.server_cpus))
        ),
    );
    kv(
        "warm-up",
        format!(
            "up to {} s per level in {} s slices, until throughput is steady",
            short(p.plan.warmup_max_s),
            short(p.plan.warmup_slice_s)
        ),
    );
    kv(
        "probing",
        format!(
            "every {} s; request timeout {} s; stop grace {} s",
            short(p.plan.sample_interval_s),
            short(p.plan.timeout_s),
            short(p.plan.stop_grace_s)
        ),
    );
    out.push_str("</dl>\n");

    out.push_str(
        "<h3>Levels</h3>\n<div class=\"scroll\"><table>\n<thead><tr><th>level</th><th class=\"n\">connections</th><th class=\"n\">measured</th>\
         <th>keep-alive</th><th class=\"n\">repeats</th></tr></thead>\n<tbody>\n",
    );
    for l in &p.plan.levels {
        let what = match (l.duration_s, l.requests) {
            (_, Some(n)) => format!(
                "{n} requests{}",
                l.max_duration_s
                    .map(|s| format!(" (capped at {} s)", short(s)))
                    .unwrap_or_default()
            ),
            (Some(d), None) => format!("{} s", short(d)),
            (None, None) => "–".into(),
        };
        let ka = match l.keepalive {
            Some(false) => "no",
            Some(true) => "yes",
            None => "as the scenario",
        };
        let _ = writeln!(
            out,
            "<tr><th scope=\"row\">{}</th><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{ka}</td><td class=\"n\">{}</td></tr>",
            esc(&l.name),
            l.connections,
            esc(&format!("{what}{}", super::levels::open_model_text(l))),
            l.repeats
        );
    }
    out.push_str("</tbody></table></div>\n");

    let pairs = |out: &mut String,
                 title: &str,
                 head: &str,
                 m: &std::collections::BTreeMap<String, String>| {
        let _ = write!(
            out,
            "<h3>{}</h3>\n<div class=\"scroll\"><table>\n<thead><tr><th>{}</th><th>value</th></tr></thead>\n<tbody>\n",
            esc(title),
            esc(head)
        );
        if m.is_empty() {
            out.push_str("<tr><td colspan=\"2\" class=\"dim\">none recorded</td></tr>\n");
        }
        for (k, v) in m {
            let _ = writeln!(
                out,
                "<tr><td><code>{}</code></td><td><code>{}</code></td></tr>",
                esc(k),
                esc(v)
            );
        }
        out.push_str("</tbody></table></div>\n");
    };
    pairs(out, "Kernel settings", "sysctl", &p.sysctl);
    pairs(out, "Toolchains", "command", &p.toolchains);

    let commands: Vec<&TargetResult> = r
        .targets
        .iter()
        .filter(|t| t.build.is_some() || t.start_command.is_some())
        .collect();
    if !commands.is_empty() {
        out.push_str("<details><summary>Build and start commands</summary><div class=\"scroll\"><table>\n<thead><tr><th>target</th><th>build</th><th>start</th></tr></thead>\n<tbody>\n");
        for t in commands {
            let _ = writeln!(
                out,
                "<tr><th scope=\"row\">{}</th><td><code>{}</code></td><td><code>{}</code></td></tr>",
                esc(&t.name),
                esc(t.build.as_ref().map(|b| b.command.as_str()).unwrap_or("–")),
                esc(t.start_command.as_deref().unwrap_or("–"))
            );
        }
        out.push_str("</tbody></table></div></details>\n");
    }
    let _ = writeln!(
        out,
        "<details><summary>The suite file ({})</summary><pre>{}</pre></details>\n</section>",
        esc(&r.suite.source),
        esc(&r.suite.text)
    );
}
