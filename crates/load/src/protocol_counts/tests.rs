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
    };
    run.merge(&worker);
    run.merge(&worker);
    let h2 = run.h2.expect("reported");
    assert_eq!(h2.retries, 4, "summed");
    assert_eq!(h2.streams_used_max, 3, "the largest");
}
