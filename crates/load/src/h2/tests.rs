use super::H2Counts;

/// h2load's "space savings" counts received headers only: the saving is given per
/// direction (it was one figure over both, named as h2load's).
#[test]
fn hpack_saving_is_per_direction_and_received_is_h2loads() {
    let c = H2Counts {
        header_bytes_sent: 50,
        header_bytes_sent_raw: 100,
        header_bytes_received: 20,
        header_bytes_received_raw: 100,
        ..H2Counts::default()
    };
    assert_eq!(c.hpack_saving_sent(), Some(0.5));
    assert_eq!(c.hpack_saving_received(), Some(0.8));
    assert_eq!(H2Counts::default().hpack_saving_received(), None);
}
