use super::*;

fn sample(k: u64) -> Counts {
    Counts {
        sent: 13 * k,
        ok: 5 * k,
        failed_status: k,
        connect: k,
        connect_refused: k,
        write: k,
        read: k,
        timeout: k,
        tls: k,
        reset: k,
        protocol: k,
        in_flight: 0,
        bytes_read: 100 * k,
        max_batch: k,
        ..Counts::default()
    }
}

#[test]
fn merge_adds_and_keeps_the_law() {
    let (a, b) = (sample(1), sample(3));
    assert!(a.conserved() && b.conserved());
    let mut m = a;
    m.merge(&b);
    assert_eq!(m.sent, 52);
    assert_eq!(m.completed(), 24);
    assert_eq!(m.errors(), 28);
    assert_eq!(m.bytes_read, 400);
    assert_eq!(m.max_batch, 3, "the largest batch, not a sum");
    assert!(m.conserved());
}

#[test]
fn since_undoes_merge() {
    let (a, b) = (sample(2), sample(5));
    let mut m = a;
    m.merge(&b);
    let d = m.since(&a);
    assert_eq!(Counts { max_batch: 5, ..d }, b);
    assert_eq!(a.since(&m).sent, 0, "saturates instead of wrapping");
}
