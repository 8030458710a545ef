//! What a worker does when nothing is ready: sleep in `epoll_wait`, or poll it without a
//! timeout ([`Idle`], `--idle`), and the rule that chooses for `auto` ([`decide`]).
//!
//! On loopback a server pays, in its own CPU, for waking a client that sleeps: each
//! response it sends wakes the sleeping client in the server's context (docs/methodology.md,
//! "Who pays for waking the client"). A client whose threads have CPUs of their own gains
//! nothing by sleeping, so `auto` spins there, and only there: where the client shares a
//! CPU with the server, spinning would take that CPU from the server. The rule is pure: the
//! [`Placement`] (the CPU sets and the target's locality) comes in as data, found by
//! [`probe::placement`] for `foxbench load`, or set by the shootout, which pins both sides.
//!
//! Where a worker keeps many requests in flight, the closed model's coalescing
//! ([`crate::Coalesce::Auto`]) batches the wake-ups instead, and does better than spinning:
//! a spinning client answers each response at once, in small writes, and the server then
//! reads and writes in small batches too. Measured with `bench/load.py` against nginx 1.22
//! at 100 connections × 10 streams (bench/runs/2026-11-28-stamps-idle): nginx's CPU per
//! request 1.13× h2load's under a spinning foxbench over TLS and 1.02× over h2c, against
//! 1.00× and 0.87× under a sleeping, coalescing one; at 10 × 10 over h2c spinning gave
//! 0.97× against 1.01×. So `auto` leaves such a worker asleep ([`IdleWhy::Batched`]).

pub use probe::{CpuList, Server};

/// What a worker does when nothing is ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Idle {
    /// Poll `epoll_wait` without a timeout: never sleep. The polls that find nothing are
    /// counted as spin, time to spare, not work.
    Spin,
    /// Sleep in `epoll_wait` until something is ready or a timer is due.
    Sleep,
    /// Spin when the client's CPUs are its own, else sleep ([`decide`]).
    #[default]
    Auto,
}

impl Idle {
    /// `spin`, `sleep` or `auto`.
    pub fn parse(text: &str) -> Result<Idle, String> {
        match text.trim() {
            "spin" => Ok(Idle::Spin),
            "sleep" => Ok(Idle::Sleep),
            "auto" => Ok(Idle::Auto),
            _ => Err(format!(
                "invalid idle mode {text:?}: expected spin, sleep or auto"
            )),
        }
    }
}

impl std::fmt::Display for Idle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Idle::Spin => "spin",
            Idle::Sleep => "sleep",
            Idle::Auto => "auto",
        })
    }
}

/// Where the client and the server run: what [`decide`] needs to know.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Placement {
    /// The CPUs the client's threads may run on (its affinity).
    pub client: CpuList,
    /// The server, as far as it was found.
    pub server: Server,
}

impl Placement {
    /// Where this process and the server of `addr` run, looked up now.
    pub fn find(addr: std::net::SocketAddr) -> Placement {
        Placement {
            client: probe::placement::own_cpus(),
            server: probe::placement::server(addr),
        }
    }
}

/// Why the idle mode in effect is what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdleWhy {
    /// Asked for explicitly, with no CPU known to be shared with the server.
    Asked,
    /// `--idle spin` asked for while the server may run on some of the client's CPUs: the
    /// spin takes the server's CPU (worth a warning).
    AskedShared {
        /// The CPUs both may run on.
        shared: CpuList,
    },
    /// The client's CPUs are its own: no server may run on them.
    Apart {
        /// The client's CPUs.
        client: CpuList,
        /// The server's CPUs.
        server: CpuList,
    },
    /// The server may run on some of the client's CPUs.
    Shared {
        /// The CPUs both may run on.
        shared: CpuList,
    },
    /// The target's address is not one of this host's.
    NotLocal,
    /// No process of this host was found listening on the target's port.
    NoListener {
        /// The target's port.
        port: u16,
    },
    /// More worker threads than CPUs: spinning threads would take turns on a CPU.
    Threads {
        /// The worker threads.
        threads: usize,
        /// The client's CPUs.
        cpus: usize,
    },
    /// Where the server runs was not looked for.
    Unknown,
    /// The client's CPUs are its own, but each worker keeps enough requests in flight for
    /// the closed model's coalescing to batch its wake-ups, which costs the server less
    /// than a spinning client's small batches.
    Batched {
        /// The requests a worker keeps in flight.
        in_flight: u64,
    },
}

