//! Verification and the levels it gates: each scenario verified before any load, then
//! every scenario at each of its levels, a cell each, unless its verification excludes it.
//! Before each level, the machine's limits that its connections would hit (the checks of
//! `foxbench doctor`) are kept in the cell and warned about in the progress.

use load::os_limits::{check, short, Demand, Machine};
use report::shootout::{Cell, CellStatus, Check, LimitNote, Verification};

use super::lines::{cell_line, verdict};
use super::{Ctx, Observer};
use crate::failure::TargetFailure;
use crate::lifecycle::Running;
use crate::measure::Task;
use crate::meter::{Dumps, Meter};
use crate::services::Services;
use crate::suite::{Multiplexed, Scenario, TargetSpec};
use crate::summary;
use crate::tiers;
use crate::verify;
use crate::watch::{column, now_of, CellAt, CellNow};

impl<'a> Ctx<'a> {
    /// Verifies every scenario the target implements before any load: over HTTP/1.1,
    /// and over HTTP/2 or HTTP/3 too when the scenario runs levels of it here (only over
    /// that protocol when all of them are). The verification comes before any cell, so an
    /// HTTP/3 cell's UDP side has answered a QUIC handshake (within the plan's timeout)
    /// before it is measured: the readiness check waits for the TCP side only.
    pub(super) fn verify(
        &self,
        running: &Running,
        spec: &TargetSpec,
        scenarios: &[&Scenario],
        (out, dir): (&str, &str),
        obs: &mut dyn Observer,
    ) -> Vec<Verification> {
        let suite = self.suite;
        scenarios
            .iter()
            .map(|s| {
                let endpoint = |version| verify::Endpoint {
                    addr: running.addr,
                    tls: s.tls.as_ref().map(|t| t.options(out, dir, true)),
                    version,
                    name: spec.name.clone(),
                };
                let run = |version| {
                    verify::verify(&endpoint(version), s, suite.images, suite.plan.timeout)
                };
                let levels = suite.levels_for(s, spec);
                let mut v = match s.protocol {
                    Some(m) => verify::over_only(m, run(Some(m))),
                    None => run(None),
                };
                for m in [Multiplexed::Http2, Multiplexed::Http3] {
                    if s.protocol != Some(m) && s.runs(m, levels.iter().copied()) {
                        v = verify::with_protocol(m, v, &run(Some(m)));
                    }
                }
                obs.line(&format!("  verify {}: {}", s.name, verdict(&v, s.protocol)));
                v
            })
            .collect()
    }

    /// Every scenario at each of its levels, a cell each; ends early if the target crashes.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn levels(
        &self,
        running: &mut Running,
        services: &mut Services,
        spec: &TargetSpec,
        (scenarios, verified): (&[&Scenario], &[Verification]),
        paths: (&str, &str),
        cells: &mut Vec<Cell>,
        obs: &mut dyn Observer,
    ) -> Result<(), TargetFailure> {
        let warmup_max = spec.warmup.unwrap_or(self.suite.plan.warmup);
        let probes = services.probes(spec);
        let net = summary::Net {
            runtime: match spec.language.as_str() {
                "java" | "kotlin" | "scala" | "clojure" => report::tcp::Runtime::Jvm,
                _ => report::tcp::Runtime::Other,
            },
            somaxconn: Machine::read().somaxconn,
        };
        let meter = Meter {
            plan: &self.suite.plan,
            client_threads: self.client_threads,
            server_cpus: self.server_cpus.len(),
            interrupt: &self.opts.interrupt,
            cpu_ids: (&self.client_cpus, &self.server_cpus),
            dumps: Some(Dumps {
                dir: &self.opts.out,
                always: self.opts.thread_dump,
                target: &spec.name,
            }),
            services: &probes,
            service_cpus: self.layout.services.len(),
            watch: self.opts.watch.as_deref(),
            net,
        };
        for (s, v) in scenarios.iter().zip(verified) {
            for level in self.suite.levels_for(s, spec) {
                let task = Task::new(s, level, warmup_max, paths);
                let mut cell = task.cell();
                let version = task.version.multiplexed();
                let by_suite = spec.excluded_levels.get(&level.name).map(String::as_str);
                if let Some((status, why)) =
                    excluded(v, (task.keepalive, version), by_suite, self.interrupted())
                {
                    // The verification's and Ctrl-C's exclusions have their lines already.
                    if by_suite.is_some_and(|b| why.ends_with(b)) {
                        obs.line(&format!("  {} {:>6}: {why}", s.name, level.name));
                    }
                    cell.status = status;
                    cell.message = Some(why);
                    cells.push(cell);
                    continue;
                }
                before_level(&mut cell, obs);
                let column = column(self.suite, &s.name, &level.name);
                let at = CellAt {
                    target: &spec.name,
                    column: &column,
                };
                if let Some(w) = &self.opts.watch {
                    w.cell(at, &CellNow::Running);
                }
                match meter.measure(running, &task, &mut cell) {
                    Ok(()) => {
                        summary::conclude(&mut cell, meter.server_cpus, &net);
                        tiers::conclude(&mut cell, &spec.name, &self.layout);
                        if let Some(line) = cell_line(&cell) {
                            obs.line(&line);
                        }
                    }
                    Err(failure) => {
                        cell.status = CellStatus::Failed;
                        cell.message = Some(failure.to_string());
                    }
                }
                let failed = cell.status == CellStatus::Failed;
                let service = services.crashed(spec);
                if let Some((name, why)) = &service {
                    let note = format!("service {name} {why} during this level");
                    obs.line(&format!("  {note}"));
                    cell.message = Some(match cell.message.take() {
                        Some(m) => format!("{m}; {note}"),
                        None => note,
                    });
                }
                if let Some(w) = &self.opts.watch {
                    w.cell(at, &now_of(&cell));
                }
                cells.push(cell);
                if let Some((service, why)) = service {
                    return Err(TargetFailure::ServiceDied {
                        service,
                        why,
                        level: level.name.clone(),
                    });
                }
                if let Some(status) = failed.then(|| running.exited()).flatten() {
                    return Err(TargetFailure::Crashed {
                        status,
                        level: level.name.clone(),
                        log_tail: running.log_tail(),
                    });
                }
            }
        }
        Ok(())
    }
}

