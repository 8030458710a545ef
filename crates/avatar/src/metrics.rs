//! Request and connection counters, kept per worker without locks, rendered as Prometheus text.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// What a request was routed to, for the `route` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// Any other path: a 302 to a random image.
    Redirect,
    /// `/random.svg`: a 302 to a random colour.
    RandomSvg,
    /// `/<rrggbb>.svg`.
    Svg,
    /// `/images/<file>` with `--images-dir`.
    Image,
    /// `/healthz`.
    Healthz,
    /// `/metrics`.
    Metrics,
    /// A path that has no resource (a bad `.svg` name, a missing image).
    NotFound,
    /// The request was rejected before routing (method, framing, limits).
    Rejected,
}

impl Route {
    const ALL: [Route; 8] = [
        Route::Redirect,
        Route::RandomSvg,
        Route::Svg,
        Route::Image,
        Route::Healthz,
        Route::Metrics,
        Route::NotFound,
        Route::Rejected,
    ];

    fn label(self) -> &'static str {
        match self {
            Route::Redirect => "redirect",
            Route::RandomSvg => "random_svg",
            Route::Svg => "svg",
            Route::Image => "image",
            Route::Healthz => "healthz",
            Route::Metrics => "metrics",
            Route::NotFound => "not_found",
            Route::Rejected => "rejected",
        }
    }
}

/// Every status code the server sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// 200.
    Ok = 0,
    /// 302.
    Found,
    /// 304.
    NotModified,
    /// 400.
    BadRequest,
    /// 404.
    NotFound,
    /// 405.
    MethodNotAllowed,
    /// 413.
    PayloadTooLarge,
    /// 414.
    UriTooLong,
    /// 431.
    HeaderFieldsTooLarge,
}

impl Status {
    const ALL: [Status; 9] = [
        Status::Ok,
        Status::Found,
        Status::NotModified,
        Status::BadRequest,
        Status::NotFound,
        Status::MethodNotAllowed,
        Status::PayloadTooLarge,
        Status::UriTooLong,
        Status::HeaderFieldsTooLarge,
    ];

    /// The numeric code.
    pub fn code(self) -> u16 {
        match self {
            Status::Ok => 200,
            Status::Found => 302,
            Status::NotModified => 304,
            Status::BadRequest => 400,
            Status::NotFound => 404,
            Status::MethodNotAllowed => 405,
            Status::PayloadTooLarge => 413,
            Status::UriTooLong => 414,
            Status::HeaderFieldsTooLarge => 431,
        }
    }

    /// The status line, `HTTP/1.1 <code> <reason>` without CRLF.
    pub fn line(self) -> &'static str {
        match self {
            Status::Ok => "HTTP/1.1 200 OK",
            Status::Found => "HTTP/1.1 302 Found",
            Status::NotModified => "HTTP/1.1 304 Not Modified",
            Status::BadRequest => "HTTP/1.1 400 Bad Request",
            Status::NotFound => "HTTP/1.1 404 Not Found",
            Status::MethodNotAllowed => "HTTP/1.1 405 Method Not Allowed",
            Status::PayloadTooLarge => "HTTP/1.1 413 Content Too Large",
            Status::UriTooLong => "HTTP/1.1 414 URI Too Long",
            Status::HeaderFieldsTooLarge => "HTTP/1.1 431 Request Header Fields Too Large",
        }
    }
}

/// Why a request could not be parsed or was refused before routing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseError {
    /// The request line or a header line is not HTTP/1.x syntax.
    Malformed,
    /// The head exceeded the head limit (8 KiB), or had too many fields.
    HeadTooLarge,
    /// The request target exceeded its limit.
    TargetTooLong,
    /// Both `Content-Length` and `Transfer-Encoding` were sent (a smuggling attempt).
    Smuggling,
    /// `Content-Length` was not a number, or several disagreed.
    BadContentLength,
    /// An HTTP/1.1 request without exactly one `Host`.
    BadHost,
    /// A body longer than the drain limit.
    BodyTooLarge,
}

