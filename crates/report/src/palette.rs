//! The colours of a run's series, one per series: the load page's SVG charts
//! ([`crate::load_html`]) and the live dashboard's (the `dashboard` crate hands
//! [`Line::ALL`] to its page) both take them from here, so that p99 is one colour on both.
//!
//! A shootout's charts colour by target instead (`shootout::svg::PALETTE`, in assignment
//! order): there a colour names a server, here a figure. Red is kept for verdicts: a
//! failed window, a broken objective, the client-bound line.

/// A series of a run's charts, or a verdict drawn on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Line {
    /// Complete responses per second.
    Rate,
    /// The open model's target rate (the schedule).
    Target,
    /// Errors per second, all kinds.
    Errors,
    /// Errors per second of one kind (the dashboard's errors chart): connect.
    ErrorsConnect,
    /// Write errors.
    ErrorsWrite,
    /// Read errors.
    ErrorsRead,
    /// Parse errors.
    ErrorsParse,
    /// Timeouts.
    ErrorsTimeout,
    /// TLS errors.
    ErrorsTls,
    /// Median latency.
    P50,
    /// 99th percentile latency.
    P99,
    /// Longest latency.
    Max,
    /// Open model: median service time (from the write), beside [`Line::P50`].
    ServiceP50,
    /// Open model: 99th percentile service time, beside [`Line::P99`].
    ServiceP99,
    /// Connections open.
    Connections,
    /// The client's CPU.
    Cpu,
    /// The part of the CPU spent spinning: every empty poll (the open model's last stretch
    /// before a due instant, every empty turn of a worker that spins).
    Spin,
    /// The client-bound line: the CPU share above which the client is the limit.
    Saturated,
    /// A verdict that held: a window that held the objective, an objective's line that
    /// holds.
    Held,
    /// A verdict that failed: a window that failed, an objective's line once broken.
    Failed,
}

impl Line {
    /// Every line.
    pub const ALL: [Line; 20] = [
        Line::Rate,
        Line::Target,
        Line::Errors,
        Line::ErrorsConnect,
        Line::ErrorsWrite,
        Line::ErrorsRead,
        Line::ErrorsParse,
        Line::ErrorsTimeout,
        Line::ErrorsTls,
        Line::P50,
        Line::P99,
        Line::Max,
        Line::ServiceP50,
        Line::ServiceP99,
        Line::Connections,
        Line::Cpu,
        Line::Spin,
        Line::Saturated,
        Line::Held,
        Line::Failed,
    ];

    /// Its name in the page's table of colours: `p50`, `service_p99`, `errors_tls`.
    pub fn key(self) -> &'static str {
        match self {
            Line::Rate => "rate",
            Line::Target => "target",
            Line::Errors => "errors",
            Line::ErrorsConnect => "errors_connect",
            Line::ErrorsWrite => "errors_write",
            Line::ErrorsRead => "errors_read",
            Line::ErrorsParse => "errors_parse",
            Line::ErrorsTimeout => "errors_timeout",
            Line::ErrorsTls => "errors_tls",
            Line::P50 => "p50",
            Line::P99 => "p99",
            Line::Max => "max",
            Line::ServiceP50 => "service_p50",
            Line::ServiceP99 => "service_p99",
            Line::Connections => "connections",
            Line::Cpu => "cpu",
            Line::Spin => "spin",
            Line::Saturated => "saturated",
            Line::Held => "held",
            Line::Failed => "failed",
        }
    }

    /// Its colour, `#rrggbb`. A service time takes a colour of its own, of the same family
    /// as the latency it is drawn beside (and dashed).
    pub fn colour(self) -> &'static str {
        match self {
            Line::Rate => "#1f77b4",          // blue
            Line::Target => "#888888",        // grey
            Line::Errors => "#8c564b",        // brown
            Line::ErrorsConnect => "#8c564b", // brown
            Line::ErrorsWrite => "#e377c2",   // pink
            Line::ErrorsRead => "#1f77b4",    // blue
            Line::ErrorsParse => "#9467bd",   // purple
            Line::ErrorsTimeout => "#ff7f0e", // orange
            Line::ErrorsTls => "#17becf",     // cyan
            Line::P50 => "#1f77b4",           // blue
            Line::P99 => "#ff7f0e",           // orange
            Line::Max => "#9467bd",           // purple
            Line::ServiceP50 => "#17becf",    // cyan
            Line::ServiceP99 => "#b8860b",    // dark gold
            Line::Connections => "#2ca02c",   // green
            Line::Cpu => "#9467bd",           // purple
            Line::Spin => "#c51b7d",          // magenta
            Line::Saturated => "#d62728",     // red
            Line::Held => "#2ca02c",          // green
            Line::Failed => "#d62728",        // red
        }
    }

    /// Its colour as red, green and blue.
    pub fn rgb(self) -> [u8; 3] {
        let hex = |i: usize| u8::from_str_radix(&self.colour()[i..i + 2], 16).unwrap_or(0);
        [hex(1), hex(3), hex(5)]
    }
}

#[cfg(test)]
mod tests;
