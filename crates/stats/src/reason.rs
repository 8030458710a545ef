//! Why a request failed: a small `Copy` code beside its kind, counted on the hot path in a
//! bounded table ([`Reasons`]) and worded only at report time (by the `report` crate).
//!
//! A [`Reason`] is a [`Kind`] (the error counter it belongs to) and a [`Cause`]. Both are
//! plain enums: a new kind of error (an HTTP/2 stream reset, say) plugs in by adding a
//! variant to each, never by restructuring. Every reason has a stable machine code
//! ([`Cause::code`]) that the JSON carries and [`Cause::parse`] reads back.
//!
//! Errno and TLS alert numbers are Linux's and RFC 8446's: foxbench runs on Linux only (its
//! engine is epoll), and the alert numbers are the wire's.

use std::fmt;

/// The error counters of [`crate::Counts`] a reason can belong to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Kind {
    /// The connection could not be established.
    Connect,
    /// Writing the request failed.
    Write,
    /// The connection ended before the response was complete.
    #[default]
    Read,
    /// The response was malformed.
    Parse,
    /// No complete response within the timeout.
    Timeout,
    /// The TLS layer failed.
    Tls,
    /// HTTP/2: the server reset the stream (RST_STREAM).
    Reset,
    /// HTTP/2: the connection failed (a GOAWAY with an error, a malformed frame, HPACK).
    Protocol,
}

impl Kind {
    /// Every kind, in report order.
    pub const ALL: [Kind; 8] = [
        Kind::Connect,
        Kind::Write,
        Kind::Read,
        Kind::Parse,
        Kind::Timeout,
        Kind::Tls,
        Kind::Reset,
        Kind::Protocol,
    ];

    /// The counter's name, as in the JSON's `errors`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Connect => "connect",
            Kind::Write => "write",
            Kind::Read => "read",
            Kind::Parse => "parse",
            Kind::Timeout => "timeout",
            Kind::Tls => "tls",
            Kind::Reset => "reset",
            Kind::Protocol => "protocol",
        }
    }

    /// Reads a name written by [`Kind::as_str`].
    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where in a request's life something happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum At {
    /// While the TCP connection was being opened.
    Connect,
    /// During the TLS handshake.
    Handshake,
    /// Before any byte of the response.
    BeforeResponse,
    /// Within the response head.
    MidHead,
    /// Within the response body.
    MidBody,
}

impl At {
    const ALL: [At; 5] = [
        At::Connect,
        At::Handshake,
        At::BeforeResponse,
        At::MidHead,
        At::MidBody,
    ];

    /// Its code, as part of a cause's code.
    pub fn as_str(self) -> &'static str {
        match self {
            At::Connect => "connect",
            At::Handshake => "handshake",
            At::BeforeResponse => "before_response",
            At::MidHead => "mid_head",
            At::MidBody => "mid_body",
        }
    }
}

/// Which rule of HTTP/1 framing a response broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    /// The status line or a header line is malformed.
    Head,
    /// The head did not end within the size foxbench accepts.
    HeadTooLarge,
    /// Content-Length is not a number, or two of them disagree.
    ContentLength,
    /// A chunk-size line is not hexadecimal, or overflows.
    ChunkSize,
    /// The server switched protocols (101).
    Upgrade,
}

impl Rule {
    const ALL: [Rule; 5] = [
        Rule::Head,
        Rule::HeadTooLarge,
        Rule::ContentLength,
        Rule::ChunkSize,
        Rule::Upgrade,
    ];

    /// Its code.
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Head => "bad_head",
            Rule::HeadTooLarge => "head_too_large",
            Rule::ContentLength => "bad_content_length",
            Rule::ChunkSize => "bad_chunk_size",
            Rule::Upgrade => "upgrade",
        }
    }
}

