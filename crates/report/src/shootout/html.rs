//! The self-contained HTML report (placeholder until the charts land).

use super::ShootoutResults;

/// Renders the HTML report.
pub fn to_html(r: &ShootoutResults) -> String {
    format!("<!doctype html><meta charset=utf-8><title>foxbench shootout</title><pre>{}</pre>", super::to_markdown(r).replace('<', "&lt;"))
}
