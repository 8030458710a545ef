//! The flood defences' bounds (rapid reset, CONTINUATION floods, control frames, held
//! bytes) and the token bucket that meters them per connection.

/// CONTINUATION frames one header block may take (CVE-2024-27316): an honest client needs
/// two at most for a block within our limits, at the minimum frame size.
pub const MAX_CONTINUATIONS: u32 = 32;
/// RST_STREAM frames a connection may send in a burst, and per second after it
/// (CVE-2023-44487, rapid reset): nghttp2's defaults.
pub const RESET_BURST: u32 = 1000;
/// See [`RESET_BURST`].
pub const RESETS_PER_SEC: u32 = 33;
/// Control frames (PING, SETTINGS, WINDOW_UPDATE, PRIORITY, RST_STREAM, empty DATA, unknown
/// types) a connection may send in a burst; each answered request and each second earn
/// some back.
pub const CONTROL_BURST: u32 = 1000;
/// Control frames earned back per answered request.
pub const CONTROL_PER_REQUEST: u32 = 10;
/// Control frames earned back per second.
pub const CONTROL_PER_SEC: u32 = 100;
/// Response bytes held for flow control over a connection's streams; past it, new streams
/// are refused until the client reads.
pub const MAX_PENDING_BYTES: usize = 1 << 20;

/// A token bucket over the worker clock.
#[derive(Debug, Clone, Copy)]
pub(super) struct Bucket {
    pub(super) tokens: u32,
    pub(super) at_s: u32,
}

impl Bucket {
    pub(super) fn full(burst: u32) -> Self {
        Bucket {
            tokens: burst,
            at_s: 0,
        }
    }

    pub(super) fn take(&mut self, now_s: u32, burst: u32, per_sec: u32) -> bool {
        let earned = now_s.saturating_sub(self.at_s).saturating_mul(per_sec);
        self.tokens = self.tokens.saturating_add(earned).min(burst);
        self.at_s = now_s;
        if self.tokens == 0 {
            return false;
        }
        self.tokens -= 1;
        true
    }
}