impl ParseError {
    const ALL: [ParseError; 7] = [
        ParseError::Malformed,
        ParseError::HeadTooLarge,
        ParseError::TargetTooLong,
        ParseError::Smuggling,
        ParseError::BadContentLength,
        ParseError::BadHost,
        ParseError::BodyTooLarge,
    ];

    fn label(self) -> &'static str {
        match self {
            ParseError::Malformed => "malformed",
            ParseError::HeadTooLarge => "head_too_large",
            ParseError::TargetTooLong => "target_too_long",
            ParseError::Smuggling => "smuggling",
            ParseError::BadContentLength => "bad_content_length",
            ParseError::BadHost => "bad_host",
            ParseError::BodyTooLarge => "body_too_large",
        }
    }

    /// The status the client is told.
    pub fn status(self) -> Status {
        match self {
            ParseError::HeadTooLarge => Status::HeaderFieldsTooLarge,
            ParseError::TargetTooLong => Status::UriTooLong,
            ParseError::BodyTooLarge => Status::PayloadTooLarge,
            _ => Status::BadRequest,
        }
    }
}

/// Why a connection was closed by a timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timeout {
    /// A request head took longer than the head timeout (slowloris).
    Head,
    /// A keep-alive connection sat idle, or a peer stopped reading.
    Idle,
    /// A request body took longer than the head timeout after its head.
    Body,
}

/// HTTP/2 happenings, each a limit or a defence at work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum H2Event {
    /// A connection began with the HTTP/2 preface.
    Connection,
    /// A stream refused with REFUSED_STREAM: past SETTINGS_MAX_CONCURRENT_STREAMS, or too
    /// many response bytes held for flow control.
    StreamRefused,
    /// A header list past SETTINGS_MAX_HEADER_LIST_SIZE (answered with 431).
    HeaderListTooLarge,
    /// A frame past SETTINGS_MAX_FRAME_SIZE (GOAWAY FRAME_SIZE_ERROR).
    FrameTooLarge,
    /// RST_STREAM frames beyond their budget (rapid reset; GOAWAY ENHANCE_YOUR_CALM).
    RapidReset,
    /// A header block past its byte or CONTINUATION bound (GOAWAY ENHANCE_YOUR_CALM).
    ContinuationFlood,
    /// Control frames beyond their budget (GOAWAY ENHANCE_YOUR_CALM).
    ControlFlood,
    /// Any other connection error (GOAWAY with an error, or a bad preface).
    ConnectionError,
    /// A stream error (RST_STREAM sent).
    StreamError,
}

impl H2Event {
    const ALL: [H2Event; 9] = [
        H2Event::Connection,
        H2Event::StreamRefused,
        H2Event::HeaderListTooLarge,
        H2Event::FrameTooLarge,
        H2Event::RapidReset,
        H2Event::ContinuationFlood,
        H2Event::ControlFlood,
        H2Event::ConnectionError,
        H2Event::StreamError,
    ];

    fn label(self) -> &'static str {
        match self {
            H2Event::Connection => "connections",
            H2Event::StreamRefused => "streams_refused",
            H2Event::HeaderListTooLarge => "header_list_too_large",
            H2Event::FrameTooLarge => "frame_too_large",
            H2Event::RapidReset => "rapid_reset",
            H2Event::ContinuationFlood => "continuation_flood",
            H2Event::ControlFlood => "control_flood",
            H2Event::ConnectionError => "connection_errors",
            H2Event::StreamError => "stream_errors",
        }
    }
}

/// HTTP/3 happenings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum H3Event {
    /// A QUIC connection accepted.
    Connection,
    /// A QUIC connection refused: `--max-connections` reached, or the server stopping.
    Refused,
    /// A request stream taken in.
    Stream,
    /// A stream the client reset or stopped.
    StreamReset,
}

impl H3Event {
    const ALL: [H3Event; 4] = [
        H3Event::Connection,
        H3Event::Refused,
        H3Event::Stream,
        H3Event::StreamReset,
    ];

