//! The Markdown summary: the tables the blog posts printed, from [`ShootoutResults`].

use std::fmt::Write as _;

use super::{rows, Bottleneck, Cell, CellStatus, Outcome, ShootoutResults, TargetResult};
use crate::human_us;
use crate::units::{bytes_compact, rate_suffixed};

/// How a build went: `cached`, or its time.
pub(crate) fn build_text(b: &super::BuildInfo) -> String {
    if b.cached {
        "cached".to_string()
    } else {
        format!("{:.1} s", b.seconds)
    }
}

/// A cell's median req/s with the slowest and fastest repeat, or `–`.
pub(crate) fn spread(c: &Cell) -> String {
    c.summary
        .as_ref()
        .map(|s| {
            format!(
                "{} ({}–{})",
                rate_suffixed(s.rps_median),
                rate_suffixed(s.rps_min),
                rate_suffixed(s.rps_max)
            )
        })
        .unwrap_or_else(|| "–".into())
}

/// The short mark a table cell carries for its diagnosis.
pub fn mark(b: Bottleneck) -> &'static str {
    match b {
        Bottleneck::ClientBound => " ᶜ",
        Bottleneck::ServerCpuBound => "",
        Bottleneck::ServerThreadBound => " ᵗ",
        Bottleneck::ServiceCpuBound => " ˢ",
        Bottleneck::Neither => " ⁿ",
        Bottleneck::Errors => " ᵉ",
        Bottleneck::LockBound => " ˡ",
        Bottleneck::PoolBound => " ᵖ",
        Bottleneck::BackendWait => " ᵇ",
        Bottleneck::Nagle => " ᵃ",
        Bottleneck::ListenOverflow => " ᵒ",
        Bottleneck::MemoryPressure => " ᵐ",
        Bottleneck::Retransmits => " ʳ",
    }
}

/// The column rows are ranked by: among keep-alive columns (the same kind of request for
/// every target) the one most targets were measured in, the earliest on a tie; without
/// keep-alive columns, the column most targets were measured in.
pub(crate) fn lead_column(r: &ShootoutResults) -> Option<(String, String)> {
    let cols = r.columns();
    let measured = |s: &str, l: &str| {
        r.ranked()
            .filter(|t| t.cell(s, l).is_some_and(|c| c.summary.is_some()))
            .count()
    };
    let keepalive = |s: &str, l: &str| {
        r.targets
            .iter()
            .any(|t| t.cell(s, l).is_some_and(|c| c.keepalive))
    };
    let mut best = None;
    let mut best_key = (false, 0);
    for (s, l, _) in &cols {
        let key = (keepalive(s, l), measured(s, l));
        if key.1 > 0 && (best.is_none() || key > best_key) {
            best_key = key;
            best = Some((s.clone(), l.clone()));
        }
    }
    best
}

/// Rows in ranking order: measured targets by their req/s in the [`lead_column`], best
/// first; targets without that column follow, by their first measured column.
pub(crate) fn ranking(r: &ShootoutResults) -> Vec<&TargetResult> {
    let cols = r.columns();
    let mut ranked: Vec<&TargetResult> = r.ranked().collect();
    let rps =
        |t: &TargetResult, s: &str, l: &str| t.cell(s, l)?.summary.as_ref().map(|x| x.rps_median);
    let lead = lead_column(r);
    let first = |t: &TargetResult| {
        cols.iter()
            .find_map(|(s, l, _)| rps(t, s, l))
            .unwrap_or(0.0)
    };
    ranked.sort_by(|a, b| {
        let la = lead.as_ref().and_then(|(s, l)| rps(a, s, l));
        let lb = lead.as_ref().and_then(|(s, l)| rps(b, s, l));
        match (la, lb) {
            (Some(x), Some(y)) => y.total_cmp(&x),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => first(b).total_cmp(&first(a)),
        }
    });
    group_rows(r, ranked)
}

/// A target's rows together, where its best-ranked row stands: the plain row first, then
/// the parameter rows in suite order.
fn group_rows<'a>(r: &'a ShootoutResults, ranked: Vec<&'a TargetResult>) -> Vec<&'a TargetResult> {
    let position = |t: &TargetResult| r.targets.iter().position(|x| std::ptr::eq(x, t));
    let mut out: Vec<&TargetResult> = Vec::with_capacity(ranked.len());
    for t in &ranked {
        if out.iter().any(|o| o.group() == t.group()) {
            continue;
        }
        let mut rows: Vec<&TargetResult> = ranked
            .iter()
            .copied()
            .filter(|o| o.group() == t.group())
            .collect();
        // The results follow the suite's order.
        rows.sort_by_key(|o| (o.base.is_some(), position(o)));
        out.extend(rows);
    }
    out
}

