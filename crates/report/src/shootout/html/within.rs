//! Comparisons within targets: each scenario's server CPU per request beside the reference
//! scenario's (the SVG route against the redirect), and a target's parameter rows side by
//! side with their memory (the JVM settings), and the production path's TLS handshakes and
//! CPU per process.

use std::fmt::Write as _;

use super::swatch;
use crate::shootout::production::production_rows;
use crate::shootout::rows::{cost_tables, param_groups, ParamGroup};
use crate::shootout::svg::esc;
use crate::shootout::{Cell, ShootoutResults, TargetResult};
use crate::units::{bytes_compact, rate_suffixed};

fn rps(c: Option<&Cell>) -> String {
    c.and_then(|c| c.summary.as_ref())
        .map(|s| rate_suffixed(s.rps_median))
        .unwrap_or_else(|| "–".into())
}

/// One table per scenario other than the reference: both costs and their ratio.
pub(super) fn costs(out: &mut String, r: &ShootoutResults, rows: &[&TargetResult]) {
    for t in cost_tables(r, rows) {
        let (a, b) = (esc(&t.reference), esc(&t.scenario));
        let _ = writeln!(
            out,
            "<h3>{b} against {a}: server CPU per request</h3>\n<div class=\"scroll\"><table>\n<thead><tr><th>target</th><th>level</th>\
             <th class=\"n\">{a}</th><th class=\"n\">{b}</th><th class=\"n\">{b} / {a}</th><th class=\"n\">req/s {a}</th><th class=\"n\">req/s {b}</th></tr></thead>\n<tbody>"
        );
        for row in &t.rows {
            let _ = writeln!(
                out,
                "<tr><th scope=\"row\">{}{}</th><td>{}</td><td class=\"n\">{:.1} µs</td><td class=\"n\">{:.1} µs</td><td class=\"n\"><b>{:.2}×</b></td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                swatch(r, row.target),
                esc(&row.target.name),
                esc(&row.level),
                row.reference_us,
                row.us,
                row.ratio,
                esc(&rps(row.reference_cell)),
                esc(&rps(row.cell)),
            );
        }
        let _ = writeln!(
            out,
            "</tbody></table></div><p class=\"note\">Median server CPU µs per request of each scenario at the same level, \
             and {b}'s over {a}'s: what one more {b} request costs the server against one {a} request.</p>"
        );
    }
}

/// A table per target with parameter rows: each row's setting beside its figures and memory.
pub(super) fn params(out: &mut String, r: &ShootoutResults) {
    for g in param_groups(r) {
        let at = g
            .column
            .as_ref()
            .map(|(s, l)| format!(" at {}", r.column_name(s, l)))
            .unwrap_or_default();
        let _ = write!(
            out,
            "<h3>{}: rows by parameter{}</h3>\n<div class=\"scroll\"><table>\n<thead><tr><th>row</th>",
            esc(g.name),
            esc(&at)
        );
        for k in &g.keys {
            let _ = write!(out, "<th>{}</th>", esc(k));
        }
        out.push_str(
            "<th class=\"n\">req/s</th><th class=\"n\">server CPU/req</th><th class=\"n\">idle RSS</th><th class=\"n\">idle PSS</th>\
             <th class=\"n\">peak RSS</th><th class=\"n\">peak PSS</th></tr></thead>\n<tbody>\n",
        );
        let dash = || "–".to_string();
        for t in &g.rows {
            let s = g.summary(t);
            let _ = write!(
                out,
                "<tr><th scope=\"row\" title=\"{}\">{}{}</th>",
                esc(t.start_command.as_deref().unwrap_or("")),
                swatch(r, t),
                esc(&t.name)
            );
            for v in g.values(t) {
                let _ = write!(out, "<td>{}</td>", esc(v));
            }
            let _ = writeln!(
                out,
                "<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
                 <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                esc(&s.map(|s| rate_suffixed(s.rps_median)).unwrap_or_else(dash)),
                esc(&s
                    .and_then(|s| s.server_cpu_us_per_request)
                    .map(|us| format!("{us:.1} µs"))
                    .unwrap_or_else(dash)),
                esc(&t
                    .idle
                    .map(|i| bytes_compact(i.rss_bytes))
                    .unwrap_or_else(dash)),
                esc(&t
                    .idle
                    .map(|i| bytes_compact(i.pss_bytes))
                    .unwrap_or_else(dash)),
                esc(&s
                    .map(|s| bytes_compact(s.rss_peak_bytes))
                    .unwrap_or_else(dash)),
                esc(&s
                    .map(|s| bytes_compact(s.pss_peak_bytes))
                    .unwrap_or_else(dash)),
            );
        }
        out.push_str(
            "</tbody></table></div><p class=\"note\">RSS and PSS of the server's whole process tree: once ready (idle), \
             and the peak over the compared cell's repeats. Hover a row for its start command.</p>\n",
        );
        ratios(out, r, &g);
    }
}

