//! The page header: the title, the machine and plan in two lines, the interrupted banner and
//! the section links.

use std::fmt::Write as _;

use super::levels::level_text;
use super::numbers::short;
use super::utc;
use crate::shootout::markdown::cpus;
use crate::shootout::svg::esc;
use crate::shootout::ShootoutResults;
use crate::units::bytes_compact;

pub(super) fn header(out: &mut String, r: &ShootoutResults) {
    let p = &r.protocol;
    let _ = writeln!(
        out,
        "<header>\n<h1><span class=\"fox\">foxbench</span> shootout: {}</h1>",
        esc(&r.suite.name)
    );
    let plural = |n: u64, one: &str, many: &str| {
        if n == 1 {
            one.to_string()
        } else {
            many.to_string()
        }
    };
    let _ = writeln!(
        out,
        "<p class=\"lede\"><b>{}</b> · {} {} · {} RAM · Linux {} · load generator pinned to CPU {} ({} {}), servers to CPU {}</p>",
        esc(&p.cpu_model),
        p.nproc,
        plural(p.nproc, "CPU", "CPUs"),
        esc(&bytes_compact(p.mem_total_bytes)),
        esc(&p.kernel),
        esc(&cpus(&p.client_cpus)),
        p.client_threads,
        plural(p.client_threads, "thread", "threads"),
        esc(&cpus(&p.server_cpus)),
    );
    let levels: Vec<String> = p.plan.levels.iter().map(level_text).collect();
    let _ = writeln!(
        out,
        "<p class=\"lede\">{}{} · {} {} per level, median shown · warm-up up to {} s · started {} · run took {:.0} s</p>",
        if r.suite.quick { "<b>quick mode</b> · " } else { "" },
        esc(&levels.join(" · ")),
        p.plan.repeats,
        plural(u64::from(p.plan.repeats), "repeat", "repeats"),
        short(p.plan.warmup_max_s),
        esc(&utc(p.started_unix_s)),
        r.elapsed_s,
    );
    if r.interrupted {
        out.push_str(
            "<p class=\"banner\"><b>Interrupted:</b> the run was stopped early; what was measured is below.</p>\n",
        );
    }
    out.push_str(
        "<nav><a href=\"#results\">Results</a><a href=\"#targets\">Targets</a><a href=\"#diagnosis\">Diagnosis</a>\
         <a href=\"#charts\">Charts</a><a href=\"#protocol\">Protocol</a></nav>\n</header>\n",
    );
}
