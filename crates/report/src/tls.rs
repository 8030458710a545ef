//! The TLS part of a load result: what was negotiated, how the certificate was checked, and
//! full and resumed handshakes counted and timed apart from connects and requests.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use stats::setting::{Setting, Text, Wording};

use crate::{human_us, Distribution};

/// What the engine measured of TLS: the input of [`TlsReport::new`].
#[derive(Debug, Clone, Copy)]
pub struct TlsMeasured<'a> {
    /// e.g. `TLSv1.3`; empty when no handshake completed.
    pub version: &'a str,
    /// e.g. `TLS13_AES_256_GCM_SHA384`.
    pub cipher: &'a str,
    /// Key exchange group, e.g. `X25519`.
    pub group: Option<&'a str>,
    /// ALPN protocol chosen by the server.
    pub alpn: Option<&'a str>,
    /// How the certificate was verified, in words.
    pub verify: &'a str,
    /// Verification was off (`--insecure`).
    pub insecure: bool,
    /// Session resumption was offered.
    pub resumption: bool,
    /// Time of each full handshake.
    pub full: &'a stats::Latency,
    /// Time of each resumed handshake.
    pub resumed: &'a stats::Latency,
    /// Whether a client certificate was asked for and presented.
    pub client_certificate: ClientCertificate,
}

/// Whether the server asked for a client certificate (mutual TLS), and whether one was
/// presented.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ClientCertificate {
    /// The server asked for none.
    #[default]
    NotAsked,
    /// The server asked, and foxbench had none to give (no `--cert`).
    AskedNoneGiven,
    /// The server asked, and the `--cert` certificate was presented.
    Presented,
}

impl ClientCertificate {
    /// The words for a server that asked and got none, with what to do.
    pub fn none_given() -> Text {
        Text::plain("the server asked for a client certificate and none was given: ")
            .give(&[Setting::ClientCert])
    }
}

/// TLS of an https:// run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TlsReport {
    /// Protocol version, e.g. `TLSv1.3` (empty when no handshake completed).
    pub version: String,
    /// Cipher suite.
    pub cipher: String,
    /// Key exchange group, absent on a TLS 1.2 resumption.
    pub key_exchange: Option<String>,
    /// ALPN protocol the server chose; absent when it chose none.
    pub alpn: Option<String>,
    /// How the server's certificate was verified.
    pub verify: String,
    /// True when verification was off (`--insecure`): the run proves nothing about the
    /// certificate.
    pub insecure: bool,
    /// True when the client offered session resumption (`--tls-resume on`).
    pub resumption: bool,
    /// Handshakes completed in full.
    pub handshakes_full: u64,
    /// Handshakes that resumed a session.
    pub handshakes_resumed: u64,
    /// Full handshake time, from the TCP connect to the end of the handshake.
    pub handshake_full: Option<Distribution>,
    /// Resumed handshake time.
    pub handshake_resumed: Option<Distribution>,
    /// Whether the server asked for a client certificate, and whether one was presented.
    #[serde(default)]
    pub client_certificate: ClientCertificate,
}

impl TlsReport {
    /// Builds the TLS section from what the engine measured.
    pub fn new(m: TlsMeasured<'_>, counts: &stats::Counts) -> Self {
        let dist = |h: &stats::Latency| (!h.is_empty()).then(|| Distribution::of(h));
        Self {
            version: m.version.into(),
            cipher: m.cipher.into(),
            key_exchange: m.group.map(Into::into),
            alpn: m.alpn.map(Into::into),
            verify: m.verify.into(),
            insecure: m.insecure,
            resumption: m.resumption,
            handshakes_full: counts.handshakes_full,
            handshakes_resumed: counts.handshakes_resumed,
            handshake_full: dist(m.full),
            handshake_resumed: dist(m.resumed),
            client_certificate: m.client_certificate,
        }
    }

    /// The report's TLS lines, settings worded by `wording`. `keepalive` false: each
    /// request paid its own handshake.
    pub fn write_text(&self, o: &mut String, keepalive: bool, wording: &dyn Wording) {
        let negotiated = if self.version.is_empty() {
            "no handshake completed".to_string()
        } else {
            let mut parts = vec![self.version.clone(), self.cipher.clone()];
            parts.extend(self.key_exchange.clone());
            // QUIC's TLS does not say its cipher suite (quinn-proto keeps rustls's session).
            parts.retain(|p| !p.is_empty());
            if let Some(a) = &self.alpn {
                parts.push(format!("ALPN {a}"));
            }
            parts.join(", ")
        };
        let _ = writeln!(o, "TLS:           {negotiated}");
        let _ = writeln!(
            o,
            "               certificate verified by {}; resumption {}",
            self.verify,
            if self.resumption { "on" } else { "off" }
        );
        match self.client_certificate {
            ClientCertificate::NotAsked => {}
            ClientCertificate::AskedNoneGiven => {
                let none = ClientCertificate::none_given().worded(wording);
                let _ = writeln!(o, "               {none}");
            }
            ClientCertificate::Presented => {
                let cert = wording.name(Setting::ClientCert);
                let _ = writeln!(o, "               client certificate presented ({cert})");
            }
        }
        let total = self.handshakes_full + self.handshakes_resumed;
        let paid = if keepalive {
            String::new()
        } else {
            format!(
                "; {} of {} requests paid a full handshake",
                self.handshakes_full, total
            )
        };
        let _ = writeln!(
            o,
            "Handshakes:    {} full, {} resumed{paid}",
            self.handshakes_full, self.handshakes_resumed
        );
        for (name, d) in [
            ("full", &self.handshake_full),
            ("resumed", &self.handshake_resumed),
        ] {
            if let Some(d) = d {
                let s = &d.summary;
                let _ = writeln!(
                    o,
                    "  {name:<8} mean {}, p50 {}, p99 {}, max {}",
                    human_us(s.mean_us),
                    human_us(s.at(50.0).unwrap_or(0.0)),
                    human_us(s.at(99.0).unwrap_or(0.0)),
                    human_us(s.max_us)
                );
            }
        }
        if let (Some(f), Some(r)) = (&self.handshake_full, &self.handshake_resumed) {
            if r.summary.mean_us > 0.0 {
                let _ = writeln!(
                    o,
                    "               a resumed handshake took {:.2}x less time than a full one (means)",
                    f.summary.mean_us / r.summary.mean_us
                );
            }
        }
        if self.insecure {
            let insecure = wording.name(Setting::Insecure);
            let _ = writeln!(
                o,
                "warning: {insecure}: the server's certificate was not verified"
            );
        }
    }
}