/// Fails, with the first failed check, when no scenario was answered correctly. A scenario
/// whose answers are wrong is not loaded; one that only fails keep-alive still runs its
/// levels without keep-alive (`Verification::passed` already leaves keep-alive out).
pub(super) fn answers(verified: &[Verification]) -> Result<(), Option<Check>> {
    if verified.iter().any(|v| v.passed) {
        return Ok(());
    }
    Err(verified
        .iter()
        .flat_map(|v| v.checks.iter())
        .find(|c| !c.passed)
        .cloned())
}

/// Why a cell is not measured, if it is not: its status and message. `(keepalive,
/// version)` is how the cell connects (`version`: HTTP/2 or HTTP/3, `None` for HTTP/1.1);
/// `by_suite` is the reason the target's `excluded_levels` gives for this level, if it
/// names it. A cell of a protocol the target failed verification over says why (`target
/// NAME does not speak HTTP/3 (MODE): REASON`), and only that protocol's cells are skipped.
pub(super) fn excluded(
    v: &Verification,
    (keepalive, version): (bool, Option<Multiplexed>),
    by_suite: Option<&str>,
    interrupted: bool,
) -> Option<(CellStatus, String)> {
    let excluded = |why: &str| Some((CellStatus::Excluded, why.to_string()));
    let over = version.filter(|m| m.passed_over(v) != Some(true));
    if !v.passed {
        excluded("verification failed: not measured")
    } else if let Some(m) = over {
        let name = m.name();
        excluded(&format!(
            "verification over {name} failed{}: this {name} level is not measured",
            exclusion_detail(v, m)
        ))
    } else if keepalive && v.keepalive == Some(false) {
        excluded("excluded: the target closes connections after each response (verified), so keep-alive levels do not apply")
    } else if let Some(why) = by_suite {
        excluded(&format!("excluded by the suite: {why}"))
    } else if interrupted {
        Some((
            CellStatus::Interrupted,
            "interrupted before this level".into(),
        ))
    } else {
        None
    }
}

/// Why `v` failed over `m`, as ` (DETAIL)`, for an HTTP/3 exclusion: the detail of the
/// check named for HTTP/3. An HTTP/2 exclusion says no more than it did before HTTP/3 came,
/// so results of existing suites read as they did.
fn exclusion_detail(v: &Verification, m: Multiplexed) -> String {
    if m == Multiplexed::Http2 {
        return String::new();
    }
    let name = m.check().name();
    v.checks
        .iter()
        .find(|c| !c.passed && c.name == name)
        .and_then(|c| c.detail.as_deref())
        .map(|d| format!(" ({d})"))
        .unwrap_or_default()
}

/// The limits of `machine` short for `connections`. Without keep-alive foxbench lets the
/// server close, so no TIME_WAIT is assumed on the client's side.
fn short_limits(machine: &Machine, connections: u64) -> Vec<LimitNote> {
    let demand = Demand {
        connections,
        closes_per_s: None,
        threads: None,
        // The shootout's targets run on this machine.
        remote: false,
        udp: false,
    };
    short(&check(machine, &demand))
        .map(|f| LimitNote {
            check: f.check.to_string(),
            observed: f.observed.clone(),
            needed: f.needed.clone(),
            fix: f.fix.clone(),
        })
        .collect()
}

/// Before each level, checks this machine for the limits its connections would hit (the
/// checks of `foxbench doctor`), records what is short in the cell and warns.
fn before_level(cell: &mut Cell, obs: &mut dyn Observer) {
    cell.limits = short_limits(&Machine::read(), cell.connections);
    if let Some(line) = cell.limits_line() {
        obs.line(&format!(
            "  {} {}: warning: {line}",
            cell.scenario, cell.level
        ));
    }
}

#[cfg(test)]
mod tests;
