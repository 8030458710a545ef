//! The `/proc/net/netstat` and `/proc/net/snmp` readers on any text: they never panic;
//! every value read is the whole token at its name's position on a line of the same
//! section, the line after that section's header (by name, never shifted); every counter
//! is its name's first value in the two files, or 0; and the same values written in
//! another order (each counter a section of its own) read the same counters.
//!
//! The input is the netstat text, a NUL byte, then the snmp text (no NUL: all netstat), as
//! the seeds in `fuzz/seeds/netstat` are: this kernel's files, their fields reordered and
//! added to, an older kernel's, a stray line. Run with the seeds and the names' dictionary:
//! `cargo +nightly fuzz run netstat fuzz/corpus/netstat fuzz/seeds/netstat --
//! -dict=fuzz/netstat.dict -max_total_time=60`.
#![no_main]
use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use probe::{counter_pairs, parse_tcp_counters, TcpCounters};

/// Every pair read from `text` is on it: its header line, then its values line. The pairs
/// the text holds are listed once (not searched for per pair: that was quadratic, and
/// ran 10 inputs a second).
fn pairs_are_on_the_text(text: &str) {
    let lines: Vec<Option<(&str, Vec<&str>)>> = text
        .lines()
        .map(|l| {
            l.split_once(':')
                .map(|(s, rest)| (s, rest.split_whitespace().collect()))
        })
        .collect();
    let mut on_text = HashSet::new();
    for w in lines.windows(2) {
        let (Some((hs, names)), Some((vs, values))) = (&w[0], &w[1]) else {
            continue;
        };
        if hs == vs && names.len() == values.len() {
            for (n, v) in names.iter().zip(values) {
                if let Ok(v) = v.parse::<u64>() {
                    on_text.insert((*hs, *n, v));
                }
            }
        }
    }
    for pair in counter_pairs(text) {
        assert!(on_text.contains(&pair), "{pair:?} is not on the text");
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (netstat, snmp) = text.split_once('\0').unwrap_or((&text, ""));
    pairs_are_on_the_text(netstat);
    pairs_are_on_the_text(snmp);

    let c = parse_tcp_counters(netstat, snmp);
    assert_eq!(c.since(&c), TcpCounters::default());
    let mut pairs = counter_pairs(netstat);
    pairs.extend(counter_pairs(snmp));
    // By name: each counter is the first value of its section and name, else 0.
    let first = |section: &str, name: &str| {
        pairs
            .iter()
            .find(|p| p.0 == section && p.1 == name)
            .map_or(0, |p| p.2)
    };
    for ((section, name), (named, value)) in TcpCounters::NAMES.iter().zip(c.named()) {
        assert_eq!(*name, named);
        assert_eq!(value, first(section, name), "{section} {name}");
    }
    // Reordered: the counters' first values, last first and each a section of its own,
    // read the same.
    let mut back = String::new();
    for (section, name) in TcpCounters::NAMES.iter().rev() {
        if let Some(p) = pairs.iter().find(|p| p.0 == *section && p.1 == *name) {
            back.push_str(&format!("{section}: {name}\n{section}: {}\n", p.2));
        }
    }
    assert_eq!(parse_tcp_counters(&back, ""), c, "{back}");
});
