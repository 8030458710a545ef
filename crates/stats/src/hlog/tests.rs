use super::*;
use crate::Counts;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use std::time::Duration;

fn interval(index: u64, values_ns: &[u64]) -> Interval {
    let mut latency = Latency::new();
    for &v in values_ns {
        latency.record_ns(v);
    }
    Interval {
        index,
        start: Duration::from_secs(index),
        duration: Duration::from_secs(1),
        latency,
        service: Latency::new(),
        read_latency: Latency::new(),
        client_delay: Latency::new(),
        counts: Counts::default(),
    }
}

#[test]
fn header_legend_and_one_tagged_line_per_interval() {
    let start = SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_250);
    let mut log = IntervalLog::begin(Vec::new(), start).unwrap();
    let ivs = [
        interval(0, &[1_000, 2_000]),
        interval(1, &[]),
        interval(2, &[5_000_000]),
    ];
    for iv in &ivs {
        log.write(iv).unwrap();
    }
    let text = String::from_utf8(log.finish().unwrap()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "#[Histogram log format version 1.3]");
    assert!(lines.contains(&"#[StartTime: 1700000000.250 (seconds since epoch)]"));
    assert!(lines.contains(&"#[BaseTime: 1700000000.250 (seconds since epoch)]"));
    assert!(lines.contains(&LEGEND));
    let data: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("Tag="))
        .collect();
    assert_eq!(data.len(), 3, "{text}");
    assert!(
        data[2].starts_with("Tag=corrected,2.000,1.000,5.001,HISTFAAA"),
        "{}",
        data[2]
    );

    // The crate's own reader agrees on every interval: start, length and histogram.
    let mut read = 0;
    for entry in IntervalLogIterator::new(text.as_bytes()) {
        if let LogEntry::Interval(h) = entry.unwrap() {
            let iv = &ivs[read];
            assert_eq!(h.tag().map(|t| t.as_str()), Some("corrected"));
            assert_eq!(h.start_timestamp(), iv.start);
            assert_eq!(h.duration(), iv.duration);
            let back = Latency::from_base64(h.encoded_histogram()).unwrap();
            assert_eq!(back, iv.latency);
            read += 1;
        }
    }
    assert_eq!(read, 3);
}
