use super::ProtocolCounts;
use crate::h2::H2Counts;

#[test]
fn merging_keeps_a_protocol_absent_until_a_worker_reports_it() {
    let mut run = ProtocolCounts::default();
    run.merge(&ProtocolCounts::default());
    assert_eq!(run.h2, None, "HTTP/1.1 workers report no HTTP/2 counts");
    let worker = ProtocolCounts {
        h2: Some(H2Counts {
            retries: 2,
            streams_used_max: 3,
            ..H2Counts::default()
        }),
        h3: None,
    };
    run.merge(&worker);
    run.merge(&worker);
    let h2 = run.h2.expect("reported");
    assert_eq!(h2.retries, 4, "summed");
    assert_eq!(h2.streams_used_max, 3, "the largest");
}

#[test]
fn http3_retries_are_summed_over_workers() {
    let mut run = ProtocolCounts::default();
    let worker = ProtocolCounts {
        h2: None,
        h3: Some(crate::H3Counts {
            retries: 2,
            ..Default::default()
        }),
    };
    run.merge(&worker);
    run.merge(&worker);
    assert_eq!(run.h3.map(|h| h.retries), Some(4));
    assert_eq!(run.h2, None);
}