/// Which rule of a response's form an HTTP/2 response broke: it is malformed (RFC 9113
/// 8.1.1, the rules of 8.1 to 8.3), and "clients MUST NOT accept a malformed response". The
/// same rules hold for HTTP/3 (RFC 9114 4.1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Malformed {
    /// No `:status`, two of them, one that is not three digits (or below 100), or 101
    /// (HTTP/2 has no protocol switch).
    Status,
    /// A pseudo-header other than `:status` (a request's, or an unknown one), one after a
    /// regular field, or one in the trailers.
    Pseudo,
    /// A field name with an uppercase letter, a colon past its first byte, a space, a
    /// control or a non-ASCII byte, or an empty one.
    FieldName,
    /// A field value with NUL, CR or LF, or starting or ending with a space or a tab.
    FieldValue,
    /// A connection-specific field (`connection`, `keep-alive`, `proxy-connection`,
    /// `transfer-encoding`, `upgrade`).
    ConnectionField,
    /// `content-length` is not a number, two disagree, or it disagrees with the DATA
    /// received (a response to HEAD, a 204 and a 304 have no content, whatever it says).
    ContentLength,
    /// DATA before the response's HEADERS, or trailers that do not end the stream.
    FrameOrder,
    /// An informational (1xx) response that ended the stream: the final one never came.
    InterimEnd,
}

impl Malformed {
    /// Every rule, in the order their codes are listed.
    pub const ALL: [Malformed; 8] = [
        Malformed::Status,
        Malformed::Pseudo,
        Malformed::FieldName,
        Malformed::FieldValue,
        Malformed::ConnectionField,
        Malformed::ContentLength,
        Malformed::FrameOrder,
        Malformed::InterimEnd,
    ];

    /// Its code.
    pub fn as_str(self) -> &'static str {
        match self {
            Malformed::Status => "malformed_status",
            Malformed::Pseudo => "malformed_pseudo_header",
            Malformed::FieldName => "malformed_field_name",
            Malformed::FieldValue => "malformed_field_value",
            Malformed::ConnectionField => "malformed_connection_field",
            Malformed::ContentLength => "malformed_content_length",
            Malformed::FrameOrder => "malformed_frame_order",
            Malformed::InterimEnd => "malformed_interim_end",
        }
    }

    /// What the response broke, in plain words: the report's and the verification's.
    pub fn words(self) -> &'static str {
        match self {
            Malformed::Status => "no valid :status (none, two, not three digits, or 101)",
            Malformed::Pseudo => {
                "a pseudo-header other than :status, after a regular field, or in the trailers"
            }
            Malformed::FieldName => {
                "a field name with an uppercase letter, a space, a colon or a byte outside ASCII"
            }
            Malformed::FieldValue => "a field value with NUL, CR or LF, or a space at either end",
            Malformed::ConnectionField => {
                "a connection-specific field (connection, keep-alive, transfer-encoding, upgrade)"
            }
            Malformed::ContentLength => {
                "content-length is not a number, two disagree, or it disagrees with the DATA received"
            }
            Malformed::FrameOrder => {
                "DATA before the response's HEADERS, or trailers that did not end the stream"
            }
            Malformed::InterimEnd => "an informational (1xx) response ended the stream",
        }
    }
}

/// Why the server's certificate did not verify.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CertProblem {
    /// Its validity ended.
    Expired,
    /// Its validity has not begun.
    NotValidYet,
    /// It is not valid for the name connected to.
    WrongName,
    /// Its issuer is not trusted (or it is self-signed and not trusted itself).
    UnknownIssuer,
    /// It is a CA certificate (`CA:TRUE`) used as a server's.
    CaUsedAsServer,
    /// Its signature does not verify.
    BadSignature,
    /// It was revoked.
    Revoked,
    /// Anything else: a bad encoding, an unsupported algorithm or purpose.
    Invalid,
}

impl CertProblem {
    /// Every problem, in the order their codes are listed.
    pub const ALL: [CertProblem; 8] = [
        CertProblem::Expired,
        CertProblem::NotValidYet,
        CertProblem::WrongName,
        CertProblem::UnknownIssuer,
        CertProblem::CaUsedAsServer,
        CertProblem::BadSignature,
        CertProblem::Revoked,
        CertProblem::Invalid,
    ];