fn cell_text(c: Option<&Cell>, f: impl Fn(&super::CellSummary) -> Option<String>) -> String {
    let Some(c) = c else { return "–".into() };
    match (&c.summary, c.status) {
        (Some(s), _) => match f(s) {
            Some(text) => {
                let m = c
                    .diagnosis
                    .as_ref()
                    .map(|d| mark(d.bottleneck))
                    .unwrap_or("");
                format!("{text}{m}")
            }
            None => "–".into(),
        },
        (None, CellStatus::Excluded) => "excluded".into(),
        (None, CellStatus::Failed) => "failed".into(),
        (None, CellStatus::Interrupted) => "interrupted".into(),
        (None, CellStatus::Measured) => "–".into(),
    }
}

fn table<F>(out: &mut String, r: &ShootoutResults, rows: &[&TargetResult], title: &str, f: F)
where
    F: Fn(&super::CellSummary) -> Option<String>,
{
    let cols = r.columns();
    let _ = writeln!(out, "### {title}\n");
    let _ = write!(out, "| target |");
    for (s, l, _) in &cols {
        let _ = write!(out, " {} |", r.column_name(s, l));
    }
    let _ = write!(out, "\n|---|");
    for _ in &cols {
        let _ = write!(out, "---:|");
    }
    out.push('\n');
    for t in rows {
        let _ = write!(out, "| {} |", t.name);
        for (s, l, _) in &cols {
            let _ = write!(out, " {} |", cell_text(t.cell(s, l), &f));
        }
        out.push('\n');
    }
    out.push('\n');
}

/// Renders the whole summary: the headline, then the details.
pub fn to_markdown(r: &ShootoutResults) -> String {
    let mut out = headline_markdown(r);
    details(&mut out, r);
    out
}

/// The summary's headline: its title, the machine line and the posts' tables, up to the
/// per-target details; what `foxbench shootout` prints on stdout.
pub fn headline_markdown(r: &ShootoutResults) -> String {
    let mut out = String::new();
    let p = &r.protocol;
    let _ = writeln!(out, "# foxbench shootout: {}\n", r.suite.name);
    if r.interrupted {
        out.push_str("**Interrupted**: the run was stopped early; what was measured is below.\n\n");
    }
    let _ = writeln!(
        out,
        "{} · {} CPUs · Linux {} · load pinned to CPU {} ({} thread{}), servers to CPU {} · {}{}\n",
        p.cpu_model,
        p.nproc,
        p.kernel,
        cpus(&p.client_cpus),
        p.client_threads,
        if p.client_threads == 1 { "" } else { "s" },
        cpus(&p.server_cpus),
        if r.suite.quick { "quick mode · " } else { "" },
        format_args!(
            "{} repeat{} per level, median shown, run took {:.0} s",
            p.plan.repeats,
            if p.plan.repeats == 1 { "" } else { "s" },
            r.elapsed_s
        ),
    );
    let rows = ranking(r);
    if rows.is_empty() {
        out.push_str("No target was measured.\n\n");
    } else {
        table(
            &mut out,
            r,
            &rows,
            "Requests per second (median of repeats)",
            |s| Some(rate_suffixed(s.rps_median)),
        );
        table(&mut out, r, &rows, "p99 latency", |s| {
            s.latency.at(99.0).map(human_us)
        });
        table(&mut out, r, &rows, "Server CPU per request", |s| {
            s.server_cpu_us_per_request.map(|us| format!("{us:.1} µs"))
        });
        table(
            &mut out,
            r,
            &rows,
            "Peak RSS of the server's process tree",
            |s| Some(bytes_compact(s.rss_peak_bytes)),
        );
        if let Some((s, l)) = lead_column(r) {
            let _ = writeln!(
                out,
                "Rows are ranked by req/s at {}; a target's parameter rows follow it.\n",
                r.column_name(&s, &l)
            );
        }
        out.push_str(
            "Marks: ᶜ client-bound (foxbench's CPU was saturated: the server may be faster), \
             ᵗ one server thread saturated, ˢ a service's CPU saturated (the tier behind the target), ⁿ neither side's CPU saturated (contention, a pool or a lock), \
             ˡ lock-bound (CPUs not busy, most threads waiting on a futex), ᵖ pool-bound (a small steady pool of connections to a service, with more requests in flight than it holds), ᵇ waiting on the backend (threads on sockets to an idle-ish service), ᵃ Nagle (responses waited for delayed ACKs: no TCP_NODELAY), ᵒ listen overflow (the accept queue overflowed), ᵐ TCP memory pressure, ʳ retransmits, ᵉ errors. Unmarked cells were server-CPU-bound.\n\n",
        );
        out.push_str(&super::capacity::markdown(r));
        cost_tables(&mut out, r, &rows);
        param_tables(&mut out, r);
        production_table(&mut out, r, &rows);
        versions_table(&mut out, &rows);
    }
    out.push_str(&super::tiers::markdown(r));
    out
}

