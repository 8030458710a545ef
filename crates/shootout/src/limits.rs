//! Before each level, the machine's limits that its connections would hit: the checks of
//! `foxbench doctor` (`load::limits`), kept in the cell and warned about in the progress.

use load::limits::{check, short, Demand, Machine};
use report::shootout::{Cell, LimitNote};

use crate::runner::Observer;

/// The limits of `machine` short for `connections`. Without keep-alive foxbench lets the
/// server close, so no TIME_WAIT is assumed on the client's side.
pub fn short_limits(machine: &Machine, connections: u64) -> Vec<LimitNote> {
    let demand = Demand {
        connections,
        closes_per_s: None,
        threads: None,
        // The shootout's targets run on this machine.
        remote: false,
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

/// Checks this machine for the cell's level, records what is short in the cell and warns.
pub(crate) fn before_level(cell: &mut Cell, obs: &mut dyn Observer) {
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
