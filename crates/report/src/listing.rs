//! `foxbench shootout --list`: a suite's plan and targets as text, from a typed [`Listing`]
//! that the shootout fills (which programs are missing, which CPUs each side gets).

use std::fmt::Write as _;

/// What `--list` prints of a suite.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing {
    /// The suite's name.
    pub suite: String,
    /// Where it was read from.
    pub source: String,
    /// The root its commands run in.
    pub root: String,
    /// The CPUs of the load generator.
    pub client_cpus: Vec<usize>,
    /// The CPUs of the targets.
    pub server_cpus: Vec<usize>,
    /// The backing services, when the suite has any.
    pub services: Option<Services>,
    /// The load levels.
    pub levels: Vec<Level>,
    /// The scenarios.
    pub scenarios: Vec<Scenario>,
    /// The targets.
    pub targets: Vec<Target>,
}

/// The backing services of a suite.
#[derive(Debug, Clone, PartialEq)]
pub struct Services {
    /// Their CPUs.
    pub cpus: Vec<usize>,
    /// Where sides share CPUs, one note each.
    pub notes: Vec<String>,
    /// Each service.
    pub rows: Vec<Service>,
}

/// A backing service.
#[derive(Debug, Clone, PartialEq)]
pub struct Service {
    /// Its name.
    pub name: String,
    /// The programs it requires that this machine lacks.
    pub missing: Vec<String>,
}

/// A load level.
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    /// Its name.
    pub name: String,
    /// Its connections.
    pub connections: usize,
    /// The open model's rate, as the suite wrote it.
    pub rate: Option<String>,
    /// A fixed number of requests.
    pub requests: Option<u64>,
    /// TLS session resumption turned off.
    pub no_tls_resumption: bool,
    /// HTTP/2 or HTTP/3 (its name, `HTTP/2`): the streams per connection.
    pub streams: Option<(&'static str, u32)>,
}

/// A scenario: one request shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Its name.
    pub name: String,
    /// The method.
    pub method: String,
    /// The path.
    pub path: String,
    /// Over https: how the certificate is checked.
    pub https: Option<String>,
    /// HTTP/2 or HTTP/3 (its name) at every level it runs.
    pub every_level: Option<&'static str>,
    /// The levels it runs at, when not all.
    pub levels: Option<Vec<String>>,
    /// The targets it runs against, when not all.
    pub targets: Option<Vec<String>>,
}

/// A target.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// Its name.
    pub name: String,
    /// Its language.
    pub language: String,
    /// The levels it runs, when not all.
    pub levels: Option<Vec<String>>,
    /// The programs it requires that this machine lacks.
    pub missing: Vec<String>,
    /// How to install them.
    pub install: Option<String>,
}

impl Listing {
    /// The text `--list` prints: one line per level, scenario, service and target.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let o = &mut out;
        let _ = writeln!(
            o,
            "suite {:?} ({}), root {}",
            self.suite, self.source, self.root
        );
        let _ = writeln!(
            o,
            "client CPUs {:?}, server CPUs {:?}",
            self.client_cpus, self.server_cpus
        );
        if let Some(s) = &self.services {
            let _ = writeln!(o, "service CPUs {:?}", s.cpus);
            for note in &s.notes {
                let _ = writeln!(o, "note: {note}");
            }
            for sv in &s.rows {
                let _ = writeln!(
                    o,
                    "service {:<21} {}",
                    sv.name,
                    if sv.missing.is_empty() {
                        "ready".to_string()
                    } else {
                        format!(
                            "down: {} missing: its targets will be skipped",
                            sv.missing.join(", ")
                        )
                    }
                );
            }
        }
        for l in &self.levels {
            let _ = writeln!(
                o,
                "level {:<8} {:>6} connections{}{}{}{}",
                l.name,
                l.connections,
                l.streams
                    .map(|(v, n)| format!(", {v} × {n} streams"))
                    .unwrap_or_default(),
                l.rate
                    .as_ref()
                    .map(|r| format!(", open model at {r} req/s"))
                    .unwrap_or_default(),
                l.requests
                    .map(|n| format!(", {n} requests"))
                    .unwrap_or_default(),
                if l.no_tls_resumption {
                    ", no TLS resumption"
                } else {
                    ""
                }
            );
        }
        for s in &self.scenarios {
            let _ = writeln!(
                o,
                "scenario {:<10} {} {}{}{}{}{}",
                s.name,
                s.method,
                s.path,
                s.every_level
                    .map(|v| format!(", {v} at every level"))
                    .unwrap_or_default(),
                s.https
                    .as_ref()
                    .map(|t| format!(", https ({t})"))
                    .unwrap_or_default(),
                s.levels
                    .as_ref()
                    .map(|l| format!(", levels {}", l.join(", ")))
                    .unwrap_or_default(),
                s.targets
                    .as_ref()
                    .map(|t| format!(", targets {}", t.join(", ")))
                    .unwrap_or_default()
            );
        }
        for t in &self.targets {
            let _ = writeln!(
                o,
                "target {:<22} {:<8} {}{}",
                t.name,
                t.language,
                t.levels
                    .as_ref()
                    .map(|l| format!("levels {}, ", l.join(", ")))
                    .unwrap_or_default(),
                if t.missing.is_empty() {
                    "ready".to_string()
                } else {
                    format!(
                        "skipped: {} missing (install {})",
                        t.missing.join(", "),
                        t.install.as_deref().unwrap_or("it")
                    )
                }
            );
        }
        out
    }
}

#[cfg(test)]
mod tests;
