//! Failed requests by reason, in plain words: the rows of `errors_by_reason`, their exact
//! merge, and the text report's "Errors by reason" table.
//!
//! The engine counts a small code per failure ([`stats::Reason`]); this module is the one
//! place that words it. Every wording is one line, with no Rust `Debug` text, and a hint
//! where there is something to do.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use stats::reason::{
    alert_name, errno_name, h2_error_name, At, Cause, CertProblem, Kind, Malformed, Reason, Rule,
};
use stats::setting::{Setting, Text, Wording};
use stats::Reasons;

/// The code of the row that counts failures whose reason a full table did not keep.
pub const OTHER: &str = "other";

/// Failed requests of one kind for one reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReasonRow {
    /// The error counter they are in (`connect`, `write`, `read`, `parse`, `timeout`, `tls`).
    pub kind: String,
    /// The reason's stable code, e.g. `ECONNRESET`, `close_notify_mid_body`,
    /// `alert_received:certificate_required`; `other` for reasons past the table's room.
    pub code: String,
    /// Requests that failed so.
    pub count: u64,
    /// The reason in plain words.
    pub reason: String,
    /// What to do about it, where there is something to do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl ReasonRow {
    /// The row of `count` failures for `reason`.
    pub fn new(reason: Reason, count: u64) -> ReasonRow {
        let (words, hint) = describe(reason);
        ReasonRow {
            kind: reason.kind.as_str().to_string(),
            code: reason.cause.code(),
            count,
            reason: words,
            hint: hint.map(|h| h.to_string()),
        }
    }

    fn other(kind: Kind, count: u64) -> ReasonRow {
        ReasonRow {
            kind: kind.as_str().to_string(),
            code: OTHER.to_string(),
            count,
            reason: "other reasons, past the distinct reasons a run keeps".to_string(),
            hint: None,
        }
    }

    /// The hint with its settings typed, read back from the row's kind and code (the
    /// stored `hint` names them in the plan's words: "raise the timeout setting"); `None`
    /// for an "other" row, a reason with no hint, or a code this foxbench does not know.
    pub fn advice(&self) -> Option<Text> {
        if self.code == OTHER {
            return None;
        }
        let kind = Kind::parse(&self.kind)?;
        let cause = Cause::parse(&self.code)?;
        describe(Reason::new(kind, cause)).1
    }

    /// One line: "tls 100 (100%): the server asked … : pass --cert FILE --key FILE", the
    /// hint's settings worded by `wording` (the CLI's flags, the shootout's suite keys).
    /// `of` is what the share is of (the requests sent).
    pub fn line(&self, of: u64, wording: &dyn Wording) -> String {
        let share = 100.0 * self.count as f64 / of.max(1) as f64;
        let mut s = format!(
            "{} {} ({}%): {}",
            self.kind,
            self.count,
            trim_share(share),
            self.reason
        );
        match self.advice() {
            Some(h) => {
                let _ = write!(s, ": {}", h.worded(wording));
            }
            // A code from another foxbench: its hint as it was stored.
            None => {
                if let Some(h) = &self.hint {
                    let _ = write!(s, ": {h}");
                }
            }
        }
        s
    }
}

fn trim_share(share: f64) -> String {
    if share >= 10.0 || share == 0.0 {
        format!("{share:.0}")
    } else if share >= 0.1 {
        format!("{share:.1}")
    } else {
        format!("{share:.2}")
    }
}

/// The rows of a table, most frequent first; each kind's "other" after the kept reasons.
pub fn rows(t: &Reasons) -> Vec<ReasonRow> {
    let mut rows: Vec<ReasonRow> = t
        .ranked()
        .into_iter()
        .map(|(r, n)| ReasonRow::new(r, n))
        .collect();
    rows.extend(
        Kind::ALL
            .into_iter()
            .filter(|k| t.other(*k) > 0)
            .map(|k| ReasonRow::other(k, t.other(k))),
    );
    rows
}

/// Reads rows back into a table; rows whose kind or code this foxbench does not know are
/// counted as their kind's "other" (or skipped when the kind is unknown too).
pub fn table(rows: &[ReasonRow]) -> Reasons {
    let mut t = Reasons::default();
    for row in rows {
        let Some(kind) = Kind::parse(&row.kind) else {
            continue;
        };
        match Cause::parse(&row.code) {
            Some(cause) if row.code != OTHER => t.add(Reason::new(kind, cause), row.count),
            _ => t.add_other(kind, row.count),
        }
    }
    t
}

