//! The kernel's send stamps, sampled: when a sample of the requests actually left the
//! client's socket, and how many stamps came back. Part of the client's delay
//! ([`crate::ClientDelay::send_stamps`]).

use serde::{Deserialize, Serialize};

/// A distribution in brief, µs, with its count.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Brief {
    /// Values recorded.
    pub count: u64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

impl Brief {
    /// `p50 3µs p99 41µs max 190µs`.
    fn words(&self) -> String {
        format!(
            "p50 {} p99 {} max {}",
            crate::human_us(self.p50_us),
            crate::human_us(self.p99_us),
            crate::human_us(self.max_us)
        )
    }
}

/// Send stamps of one run: one request in `every` sampled. Merged from several parts,
/// the counts are summed and each distribution is the part's with the largest p99.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SendStamps {
    /// One request in this many per worker was sampled; 0: send stamps were off.
    pub every: u64,
    /// Requests sampled.
    pub sampled: u64,
    /// Stamps read back from the sockets' error queues (also those of other writes made
    /// while stamping was on: TLS handshakes, requests written in parts).
    pub returned: u64,
    /// Stamps matched to their sampled request.
    pub matched: u64,
    /// Open model: due instant to the departure of the request's last byte, for requests
    /// handed over on time; `None` in the closed model or with no stamp.
    pub lateness: Option<Brief>,
    /// Handing over to the departure of the request's last byte; `None` with no stamp.
    pub delay: Option<Brief>,
}

impl SendStamps {
    /// The report's lines: `Send lateness (kernel, 1 in 64 requests sampled, 812 stamps):
    /// p50 3µs p99 41µs max 190µs`, the send delay likewise, or why there are none.
    pub fn lines(&self) -> Vec<String> {
        if self.every == 0 {
            return vec!["Send stamps:   off: no request's departure was stamped".into()];
        }
        let sampled = format!(
            "kernel, 1 in {} requests sampled, {} stamps",
            self.every, self.matched
        );
        if self.matched == 0 {
            return vec![format!(
                "Send stamps:   none came back ({} requests sampled, {} stamps read): the kernel gave no send stamps",
                self.sampled, self.returned
            )];
        }
        let mut lines = Vec::new();
        if let Some(l) = &self.lateness {
            lines.push(format!("Send lateness ({sampled}): {}", l.words()));
        }
        if let Some(d) = &self.delay {
            lines.push(format!("Send delay    ({sampled}): {}", d.words()));
        }
        lines
    }

    /// Two parts' send stamps (agents, repeats) as one.
    pub fn merge(self, other: SendStamps) -> SendStamps {
        let worst = |a: Option<Brief>, b: Option<Brief>| match (a, b) {
            (Some(a), Some(b)) if b.p99_us > a.p99_us => Some(b),
            (Some(a), _) => Some(a),
            (None, b) => b,
        };
        SendStamps {
            every: self.every.max(other.every),
            sampled: self.sampled + other.sampled,
            returned: self.returned + other.returned,
            matched: self.matched + other.matched,
            lateness: worst(self.lateness, other.lateness),
            delay: worst(self.delay, other.delay),
        }
    }
}

#[cfg(test)]
mod tests;
