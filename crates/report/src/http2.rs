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
    /// The lowest SETTINGS_MAX_CONCURRENT_STREAMS a server stated, in any SETTINGS of any
    /// connection; `None` when none did.
    pub server_max_streams: Option<u64>,
    /// The highest it stated: above the lowest when a server changed its limit mid-run
    /// (absent from results written before 2026-11-28).
    #[serde(default)]
    pub server_max_streams_highest: Option<u64>,
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
    /// HPACK's saving on the headers sent: 1 - encoded / decoded, percent.
    pub hpack_saving_sent_percent: Option<f64>,
    /// HPACK's saving on the headers received: 1 - encoded / decoded, percent; h2load's
    /// "space savings", which counts received headers only.
    pub hpack_saving_received_percent: Option<f64>,
    /// RST_STREAM frames received, by error code name.
    pub rst_stream: BTreeMap<String, u64>,
    /// GOAWAY frames received, by error code name.
    pub goaway: BTreeMap<String, u64>,
    /// `--stream-window`, bytes.
    pub stream_window: u64,
    /// `--connection-window`, bytes.
    pub connection_window: u64,
}

/// 100 × (1 - encoded / decoded); `None` when nothing was decoded.
fn saving_percent(encoded: u64, decoded: u64) -> Option<f64> {
    (decoded > 0).then(|| 100.0 * (1.0 - encoded as f64 / decoded as f64))
}

fn percent(p: Option<f64>) -> String {
    p.map_or("-".to_string(), |p| format!("{p:.1}%"))
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
    /// The agents' sections added up: counts summed, the server's limit the lowest stated,
    /// the streams used the most; `None` unless every agent ran HTTP/2.
    pub fn merge<'a>(parts: impl Iterator<Item = Option<&'a Http2Report>>) -> Option<Http2Report> {
        let mut m: Option<Http2Report> = None;
        for p in parts {
            let p = p?;
            let Some(a) = m.as_mut() else {
                m = Some(p.clone());
                continue;
            };
            a.server_max_streams = match (a.server_max_streams, p.server_max_streams) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            };
            a.server_max_streams_highest =
                match (a.server_max_streams_highest, p.server_max_streams_highest) {
                    (Some(x), Some(y)) => Some(x.max(y)),
                    (x, y) => x.or(y),
                };
            a.streams_used_max = a.streams_used_max.max(p.streams_used_max);
            for (sum, v) in [
                (&mut a.connections, p.connections),
                (&mut a.retries, p.retries),
                (&mut a.id_rollovers, p.id_rollovers),
                (&mut a.pings_answered, p.pings_answered),
                (&mut a.header_bytes_sent, p.header_bytes_sent),
                (
                    &mut a.header_bytes_sent_decoded,
                    p.header_bytes_sent_decoded,
                ),
                (&mut a.header_bytes_received, p.header_bytes_received),
                (
                    &mut a.header_bytes_received_decoded,
                    p.header_bytes_received_decoded,
                ),
            ] {
                *sum = sum.saturating_add(v);
            }
            for (k, v) in &p.rst_stream {
                let e = a.rst_stream.entry(k.clone()).or_default();
                *e = e.saturating_add(*v);
            }
            for (k, v) in &p.goaway {
                let e = a.goaway.entry(k.clone()).or_default();
                *e = e.saturating_add(*v);
            }
        }
        if let Some(a) = m.as_mut() {
            a.hpack_saving_sent_percent =
                saving_percent(a.header_bytes_sent, a.header_bytes_sent_decoded);
            a.hpack_saving_received_percent =
                saving_percent(a.header_bytes_received, a.header_bytes_received_decoded);
        }
        m
    }

    /// The text report's HTTP/2 lines; `protocol` is "h2" or "h2c".
    pub fn write_text(&self, o: &mut String, protocol: &str) {
        let allowed = self
            .server_max_streams
            .map_or("no limit stated".to_string(), |m| {
                match self.server_max_streams_highest.filter(|h| *h > m) {
                    Some(h) => format!("server allowed {m} to {h}"),
                    None => format!("server allows {m}"),
                }
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
            "               headers sent {} B ({} decoded, HPACK saving {}), received {} B ({} decoded, HPACK saving {}, h2load's space savings)",
            self.header_bytes_sent,
            self.header_bytes_sent_decoded,
            percent(self.hpack_saving_sent_percent),
            self.header_bytes_received,
            self.header_bytes_received_decoded,
            percent(self.hpack_saving_received_percent),
        );
        let _ = writeln!(
            o,
            "               RST_STREAM: {}; GOAWAY: {}",
            codes(&self.rst_stream),
            codes(&self.goaway)
        );
    }
}

#[cfg(test)]
mod tests;
