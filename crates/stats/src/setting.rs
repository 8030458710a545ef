//! The settings an error's advice names, and advice as text with the settings left typed.
//!
//! A library error says which setting is at fault or would fix it ([`Setting`]), never how
//! a user gives that setting: the CLI gives it as a flag (`--cacert FILE`), a suite file as
//! a key (`cacert = "FILE"`). A [`Text`] keeps its settings as values until an edge words
//! them with its one [`Wording`]; its `Display` words them as the plan names them.
//!
//! It lives here, the lowest crate both `load` (errors) and `report` (the hints of failure
//! reasons) depend on; `load` re-exports it as `load::setting`. It names no flag and no
//! suite key.

use std::fmt;

/// A setting of a run that an error names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Setting {
    /// Connections (`load::Plan::connections`).
    Connections,
    /// Worker threads.
    Threads,
    /// Requests in flight per HTTP/1.1 connection.
    Pipeline,
    /// HTTP/2 streams per connection.
    Streams,
    /// The HTTP/2 stream window.
    Window,
    /// The HTTP/2 connection window.
    ConnectionWindow,
    /// The open model's arrival rate.
    Rate,
    /// The number of requests (`-n`).
    Requests,
    /// The run's duration.
    Duration,
    /// The response timeout, which also bounds a TLS handshake.
    Timeout,
    /// The connect timeout.
    ConnectTimeout,
    /// The interval of recorded latencies.
    Interval,
    /// The request table read from a file.
    Urls,
    /// HTTP/2 instead of HTTP/1.1 ([`crate::Protocol::Http2`]).
    Http2,
    /// HTTP/3 over QUIC instead of HTTP/1.1 ([`crate::Protocol::Http3`]).
    Http3,
    /// The CA certificates a server's certificate is verified against (`load::Verify::CaFile`).
    CaFile,
    /// No verification of the server's certificate (`load::Verify::Insecure`).
    Insecure,
    /// A client certificate and its key (`load::ClientCert`).
    ClientCert,
    /// How each request picks its line of the request table.
    Select,
    /// The shard of a plan an agent runs, and how many shards the plan has.
    Shard,
    /// A merge of agents' results that accepts missing and interrupted shards.
    PartialOk,
    /// New connections per second that the client closes first (a limit check's demand).
    ClosesPerS,
    /// Threads of the server, a thread per connection (a limit check's demand).
    ServerThreads,
    /// The significance level of a comparison's test.
    Alpha,
    /// A comparison that refuses runs measured on different hardware.
    SameMachine,
    /// The closed model's wait before sleeping, which batches wake-ups (`load::Coalesce`).
    Coalesce,
    /// What a worker does when nothing is ready: spin or sleep (`load::Idle`).
    Idle,
}

impl Setting {
    /// Every setting, for tables that must word each one.
    pub const ALL: [Setting; 27] = [
        Setting::Connections,
        Setting::Threads,
        Setting::Pipeline,
        Setting::Streams,
        Setting::Window,
        Setting::ConnectionWindow,
        Setting::Rate,
        Setting::Requests,
        Setting::Duration,
        Setting::Timeout,
        Setting::ConnectTimeout,
        Setting::Interval,
        Setting::Urls,
        Setting::Http2,
        Setting::CaFile,
        Setting::Insecure,
        Setting::ClientCert,
        Setting::Select,
        Setting::Shard,
        Setting::PartialOk,
        Setting::ClosesPerS,
        Setting::ServerThreads,
        Setting::Alpha,
        Setting::SameMachine,
        Setting::Coalesce,
        Setting::Idle,
        Setting::Http3,
    ];

    /// The setting as the plan names it.
    pub fn name(self) -> &'static str {
        match self {
            Setting::Connections => "connections",
            Setting::Threads => "threads",
            Setting::Pipeline => "pipeline",
            Setting::Streams => "streams",
            Setting::Window => "window",
            Setting::ConnectionWindow => "connection window",
            Setting::Rate => "rate",
            Setting::Requests => "requests",
            Setting::Duration => "duration",
            Setting::Timeout => "timeout",
            Setting::ConnectTimeout => "connect timeout",
            Setting::Interval => "interval",
            Setting::Urls => "request table",
            Setting::Http2 => "HTTP/2",
            Setting::Http3 => "HTTP/3",
            Setting::CaFile => "CA file",
            Setting::Insecure => "insecure",
            Setting::ClientCert => "client certificate",
            Setting::Select => "selection",
            Setting::Shard => "shard",
            Setting::PartialOk => "partial merge",
            Setting::ClosesPerS => "closes per second",
            Setting::ServerThreads => "server threads",
            Setting::Alpha => "significance level",
            Setting::SameMachine => "same-machine requirement",
            Setting::Coalesce => "coalescing wait",
            Setting::Idle => "idle mode",
        }
    }
}