/// The details after the headline: each target, skips and failures, verification, the
/// diagnosis and the protocol.
fn details(out: &mut String, r: &ShootoutResults) {
    let p = &r.protocol;
    out.push_str("### Targets\n\n");
    out.push_str("| target | language | outcome | artifact | build | startup | idle RSS | peak RSS | CPU/req (keep-alive median) |\n");
    out.push_str("|---|---|---|---:|---|---:|---:|---:|---:|\n");
    for t in &r.targets {
        let build = t.build.as_ref().map(build_text);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            t.name,
            t.language,
            t.outcome.as_str(),
            t.build
                .as_ref()
                .and_then(|b| b.artifact_bytes)
                .map(bytes_compact)
                .unwrap_or_else(|| "–".into()),
            build.unwrap_or_else(|| "–".into()),
            t.startup_ms
                .map(|ms| format!("{ms:.0} ms"))
                .unwrap_or_else(|| "–".into()),
            t.idle
                .map(|i| bytes_compact(i.rss_bytes))
                .unwrap_or_else(|| "–".into()),
            t.rss_peak_bytes()
                .map(bytes_compact)
                .unwrap_or_else(|| "–".into()),
            t.cpu_us_per_request_median()
                .map(|us| format!("{us:.1} µs"))
                .unwrap_or_else(|| "–".into()),
        );
    }
    out.push('\n');

    let problems: Vec<&TargetResult> = r
        .targets
        .iter()
        .filter(|t| t.outcome != Outcome::Measured || t.message.is_some())
        .collect();
    if !problems.is_empty() {
        out.push_str("### Skipped and failed\n\n");
        for t in problems {
            let _ = writeln!(
                out,
                "- **{}** ({}): {}",
                t.name,
                t.outcome.as_str(),
                t.message.as_deref().unwrap_or("no message")
            );
        }
        out.push('\n');
    }

    out.push_str("### Verification\n\n");
    for t in &r.targets {
        for v in &t.verify {
            let failed: Vec<String> = v
                .checks
                .iter()
                .filter(|c| !c.passed)
                .map(|c| match &c.detail {
                    Some(d) => format!("{}: {d}", c.name),
                    None => c.name.clone(),
                })
                .collect();
            let images = match (v.images_seen, v.images_expected) {
                (Some(s), Some(e)) => format!(", {s}/{e} images"),
                _ => String::new(),
            };
            let ka = match v.keepalive {
                Some(true) => ", keeps connections alive",
                Some(false) => ", closes connections",
                None => "",
            };
            let _ = writeln!(
                out,
                "- {} / {}: {}{images}{ka}{}",
                t.name,
                v.scenario,
                if v.passed { "passed" } else { "**failed**" },
                if failed.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", failed.join("; "))
                }
            );
        }
    }
    for (scenario, names) in r.not_implemented() {
        let _ = writeln!(
            out,
            "- {scenario}: not implemented by {} (skipped)",
            names.join(", ")
        );
    }
    out.push('\n');

    out.push_str("### Diagnosis per cell\n\n");
    out.push_str("| target | cell | req/s (min–max) | warm-up | bottleneck | why |\n|---|---|---:|---:|---|---|\n");
    for t in &r.targets {
        for c in &t.cells {
            let spread = spread(c);
            let (b, why) = match (&c.diagnosis, &c.message) {
                (Some(d), _) => (d.bottleneck.as_str().to_string(), d.detail.clone()),
                (None, Some(m)) => (c.status.as_str().to_string(), m.clone()),
                (None, None) => ("–".into(), String::new()),
            };
            let why = c.why_with_notes(why);
            let dumps: String = c
                .thread_dumps
                .iter()
                .map(|d| {
                    format!(
                        " [thread dump of {}]({}) ({})",
                        d.pid,
                        d.path,
                        d.slice.label()
                    )
                })
                .collect();
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:.1} s | {} | {}{} |",
                t.name,
                r.column_name(&c.scenario, &c.level),
                spread,
                c.warmup_s,
                b,
                why.replace('|', "\\|"),
                dumps
            );
        }
    }
    out.push('\n');
    let flagged = super::signatures(r);
    if !flagged.is_empty() {
        out.push_str("### Flat throughput, rising latency\n\n");
        for sig in &flagged {
            let _ = writeln!(out, "- {}", sig.line());
        }
        out.push('\n');
    }

    out.push_str("### Protocol\n\n");
    let _ = writeln!(out, "- command: `{}`", p.command);
    let _ = writeln!(out, "- suite: {} ({})", r.suite.name, r.suite.source);
    let _ = writeln!(out, "- foxbench {}", p.foxbench_version);
    let _ = writeln!(
        out,
        "- CPU: {} · nproc {} · memory {}",
        p.cpu_model,
        p.nproc,
        bytes_compact(p.mem_total_bytes)
    );
    let _ = writeln!(out, "- kernel: {}", p.kernel);
    let _ = writeln!(
        out,
        "- ulimit -n: {} (hard {})",
        p.ulimit_nofile.0, p.ulimit_nofile.1
    );
    for (k, v) in &p.sysctl {
        let _ = writeln!(out, "- {k} = {v}");
    }
    for l in &p.plan.levels {
        let what = match (l.duration_s, l.requests) {
            (_, Some(n)) => format!(
                "{n} requests{}",
                l.max_duration_s
                    .map(|s| format!(" (capped at {s} s)"))
                    .unwrap_or_default()
            ),
            (Some(d), None) => format!("{d} s"),
            (None, None) => String::new(),
        };
        let ka = match l.keepalive {
            Some(false) => ", no keep-alive",
            Some(true) => ", keep-alive",
            None => "",
        };
        let resume = if l.tls_resume == Some(false) {
            ", no TLS resumption"
        } else {
            ""
        };
        if let Some(c) = &l.capacity {
            let _ = writeln!(
                out,
                "- level {}: {} connections, capacity under `{}`: the highest constant rate holding it, windows of {} s, {} s budget, no warm-up",
                l.name, l.connections, c.objective, c.window_s, c.budget_s
            );
            continue;
        }
        let _ = writeln!(
            out,
            "- level {}: {} connections, {what}{ka}{resume}{}, {} repeat{}",
            l.name,
            l.connections,
            super::html::levels::open_model_text(l),
            l.repeats,
            if l.repeats == 1 { "" } else { "s" }
        );
    }
    let _ = writeln!(
        out,
        "- warm-up: up to {} s per level in {} s slices, until throughput is steady",
        p.plan.warmup_max_s, p.plan.warmup_slice_s
    );
    let _ = writeln!(
        out,
        "- each load starts once the server has finished the requests the load before gave up (its connections closed by the client and still held), waiting at most {} s",
        p.plan.timeout_s
    );
    for (tool, v) in &p.toolchains {
        let _ = writeln!(out, "- {tool}: {v}");
    }
}

