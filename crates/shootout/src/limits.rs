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
mod tests {
    use super::*;

    #[test]
    fn ulimit_1024_is_short_for_10000_connections_but_not_for_100() {
        let machine = Machine {
            nofile: Some((1024, 1024)),
            somaxconn: Some(4096),
            ..Machine::default()
        };
        let notes = short_limits(&machine, 10_000);
        let checks: Vec<&str> = notes.iter().map(|n| n.check.as_str()).collect();
        assert_eq!(checks, ["ulimit -Hn", "ulimit -n"], "{notes:?}");
        assert_eq!(notes[0].observed, "1024");
        assert_eq!(notes[0].needed, "10064");
        assert_eq!(notes[0].fix.as_deref(), Some("ulimit -n 10064"));
        // Unreadable figures are not warned about; enough ones neither.
        assert!(short_limits(&machine, 100).is_empty());
    }
}