    /// Its code.
    pub fn as_str(self) -> &'static str {
        match self {
            CertProblem::Expired => "cert_expired",
            CertProblem::NotValidYet => "cert_not_valid_yet",
            CertProblem::WrongName => "cert_wrong_name",
            CertProblem::UnknownIssuer => "cert_unknown_issuer",
            CertProblem::CaUsedAsServer => "cert_ca_used_as_server",
            CertProblem::BadSignature => "cert_bad_signature",
            CertProblem::Revoked => "cert_revoked",
            CertProblem::Invalid => "cert_invalid",
        }
    }
}

/// What happened, beside the kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Cause {
    /// The operating system's error number (Linux).
    Errno(u16),
    /// The server closed the connection (FIN).
    Closed(At),
    /// The server reset the connection (ECONNRESET).
    Reset(At),
    /// The server ended TLS with close_notify.
    CloseNotify(At),
    /// Nothing came within the timeout.
    Timeout(At),
    /// The response broke a framing rule.
    Parse(Rule),
    /// The server sent this TLS alert.
    AlertReceived(u8),
    /// foxbench sent this TLS alert. Only where the alert is known: rustls's errors do not
    /// say which alert it sent, so [`Cause::PeerIncompatible`], [`Cause::PeerMisbehaved`]
    /// and [`Cause::BadRecord`] say what is known instead.
    AlertSent(u8),
    /// The server's certificate did not verify.
    Cert(CertProblem),
    /// The server did not answer with TLS: a malformed message during the handshake.
    NotTls,
    /// The server offered nothing foxbench accepts (TLS version, cipher suite, key
    /// exchange, signature scheme).
    PeerIncompatible,
    /// The server broke the TLS protocol (or presented no certificate).
    PeerMisbehaved,
    /// After the handshake, a TLS record from the server was malformed, too large, or did
    /// not decrypt.
    BadRecord,
    /// Any other failure of the TLS layer.
    TlsOther,
    /// HTTP/2: the server sent this error code (RST_STREAM or GOAWAY).
    H2Received(u32),
    /// HTTP/2: foxbench found the server breaking the protocol and ended the stream or the
    /// connection with this error code.
    H2Sent(u32),
    /// HTTP/2 was asked for and the server does not speak it (ALPN, or the h2c preface).
    NoH2,
    /// HTTP/3: the server ended the request's stream (RESET_STREAM) or the connection
    /// (CONNECTION_CLOSE) with this HTTP/3 or QPACK error code; codes past `u32` are kept as
    /// `u32::MAX`.
    H3Received(u32),
    /// HTTP/3: foxbench found the server breaking HTTP/3 or QPACK and ended the connection
    /// with this error code.
    H3Sent(u32),
    /// QUIC: the connection was closed with this transport error code (RFC 9000 20.1),
    /// by the server or by foxbench's QUIC stack.
    Quic(u32),
    /// HTTP/3 was asked for and the server does not speak it: ALPN chose no `h3`.
    NoH3,
    /// The response was malformed (HTTP/2's rules of form): foxbench reset its stream with
    /// PROTOCOL_ERROR.
    Malformed(Malformed),
    /// Nothing more is known.
    #[default]
    Unknown,
}

/// Linux errno numbers and names, for the codes; the ones a load generator meets.
pub const ERRNOS: [(u16, &str); 20] = [
    (1, "EPERM"),
    (4, "EINTR"),
    (5, "EIO"),
    (11, "EAGAIN"),
    (12, "ENOMEM"),
    (13, "EACCES"),
    (22, "EINVAL"),
    (23, "ENFILE"),
    (24, "EMFILE"),
    (32, "EPIPE"),
    (98, "EADDRINUSE"),
    (99, "EADDRNOTAVAIL"),
    (100, "ENETDOWN"),
    (101, "ENETUNREACH"),
    (103, "ECONNABORTED"),
    (104, "ECONNRESET"),
    (105, "ENOBUFS"),
    (110, "ETIMEDOUT"),
    (111, "ECONNREFUSED"),
    (113, "EHOSTUNREACH"),
];