/// A group's req/s level by level, each row against the first (pool 150 against pool 2).
fn ratios(out: &mut String, r: &ShootoutResults, g: &ParamGroup) {
    let rows = g.ratios(r);
    let Some((first, rest)) = g.rows.split_first() else {
        return;
    };
    if rows.is_empty() {
        return;
    }
    let base = esc(&g.label(first));
    let _ = write!(
        out,
        "<h3>{}: req/s against {base}</h3>\n<div class=\"scroll\"><table>\n<thead><tr><th>level</th><th class=\"n\">{base}</th>",
        esc(g.name)
    );
    for t in rest {
        let l = esc(&g.label(t));
        let _ = write!(
            out,
            "<th class=\"n\">{l}</th><th class=\"n\">{l} / {base}</th>"
        );
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in &rows {
        let _ = write!(
            out,
            "<tr><th scope=\"row\">{}</th><td class=\"n\">{}</td>",
            esc(&row.column),
            esc(&rate_suffixed(row.reference))
        );
        for o in &row.others {
            match o {
                Some((v, x)) => {
                    let _ = write!(
                        out,
                        "<td class=\"n\">{}</td><td class=\"n\"><b>{x:.2}×</b></td>",
                        esc(&rate_suffixed(*v))
                    );
                }
                None => out.push_str("<td class=\"n\">–</td><td class=\"n\">–</td>"),
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str(
        "</tbody></table></div><p class=\"note\">Median req/s of each row at each level, and its ratio to the first row's.</p>\n",
    );
}

/// The production path: TLS handshakes per second and each process's CPU per request.
pub(super) fn production(out: &mut String, r: &ShootoutResults, rows: &[&TargetResult]) {
    let prod = production_rows(rows);
    if prod.is_empty() {
        return;
    }
    out.push_str(
        "<h3>TLS handshakes and CPU per process</h3>\n<div class=\"scroll\"><table>\n<thead><tr><th>target</th><th>cell</th>\
         <th class=\"n\">req/s</th><th class=\"n\">full handshakes</th><th class=\"n\">resumed handshakes</th>\
         <th>server CPU per request, by process</th></tr></thead>\n<tbody>\n",
    );
    for p in &prod {
        let _ = writeln!(
            out,
            "<tr><th scope=\"row\">{}{}</th><td>{}{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            swatch(r, p.target),
            esc(&p.target.name),
            esc(&r.column_name(&p.cell.scenario, &p.cell.level)),
            if p.cell.tls_resume == Some(false) { " (no resumption)" } else { "" },
            esc(&rate_suffixed(p.summary.rps_median)),
            esc(&p.handshakes(true)),
            esc(&p.handshakes(false)),
            esc(&p.processes()),
        );
    }
    out.push_str(
        "</tbody></table></div><p class=\"note\">Handshakes per second the server completed (medians of repeats), \
         counted by foxbench; CPU per request of each process name of the server's tree (nginx's master and worker \
         together), so a proxy's cost against its app's is measured, not guessed.</p>\n",
    );
}

/// HTTP/2 and HTTP/3 against HTTP/1.1 on the same target ([`crate::shootout::versions`]).
pub(super) fn versions(out: &mut String, rows: &[&TargetResult]) {
    use crate::shootout::versions::{HEADERS, NOTE, NUMERIC, TITLE};
    let table = crate::shootout::versions::table(rows);
    if table.is_empty() {
        return;
    }
    let class = |i: usize| if NUMERIC[i] { " class=\"n\"" } else { "" };
    let _ = write!(
        out,
        "<h3>{}</h3>\n<div class=\"scroll\"><table>\n<thead><tr>",
        esc(TITLE)
    );
    for (i, h) in HEADERS.iter().enumerate() {
        let _ = write!(out, "<th{}>{}</th>", class(i), esc(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in &table {
        out.push_str("<tr>");
        for (i, v) in row.iter().enumerate() {
            let _ = write!(out, "<td{}>{}</td>", class(i), esc(v));
        }
        out.push_str("</tr>\n");
    }
    let _ = writeln!(
        out,
        "</tbody></table></div><p class=\"note\">{}</p>",
        esc(NOTE)
    );
}
