//! The HTTP/2 section of a load report: streams allowed and used, retries, RST_STREAM and
//! GOAWAY by error code, and HPACK's header bytes.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// What an `--http2` run saw of HTTP/2 itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Http2Report {
    /// What the server selected by ALPN (`h2`); `None` for h2c.
    pub alpn: Option<String>,
    /// `--streams`: streams asked for per connection.
    pub streams: u64,
    /// The lowest SETTINGS_MAX_CONCURRENT_STREAMS a server stated; `None` when none did.
    pub server_max_streams: Option<u64>,
    /// The most streams in flight at once on one connection.
    pub streams_used_max: u64,
    /// Connections whose server SETTINGS arrived.
    pub connections: u64,
    /// Requests sent again on a new connection after a graceful GOAWAY or REFUSED_STREAM.
    pub retries: u64,
    /// Connections replaced because their stream IDs ran out.
    pub id_rollovers: u64,
    /// PINGs answered.
    pub pings_answered: u64,
    /// HPACK-encoded header bytes sent.
    pub header_bytes_sent: u64,
    /// Their names and values, decoded.
    pub header_bytes_sent_decoded: u64,
    /// HPACK-encoded header bytes received.
    pub header_bytes_received: u64,
    /// Their names and values, decoded.
    pub header_bytes_received_decoded: u64,
    /// 1 - encoded / decoded over both directions, percent (h2load's "space savings").
    pub hpack_saving_percent: Option<f64>,
    /// RST_STREAM frames received, by error code name.
    pub rst_stream: BTreeMap<String, u64>,
    /// GOAWAY frames received, by error code name.
    pub goaway: BTreeMap<String, u64>,
    /// `--stream-window`, bytes.
    pub stream_window: u64,
    /// `--connection-window`, bytes.
    pub connection_window: u64,
}

fn codes(m: &BTreeMap<String, u64>) -> String {
    if m.is_empty() {
        return "none".into();
    }
    m.iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Http2Report {
    /// The text report's HTTP/2 lines; `protocol` is "h2" or "h2c".
    pub fn write_text(&self, o: &mut String, protocol: &str) {
        let allowed = self
            .server_max_streams
            .map_or("no limit stated".to_string(), |m| {
                format!("server allows {m}")
            });
        let _ = writeln!(
            o,
            "HTTP/2:        {protocol}{}, streams {} asked, {} used at most ({allowed}), {} connections, {} retries, {} stream-ID rollovers",
            self.alpn.as_deref().map(|a| format!(" (ALPN {a})")).unwrap_or_default(),
            self.streams,
            self.streams_used_max,
            self.connections,
            self.retries,
            self.id_rollovers,
        );
        let _ = writeln!(
            o,
            "               headers sent {} B ({} decoded), received {} B ({} decoded), HPACK saving {}",
            self.header_bytes_sent,
            self.header_bytes_sent_decoded,
            self.header_bytes_received,
            self.header_bytes_received_decoded,
            self.hpack_saving_percent
                .map_or("-".to_string(), |p| format!("{p:.1}%")),
        );
        let _ = writeln!(
            o,
            "               RST_STREAM: {}; GOAWAY: {}",
            codes(&self.rst_stream),
            codes(&self.goaway)
        );
    }
}
