//! The load engine's counters in the report's shapes, for `foxbench load --json` and the
//! shootout's repeats alike (the one crate that sees both `load` and `report` besides the CLI).

use load::Counts;

/// Request accounting: every request in exactly one outcome.
pub fn requests(c: &Counts) -> report::Requests {
    report::Requests {
        sent: c.sent,
        ok: c.ok,
        failed_status: c.failed_status,
        completed: c.completed(),
        errors: c.errors(),
        in_flight: c.in_flight,
        unsent: c.unsent,
    }
}

/// Errors by kind.
pub fn errors(c: &Counts) -> report::Errors {
    report::Errors {
        connect: c.connect,
        connect_refused: c.connect_refused,
        connect_ports_exhausted: c.connect_ports_exhausted,
        connect_timeout: c.connect_timeout,
        write: c.write,
        read: c.read,
        parse: c.parse,
        timeout: c.timeout,
    }
}

/// Connections opened, reopened and closed by the server.
pub fn connections(c: &Counts) -> report::Connections {
    report::Connections {
        opened: c.connections_opened,
        reconnects: c.reconnects,
        closed_by_server: c.closed_by_server,
    }
}