/// Linux's ECONNREFUSED.
pub const ECONNREFUSED: u16 = 111;
/// Linux's EADDRNOTAVAIL.
pub const EADDRNOTAVAIL: u16 = 99;
/// Linux's ECONNRESET.
pub const ECONNRESET: u16 = 104;

/// TLS alert numbers and names (RFC 8446 section 6, and TLS 1.2's).
pub const ALERTS: [(u8, &str); 27] = [
    (0, "close_notify"),
    (10, "unexpected_message"),
    (20, "bad_record_mac"),
    (22, "record_overflow"),
    (40, "handshake_failure"),
    (42, "bad_certificate"),
    (43, "unsupported_certificate"),
    (44, "certificate_revoked"),
    (45, "certificate_expired"),
    (46, "certificate_unknown"),
    (47, "illegal_parameter"),
    (48, "unknown_ca"),
    (49, "access_denied"),
    (50, "decode_error"),
    (51, "decrypt_error"),
    (70, "protocol_version"),
    (71, "insufficient_security"),
    (80, "internal_error"),
    (86, "inappropriate_fallback"),
    (90, "user_canceled"),
    (109, "missing_extension"),
    (110, "unsupported_extension"),
    (112, "unrecognized_name"),
    (113, "bad_certificate_status_response"),
    (115, "unknown_psk_identity"),
    (116, "certificate_required"),
    (120, "no_application_protocol"),
];

/// HTTP/2 error codes and names (RFC 9113 section 7), indexed by code.
pub const H2_ERRORS: [&str; 14] = [
    "NO_ERROR",
    "PROTOCOL_ERROR",
    "INTERNAL_ERROR",
    "FLOW_CONTROL_ERROR",
    "SETTINGS_TIMEOUT",
    "STREAM_CLOSED",
    "FRAME_SIZE_ERROR",
    "REFUSED_STREAM",
    "CANCEL",
    "COMPRESSION_ERROR",
    "CONNECT_ERROR",
    "ENHANCE_YOUR_CALM",
    "INADEQUATE_SECURITY",
    "HTTP_1_1_REQUIRED",
];

/// The name of HTTP/2 error code `n`, if it is a registered one.
pub fn h2_error_name(n: u32) -> Option<&'static str> {
    H2_ERRORS.get(usize::try_from(n).ok()?).copied()
}

fn h2_error_number(s: &str) -> Option<u32> {
    match H2_ERRORS.iter().position(|name| *name == s) {
        Some(n) => u32::try_from(n).ok(),
        None => s.strip_prefix("code_")?.parse().ok(),
    }
}

/// HTTP/3's and QPACK's error codes and names (RFC 9114 8.1, RFC 9204 6): the same list as
/// `h3wire::error::ALL`, which the load engine's tests hold it to (this crate depends on no
/// other of the workspace).
pub const H3_ERRORS: [(u32, &str); 20] = [
    (0x100, "H3_NO_ERROR"),
    (0x101, "H3_GENERAL_PROTOCOL_ERROR"),
    (0x102, "H3_INTERNAL_ERROR"),
    (0x103, "H3_STREAM_CREATION_ERROR"),
    (0x104, "H3_CLOSED_CRITICAL_STREAM"),
    (0x105, "H3_FRAME_UNEXPECTED"),
    (0x106, "H3_FRAME_ERROR"),
    (0x107, "H3_EXCESSIVE_LOAD"),
    (0x108, "H3_ID_ERROR"),
    (0x109, "H3_SETTINGS_ERROR"),
    (0x10a, "H3_MISSING_SETTINGS"),
    (0x10b, "H3_REQUEST_REJECTED"),
    (0x10c, "H3_REQUEST_CANCELLED"),
    (0x10d, "H3_REQUEST_INCOMPLETE"),
    (0x10e, "H3_MESSAGE_ERROR"),
    (0x10f, "H3_CONNECT_ERROR"),
    (0x110, "H3_VERSION_FALLBACK"),
    (0x200, "QPACK_DECOMPRESSION_FAILED"),
    (0x201, "QPACK_ENCODER_STREAM_ERROR"),
    (0x202, "QPACK_DECODER_STREAM_ERROR"),
];