/// Adds the rows of several results, exactly: by kind and code, with no bound (the bound
/// is the engine's, per run). Most frequent first.
pub fn merge(all: &[&[ReasonRow]]) -> Vec<ReasonRow> {
    let mut sum: BTreeMap<(String, String), ReasonRow> = BTreeMap::new();
    for rows in all {
        for row in rows.iter() {
            sum.entry((row.kind.clone(), row.code.clone()))
                .and_modify(|r| r.count = r.count.saturating_add(row.count))
                .or_insert_with(|| row.clone());
        }
    }
    let mut out: Vec<ReasonRow> = sum.into_values().collect();
    out.sort_by_key(|r| std::cmp::Reverse(r.count));
    out
}

/// The text report's table: one line per reason, shares of `sent`, hints worded by
/// `wording`. Nothing when no error.
pub fn write_text(o: &mut String, rows: &[ReasonRow], sent: u64, wording: &dyn Wording) {
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(o, "Errors by reason:");
    for row in rows {
        let _ = writeln!(o, "  {}", row.line(sent, wording));
    }
}

/// One reason of each shape the wording tells apart (every cause, at every place, under
/// every kind, and numbers past the named ones), for tables that check every wording.
pub fn every_reason() -> Vec<Reason> {
    let mut causes = vec![
        Cause::NotTls,
        Cause::PeerIncompatible,
        Cause::PeerMisbehaved,
        Cause::BadRecord,
        Cause::TlsOther,
        Cause::Unknown,
        Cause::Errno(999),
        Cause::NoH2,
        Cause::NoH3,
        Cause::Quic(10),
    ];
    for code in 0..16 {
        causes.extend([Cause::H2Received(code), Cause::H2Sent(code)]);
        causes.extend([Cause::H3Received(0x100 + code), Cause::H3Sent(0x100 + code)]);
    }
    causes.extend(stats::reason::ERRNOS.iter().map(|(n, _)| Cause::Errno(*n)));
    for at in [
        At::Connect,
        At::Handshake,
        At::BeforeResponse,
        At::MidHead,
        At::MidBody,
    ] {
        causes.extend([
            Cause::Closed(at),
            Cause::Reset(at),
            Cause::CloseNotify(at),
            Cause::Timeout(at),
        ]);
    }
    causes.extend(
        [
            Rule::Head,
            Rule::HeadTooLarge,
            Rule::ContentLength,
            Rule::ChunkSize,
            Rule::Upgrade,
        ]
        .map(Cause::Parse),
    );
    causes.extend(CertProblem::ALL.map(Cause::Cert));
    causes.extend(stats::reason::Malformed::ALL.map(Cause::Malformed));
    for (n, _) in stats::reason::ALERTS.iter().chain([(201, "")].iter()) {
        causes.extend([Cause::AlertReceived(*n), Cause::AlertSent(*n)]);
    }
    Kind::ALL
        .into_iter()
        .flat_map(|k| causes.iter().map(move |c| Reason::new(k, *c)))
        .collect()
}