/// How one edge words settings: the CLI as flags, the shootout as suite keys.
pub trait Wording {
    /// The setting's name: `--cacert`, `the scenario's cacert`.
    fn name(&self, setting: Setting) -> String;
    /// How to give one of `settings` (an alternative, in order): `pass --cacert FILE or
    /// --insecure`.
    fn give(&self, settings: &[Setting]) -> String;
    /// How to take `setting` away: `drop --http2`.
    fn drop(&self, setting: Setting) -> String;
    /// The setting with the values it takes, as a user writes it: `--cert FILE --key FILE`.
    /// By default its name.
    fn usage(&self, setting: Setting) -> String {
        self.name(setting)
    }
}

/// The plan's own wording, for `Display`: settings by [`Setting::name`].
#[derive(Debug, Clone, Copy)]
pub struct PlanWording;

impl Wording for PlanWording {
    fn name(&self, setting: Setting) -> String {
        format!("the {} setting", setting.name())
    }

    fn give(&self, settings: &[Setting]) -> String {
        let names: Vec<_> = settings.iter().map(|s| s.name()).collect();
        format!("set the {} setting", names.join(" or the "))
    }

    fn drop(&self, setting: Setting) -> String {
        format!("unset the {} setting", setting.name())
    }
}

/// One piece of a [`Text`].
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Plain(String),
    Name(Setting),
    Give(Vec<Setting>),
    Drop(Setting),
    Usage(Setting),
}

/// A message whose settings are worded by the edge that shows it ([`Text::worded`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Text(Vec<Part>);

impl Text {
    /// Text that names no setting.
    pub fn plain(s: impl Into<String>) -> Text {
        Text(vec![Part::Plain(s.into())])
    }

    /// Appends plain words.
    pub fn then(mut self, s: impl Into<String>) -> Text {
        self.0.push(Part::Plain(s.into()));
        self
    }

    /// Appends a setting's name.
    pub fn name(mut self, setting: Setting) -> Text {
        self.0.push(Part::Name(setting));
        self
    }

    /// Appends how to give one of `settings`.
    pub fn give(mut self, settings: &[Setting]) -> Text {
        self.0.push(Part::Give(settings.to_vec()));
        self
    }

    /// Appends how to take `setting` away.
    pub fn drop(mut self, setting: Setting) -> Text {
        self.0.push(Part::Drop(setting));
        self
    }

    /// Appends a setting with the values it takes ([`Wording::usage`]).
    pub fn usage(mut self, setting: Setting) -> Text {
        self.0.push(Part::Usage(setting));
        self
    }

    /// Appends another text.
    pub fn and(mut self, other: Text) -> Text {
        self.0.extend(other.0);
        self
    }

    /// The settings it names, in order, for tables that check each one is worded.
    pub fn settings(&self) -> Vec<Setting> {
        self.0
            .iter()
            .flat_map(|p| match p {
                Part::Plain(_) => vec![],
                Part::Name(s) | Part::Drop(s) | Part::Usage(s) => vec![*s],
                Part::Give(v) => v.clone(),
            })
            .collect()
    }

    /// The text with each setting worded by `wording`.
    pub fn worded(&self, wording: &dyn Wording) -> String {
        let mut out = String::new();
        for part in &self.0 {
            match part {
                Part::Plain(s) => out.push_str(s),
                Part::Name(s) => out.push_str(&wording.name(*s)),
                Part::Give(v) => out.push_str(&wording.give(v)),
                Part::Drop(s) => out.push_str(&wording.drop(*s)),
                Part::Usage(s) => out.push_str(&wording.usage(*s)),
            }
        }
        out
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text::plain(s)
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text::plain(s)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.worded(&PlanWording))
    }
}

#[cfg(test)]
mod tests;