/// Each scenario's server CPU per request beside the reference scenario's, per target.
fn cost_tables(out: &mut String, r: &ShootoutResults, rows: &[&TargetResult]) {
    for t in rows::cost_tables(r, rows) {
        let (a, b) = (&t.reference, &t.scenario);
        let _ = writeln!(out, "### {b} against {a}: server CPU per request\n");
        let _ = writeln!(
            out,
            "| target | level | {a} | {b} | {b} / {a} | req/s {a} | req/s {b} |\n|---|---|---:|---:|---:|---:|---:|"
        );
        for row in &t.rows {
            let rps = |c: Option<&Cell>| {
                c.and_then(|c| c.summary.as_ref())
                    .map(|s| rate_suffixed(s.rps_median))
                    .unwrap_or_else(|| "–".into())
            };
            let _ = writeln!(
                out,
                "| {} | {} | {:.1} µs | {:.1} µs | {:.2}× | {} | {} |",
                row.target.name,
                row.level,
                row.reference_us,
                row.us,
                row.ratio,
                rps(row.reference_cell),
                rps(row.cell)
            );
        }
        out.push('\n');
    }
}

/// A target's parameter rows side by side, with memory beside each setting.
fn param_tables(out: &mut String, r: &ShootoutResults) {
    for g in rows::param_groups(r) {
        let at = g
            .column
            .as_ref()
            .map(|(s, l)| format!(" at {}", r.column_name(s, l)))
            .unwrap_or_default();
        let _ = writeln!(out, "### {}: rows by parameter{at}\n", g.name);
        let _ = write!(out, "| row |");
        for k in &g.keys {
            let _ = write!(out, " {k} |");
        }
        out.push_str(
            " req/s | server CPU/req | idle RSS | idle PSS | peak RSS | peak PSS |\n|---|",
        );
        out.push_str(&"---|".repeat(g.keys.len()));
        out.push_str("---:|---:|---:|---:|---:|---:|\n");
        let dash = || "–".to_string();
        for t in &g.rows {
            let s = g.summary(t);
            let _ = write!(out, "| {} |", t.name);
            for v in g.values(t) {
                let _ = write!(out, " {v} |");
            }
            let _ = writeln!(
                out,
                " {} | {} | {} | {} | {} | {} |",
                s.map(|s| rate_suffixed(s.rps_median)).unwrap_or_else(dash),
                s.and_then(|s| s.server_cpu_us_per_request)
                    .map(|us| format!("{us:.1} µs"))
                    .unwrap_or_else(dash),
                t.idle
                    .map(|i| bytes_compact(i.rss_bytes))
                    .unwrap_or_else(dash),
                t.idle
                    .map(|i| bytes_compact(i.pss_bytes))
                    .unwrap_or_else(dash),
                s.map(|s| bytes_compact(s.rss_peak_bytes))
                    .unwrap_or_else(dash),
                s.map(|s| bytes_compact(s.pss_peak_bytes))
                    .unwrap_or_else(dash),
            );
        }
        out.push('\n');
        ratio_table(out, r, &g);
    }
}