/// QUIC's transport error codes and names (RFC 9000 20.1), indexed by code; the crypto
/// errors (0x100 + a TLS alert) are counted as TLS alerts instead.
pub const QUIC_ERRORS: [&str; 17] = [
    "NO_ERROR",
    "INTERNAL_ERROR",
    "CONNECTION_REFUSED",
    "FLOW_CONTROL_ERROR",
    "STREAM_LIMIT_ERROR",
    "STREAM_STATE_ERROR",
    "FINAL_SIZE_ERROR",
    "FRAME_ENCODING_ERROR",
    "TRANSPORT_PARAMETER_ERROR",
    "CONNECTION_ID_LIMIT_ERROR",
    "PROTOCOL_VIOLATION",
    "INVALID_TOKEN",
    "APPLICATION_ERROR",
    "CRYPTO_BUFFER_EXCEEDED",
    "KEY_UPDATE_ERROR",
    "AEAD_LIMIT_REACHED",
    "NO_VIABLE_PATH",
];

/// The name of HTTP/3 or QPACK error code `n`, if it is a registered one.
pub fn h3_error_name(n: u32) -> Option<&'static str> {
    H3_ERRORS.iter().find(|(k, _)| *k == n).map(|(_, s)| *s)
}

fn h3_error_number(s: &str) -> Option<u32> {
    match H3_ERRORS.iter().find(|(_, name)| *name == s) {
        Some((n, _)) => Some(*n),
        None => s.strip_prefix("code_")?.parse().ok(),
    }
}

fn quic_error_number(s: &str) -> Option<u32> {
    match QUIC_ERRORS.iter().position(|name| *name == s) {
        Some(n) => u32::try_from(n).ok(),
        None => s.strip_prefix("code_")?.parse().ok(),
    }
}

/// The name of errno `n`, if it is one of [`ERRNOS`].
pub fn errno_name(n: u16) -> Option<&'static str> {
    ERRNOS.iter().find(|(k, _)| *k == n).map(|(_, s)| *s)
}

/// The name of TLS alert `n`, if it is a known one.
pub fn alert_name(n: u8) -> Option<&'static str> {
    ALERTS.iter().find(|(k, _)| *k == n).map(|(_, s)| *s)
}

fn alert_number(s: &str) -> Option<u8> {
    match ALERTS.iter().find(|(_, name)| *name == s) {
        Some((n, _)) => Some(*n),
        None => s.strip_prefix("alert_")?.parse().ok(),
    }
}

impl Cause {
    /// Its stable machine code, e.g. `ECONNRESET`, `closed_mid_body`,
    /// `alert_received:certificate_required`, `cert_expired`.
    pub fn code(self) -> String {
        let alert = |n: u8| match alert_name(n) {
            Some(s) => s.to_string(),
            None => format!("alert_{n}"),
        };
        let h2 = |n: u32| match h2_error_name(n) {
            Some(s) => s.to_string(),
            None => format!("code_{n}"),
        };
        let h3 = |n: u32| match h3_error_name(n) {
            Some(s) => s.to_string(),
            None => format!("code_{n}"),
        };
        let quic = |n: u32| match QUIC_ERRORS.get(n as usize) {
            Some(s) => s.to_string(),
            None => format!("code_{n}"),
        };
        match self {
            Cause::Errno(n) => match errno_name(n) {
                Some(s) => s.to_string(),
                None => format!("errno_{n}"),
            },
            Cause::Closed(at) => format!("closed_{}", at.as_str()),
            Cause::Reset(at) => format!("reset_{}", at.as_str()),
            Cause::CloseNotify(at) => format!("close_notify_{}", at.as_str()),
            Cause::Timeout(at) => format!("timeout_{}", at.as_str()),
            Cause::Parse(rule) => rule.as_str().to_string(),
            Cause::AlertReceived(n) => format!("alert_received:{}", alert(n)),
            Cause::AlertSent(n) => format!("alert_sent:{}", alert(n)),
            Cause::Cert(p) => p.as_str().to_string(),
            Cause::NotTls => "not_tls".to_string(),
            Cause::PeerIncompatible => "peer_incompatible".to_string(),
            Cause::PeerMisbehaved => "peer_misbehaved".to_string(),
            Cause::BadRecord => "bad_record".to_string(),
            Cause::TlsOther => "tls_other".to_string(),
            Cause::H2Received(n) => format!("h2_received:{}", h2(n)),
            Cause::H2Sent(n) => format!("h2_sent:{}", h2(n)),
            Cause::NoH2 => "no_h2".to_string(),
            Cause::H3Received(n) => format!("h3_received:{}", h3(n)),
            Cause::H3Sent(n) => format!("h3_sent:{}", h3(n)),
            Cause::Quic(n) => format!("quic:{}", quic(n)),
            Cause::NoH3 => "no_h3".to_string(),
            Cause::Malformed(m) => m.as_str().to_string(),
            Cause::Unknown => "unknown".to_string(),
        }
    }