    fn label(self) -> &'static str {
        match self {
            H3Event::Connection => "connections",
            H3Event::Refused => "connections_refused",
            H3Event::Stream => "streams",
            H3Event::StreamReset => "stream_resets",
        }
    }
}

/// HTTP/3's UDP traffic, counted at each system call: what GSO and GRO save shows as
/// datagrams per call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum H3Udp {
    /// Datagrams the socket took (a GSO send counts each it carried).
    DatagramsSent,
    /// `sendmsg`/`sendto` calls, whether the socket took them or not.
    SendCalls,
    /// Datagrams read (a GRO read counts each it held).
    DatagramsReceived,
    /// `recvmsg` calls, the one that found the socket empty included.
    ReceiveCalls,
    /// Datagrams QUIC handed over that the socket did not take (full, or refused): QUIC's
    /// loss recovery sends them again.
    DatagramsDropped,
    /// Connections (or a worker, on `ENOPROTOOPT`) that gave GSO up after the kernel
    /// refused a batch it then took one datagram at a time.
    GsoRefused,
}

impl H3Udp {
    const ALL: [H3Udp; 6] = [
        H3Udp::DatagramsSent,
        H3Udp::SendCalls,
        H3Udp::DatagramsReceived,
        H3Udp::ReceiveCalls,
        H3Udp::DatagramsDropped,
        H3Udp::GsoRefused,
    ];

    /// Its series: the family, then the labels (none: empty).
    fn series(self) -> (&'static str, &'static str) {
        match self {
            H3Udp::DatagramsSent => (H3_DATAGRAMS, "{direction=\"sent\"}"),
            H3Udp::DatagramsReceived => (H3_DATAGRAMS, "{direction=\"received\"}"),
            H3Udp::DatagramsDropped => (H3_DATAGRAMS, "{direction=\"dropped\"}"),
            H3Udp::SendCalls => (H3_UDP_CALLS, "{direction=\"sent\"}"),
            H3Udp::ReceiveCalls => (H3_UDP_CALLS, "{direction=\"received\"}"),
            H3Udp::GsoRefused => (H3_GSO_REFUSED, ""),
        }
    }
}

const H3_DATAGRAMS: &str = "avatar_h3_datagrams_total";
const H3_UDP_CALLS: &str = "avatar_h3_udp_calls_total";
const H3_GSO_REFUSED: &str = "avatar_h3_gso_refused_total";

/// The families [`H3Udp`]'s series belong to, with their help.
const H3_UDP_FAMILIES: [(&str, &str); 3] = [
    (
        H3_DATAGRAMS,
        "HTTP/3's UDP datagrams, by direction: sent, received, or dropped (the socket did not take them).",
    ),
    (
        H3_UDP_CALLS,
        "System calls that sent or read HTTP/3's datagrams, by direction: a GSO send or a GRO read carries many datagrams.",
    ),
    (
        H3_GSO_REFUSED,
        "HTTP/3 connections (or workers, on ENOPROTOOPT) that gave GSO up after the kernel refused a batch (EIO, EINVAL, ENOPROTOOPT) and took its datagrams one at a time.",
    ),
];

/// Slots for HTTP/3 connection error codes: H3_* (0x100..=0x110), QPACK_* (0x200..=0x202),
/// and one for any other.
const H3_ERRORS: usize = 17 + 3 + 1;

fn h3_error_slot(code: u64) -> usize {
    match code {
        0x100..=0x110 => (code - 0x100) as usize,
        0x200..=0x202 => 17 + (code - 0x200) as usize,
        _ => H3_ERRORS - 1,
    }
}

fn h3_slot_code(slot: usize) -> Option<u64> {
    match slot {
        0..=16 => Some(0x100 + slot as u64),
        17..=19 => Some(0x200 + (slot - 17) as u64),
        _ => None,
    }
}

const H3_EVENTS: usize = H3Event::ALL.len();
const H3_UDP: usize = H3Udp::ALL.len();
const H2_EVENTS: usize = H2Event::ALL.len();
const ROUTES: usize = Route::ALL.len();
const STATUSES: usize = Status::ALL.len();
const PARSE_ERRORS: usize = ParseError::ALL.len();

