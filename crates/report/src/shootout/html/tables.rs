//! The Results section's tables: the four metric tables, then targets, problems,
//! verification and the diagnosis of every cell.

use std::fmt::Write as _;

use super::levels::{level, level_text};
use super::swatch;
use crate::human_us;
use crate::shootout::markdown::{build_text, mark, spread};
use crate::shootout::svg::esc;
use crate::shootout::{
    Bottleneck, Cell, CellStatus, CellSummary, Outcome, ShootoutResults, TargetResult,
};
use crate::units::{bytes_compact, rate_suffixed};

/// Which end of a metric table's column is best.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Best {
    High,
    Low,
}

/// The four metric tables, side by side while they are narrow, and the marks' legend.
pub(super) fn tables(out: &mut String, r: &ShootoutResults, rows: &[&TargetResult]) {
    // Two tables side by side only while they are narrow enough to read: few columns, and
    // no long row name (a parameter row's, `java-httpserver[jvm=-Xmx16m -XX:+UseZGC]`).
    let narrow = rows.iter().all(|t| t.name.chars().count() <= 28);
    let class = if r.columns().len() <= 4 && narrow {
        "metric two"
    } else {
        "metric"
    };
    let _ = writeln!(out, "<div class=\"{class}\">");
    metric_table(
        out,
        r,
        rows,
        "Requests per second",
        "median of the repeats; hover for the spread",
        Best::High,
        |s| Some((s.rps_median, rate_suffixed(s.rps_median))),
    );
    metric_table(
        out,
        r,
        rows,
        "p99 latency",
        "99th percentile of all repeats merged",
        Best::Low,
        |s| s.latency.at(99.0).map(|us| (us, human_us(us))),
    );
    metric_table(
        out,
        r,
        rows,
        "Server CPU per request",
        "median of the repeats",
        Best::Low,
        |s| {
            s.server_cpu_us_per_request
                .map(|us| (us, format!("{us:.1} µs")))
        },
    );
    metric_table(
        out,
        r,
        rows,
        "Peak RSS",
        "of the server's process tree, over all repeats",
        Best::Low,
        |s| Some((s.rss_peak_bytes as f64, bytes_compact(s.rss_peak_bytes))),
    );
    out.push_str("</div>\n");
    out.push_str(
        "<p class=\"note\">Best of each column in bold. Marks: <span class=\"mk\">ᶜ</span> client-bound \
         (foxbench's CPU was saturated: the server may be faster), <span class=\"mk\">ᵗ</span> one server thread saturated, \
         <span class=\"mk\">ⁿ</span> neither side's CPU saturated (contention, a pool or a lock), \
         <span class=\"mk\">ˡ</span> lock-bound (CPUs not busy, most threads waiting on a futex), \
         <span class=\"mk\">ᵖ</span> pool-bound (a small steady pool of connections to a service, with more requests in flight than it holds), \
         <span class=\"mk\">ᵇ</span> waiting on the backend (threads on sockets to an idle-ish service), <span class=\"mk\">ᵃ</span> Nagle (responses waited for delayed ACKs: no TCP_NODELAY), <span class=\"mk\">ᵒ</span> listen overflow, <span class=\"mk\">ᵐ</span> TCP memory pressure, <span class=\"mk\">ʳ</span> retransmits, <span class=\"mk\">ᵉ</span> errors. \
         Unmarked cells were server-CPU-bound. Hover a cell for the figures behind its mark.</p>\n",
    );
}

