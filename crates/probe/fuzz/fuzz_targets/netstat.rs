//! The `/proc/net/netstat` and `/proc/net/snmp` readers on any text: they never panic, and
//! every value read is the whole token at its name's position on a line of the same
//! section, the line after that section's header (by name, never shifted).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let lines: Vec<&str> = text.lines().collect();
    for (section, name, value) in probe::counter_pairs(&text) {
        let found = lines.windows(2).any(|w| {
            let (Some((hs, names)), Some((vs, values))) = (w[0].split_once(':'), w[1].split_once(':'))
            else {
                return false;
            };
            let names: Vec<&str> = names.split_whitespace().collect();
            let values: Vec<&str> = values.split_whitespace().collect();
            hs == section
                && vs == section
                && names.len() == values.len()
                && names
                    .iter()
                    .zip(&values)
                    .any(|(n, v)| *n == name && v.parse::<u64>() == Ok(value))
        });
        assert!(found, "{section} {name} {value} is not on the text");
    }
    let half = text.len() / 2;
    let split = (0..=half).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
    let c = probe::parse_tcp_counters(&text[..split], &text[split..]);
    assert_eq!(c.since(&c), probe::TcpCounters::default());
});