    /// Reads a code written by [`Cause::code`].
    pub fn parse(s: &str) -> Option<Cause> {
        if let Some(n) = s.strip_prefix("alert_received:") {
            return alert_number(n).map(Cause::AlertReceived);
        }
        if let Some(n) = s.strip_prefix("alert_sent:") {
            return alert_number(n).map(Cause::AlertSent);
        }
        if let Some(n) = s.strip_prefix("h2_received:") {
            return h2_error_number(n).map(Cause::H2Received);
        }
        if let Some(n) = s.strip_prefix("h2_sent:") {
            return h2_error_number(n).map(Cause::H2Sent);
        }
        if let Some(n) = s.strip_prefix("h3_received:") {
            return h3_error_number(n).map(Cause::H3Received);
        }
        if let Some(n) = s.strip_prefix("h3_sent:") {
            return h3_error_number(n).map(Cause::H3Sent);
        }
        if let Some(n) = s.strip_prefix("quic:") {
            return quic_error_number(n).map(Cause::Quic);
        }
        if let Some(n) = s.strip_prefix("errno_") {
            return n.parse().ok().map(Cause::Errno);
        }
        if let Some((n, _)) = ERRNOS.iter().find(|(_, name)| *name == s) {
            return Some(Cause::Errno(*n));
        }
        type Staged = fn(At) -> Cause;
        let staged: [(&str, Staged); 4] = [
            ("closed_", Cause::Closed),
            ("reset_", Cause::Reset),
            ("close_notify_", Cause::CloseNotify),
            ("timeout_", Cause::Timeout),
        ];
        for (prefix, make) in staged {
            if let Some(rest) = s.strip_prefix(prefix) {
                if let Some(at) = At::ALL.into_iter().find(|a| a.as_str() == rest) {
                    return Some(make(at));
                }
            }
        }
        if let Some(r) = Rule::ALL.into_iter().find(|r| r.as_str() == s) {
            return Some(Cause::Parse(r));
        }
        if let Some(p) = CertProblem::ALL.into_iter().find(|p| p.as_str() == s) {
            return Some(Cause::Cert(p));
        }
        if let Some(m) = Malformed::ALL.into_iter().find(|m| m.as_str() == s) {
            return Some(Cause::Malformed(m));
        }
        match s {
            "not_tls" => Some(Cause::NotTls),
            "peer_incompatible" => Some(Cause::PeerIncompatible),
            "peer_misbehaved" => Some(Cause::PeerMisbehaved),
            "bad_record" => Some(Cause::BadRecord),
            "tls_other" => Some(Cause::TlsOther),
            "no_h2" => Some(Cause::NoH2),
            "no_h3" => Some(Cause::NoH3),
            "unknown" => Some(Cause::Unknown),
            _ => None,
        }
    }
}

/// Why one request failed: the counter it is in, and what happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Reason {
    /// The error counter.
    pub kind: Kind,
    /// What happened.
    pub cause: Cause,
}

impl Reason {
    /// A reason.
    pub const fn new(kind: Kind, cause: Cause) -> Self {
        Self { kind, cause }
    }
}