fn metric_table<F>(
    out: &mut String,
    r: &ShootoutResults,
    rows: &[&TargetResult],
    title: &str,
    sub: &str,
    best: Best,
    f: F,
) where
    F: Fn(&CellSummary) -> Option<(f64, String)>,
{
    let cols = r.columns();
    let _ = write!(
        out,
        "<div><h3>{}</h3><div class=\"scroll\"><table>\n<thead><tr><th>target</th>",
        esc(title)
    );
    for (s, l, _) in &cols {
        let tip = level(r, l).map(level_text).unwrap_or_default();
        let _ = write!(
            out,
            "<th class=\"n\" title=\"{}\">{}</th>",
            esc(&tip),
            esc(&r.column_name(s, l))
        );
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    // The best value of each column, when at least two targets have one.
    let bests: Vec<Option<f64>> = cols
        .iter()
        .map(|(s, l, _)| {
            let v: Vec<f64> = rows
                .iter()
                .filter_map(|t| f(t.cell(s, l)?.summary.as_ref()?).map(|x| x.0))
                .filter(|v| v.is_finite())
                .collect();
            if v.len() < 2 {
                return None;
            }
            Some(match best {
                Best::High => v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                Best::Low => v.iter().copied().fold(f64::INFINITY, f64::min),
            })
        })
        .collect();
    for t in rows {
        let _ = write!(
            out,
            "<tr><th scope=\"row\">{}{}</th>",
            swatch(r, t),
            esc(&t.name)
        );
        for ((s, l, _), b) in cols.iter().zip(&bests) {
            out.push_str(&metric_cell(t.cell(s, l), &f, *b));
        }
        out.push_str("</tr>\n");
    }
    let _ = writeln!(
        out,
        "</tbody></table></div><p class=\"note\">{}</p></div>",
        esc(sub)
    );
}

fn metric_cell<F>(c: Option<&Cell>, f: &F, best: Option<f64>) -> String
where
    F: Fn(&CellSummary) -> Option<(f64, String)>,
{
    let Some(c) = c else {
        return "<td class=\"n dim\">–</td>".into();
    };
    match (&c.summary, c.status) {
        (Some(s), _) => match f(s) {
            Some((v, text)) => {
                let mut tip = format!(
                    "{} req/s (min {}, max {}) over {} repeat{}",
                    rate_suffixed(s.rps_median),
                    rate_suffixed(s.rps_min),
                    rate_suffixed(s.rps_max),
                    c.repeats.len(),
                    if c.repeats.len() == 1 { "" } else { "s" }
                );
                if let Some(d) = &c.diagnosis {
                    let _ = write!(tip, "\n{}: {}", d.bottleneck.as_str(), d.detail);
                }
                let m = c
                    .diagnosis
                    .as_ref()
                    .map(|d| mark(d.bottleneck).trim())
                    .unwrap_or("");
                let mk = if m.is_empty() {
                    String::new()
                } else {
                    format!("<span class=\"mk\">{m}</span>")
                };
                let class = if best == Some(v) { "n best" } else { "n" };
                format!(
                    "<td class=\"{class}\" title=\"{}\">{}{mk}</td>",
                    esc(&tip),
                    esc(&text)
                )
            }
            None => "<td class=\"n dim\">–</td>".into(),
        },
        (None, status) => {
            let word = match status {
                CellStatus::Excluded => "excluded",
                CellStatus::Failed => "failed",
                CellStatus::Interrupted => "interrupted",
                CellStatus::Measured => "–",
            };
            format!(
                "<td class=\"n dim\" title=\"{}\">{word}</td>",
                esc(c.message.as_deref().unwrap_or(""))
            )
        }
    }
}

fn outcome_badge(o: Outcome) -> String {
    let class = match o {
        Outcome::Measured => "b-good",
        Outcome::Skipped | Outcome::Interrupted => "b-warn",
        _ => "b-bad",
    };
    format!("<span class=\"badge {class}\">{}</span>", o.as_str())
}

/// One row per target: outcome, artifact, build, startup and memory.
pub(super) fn targets_table(out: &mut String, r: &ShootoutResults) {
    out.push_str(
        "<h3 id=\"targets\">Targets</h3>\n<div class=\"scroll\"><table>\n<thead><tr><th>target</th><th>language</th><th>outcome</th>\
         <th class=\"n\">artifact</th><th class=\"n\">build</th><th class=\"n\">startup</th><th class=\"n\">idle RSS</th>\
         <th class=\"n\">peak RSS</th><th class=\"n\">CPU/request (median)</th></tr></thead>\n<tbody>\n",
    );
    let dash = || "–".to_string();
    for t in &r.targets {
        let artifact = t
            .build
            .as_ref()
            .and_then(|b| b.artifact_bytes)
            .map(bytes_compact)
            .unwrap_or_else(dash);
        let artifact_tip = t
            .build
            .as_ref()
            .and_then(|b| b.artifact.clone())
            .unwrap_or_default();
        let build = t.build.as_ref().map(build_text).unwrap_or_else(dash);
        let build_tip = t
            .build
            .as_ref()
            .map(|b| b.command.clone())
            .unwrap_or_default();
        let idle_tip = t
            .idle
            .map(|i| {
                format!(
                    "PSS {}, {} thread{}, {} process{}, {} fds",
                    bytes_compact(i.pss_bytes),
                    i.threads,
                    if i.threads == 1 { "" } else { "s" },
                    i.processes,
                    if i.processes == 1 { "" } else { "es" },
                    i.fds
                )
            })
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "<tr><th scope=\"row\">{}{}</th><td>{}</td><td>{}</td><td class=\"n\" title=\"{}\">{}</td><td class=\"n\" title=\"{}\">{}</td>\
             <td class=\"n\" title=\"{}\">{}</td><td class=\"n\" title=\"{}\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            swatch(r, t),
            esc(&t.name),
            esc(&t.language),
            outcome_badge(t.outcome),
            esc(&artifact_tip),
            esc(&artifact),
            esc(&build_tip),
            esc(&build),
            esc(t.start_command.as_deref().unwrap_or("")),
            esc(&t.startup_ms.map(|ms| format!("{ms:.0} ms")).unwrap_or_else(dash)),
            esc(&idle_tip),
            esc(&t.idle.map(|i| bytes_compact(i.rss_bytes)).unwrap_or_else(dash)),
            esc(&t.rss_peak_bytes().map(bytes_compact).unwrap_or_else(dash)),
            esc(&t.cpu_us_per_request_median().map(|us| format!("{us:.1} µs")).unwrap_or_else(dash)),
        );
    }
    out.push_str(
        "</tbody></table></div>\n<p class=\"note\">Artifact: the binary, class directory or source that runs. \
         Startup: from spawn to the first good response. Idle RSS: once ready, before any load. \
         CPU/request: the median over the target's measured keep-alive cells of the first scenario.</p>\n",
    );
}