/// The reason in plain words, and a hint where one exists, its settings typed.
pub fn describe(reason: Reason) -> (String, Option<Text>) {
    let hint = |s: &str| Some(Text::plain(s));
    let (words, hint) = match reason.cause {
        Cause::Errno(n) => errno_words(reason.kind, n),
        Cause::Closed(At::Handshake) => (
            "the server closed the connection during the TLS handshake".into(),
            hint("is it a TLS server, and does it accept TLS 1.2 or 1.3?"),
        ),
        Cause::Closed(at) => (
            format!("the server closed the connection {}", at_words(at)),
            None,
        ),
        Cause::Reset(at) => (
            format!("connection reset by the server {} (ECONNRESET)", at_words(at)),
            None,
        ),
        Cause::CloseNotify(at) => (
            format!(
                "the server ended TLS (close_notify) {}: the response is truncated",
                at_words(at)
            ),
            None,
        ),
        Cause::Timeout(At::Connect) => (
            "no connection within the connect timeout".into(),
            Some(Text::plain("is the address reachable? raise ").name(Setting::ConnectTimeout)),
        ),
        Cause::Timeout(At::Handshake) => (
            "no TLS handshake within the timeout".into(),
            Some(Text::plain("is it a TLS server? raise ").name(Setting::Timeout)),
        ),
        Cause::Timeout(at) => (
            format!("no complete response within the timeout, {}", at_words(at)),
            Some(
                Text::plain("the server stalled; raise ")
                    .name(Setting::Timeout)
                    .then(" if it is just slow"),
            ),
        ),
        Cause::Parse(rule) => rule_words(rule),
        Cause::AlertReceived(n) => received_alert_words(n),
        Cause::AlertSent(n) => (
            format!("foxbench ended TLS (alert {} sent)", alert_text(n)),
            None,
        ),
        Cause::PeerIncompatible => (
            "the server offered nothing foxbench accepts (TLS version, cipher suite or key exchange)".into(),
            hint("foxbench speaks TLS 1.2 and 1.3 with modern cipher suites"),
        ),
        Cause::PeerMisbehaved => ("the server broke the TLS protocol".into(), None),
        Cause::BadRecord => (
            "the server sent a TLS record that was malformed or did not decrypt, after the handshake".into(),
            None,
        ),
        Cause::Cert(p) => cert_words(p),
        Cause::NotTls => (
            "the server did not answer with TLS".into(),
            hint("is it a plain HTTP server? use http://"),
        ),
        Cause::TlsOther => ("the TLS layer failed".into(), None),
        Cause::H2Received(code) => h2_received_words(reason.kind, code),
        Cause::H2Sent(code) => (
            format!(
                "the server broke HTTP/2, and foxbench ended {} with {}",
                match reason.kind {
                    Kind::Protocol => "the connection",
                    _ => "the stream",
                },
                h2_code_text(code)
            ),
            None,
        ),
        Cause::NoH2 => (
            "the server does not speak HTTP/2 (ALPN chose another protocol, or no SETTINGS came)".into(),
            Some(Text::plain("enable HTTP/2 on the server, or ").drop(Setting::Http2)),
        ),
        Cause::H3Received(code) => (
            format!(
                "the server ended {} with {}",
                match reason.kind {
                    Kind::Reset => "the request's stream",
                    _ => "the connection",
                },
                h3_code_text(code)
            ),
            None,
        ),
        Cause::H3Sent(code) => (
            format!(
                "the server broke HTTP/3, and foxbench ended the connection with {}",
                h3_code_text(code)
            ),
            None,
        ),
        Cause::Quic(code) => (
            format!(
                "the QUIC connection was closed with transport error {}",
                Cause::Quic(code).code().trim_start_matches("quic:")
            ),
            None,
        ),
        Cause::NoH3 => (
            "the server does not speak HTTP/3 (ALPN chose no h3)".into(),
            Some(Text::plain("enable HTTP/3 on the server, or ").drop(Setting::Http3)),
        ),
        Cause::Malformed(m) => malformed_words(m),
        Cause::Unknown => ("no more is known".into(), None),
    };
    (words, hint)
}

fn at_words(at: At) -> &'static str {
    match at {
        At::Connect => "while connecting",
        At::Handshake => "during the TLS handshake",
        At::BeforeResponse => "before the response",
        At::MidHead => "mid-head",
        At::MidBody => "mid-body",
    }
}

fn errno_words(kind: Kind, n: u16) -> (String, Option<Text>) {
    let name = match errno_name(n) {
        Some(s) => s.to_string(),
        None => format!("errno {n}"),
    };
    let (what, hint) = match name.as_str() {
        "ECONNREFUSED" => ("connection refused", Some("is the server running and listening there?")),
        "EADDRNOTAVAIL" => (
            "the client ran out of local ports",
            Some("use keep-alive or fewer connections, or widen net.ipv4.ip_local_port_range; not a server failure"),
        ),
        "EPIPE" => ("the server had closed the connection before the request was written", None),
        "ETIMEDOUT" => ("the connection timed out in the kernel", None),
        "EHOSTUNREACH" | "ENETUNREACH" | "ENETDOWN" => ("no route to the server", Some("check the address and the network")),
        "EMFILE" | "ENFILE" => ("out of open files", Some("raise the limit (ulimit -n) or use fewer connections")),
        "ECONNABORTED" => ("the connection was aborted", None),
        "ENOBUFS" | "ENOMEM" => ("the kernel ran out of buffers", None),
        _ => ("the operating system refused", None),
    };
    let during = match kind {
        Kind::Connect => "connecting",
        Kind::Write => "writing the request",
        Kind::Read | Kind::Timeout | Kind::Parse => "reading the response",
        Kind::Tls => "in TLS",
        Kind::Reset | Kind::Protocol => "in HTTP/2",
    };
    (
        format!("{what} while {during} ({name})"),
        hint.map(Text::plain),
    )
}

fn rule_words(rule: Rule) -> (String, Option<Text>) {
    let words = match rule {
        Rule::Head => "the status line or a header line is malformed",
        Rule::HeadTooLarge => "the response head is too large (over 64 KiB without its end)",
        Rule::ContentLength => "Content-Length is not a number, or two disagree",
        Rule::ChunkSize => "a chunk-size line is not hexadecimal",
        Rule::Upgrade => "the server switched protocols (101), which a load test cannot follow",
    };
    (words.to_string(), None)
}

fn malformed_words(m: Malformed) -> (String, Option<Text>) {
    (
        format!(
            "malformed response: {}; foxbench reset the stream (PROTOCOL_ERROR)",
            m.words()
        ),
        None,
    )
}