/// One worker's counters; only that worker writes them, anyone may read them.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct WorkerMetrics {
    requests: [[AtomicU64; STATUSES]; ROUTES],
    parse_errors: [AtomicU64; PARSE_ERRORS],
    timeouts: [AtomicU64; 3],
    h2: [AtomicU64; H2_EVENTS],
    h3: [AtomicU64; H3_EVENTS],
    h3_errors: [AtomicU64; H3_ERRORS],
    h3_udp: [AtomicU64; H3_UDP],
    h3_open: AtomicU64,
    h3_streams_peak: AtomicU64,
    h3_uni_peak: AtomicU64,
    h3_held_peak: AtomicU64,
    accepted: AtomicU64,
    rejected: AtomicU64,
    open: AtomicU64,
    log_dropped: AtomicU64,
}

/// Adds one; a plain load and store, since each counter has a single writer.
#[inline]
fn bump(counter: &AtomicU64) {
    counter.store(counter.load(Relaxed).wrapping_add(1), Relaxed);
}

impl WorkerMetrics {
    /// Counts an answered request.
    #[inline]
    pub fn request(&self, route: Route, status: Status) {
        bump(&self.requests[route as usize][status as usize]);
    }

    /// Counts a request that failed to parse or broke a limit.
    pub fn parse_error(&self, kind: ParseError) {
        bump(&self.parse_errors[kind as usize]);
    }

    /// Counts a connection closed by a timer.
    pub fn timeout(&self, kind: Timeout) {
        bump(&self.timeouts[kind as usize]);
    }

    /// Counts an HTTP/2 event.
    #[inline]
    pub fn h2(&self, event: H2Event) {
        bump(&self.h2[event as usize]);
    }

    /// Counts an HTTP/3 event.
    #[inline]
    pub fn h3(&self, event: H3Event) {
        bump(&self.h3[event as usize]);
    }

    /// Adds `n` to HTTP/3's UDP count of `kind`.
    #[inline]
    pub fn h3_udp(&self, kind: H3Udp, n: u64) {
        let c = &self.h3_udp[kind as usize];
        c.store(c.load(Relaxed).wrapping_add(n), Relaxed);
    }

    /// Counts an HTTP/3 connection closed by us with error `code`.
    pub fn h3_error(&self, code: u64) {
        bump(&self.h3_errors[h3_error_slot(code)]);
    }

    /// Raises this worker's high-water mark of request streams in flight on one HTTP/3
    /// connection to `n`, if it is higher.
    #[inline]
    pub fn h3_streams_in_flight(&self, n: usize) {
        if n as u64 > self.h3_streams_peak.load(Relaxed) {
            self.h3_streams_peak.store(n as u64, Relaxed);
        }
    }

    /// Raises this worker's high-water mark of the client's unidirectional streams held on
    /// one HTTP/3 connection to `n`, if it is higher.
    #[inline]
    pub fn h3_uni_streams(&self, n: usize) {
        if n as u64 > self.h3_uni_peak.load(Relaxed) {
            self.h3_uni_peak.store(n as u64, Relaxed);
        }
    }

    /// Raises this worker's high-water mark of response bytes held for flow control on one
    /// HTTP/3 connection to `n`, if it is higher.
    #[inline]
    pub fn h3_held_bytes(&self, n: usize) {
        if n as u64 > self.h3_held_peak.load(Relaxed) {
            self.h3_held_peak.store(n as u64, Relaxed);
        }
    }

    /// Sets this worker's open HTTP/3 connection gauge.
    pub fn set_h3_open(&self, open: usize) {
        self.h3_open.store(open as u64, Relaxed);
    }

    /// Counts an accepted connection.
    pub fn accepted(&self) {
        bump(&self.accepted);
    }

    /// Counts a connection closed at once because `--max-connections` was reached.
    pub fn rejected(&self) {
        bump(&self.rejected);
    }