impl std::fmt::Display for IdleWhy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IdleWhy::Asked => f.write_str("asked"),
            IdleWhy::AskedShared { shared } => {
                write!(f, "asked, but the server shares {}", shared.cpus_named())
            }
            IdleWhy::Apart { client, server } => write!(
                f,
                "foxbench on {}, the server on {}",
                client.cpus_named(),
                server.cpus_named()
            ),
            IdleWhy::Shared { shared } => write!(f, "the server shares {}", shared.cpus_named()),
            IdleWhy::NotLocal => f.write_str("the target is not a local process"),
            IdleWhy::NoListener { port } => {
                write!(f, "no local process was found listening on port {port}")
            }
            IdleWhy::Threads { threads, cpus } => write!(
                f,
                "{threads} worker threads on {cpus} CPU{}",
                if *cpus == 1 { "" } else { "s" }
            ),
            IdleWhy::Unknown => f.write_str("where the server runs is not known"),
            IdleWhy::Batched { in_flight } => write!(
                f,
                "{in_flight} requests in flight per worker: coalescing batches the wake-ups"
            ),
        }
    }
}

/// The idle mode in effect and why: [`decide`]'s answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdleChoice {
    /// True to spin, false to sleep.
    pub spin: bool,
    /// Why.
    pub why: IdleWhy,
}

impl IdleChoice {
    /// `spin` or `sleep`.
    pub fn mode(&self) -> Idle {
        if self.spin {
            Idle::Spin
        } else {
            Idle::Sleep
        }
    }

    /// The one-line warning an explicit `--idle spin` deserves where the server shares a
    /// CPU with the client; `None` otherwise.
    pub fn warning(&self) -> Option<String> {
        match &self.why {
            IdleWhy::AskedShared { shared } => Some(format!(
                "spinning takes the server's CPU: it may run on {} too (pin them apart, or use --idle auto)",
                shared.cpus_named()
            )),
            _ => None,
        }
    }
}

impl std::fmt::Display for IdleChoice {
    /// `spin (foxbench on CPU 0, the server on CPU 1)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.mode(), self.why)
    }
}

/// The requests a worker keeps in flight at or above which the closed model's coalescing
/// batches its wake-ups: it waits only when [`crate::COALESCE_BATCH`] responses are due in
/// 1/[`crate::COALESCE_LATENCY_SHARE`] of the latency.
pub const BATCHED_IN_FLIGHT: u64 = crate::COALESCE_BATCH * crate::COALESCE_LATENCY_SHARE;

/// The idle mode for `asked`, with `threads` workers placed as `p` says. `auto` spins only
/// when it is proven safe: the server was found, no CPU it may use is one of the client's,
/// and every worker thread has a CPU of its own; and only when it pays: not where
/// coalescing batches the wake-ups (`batched`: the requests a worker keeps in flight, given
/// only in the closed model with `--coalesce auto` at or above [`BATCHED_IN_FLIGHT`]). An
/// explicit mode is kept, with the CPUs it shares named when it spins where the server may
/// run.
pub fn decide(asked: Idle, threads: usize, batched: Option<u64>, p: &Placement) -> IdleChoice {
    let shared = match &p.server {
        Server::Found { cpus } => Some(p.client.intersection(cpus)),
        _ => None,
    };
    match asked {
        Idle::Sleep => IdleChoice {
            spin: false,
            why: IdleWhy::Asked,
        },
        Idle::Spin => IdleChoice {
            spin: true,
            why: match shared {
                Some(shared) if !shared.is_empty() => IdleWhy::AskedShared { shared },
                _ => IdleWhy::Asked,
            },
        },
        Idle::Auto => {
            let why = match (&p.server, shared) {
                (Server::Found { .. }, Some(shared)) if !shared.is_empty() => {
                    IdleWhy::Shared { shared }
                }
                (Server::Found { .. }, _) if threads > p.client.len() => IdleWhy::Threads {
                    threads,
                    cpus: p.client.len(),
                },
                (Server::Found { .. }, _) if batched.is_some() => IdleWhy::Batched {
                    in_flight: batched.unwrap_or_default(),
                },
                (Server::Found { cpus }, _) => IdleWhy::Apart {
                    client: p.client.clone(),
                    server: cpus.clone(),
                },
                (Server::NotLocal, _) => IdleWhy::NotLocal,
                (Server::NotFound { port }, _) => IdleWhy::NoListener { port: *port },
                (Server::Unknown, _) => IdleWhy::Unknown,
            };
            IdleChoice {
                spin: matches!(why, IdleWhy::Apart { .. }),
                why,
            }
        }
    }
}

#[cfg(test)]
mod tests;