/// How many distinct reasons a table keeps; the rest are counted per kind as "other".
pub const REASONS_KEPT: usize = 16;

/// Failed requests by reason: the first [`REASONS_KEPT`] distinct reasons, and per kind an
/// "other" count past them. Fixed size and `Copy`, so that counting allocates nothing and
/// the table rides inside [`crate::Counts`] through intervals and merges.
///
/// For every kind, the table's count of that kind equals the error counter it shadows.
#[derive(Debug, Clone, Copy, Default)]
pub struct Reasons {
    rows: [(Reason, u64); REASONS_KEPT],
    len: u8,
    other: [u64; Kind::ALL.len()],
}

impl PartialEq for Reasons {
    /// Equal when every reason has the same count (whatever the order they came in).
    fn eq(&self, other: &Self) -> bool {
        self.other == other.other
            && self.len == other.len
            && self.rows().iter().all(|(r, n)| other.count(*r) == Some(*n))
    }
}

impl Eq for Reasons {}

impl Reasons {
    /// Counts `n` requests failed for `reason`.
    #[inline]
    pub fn add(&mut self, reason: Reason, n: u64) {
        if n == 0 {
            return;
        }
        let len = usize::from(self.len);
        if let Some(row) = self.rows[..len].iter_mut().find(|(r, _)| *r == reason) {
            row.1 += n;
        } else if len < REASONS_KEPT {
            self.rows[len] = (reason, n);
            self.len += 1;
        } else {
            self.other[reason.kind.index()] += n;
        }
    }

    /// The reasons kept, in the order they first came, each with its count.
    pub fn rows(&self) -> &[(Reason, u64)] {
        &self.rows[..usize::from(self.len)]
    }

    /// The count of `reason`, if the table keeps it.
    pub fn count(&self, reason: Reason) -> Option<u64> {
        self.rows()
            .iter()
            .find(|(r, _)| *r == reason)
            .map(|(_, n)| *n)
    }

    /// Failures of `kind` past the table's room: their reasons were not kept.
    pub fn other(&self, kind: Kind) -> u64 {
        self.other[kind.index()]
    }

    /// Every failure of `kind`, kept or not.
    pub fn of_kind(&self, kind: Kind) -> u64 {
        let kept: u64 = self
            .rows()
            .iter()
            .filter(|(r, _)| r.kind == kind)
            .map(|(_, n)| n)
            .sum();
        kept + self.other(kind)
    }

    /// Every failure counted.
    pub fn total(&self) -> u64 {
        self.rows().iter().map(|(_, n)| n).sum::<u64>() + self.other.iter().sum::<u64>()
    }

    /// True when nothing is counted.
    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }

    /// The kept reasons, most frequent first (ties in the order they came).
    pub fn ranked(&self) -> Vec<(Reason, u64)> {
        let mut rows = self.rows().to_vec();
        rows.sort_by_key(|r| std::cmp::Reverse(r.1));
        rows
    }

    /// Adds `other` into `self`; reasons past the room go to their kind's "other".
    pub fn merge(&mut self, other: &Reasons) {
        for &(r, n) in other.rows() {
            self.add(r, n);
        }
        for (mine, theirs) in self.other.iter_mut().zip(other.other) {
            *mine += theirs;
        }
    }

    /// Counts `n` failures of `kind` whose reason is not known (read from a file that
    /// carries only an "other" count).
    pub fn add_other(&mut self, kind: Kind, n: u64) {
        self.other[kind.index()] += n;
    }

    /// What was counted between `earlier` and `self`, two readings of the same table.
    pub fn since(&self, earlier: &Reasons) -> Reasons {
        let mut d = Reasons::default();
        for &(r, n) in self.rows() {
            d.add(r, n.saturating_sub(earlier.count(r).unwrap_or(0)));
        }
        for (i, k) in Kind::ALL.into_iter().enumerate() {
            d.other[i] = self.other(k).saturating_sub(earlier.other(k));
        }
        d
    }
}

#[cfg(test)]
mod tests;
