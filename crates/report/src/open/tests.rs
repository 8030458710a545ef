use super::*;

fn hist(values_us: &[u64]) -> stats::Latency {
    let mut h = stats::Latency::new();
    for v in values_us {
        h.record_ns(v * 1000);
    }
    h
}

#[test]
fn warnings_name_the_client_the_connections_and_the_shortfall() {
    let latency = hist(&[1000; 100]);
    let service = hist(&[5000; 100]); // 5 ms per request
    let lateness = hist(&[500; 100]); // 50% of the p99 latency
    let late = stats::Latency::new();
    let counts = stats::Counts {
        sent: 900,
        ..Default::default()
    };
    let r = OpenReport::new(
        OpenMeasured {
            peak_per_sec: 5000.0,
            scheduled: 1000,
            connections: 10,
            latency: &latency,
            service: &service,
            lateness: &lateness,
            late: &late,
        },
        &counts,
    );
    assert_eq!(r.warnings.len(), 3, "{:?}", r.warnings);
    assert!(
        r.warnings[0].contains("shaped this figure"),
        "{}",
        r.warnings[0]
    );
    assert!(
        r.warnings[1].contains("10 connections at 5.00ms each carry at most 2000 req/s"),
        "{}",
        r.warnings[1]
    );
    assert!(r.warnings[2].contains("10.0% short"), "{}", r.warnings[2]);
    assert!(r.late_wait.is_none());
    let quiet = OpenReport::new(
        OpenMeasured {
            peak_per_sec: 100.0,
            scheduled: 900,
            connections: 10,
            latency: &latency,
            service: &hist(&[100; 10]),
            lateness: &hist(&[5; 10]),
            late: &late,
        },
        &counts,
    );
    assert!(quiet.warnings.is_empty(), "{:?}", quiet.warnings);
    let mut text = String::new();
    quiet.write_text(&mut text);
    assert!(
        text.contains("900 requests due, 900 sent; 0 late"),
        "{text}"
    );
}
