//! Fuzzes QPACK's encoder against its decoder: fields cut from the input (a byte saying
//! where each string ends) encode to a section that decodes to the same fields, and
//! `Request::encode` likewise. Run: `cargo +nightly fuzz run qpack_round_trip` in
//! crates/h3wire.
#![no_main]

use h3wire::qpack::{self, STATIC};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Each string: a length byte, then that many bytes; a length byte of 0xff or more
    // past the end takes a static table entry's name instead (by the next byte).
    let mut strings: Vec<Vec<u8>> = Vec::new();
    let mut b = data;
    while let Some((&len, rest)) = b.split_first() {
        if len == 0xff {
            let Some((&i, rest)) = rest.split_first() else {
                break;
            };
            let (n, v) = STATIC[usize::from(i) % STATIC.len()];
            strings.push(n.into());
            strings.push(v.into());
            b = rest;
            continue;
        }
        let len = usize::from(len).min(rest.len());
        strings.push(rest[..len].to_vec());
        b = &rest[len..];
    }
    let fields: Vec<(Vec<u8>, Vec<u8>)> = strings
        .chunks_exact(2)
        .map(|p| (p[0].clone(), p[1].clone()))
        .collect();
    let mut section = Vec::new();
    qpack::encode(&mut section, fields.iter().map(|(n, v)| (&n[..], &v[..])));
    assert_eq!(qpack::decode(&section, u64::MAX), Ok(fields.clone()));

    if let [m, s, a, p, ..] = &strings[..] {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let (m, s, a, p) = (text(m), text(s), text(a), text(p));
        let section = qpack::Request {
            method: &m,
            scheme: &s,
            authority: &a,
            path: &p,
            headers: &[("user-agent", "foxbench")],
        }
        .encode();
        let got = qpack::decode(&section, u64::MAX).unwrap();
        let want: Vec<(Vec<u8>, Vec<u8>)> = [
            (":method", &m[..]),
            (":scheme", &s[..]),
            (":authority", &a[..]),
            (":path", &p[..]),
            ("user-agent", "foxbench"),
        ]
        .iter()
        .map(|(n, v)| (n.as_bytes().to_vec(), v.as_bytes().to_vec()))
        .collect();
        assert_eq!(got, want);
    }
});
