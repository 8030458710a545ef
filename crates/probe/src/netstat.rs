//! The kernel's TCP counters: `/proc/net/netstat` (TcpExt) and `/proc/net/snmp` (Tcp).
//!
//! Both files hold pairs of lines: `Prefix: Name1 Name2 ...` then `Prefix: 12 0 ...`. The
//! counters are read by name, never by position: a new kernel adds and reorders fields. A
//! counter the kernel does not have reads as 0.
//!
//! The counters are per network namespace (the reader's), not per process: every socket of
//! the namespace moves them, so a window's delta holds whatever else ran beside it.

use crate::ProbeError;

macro_rules! tcp_counters {
    ($( $(#[$doc:meta])* $field:ident = $section:literal $name:literal, )*) => {
        /// A reading of the TCP counters the diagnosis uses, or the difference of two.
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct TcpCounters {
            $( $(#[$doc])* pub $field: u64, )*
        }

        impl TcpCounters {
            /// Each counter's section and kernel name, in field order.
            pub const NAMES: &'static [(&'static str, &'static str)] = &[$(($section, $name)),*];

            /// Each counter as (kernel name, value), in field order.
            pub fn named(&self) -> Vec<(&'static str, u64)> {
                vec![$(($name, self.$field)),*]
            }

            /// The counters from the name/value pairs of `netstat` and `snmp`.
            fn from_pairs(pairs: &[(&str, &str, u64)]) -> Self {
                let get = |section: &str, name: &str| {
                    pairs
                        .iter()
                        .find(|(s, n, _)| *s == section && *n == name)
                        .map_or(0, |p| p.2)
                };
                TcpCounters { $( $field: get($section, $name), )* }
            }

            /// What each counter grew by since `earlier` (0 where it went back: a counter
            /// is only reset with its namespace).
            pub fn since(&self, earlier: &TcpCounters) -> TcpCounters {
                TcpCounters { $( $field: self.$field.saturating_sub(earlier.$field), )* }
            }
        }
    };
}

tcp_counters! {
    /// Delayed ACKs sent (the ACK timer fired before data to piggyback it on).
    delayed_acks = "TcpExt" "DelayedACKs",
    /// Delayed ACKs further delayed because the socket was locked.
    delayed_ack_locked = "TcpExt" "DelayedACKLocked",
    /// Delayed ACKs lost (quick ACK mode entered).
    delayed_ack_lost = "TcpExt" "DelayedACKLost",
    /// Connections dropped because a listen socket's accept queue was full.
    listen_overflows = "TcpExt" "ListenOverflows",
    /// Connections dropped at a listen socket, for any reason (overflows included).
    listen_drops = "TcpExt" "ListenDrops",
    /// Retransmission timeouts.
    tcp_timeouts = "TcpExt" "TCPTimeouts",
    /// Retransmitted segments lost again.
    tcp_lost_retransmit = "TcpExt" "TCPLostRetransmit",
    /// SYN and SYN-ACK retransmissions.
    tcp_syn_retrans = "TcpExt" "TCPSynRetrans",
    /// Tail loss probes sent: counted in RetransSegs, and spurious on a busy loopback (the
    /// peer was slow to ACK, not a packet lost).
    tcp_loss_probes = "TcpExt" "TCPLossProbes",
    /// SYN cookies sent (the SYN queue overflowed).
    syncookies_sent = "TcpExt" "SyncookiesSent",
    /// Times TCP entered memory pressure (`net.ipv4.tcp_mem`).
    tcp_memory_pressures = "TcpExt" "TCPMemoryPressures",
    /// Packets pruned from a receive queue for lack of socket memory.
    tcp_rcv_pruned = "TcpExt" "RcvPruned",
    /// Connections aborted for lack of memory.
    tcp_abort_on_memory = "TcpExt" "TCPAbortOnMemory",
    /// Packets dropped because a socket's backlog was full.
    tcp_backlog_drop = "TcpExt" "TCPBacklogDrop",
    /// Segments retransmitted.
    retrans_segs = "Tcp" "RetransSegs",
    /// Connection attempts that failed.
    attempt_fails = "Tcp" "AttemptFails",
    /// Established connections reset.
    estab_resets = "Tcp" "EstabResets",
}

/// Every `(section, name, value)` of a `/proc/net/netstat` or `/proc/net/snmp` text.
///
/// A header line `Prefix: names...` is paired with the line right after it only when that
/// line has the same prefix and as many fields; otherwise the header is dropped and the next
/// line is read as a header in turn, so a stray line costs at most itself (or the one pair it
/// splits), never the section after it. A value that is not a whole number (Tcp's `MaxConn`
/// is `-1`) is skipped, never shifted onto another name.
pub fn counter_pairs(text: &str) -> Vec<(&str, &str, u64)> {
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(header) = lines.next() {
        let Some((section, names)) = header.split_once(':') else {
            continue;
        };
        let Some((vsection, values)) = lines.peek().and_then(|l| l.split_once(':')) else {
            continue;
        };
        let names: Vec<&str> = names.split_whitespace().collect();
        let values: Vec<&str> = values.split_whitespace().collect();
        if vsection != section || names.len() != values.len() {
            continue;
        }
        lines.next();
        for (name, value) in names.into_iter().zip(values) {
            if let Ok(v) = value.parse::<u64>() {
                out.push((section, name, v));
            }
        }
    }
    out
}

/// The counters from the texts of `/proc/net/netstat` and `/proc/net/snmp`.
pub fn parse_tcp_counters(netstat: &str, snmp: &str) -> TcpCounters {
    let mut pairs = counter_pairs(netstat);
    pairs.extend(counter_pairs(snmp));
    TcpCounters::from_pairs(&pairs)
}

/// Reads the TCP counters of this process's network namespace.
pub fn tcp_counters() -> Result<TcpCounters, ProbeError> {
    let read = |path: &str| {
        std::fs::read_to_string(path).map_err(|e| ProbeError::Proc(format!("{path}: {e}")))
    };
    Ok(parse_tcp_counters(
        &read("/proc/net/netstat")?,
        &read("/proc/net/snmp")?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NETSTAT: &str = include_str!("fixtures/netstat-6.18.txt");
    const SNMP: &str = include_str!("fixtures/snmp-6.18.txt");

    /// The files of a 6.18 kernel, as read on the project's machine.
    #[test]
    fn reads_a_real_kernels_files_by_name() {
        let c = parse_tcp_counters(NETSTAT, SNMP);
        let pairs = counter_pairs(NETSTAT);
        let find = |n: &str| {
            pairs
                .iter()
                .find(|p| p.0 == "TcpExt" && p.1 == n)
                .unwrap()
                .2
        };
        assert_eq!(c.delayed_acks, find("DelayedACKs"));
        assert_eq!(c.listen_overflows, find("ListenOverflows"));
        assert_eq!(c.tcp_syn_retrans, find("TCPSynRetrans"));
        let snmp = counter_pairs(SNMP);
        let tcp = |n: &str| snmp.iter().find(|p| p.0 == "Tcp" && p.1 == n).unwrap().2;
        assert_eq!(c.retrans_segs, tcp("RetransSegs"));
        assert_eq!(c.estab_resets, tcp("EstabResets"));
        // Every counter the diagnosis uses is in this kernel's files.
        for (section, name) in TcpCounters::NAMES {
            let all = if *section == "Tcp" { &snmp } else { &pairs };
            assert!(
                all.iter().any(|p| p.0 == *section && p.1 == *name),
                "{section} {name} missing"
            );
        }
        // MaxConn is -1: skipped, the names after it keep their own values.
        assert!(!snmp.iter().any(|p| p.1 == "MaxConn"));
        assert!(snmp.iter().any(|p| p.1 == "ActiveOpens"));
    }

    #[test]
    fn by_name_not_by_position() {
        let table: &[(&str, &str, TcpCounters)] = &[
            // A new kernel reordered and added fields.
            (
                "TcpExt: NewThing DelayedACKs ListenOverflows\nTcpExt: 9 7 3\n",
                "Tcp: RetransSegs Foo\nTcp: 5 1\n",
                TcpCounters {
                    delayed_acks: 7,
                    listen_overflows: 3,
                    retrans_segs: 5,
                    ..Default::default()
                },
            ),
            // An older kernel without a counter: 0.
            (
                "TcpExt: DelayedACKs\nTcpExt: 4\nIpExt: DelayedACKs\nIpExt: 99\n",
                "",
                TcpCounters {
                    delayed_acks: 4,
                    ..Default::default()
                },
            ),
            // Names and values of different lengths: nothing shifts onto another name.
            (
                "TcpExt: DelayedACKs ListenOverflows\nTcpExt: 4\n",
                "Tcp: RetransSegs\nUdp: 5\n",
                TcpCounters::default(),
            ),
            // Garbage and a header without its values.
            (
                "no colon\n\nTcpExt: DelayedACKs",
                "Tcp:",
                TcpCounters::default(),
            ),
        ];
        for (netstat, snmp, want) in table {
            assert_eq!(
                parse_tcp_counters(netstat, snmp),
                *want,
                "{netstat:?} {snmp:?}"
            );
        }
    }

    /// This kernel's files with every section's fields reversed, new fields added at the
    /// front, middle and end, and the sections in reverse order: the same counters, by
    /// name. (A reader by position would read every counter from another's column.)
    #[test]
    fn a_real_kernels_fields_reordered_and_extended_read_the_same() {
        let want = parse_tcp_counters(NETSTAT, SNMP);
        assert_ne!(want.delayed_acks, 0, "the fixture has counts to move");
        let rewrite = |text: &str| {
            let lines: Vec<&str> = text.lines().collect();
            let mut sections: Vec<String> = lines
                .chunks(2)
                .map(|pair| {
                    let (section, names) = pair[0].split_once(':').unwrap();
                    let (_, values) = pair[1].split_once(':').unwrap();
                    let mut cols: Vec<(&str, &str)> = names
                        .split_whitespace()
                        .zip(values.split_whitespace())
                        .collect();
                    cols.reverse();
                    cols.insert(0, ("TCPNewFront", "11"));
                    cols.insert(cols.len() / 2, ("TCPNewMiddle", "22"));
                    cols.push(("TCPNewEnd", "18446744073709551615"));
                    let (n, v): (Vec<&str>, Vec<&str>) = cols.into_iter().unzip();
                    format!("{section}: {}\n{section}: {}\n", n.join(" "), v.join(" "))
                })
                .collect();
            sections.reverse();
            sections.concat()
        };
        let (netstat, snmp) = (rewrite(NETSTAT), rewrite(SNMP));
        assert_ne!(netstat, NETSTAT);
        assert_eq!(parse_tcp_counters(&netstat, &snmp), want);
        let pairs = counter_pairs(&netstat);
        assert!(
            pairs.contains(&("TcpExt", "TCPNewEnd", u64::MAX)),
            "{pairs:?}"
        );
    }

    /// `counter_pairs` took the line after a header as its values even when its prefix
    /// differed, consuming it: one stray line shifted the pairing and zeroed the section
    /// after it. Only adjacent lines of the same prefix pair now.
    #[test]
    fn a_stray_line_does_not_zero_the_next_section() {
        let want = TcpCounters {
            delayed_acks: 7,
            listen_overflows: 3,
            ..Default::default()
        };
        let pair = "TcpExt: DelayedACKs ListenOverflows\nTcpExt: 7 3\n";
        for stray in [
            "Stray: 1 2 3\n",
            "IpExt: InNoRoutes\n",
            "TcpExt: DelayedACKs\n",
            "no colon\n",
        ] {
            let before = format!("{stray}{pair}");
            assert_eq!(parse_tcp_counters(&before, ""), want, "{before:?}");
            let after = format!("IpExt: A B\nIpExt: 1 2\n{stray}{pair}");
            assert_eq!(parse_tcp_counters(&after, ""), want, "{after:?}");
        }
        // A stray line between a header and its values: that pair is lost, not shifted.
        let split = "TcpExt: DelayedACKs\nStray: 5\nTcpExt: 4\n";
        assert_eq!(parse_tcp_counters(split, ""), TcpCounters::default());
        // The snmp file's sections each survive a stray line before them.
        let snmp = "Ip: Forwarding\nIp: 1\nstray: x\nTcp: RetransSegs EstabResets\nTcp: 5 2\n";
        let c = parse_tcp_counters("", snmp);
        assert_eq!((c.retrans_segs, c.estab_resets), (5, 2));
    }

    #[test]
    fn since_is_the_growth_and_never_wraps() {
        let a = TcpCounters {
            delayed_acks: 10,
            retrans_segs: 5,
            ..Default::default()
        };
        let b = TcpCounters {
            delayed_acks: 25,
            retrans_segs: 3,
            ..Default::default()
        };
        let d = b.since(&a);
        assert_eq!((d.delayed_acks, d.retrans_segs), (15, 0));
        assert_eq!(d.named()[0], ("DelayedACKs", 15));
        assert_eq!(d.named().len(), TcpCounters::NAMES.len());
    }

    #[test]
    fn reads_this_namespaces_files() {
        // The counters only grow between two readings.
        let a = tcp_counters().expect("/proc/net is readable");
        let b = tcp_counters().expect("/proc/net is readable");
        for ((name, x), (_, y)) in a.named().into_iter().zip(b.named()) {
            assert!(y >= x, "{name} went from {x} to {y}");
        }
    }
}