/// The targets that were skipped, failed or left a message, with their last output.
pub(super) fn problems(out: &mut String, r: &ShootoutResults) {
    let problems: Vec<&TargetResult> = r
        .targets
        .iter()
        .filter(|t| t.outcome != Outcome::Measured || t.message.is_some())
        .collect();
    if problems.is_empty() {
        return;
    }
    out.push_str("<h3 id=\"problems\">Skipped and failed</h3>\n<ul class=\"problems\">\n");
    for t in problems {
        let _ = write!(
            out,
            "<li><b>{}</b> {} {}",
            esc(&t.name),
            outcome_badge(t.outcome),
            esc(t.message.as_deref().unwrap_or("no message"))
        );
        if let Some(tail) = t.log_tail.as_deref().filter(|s| !s.trim().is_empty()) {
            let _ = write!(
                out,
                "<details><summary>last lines it printed</summary><pre>{}</pre></details>",
                esc(tail)
            );
        }
        out.push_str("</li>\n");
    }
    out.push_str("</ul>\n");
}

/// One row per target and verified scenario.
pub(super) fn verification(out: &mut String, r: &ShootoutResults) {
    out.push_str(
        "<h3 id=\"verification\">Verification</h3>\n<div class=\"scroll\"><table>\n<thead><tr><th>target</th><th>scenario</th>\
         <th>result</th><th class=\"n\">images</th><th>keep-alive</th><th>failed checks</th></tr></thead>\n<tbody>\n",
    );
    let mut any = false;
    for t in &r.targets {
        for v in &t.verify {
            any = true;
            let failed: Vec<String> = v
                .checks
                .iter()
                .filter(|c| !c.passed)
                .map(|c| match &c.detail {
                    Some(d) => format!("{}: {d}", c.name),
                    None => c.name.clone(),
                })
                .collect();
            let checks_tip: Vec<String> = v
                .checks
                .iter()
                .map(|c| format!("{} {}", if c.passed { "✓" } else { "✗" }, c.name))
                .collect();
            let images = match (v.images_seen, v.images_expected) {
                (Some(s), Some(e)) => format!("{s}/{e}"),
                _ => "–".into(),
            };
            let ka = match v.keepalive {
                Some(true) => "kept alive",
                Some(false) => "closes connections",
                None => "–",
            };
            let _ = writeln!(
                out,
                "<tr><th scope=\"row\">{}{}</th><td>{}</td><td title=\"{}\">{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"why\">{}</td></tr>",
                swatch(r, t),
                esc(&t.name),
                esc(&v.scenario),
                esc(&checks_tip.join("\n")),
                if v.passed {
                    "<span class=\"badge b-good\">passed</span>"
                } else {
                    "<span class=\"badge b-bad\">failed</span>"
                },
                esc(&images),
                ka,
                esc(&failed.join("; ")),
            );
        }
    }
    if !any {
        out.push_str("<tr><td colspan=\"6\" class=\"dim\">no target was verified</td></tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
    for (scenario, names) in r.not_implemented() {
        let _ = writeln!(
            out,
            "<p class=\"note\">{}: not implemented by {} (skipped).</p>",
            esc(&scenario),
            esc(&names.join(", "))
        );
    }
}

fn bottleneck_badge(b: Bottleneck) -> String {
    let class = match b {
        Bottleneck::ServerCpuBound => "b-good",
        Bottleneck::ClientBound
        | Bottleneck::ServerThreadBound
        | Bottleneck::ServiceCpuBound
        | Bottleneck::Neither
        | Bottleneck::LockBound
        | Bottleneck::PoolBound
        | Bottleneck::BackendWait => "b-warn",
        Bottleneck::Errors
        | Bottleneck::Nagle
        | Bottleneck::ListenOverflow
        | Bottleneck::MemoryPressure
        | Bottleneck::Retransmits => "b-bad",
    };
    format!("<span class=\"badge {class}\">{}</span>", b.as_str())
}

/// One row per cell: its spread, warm-up, errors and bottleneck.
pub(super) fn diagnosis(out: &mut String, r: &ShootoutResults) {
    out.push_str(
        "<h3 id=\"diagnosis\">Diagnosis per cell</h3>\n<div class=\"scroll\"><table>\n<thead><tr><th>target</th><th>cell</th>\
         <th class=\"n\">req/s (min–max)</th><th class=\"n\">warm-up</th><th class=\"n\">errors</th><th>bottleneck</th><th>why</th></tr></thead>\n<tbody>\n",
    );
    let mut any = false;
    for t in &r.targets {
        for c in &t.cells {
            any = true;
            let spread = spread(c);
            let errors = c
                .summary
                .as_ref()
                .map(|s| {
                    let n = s.errors + s.failed_status;
                    if n == 0 {
                        "0".to_string()
                    } else {
                        format!("{n} of {}", s.sent)
                    }
                })
                .unwrap_or_else(|| "–".into());
            let (b, why) = match (&c.diagnosis, &c.message) {
                (Some(d), _) => (bottleneck_badge(d.bottleneck), d.detail.clone()),
                (None, Some(m)) => (
                    format!("<span class=\"badge\">{}</span>", c.status.as_str()),
                    m.clone(),
                ),
                (None, None) => ("–".into(), String::new()),
            };
            let why = c.why_with_notes(why);
            let dumps: String = c
                .thread_dumps
                .iter()
                .map(|d| {
                    format!(
                        " <a href=\"{}\">thread dump of {}</a> ({})",
                        esc(&d.path),
                        d.pid,
                        d.slice.label()
                    )
                })
                .collect();
            let _ = writeln!(
                out,
                "<tr><th scope=\"row\">{}{}</th><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{:.1} s</td><td class=\"n\">{}</td><td>{}</td><td class=\"why\">{}{dumps}</td></tr>",
                swatch(r, t),
                esc(&t.name),
                esc(&r.column_name(&c.scenario, &c.level)),
                esc(&spread),
                c.warmup_s,
                esc(&errors),
                b,
                esc(&why),
            );
        }
    }
    if !any {
        out.push_str("<tr><td colspan=\"7\" class=\"dim\">no cell ran</td></tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
    let flagged = crate::shootout::signatures(r);
    if !flagged.is_empty() {
        out.push_str("<h3 id=\"signature\">Flat throughput, rising latency</h3>\n<ul>\n");
        for sig in &flagged {
            let _ = writeln!(out, "<li>{}</li>", esc(&sig.line()));
        }
        out.push_str("</ul>\n");
    }
}

#[cfg(test)]
mod tests;