/// A group's req/s level by level, each row against the first (pool 150 against pool 2).
fn ratio_table(out: &mut String, r: &ShootoutResults, g: &rows::ParamGroup) {
    let ratios = g.ratios(r);
    let Some((first, rest)) = g.rows.split_first() else {
        return;
    };
    if ratios.is_empty() {
        return;
    }
    let base = g.label(first);
    let _ = writeln!(out, "### {}: req/s against {base}\n", g.name);
    let _ = write!(out, "| level | {base} |");
    for t in rest {
        let l = g.label(t);
        let _ = write!(out, " {l} | {l} / {base} |");
    }
    out.push_str("\n|---|---:|");
    out.push_str(&"---:|---:|".repeat(rest.len()));
    out.push('\n');
    for row in &ratios {
        let _ = write!(out, "| {} | {} |", row.column, rate_suffixed(row.reference));
        for o in &row.others {
            match o {
                Some((v, x)) => {
                    let _ = write!(out, " {} | {x:.2}× |", rate_suffixed(*v));
                }
                None => out.push_str(" – | – |"),
            }
        }
        out.push('\n');
    }
    out.push('\n');
}

/// A CPU list as `0,1`.
pub(crate) fn cpus(v: &[usize]) -> String {
    v.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The production path: TLS handshakes per second and each process's CPU per request.
fn production_table(out: &mut String, r: &ShootoutResults, rows: &[&TargetResult]) {
    let prod = super::production::production_rows(rows);
    if prod.is_empty() {
        return;
    }
    out.push_str(
        "### TLS handshakes and CPU per process

",
    );
    out.push_str("| target | cell | req/s | full handshakes | resumed handshakes | server CPU per request, by process |\n|---|---|---:|---:|---:|---|\n");
    for p in &prod {
        let _ = writeln!(
            out,
            "| {} | {}{} | {} | {} | {} | {} |",
            p.target.name,
            r.column_name(&p.cell.scenario, &p.cell.level),
            if p.cell.tls_resume == Some(false) {
                " (no resumption)"
            } else {
                ""
            },
            rate_suffixed(p.summary.rps_median),
            p.handshakes(true),
            p.handshakes(false),
            p.processes()
        );
    }
    out.push_str(
        "\nHandshakes per second the server completed (medians of repeats), counted by foxbench; CPU per request \
         of each process name of the server's tree (nginx's master and worker together), so a proxy's cost \
         against its app's is measured, not guessed.\n\n",
    );
}

/// HTTP/2 and HTTP/3 against HTTP/1.1 on the same target ([`super::versions`]).
fn versions_table(out: &mut String, rows: &[&TargetResult]) {
    let table = super::versions::table(rows);
    if table.is_empty() {
        return;
    }
    let _ = writeln!(out, "### {}\n", super::versions::TITLE);
    let _ = writeln!(out, "| {} |", super::versions::HEADERS.join(" | "));
    let align: Vec<&str> = super::versions::NUMERIC
        .iter()
        .map(|&n| if n { "---:" } else { "---" })
        .collect();
    let _ = writeln!(out, "|{}|", align.join("|"));
    for row in &table {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    let _ = writeln!(out, "\n{}\n", super::versions::NOTE);
}

#[cfg(test)]
mod tests;