fn alert_text(n: u8) -> String {
    match alert_name(n) {
        Some(s) => s.to_string(),
        None => format!("number {n}"),
    }
}

fn received_alert_words(n: u8) -> (String, Option<Text>) {
    let name = alert_text(n);
    let (what, hint) = match n {
        116 => (
            "the server asked for a client certificate",
            Some(Text::default().give(&[Setting::ClientCert])),
        ),
        40 => (
            "the server refused the handshake",
            Some(
                Text::plain("it may require a client certificate (")
                    .usage(Setting::ClientCert)
                    .then(") or a cipher foxbench lacks"),
            ),
        ),
        42 | 43 | 44 | 45 | 46 | 48 | 49 => (
            "the server refused the client certificate",
            Some(
                Text::plain("check ")
                    .name(Setting::ClientCert)
                    .then(" against the CA the server trusts (and its dates)"),
            ),
        ),
        70 => ("the server accepts none of TLS 1.2 and 1.3", None),
        // foxbench offers http/1.1 alone, or h2 alone under --http2; the reason does not
        // say which, so the words fit both.
        120 => (
            "the server speaks none of the protocols foxbench offered by ALPN",
            Some(
                Text::plain("without ")
                    .name(Setting::Http2)
                    .then(" it may speak only h2: ")
                    .give(&[Setting::Http2])
                    .then("; with it, it does not speak h2: ")
                    .drop(Setting::Http2),
            ),
        ),
        112 => (
            "the server knows no such name (SNI)",
            Some(Text::plain("connect by a name it serves")),
        ),
        _ => ("the server ended TLS with an alert", None),
    };
    (format!("{what} (alert {name})"), hint)
}

fn h2_code_text(code: u32) -> String {
    match h2_error_name(code) {
        Some(s) => s.to_string(),
        None => format!("error code {code}"),
    }
}

fn h2_received_words(kind: Kind, code: u32) -> (String, Option<Text>) {
    let name = h2_code_text(code);
    match (kind, code) {
        // REFUSED_STREAM: unprocessed, sent again; a failure only once the retries ran out.
        (Kind::Reset, 7) => (
            "the server refused the stream (RST_STREAM REFUSED_STREAM) on every retry".into(),
            Some(
                Text::plain("it is past its limit of streams or connections; lower ")
                    .name(Setting::Streams),
            ),
        ),
        (Kind::Reset, _) => (format!("the server reset the stream (RST_STREAM {name})"), None),
        // A graceful GOAWAY left the stream unprocessed on every retry.
        (_, 0) => (
            "the server closed the connection gracefully (GOAWAY NO_ERROR) before the stream, on every retry".into(),
            None,
        ),
        (Kind::Protocol, 11) => (
            "the server ended the connection (GOAWAY ENHANCE_YOUR_CALM)".into(),
            Some(Text::plain("it judged the load abusive; fewer streams or connections")),
        ),
        _ => (format!("the server ended the connection (GOAWAY {name})"), None),
    }
}

fn cert_words(p: CertProblem) -> (String, Option<Text>) {
    let insecure = |before: &str| Text::plain(before).give(&[Setting::Insecure]);
    let (what, hint) = match p {
        CertProblem::Expired => (
            "the server's certificate has expired",
            insecure("renew it, or "),
        ),
        CertProblem::NotValidYet => (
            "the server's certificate is not valid yet",
            insecure("check the clocks, or "),
        ),
        CertProblem::WrongName => (
            "the server's certificate is not valid for the name connected to",
            insecure("connect by a name it was issued for, or "),
        ),
        CertProblem::UnknownIssuer => (
            "the server's certificate is self-signed or from an unknown authority",
            Text::default().give(&[Setting::CaFile, Setting::Insecure]),
        ),
        CertProblem::CaUsedAsServer => (
            "the server's certificate is a CA certificate (CA:TRUE), and not itself among the trusted ones",
            Text::plain("pass that very certificate with ")
                .name(Setting::CaFile)
                .then(", or make one with -addext basicConstraints=critical,CA:FALSE"),
        ),
        CertProblem::BadSignature => (
            "the server's certificate has a bad signature",
            insecure("").then(" to skip verification"),
        ),
        CertProblem::Revoked => (
            "the server's certificate was revoked",
            Text::plain("renew it"),
        ),
        CertProblem::Invalid => (
            "the server's certificate was rejected",
            Text::default().give(&[Setting::CaFile, Setting::Insecure]),
        ),
    };
    (what.to_string(), Some(hint))
}

#[cfg(test)]
mod tests;

/// An HTTP/3 or QPACK error code as its name and number.
fn h3_code_text(code: u32) -> String {
    match stats::reason::h3_error_name(code) {
        Some(name) => format!("{name} ({code:#x})"),
        None => format!("error code {code:#x}"),
    }
}
