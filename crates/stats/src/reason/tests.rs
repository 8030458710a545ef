use super::*;

fn every_cause() -> Vec<Cause> {
    let mut all = vec![
        Cause::NotTls,
        Cause::PeerIncompatible,
        Cause::PeerMisbehaved,
        Cause::BadRecord,
        Cause::TlsOther,
        Cause::Unknown,
    ];
    all.extend(ERRNOS.iter().map(|(n, _)| Cause::Errno(*n)));
    all.push(Cause::Errno(777));
    for at in At::ALL {
        all.extend([
            Cause::Closed(at),
            Cause::Reset(at),
            Cause::CloseNotify(at),
            Cause::Timeout(at),
        ]);
    }
    all.extend(Rule::ALL.map(Cause::Parse));
    all.extend(CertProblem::ALL.map(Cause::Cert));
    for n in [0, 40, 116, 120, 201] {
        all.extend([Cause::AlertReceived(n), Cause::AlertSent(n)]);
    }
    // Every registered HTTP/2 error code, and unregistered ones.
    for n in (0..14).chain([14, 0x1000, u32::MAX]) {
        all.extend([Cause::H2Received(n), Cause::H2Sent(n)]);
    }
    all.push(Cause::NoH2);
    for (n, _) in H3_ERRORS {
        all.extend([Cause::H3Received(n), Cause::H3Sent(n)]);
    }
    all.extend([Cause::H3Received(0x21), Cause::H3Sent(u32::MAX)]);
    all.extend((0..18).chain([u32::MAX]).map(Cause::Quic));
    all.push(Cause::NoH3);
    all.extend(Malformed::ALL.map(Cause::Malformed));
    all
}

#[test]
fn every_code_reads_back_and_is_distinct() {
    let all = every_cause();
    let codes: std::collections::BTreeSet<String> = all.iter().map(|c| c.code()).collect();
    assert_eq!(codes.len(), all.len(), "two causes share a code");
    for c in all {
        assert_eq!(Cause::parse(&c.code()), Some(c), "{}", c.code());
    }
    assert_eq!(Cause::parse("nonsense"), None);
    assert_eq!(
        Cause::AlertReceived(116).code(),
        "alert_received:certificate_required"
    );
    assert_eq!(Cause::H2Received(7).code(), "h2_received:REFUSED_STREAM");
    assert_eq!(Cause::H2Sent(99).code(), "h2_sent:code_99");
}

#[test]
fn a_full_table_counts_the_rest_per_kind_and_keeps_the_totals() {
    let mut t = Reasons::default();
    for n in 0..(REASONS_KEPT as u16 + 4) {
        t.add(Reason::new(Kind::Connect, Cause::Errno(1000 + n)), 2);
    }
    t.add(Reason::new(Kind::Tls, Cause::NotTls), 3);
    assert_eq!(t.rows().len(), REASONS_KEPT);
    assert_eq!(t.other(Kind::Connect), 8);
    assert_eq!(t.other(Kind::Tls), 3);
    assert_eq!(t.of_kind(Kind::Connect), 2 * (REASONS_KEPT as u64 + 4));
    assert_eq!(t.total(), 2 * (REASONS_KEPT as u64 + 4) + 3);
}

#[test]
fn since_undoes_merge() {
    let r = |c| Reason::new(Kind::Read, c);
    let mut a = Reasons::default();
    a.add(r(Cause::Closed(At::MidBody)), 4);
    let mut b = Reasons::default();
    b.add(r(Cause::Reset(At::MidHead)), 5);
    b.add(r(Cause::Closed(At::MidBody)), 1);
    let mut m = a;
    m.merge(&b);
    assert_eq!(m.count(r(Cause::Closed(At::MidBody))), Some(5));
    assert_eq!(m.since(&a), b);
    assert!(a.since(&m).is_empty(), "saturates instead of wrapping");
}