    /// Counts access log lines dropped because the log writer fell behind.
    pub fn log_dropped(&self, lines: u64) {
        let c = &self.log_dropped;
        c.store(c.load(Relaxed).wrapping_add(lines), Relaxed);
    }

    /// Sets this worker's open-connection gauge.
    pub fn set_open(&self, open: usize) {
        self.open.store(open as u64, Relaxed);
    }
}

/// The counters of all workers.
#[derive(Debug)]
pub struct Metrics {
    workers: Box<[WorkerMetrics]>,
}

impl Metrics {
    /// Creates zeroed counters for `workers` workers.
    pub fn new(workers: usize) -> Self {
        Metrics {
            workers: (0..workers).map(|_| WorkerMetrics::default()).collect(),
        }
    }

    /// The counters of worker `index`.
    pub fn worker(&self, index: usize) -> &WorkerMetrics {
        &self.workers[index]
    }

    fn sum(&self, f: impl Fn(&WorkerMetrics) -> &AtomicU64) -> u64 {
        self.workers.iter().map(|w| f(w).load(Relaxed)).sum()
    }

    /// Total HTTP/2 events of `event`'s kind, over all workers.
    pub fn h2_events(&self, event: H2Event) -> u64 {
        self.sum(|w| &w.h2[event as usize])
    }

    /// Total HTTP/3 events of `event`'s kind, over all workers.
    pub fn h3_events(&self, event: H3Event) -> u64 {
        self.sum(|w| &w.h3[event as usize])
    }

    /// Total HTTP/3 UDP count of `kind`, over all workers.
    pub fn h3_udp(&self, kind: H3Udp) -> u64 {
        self.sum(|w| &w.h3_udp[kind as usize])
    }

    /// Total HTTP/3 connections closed by us with error `code`, over all workers.
    pub fn h3_errors(&self, code: u64) -> u64 {
        self.sum(|w| &w.h3_errors[h3_error_slot(code)])
    }

    /// Total requests answered with `status` on `route`, over all workers.
    pub fn requests(&self, route: Route, status: Status) -> u64 {
        self.sum(|w| &w.requests[route as usize][status as usize])
    }

    /// Appends the Prometheus text exposition (format 0.0.4) to `out`.
    pub fn render(&self, out: &mut Vec<u8>) {
        // Writing into a Vec cannot fail.
        let _ = self.render_inner(out);
    }

