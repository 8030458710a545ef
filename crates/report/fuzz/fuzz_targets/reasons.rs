//! The reason tables: counting, merging and differencing keep every failure exactly once,
//! per kind, whatever the reasons and however full the tables; and a table's JSON rows read
//! back into the same table.
//! Run: `cargo +nightly fuzz run reasons -- -max_len=2048 -len_control=0` in crates/report:
//! libFuzzer's default length control keeps inputs below the 85 bytes (five per reason) that
//! fill a table past its 16 reasons for most of a short run.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stats::reason::{At, CertProblem, Cause, Kind, Reason, Rule};
use stats::Reasons;

/// A reason from three bytes: every variant is reachable, and so are unnamed numbers.
fn reason(k: u8, c: u8, n: u8) -> Reason {
    let kind = Kind::ALL[usize::from(k) % Kind::ALL.len()];
    let at = [At::Connect, At::Handshake, At::BeforeResponse, At::MidHead, At::MidBody]
        [usize::from(n) % 5];
    let cause = match c % 18 {
        0 => Cause::Errno(u16::from(n)),
        1 => Cause::Closed(at),
        2 => Cause::Reset(at),
        3 => Cause::CloseNotify(at),
        4 => Cause::Timeout(at),
        5 => Cause::Parse(
            [Rule::Head, Rule::HeadTooLarge, Rule::ContentLength, Rule::ChunkSize, Rule::Upgrade]
                [usize::from(n) % 5],
        ),
        6 => Cause::AlertReceived(n),
        7 => Cause::AlertSent(n),
        8 => Cause::Cert(
            [
                CertProblem::Expired,
                CertProblem::NotValidYet,
                CertProblem::WrongName,
                CertProblem::UnknownIssuer,
                CertProblem::CaUsedAsServer,
                CertProblem::BadSignature,
                CertProblem::Revoked,
                CertProblem::Invalid,
            ][usize::from(n) % 8],
        ),
        9 => Cause::NotTls,
        10 => Cause::TlsOther,
        11 => Cause::PeerIncompatible,
        12 => Cause::PeerMisbehaved,
        13 => Cause::BadRecord,
        // HTTP/2 codes: registered ones and unregistered (the high byte makes them so).
        14 => Cause::H2Received(u32::from(n) * if c & 0x40 == 0 { 1 } else { 0x0101_0101 }),
        15 => Cause::H2Sent(u32::from(n) * if c & 0x40 == 0 { 1 } else { 0x0101_0101 }),
        16 => Cause::NoH2,
        _ => Cause::Unknown,
    };
    Reason::new(kind, cause)
}

fn per_kind(t: &Reasons) -> Vec<u64> {
    Kind::ALL.iter().map(|k| t.of_kind(*k)).collect()
}

fuzz_target!(|data: &[u8]| {
    let mut a = Reasons::default();
    let mut b = Reasons::default();
    let mut expect_a = vec![0u64; Kind::ALL.len()];
    let mut expect_b = vec![0u64; Kind::ALL.len()];
    for chunk in data.chunks_exact(5) {
        let r = reason(chunk[0], chunk[1], chunk[2]);
        let n = u64::from(u16::from_le_bytes([chunk[3], chunk[4]]));
        let k = Kind::ALL.iter().position(|k| *k == r.kind).unwrap();
        if chunk[0] & 0x80 == 0 {
            a.add(r, n);
            expect_a[k] += n;
        } else {
            b.add(r, n);
            expect_b[k] += n;
        }
    }
    assert_eq!(per_kind(&a), expect_a);
    assert_eq!(per_kind(&b), expect_b);
    // Merge keeps every failure, per kind, in either order.
    let mut ab = a;
    ab.merge(&b);
    let mut ba = b;
    ba.merge(&a);
    let sum: Vec<u64> = expect_a.iter().zip(&expect_b).map(|(x, y)| x + y).collect();
    assert_eq!(per_kind(&ab), sum);
    assert_eq!(per_kind(&ba), sum);
    // A later reading minus an earlier one is what was added in between.
    assert_eq!(per_kind(&ab.since(&a)), expect_b);
    // JSON rows read back into the same table; merged rows keep every count.
    for t in [&a, &b, &ab] {
        let rows = report::errors_by_reason::rows(t);
        let json = serde_json::to_string(&rows).unwrap();
        let back: Vec<report::errors_by_reason::ReasonRow> = serde_json::from_str(&json).unwrap();
        assert_eq!(&report::errors_by_reason::table(&back), t);
        for row in &back {
            assert!(!row.reason.contains('\n') && !row.reason.contains('{'), "{row:?}");
        }
    }
    let ra = report::errors_by_reason::rows(&a);
    let rb = report::errors_by_reason::rows(&b);
    let merged = report::errors_by_reason::merge(&[&ra, &rb]);
    assert_eq!(
        merged.iter().map(|r| r.count).sum::<u64>(),
        a.total() + b.total()
    );
});
