//! The decisions a run's record depends on, each made here once: the protocol's name, the
//! latency the TCP rules read, and the coalescing of a window whose arrival changes.

use load::{Arrival, Plan, Protocol};
use stats::Latency;

/// The protocol as results name it: `http/1.1`, `h2` over TLS, `h2c` over cleartext, `h3`
/// (over QUIC, always TLS). The one naming, for a load result's `protocol` and a shootout
/// cell's.
pub fn protocol_name(protocol: &Protocol, tls: bool) -> &'static str {
    match (protocol, tls) {
        (Protocol::Http1, _) => "http/1.1",
        (Protocol::Http2(_), true) => "h2",
        (Protocol::Http2(_), false) => "h2c",
        (Protocol::Http3(_), _) => "h3",
    }
}

/// True when the protocol runs on UDP, so that the kernel's UDP counters speak for the run.
/// A match without a wildcard: a new protocol must say which it is.
pub fn over_udp(protocol: &Protocol) -> bool {
    match protocol {
        Protocol::Http1 | Protocol::Http2(_) => false,
        Protocol::Http3(_) => true,
    }
}

/// The latency the TCP counters' rules read: the service time (from each request's write)
/// when one was recorded, that is in the open model, else the latency. Above capacity the
/// open model's latency (from the due time) is mostly the wait for a free connection; the
/// service time is where a Nagle stall sits alone.
pub fn rules_latency<'a>(latency: &'a Latency, service: &'a Latency) -> &'a Latency {
    if service.is_empty() {
        latency
    } else {
        service
    }
}

/// `plan` with `arrival` in place of its own, and the coalescing that arrival leaves in
/// effect ([`Plan::coalesce_in_effect`]: the open model never coalesces, and refuses a
/// fixed wait), so that a closed plan's `--coalesce` or scenario `coalesce` does not make
/// its open windows (a rate level, a capacity search's windows) invalid. A closed plan
/// keeps its own (whether its workers spin is [`Plan::coalesce_in_effect`]'s to say), and
/// so does a plan asked to spin (`auto`, the only one spin accepts).
pub fn with_arrival(mut plan: Plan, arrival: Arrival) -> Plan {
    plan.arrival = arrival;
    if matches!(plan.arrival, Arrival::Open { .. }) && plan.idle != load::Idle::Spin {
        plan.coalesce = plan.coalesce_in_effect();
    }
    plan
}

#[cfg(test)]
mod tests;