    fn render_inner(&self, out: &mut Vec<u8>) -> std::io::Result<()> {
        writeln!(
            out,
            "# HELP avatar_requests_total Requests answered, by route and status."
        )?;
        writeln!(out, "# TYPE avatar_requests_total counter")?;
        for route in Route::ALL {
            for status in Status::ALL {
                let n = self.requests(route, status);
                // The main series always appear, so dashboards see a zero rather than nothing.
                let always = matches!(
                    (route, status),
                    (Route::Redirect, Status::Found) | (Route::Svg, Status::Ok)
                );
                if n > 0 || always {
                    writeln!(
                        out,
                        "avatar_requests_total{{route=\"{}\",status=\"{}\"}} {n}",
                        route.label(),
                        status.code()
                    )?;
                }
            }
        }
        writeln!(
            out,
            "# HELP avatar_parse_errors_total Requests refused by the parser or a limit, by kind."
        )?;
        writeln!(out, "# TYPE avatar_parse_errors_total counter")?;
        for kind in ParseError::ALL {
            let n = self.sum(|w| &w.parse_errors[kind as usize]);
            writeln!(
                out,
                "avatar_parse_errors_total{{kind=\"{}\"}} {n}",
                kind.label()
            )?;
        }
        writeln!(
            out,
            "# HELP avatar_timeouts_total Connections closed by a timer, by kind."
        )?;
        writeln!(out, "# TYPE avatar_timeouts_total counter")?;
        for (kind, label) in [
            (Timeout::Head, "head"),
            (Timeout::Idle, "idle"),
            (Timeout::Body, "body"),
        ] {
            let n = self.sum(|w| &w.timeouts[kind as usize]);
            writeln!(out, "avatar_timeouts_total{{kind=\"{label}\"}} {n}")?;
        }
        writeln!(
            out,
            "# HELP avatar_h2_events_total HTTP/2 connections, and the limits and flood defences at work, by kind."
        )?;
        writeln!(out, "# TYPE avatar_h2_events_total counter")?;
        for event in H2Event::ALL {
            let n = self.sum(|w| &w.h2[event as usize]);
            writeln!(
                out,
                "avatar_h2_events_total{{kind=\"{}\"}} {n}",
                event.label()
            )?;
        }
        writeln!(
            out,
            "# HELP avatar_h3_events_total HTTP/3 connections and streams, by kind."
        )?;
        writeln!(out, "# TYPE avatar_h3_events_total counter")?;
        for event in H3Event::ALL {
            let n = self.sum(|w| &w.h3[event as usize]);
            writeln!(
                out,
                "avatar_h3_events_total{{kind=\"{}\"}} {n}",
                event.label()
            )?;
        }
        writeln!(
            out,
            "# HELP avatar_h3_connection_errors_total HTTP/3 connections we closed with an error, by code."
        )?;
        writeln!(out, "# TYPE avatar_h3_connection_errors_total counter")?;
        for slot in 0..H3_ERRORS {
            let n = self.sum(|w| &w.h3_errors[slot]);
            if n == 0 {
                continue;
            }
            let name = h3_slot_code(slot)
                .and_then(h3wire::error::name)
                .unwrap_or("other");
            writeln!(
                out,
                "avatar_h3_connection_errors_total{{code=\"{name}\"}} {n}"
            )?;
        }
        for (family, help) in H3_UDP_FAMILIES {
            writeln!(out, "# HELP {family} {help}")?;
            writeln!(out, "# TYPE {family} counter")?;
            for kind in H3Udp::ALL {
                let (of, label) = kind.series();
                if of == family {
                    writeln!(out, "{family}{label} {}", self.h3_udp(kind))?;
                }
            }
        }
        let gauges: [(&str, &str, &str, u64); 8] = [
            (
                "avatar_h3_connections_open",
                "gauge",
                "HTTP/3 connections open now.",
                self.sum(|w| &w.h3_open),
            ),
            (
                "avatar_h3_streams_in_flight_max",
                "gauge",
                "The most request streams in flight on one HTTP/3 connection so far (at most --h2-max-streams).",
                self.workers
                    .iter()
                    .map(|w| w.h3_streams_peak.load(Relaxed))
                    .max()
                    .unwrap_or(0),
            ),
            (
                "avatar_h3_uni_streams_max",
                "gauge",
                "The most client unidirectional streams held on one HTTP/3 connection so far (3 critical ones plus those whose type has not come yet, bounded by QUIC credit).",
                self.workers
                    .iter()
                    .map(|w| w.h3_uni_peak.load(Relaxed))
                    .max()
                    .unwrap_or(0),
            ),
            (
                "avatar_h3_held_bytes_max",
                "gauge",
                "The most response bytes held for flow control on one HTTP/3 connection so far (1 MiB plus the one response that crossed it).",
                self.workers
                    .iter()
                    .map(|w| w.h3_held_peak.load(Relaxed))
                    .max()
                    .unwrap_or(0),
            ),
            (
                "avatar_connections_open",
                "gauge",
                "Connections open now.",
                self.sum(|w| &w.open),
            ),
            (
                "avatar_connections_accepted_total",
                "counter",
                "Connections accepted.",
                self.sum(|w| &w.accepted),
            ),
            (
                "avatar_connections_rejected_total",
                "counter",
                "Connections closed at once because --max-connections was reached.",
                self.sum(|w| &w.rejected),
            ),
            (
                "avatar_access_log_dropped_total",
                "counter",
                "Access log lines dropped because stdout did not keep up.",
                self.sum(|w| &w.log_dropped),
            ),
        ];
        for (name, kind, help, value) in gauges {
            writeln!(out, "# HELP {name} {help}")?;
            writeln!(out, "# TYPE {name} {kind}")?;
            writeln!(out, "{name} {value}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
