//! What a protocol counts of its own, beside the outcome counts every protocol shares: each
//! worker's protocol implementation fills it in (`worker::http::Http::report`), the run
//! merges the workers' and hands each protocol's to its field of [`crate::RunResult`].
//!
//! The worker carries it without looking inside: a new protocol's counts (HTTP/3's
//! datagrams) are a field here and its implementation's `report`, never a field of the
//! worker's result.

use crate::h2::H2Counts;

/// One worker's, or the run's, protocol counts: only the running protocol's is `Some`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ProtocolCounts {
    /// HTTP/2's; `None` under HTTP/1.1.
    pub h2: Option<H2Counts>,
    /// HTTP/3's; `None` otherwise.
    pub h3: Option<crate::H3Counts>,
}

impl ProtocolCounts {
    /// Adds `other` into `self`.
    pub(crate) fn merge(&mut self, other: &ProtocolCounts) {
        if let Some(h2) = &other.h2 {
            self.h2.get_or_insert_with(H2Counts::default).merge(h2);
        }
        if let Some(h3) = &other.h3 {
            self.h3
                .get_or_insert_with(crate::H3Counts::default)
                .merge(h3);
        }
    }
}

#[cfg(test)]
mod tests;
