use proptest::prelude::*;

use super::*;
use crate::Errors;

/// Shard `index` of `count` of a plan of `connections` and `-n requests`, whose latency
/// histogram and one-second series hold `values_ns`, all ok, started at `start_ns`.
fn shard(index: u64, count: u64, requests: u64, values_ns: &[u64], start_ns: u64) -> LoadReport {
    let share = |t: u64| t / count + u64::from(index < t % count);
    let mut r = crate::tests::sample();
    let mut h = stats::Latency::new();
    let mut intervals = Vec::new();
    for chunk in values_ns.chunks(values_ns.len().div_ceil(3).max(1)) {
        let mut iv = stats::Interval {
            index: intervals.len() as u64,
            start: std::time::Duration::from_secs(intervals.len() as u64),
            duration: std::time::Duration::from_secs(1),
            latency: stats::Latency::new(),
            service: stats::Latency::new(),
            read_latency: stats::Latency::new(),
            client_delay: stats::Latency::new(),
            counts: stats::Counts::default(),
        };
        for &v in chunk {
            h.record_ns(v);
            iv.latency.record_ns(v);
            iv.counts.ok += 1;
        }
        intervals.push(IntervalRow::from(&iv));
    }
    let n = values_ns.len() as u64;
    r.config.connections = share(30);
    r.config.requests = Some(share(requests));
    r.latency = Distribution::of(&h);
    r.connect = None;
    r.requests = crate::Requests {
        sent: n,
        ok: n,
        failed_status: 0,
        completed: n,
        errors: 0,
        in_flight: 0,
        unsent: 0,
    };
    r.errors = Errors::default();
    r.status = [("200".to_string(), n)].into_iter().collect();
    r.connections.opened = share(30);
    r.request_table.truncate(1);
    r.request_table[0].sent = n;
    r.request_table[0].completed = n;
    r.intervals = intervals;
    r.shard = Some(ShardInfo {
        index,
        count,
        plan_connections: 30,
        plan_requests: Some(requests),
        plan_peak_per_sec: None,
    });
    r.start = Some(StartInfo {
        requested: None,
        started: format!("t+{start_ns}"),
        started_unix_ns: 1_000_000_000_000 + start_ns,
        late_ms: None,
    });
    r
}

fn src(name: &str, report: LoadReport) -> Source {
    Source {
        name: name.into(),
        report,
    }
}

/// Splits `values` as shards of `count` would carry them: value `j` to shard `j % count`.
fn shards(values: &[u64], count: u64) -> Vec<Source> {
    (0..count)
        .map(|i| {
            let mine: Vec<u64> = values
                .iter()
                .enumerate()
                .filter(|(j, _)| *j as u64 % count == i)
                .map(|(_, &v)| v)
                .collect();
            src(
                &format!("agent-{i}.json"),
                shard(i, count, values.len() as u64, &mine, i * 3_000_000),
            )
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn a_merge_is_one_histogram_fed_every_value(
        values in prop::collection::vec(1u64..10_000_000_000, 3..200),
        count in 1u64..6,
    ) {
        prop_assume!(values.len() as u64 >= count);
        let merged = merge(&shards(&values, count), Options::default()).unwrap();
        let mut all = stats::Latency::new();
        for &v in &values {
            all.record_ns(v);
        }
        let got = stats::Latency::from_base64_exact(&merged.latency.hdr_base64).unwrap();
        prop_assert!(got == all, "histograms differ");
        prop_assert_eq!(&merged.latency.summary, &all.summary());
        for p in [50.0, 90.0, 99.0, 99.9, 100.0] {
            prop_assert_eq!(got.percentile_ns(p), all.percentile_ns(p));
        }
        // The accounting of the unsharded run.
        let n = values.len() as u64;
        prop_assert_eq!(merged.requests.sent, n);
        prop_assert_eq!(merged.requests.ok, n);
        prop_assert_eq!(merged.status["200"], n);
        prop_assert_eq!(merged.config.connections, 30);
        prop_assert_eq!(merged.config.requests, Some(n));
        prop_assert_eq!(merged.connections.opened, 30);
        let a = merged.agents.as_ref().unwrap();
        prop_assert_eq!(a.agents.len() as u64, count);
        prop_assert!((a.start_skew_ms - (count - 1) as f64 * 3.0).abs() < 1e-9);
        // The series: every value lands in exactly one merged interval.
        let series: u64 = merged.intervals.iter().map(|r| r.requests).sum();
        prop_assert_eq!(series, n);
        let mut series_hist = stats::Latency::new();
        for r in &merged.intervals {
            series_hist.merge(&stats::Latency::from_base64_exact(r.hdr_base64.as_ref().unwrap()).unwrap()).unwrap();
        }
        prop_assert!(series_hist == all);
    }
}

#[test]
fn series_align_on_wall_clock_time() {
    let mut s = shards(&[1000; 12], 2);
    // Agent 1 started 1 s after agent 0: its first second is agent 0's second.
    s[1].report.start.as_mut().unwrap().started_unix_ns += 1_000_000_000;
    let m = merge(&s, Options::default()).unwrap();
    let per_slot: Vec<u64> = m.intervals.iter().map(|r| r.requests).collect();
    assert_eq!(per_slot, vec![2, 4, 4, 2]);
    assert_eq!(m.intervals[3].start_s, 3.0);
}

#[test]
fn a_duplicate_shard_names_both_files() {
    let mut s = shards(&[1000; 9], 3);
    s[2] = src("copy.json", s[1].report.clone());
    let e = merge(&s, Options::default()).unwrap_err();
    assert_eq!(
        e,
        MergeError::Duplicate {
            shard: 1,
            first: "agent-1.json".into(),
            second: "copy.json".into()
        }
    );
    assert!(
        e.to_string().starts_with("copy.json: duplicate shard 1"),
        "{e}"
    );
}

#[test]
fn a_missing_shard_is_named_unless_partial_is_ok() {
    let mut s = shards(&[1000; 9], 3);
    s.remove(1);
    let e = merge(&s, Options::default()).unwrap_err();
    assert!(e.to_string().starts_with("missing shard 1 of 3"), "{e}");
    let m = merge(&s, Options { partial_ok: true }).unwrap();
    let a = m.agents.unwrap();
    assert_eq!(a.missing, vec![1]);
    assert!(a.incomplete && m.interrupted);
    assert_eq!(m.requests.sent, 6);
}

#[test]
fn an_interrupted_shard_is_named_unless_partial_is_ok() {
    let mut s = shards(&[1000; 9], 3);
    s[2].report.interrupted = true;
    let e = merge(&s, Options::default()).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("agent-2.json: shard 2 was interrupted"),
        "{e}"
    );
    let a = merge(&s, Options { partial_ok: true })
        .unwrap()
        .agents
        .unwrap();
    assert_eq!(a.partial, vec![2]);
}

#[test]
fn shards_of_different_plans_are_named() {
    let mut s = shards(&[1000; 9], 3);
    s[1].report.target.url = "http://127.0.0.1:2/".into();
    let e = merge(&s, Options::default()).unwrap_err();
    assert!(
        matches!(&e, MergeError::Plan { source_name, setting, .. } if source_name == "agent-1.json" && *setting == Text::plain("the URL")),
        "{e}"
    );
    let mut s = shards(&[1000; 9], 3);
    let other = shards(&[1000; 8], 2);
    s[2] = src("other.json", other[1].report.clone());
    let e = merge(&s, Options::default()).unwrap_err();
    // The setting is typed, for `foxbench merge` to word as its flag (`--shard N`).
    assert_eq!(e.text().settings(), [Setting::Shard]);
    assert!(
        e.to_string().starts_with(
            "other.json: a different plan than agent-0.json: the shard setting N is 3 there and 2 here"
        ),
        "{e}"
    );
}

#[test]
fn a_wrong_share_is_named() {
    let mut s = shards(&[1000; 9], 3);
    s[0].report.config.connections = 11;
    let e = merge(&s, Options::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "agent-0.json: shard 0 ran 11 connections, but its share of the plan is 10"
    );
}

#[test]
fn broken_counts_are_named() {
    let mut s = shards(&[1000; 9], 3);
    s[1].report.requests.ok -= 1;
    let e = merge(&s, Options::default()).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("agent-1.json: its counts break sent ="),
        "{e}"
    );
}

#[test]
fn histograms_of_other_bounds_are_named() {
    let mut s = shards(&[1000; 9], 3);
    let mut other = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 1_000_000, 2).unwrap();
    other.record(5).unwrap();
    let mut bytes = Vec::new();
    use hdrhistogram::serialization::Serializer as _;
    hdrhistogram::serialization::V2DeflateSerializer::new()
        .serialize(&other, &mut bytes)
        .unwrap();
    use base64::Engine as _;
    s[2].report.latency.hdr_base64 = base64::engine::general_purpose::STANDARD.encode(bytes);
    let e = merge(&s, Options::default()).unwrap_err();
    let text = e.to_string();
    assert!(
        text.starts_with(
            "agent-2.json: latency: histogram bounds 1..1000000 ns at 2 digits differ"
        ),
        "{text}"
    );
}

#[test]
fn an_unsharded_result_merges_as_the_whole_plan() {
    let mut r = shards(&[1000; 5], 1).remove(0).report;
    r.shard = None;
    r.start = None;
    let m = merge(&[src("plain.json", r.clone())], Options::default()).unwrap();
    assert_eq!(m.requests, r.requests);
    assert_eq!(m.latency, r.latency);
    let e = merge(
        &[src("a.json", r.clone()), src("b.json", r)],
        Options::default(),
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("b.json: duplicate shard 0, also in a.json"),
        "{e}"
    );
}

/// Interval `i` of an agent: `n` responses of `latency_ns`, at a one-second interval.
fn interval_row(i: u64, n: u64, latency_ns: u64) -> IntervalRow {
    let mut iv = stats::Interval {
        index: i,
        start: std::time::Duration::from_secs(i),
        duration: std::time::Duration::from_secs(1),
        latency: stats::Latency::new(),
        service: stats::Latency::new(),
        read_latency: stats::Latency::new(),
        client_delay: stats::Latency::new(),
        counts: stats::Counts::default(),
    };
    for _ in 0..n {
        iv.latency.record_ns(latency_ns);
    }
    iv.counts.ok = n;
    IntervalRow::from(&iv)
}

/// Agents that share a start coarsen on the same blocks, and one that ran longer (so coarsened
/// further) still merges exactly: each merged row equals the rows of both agents in it.
#[test]
fn coarsened_series_of_agents_sharing_a_start_merge_exactly() {
    use crate::series::Series;
    for (len_a, len_b) in [(300u64, 300u64), (300, 301), (257, 600), (1000, 1000)] {
        let mut s = shards(&[1000; 12], 2);
        let mut series = [
            Series::new(16, 8, usize::MAX),
            Series::new(16, 8, usize::MAX),
        ];
        let mut reference = Vec::new();
        for i in 0..len_a.max(len_b) {
            let (a, b) = (
                interval_row(i, i % 7, 1000 + i * 10),
                interval_row(i, 3, 5000 + i),
            );
            let mut both = a.clone();
            if i < len_a {
                series[0].push(i, a).unwrap();
            }
            if i < len_b {
                series[1].push(i, b.clone()).unwrap();
                if i < len_a {
                    both.merge(&b).unwrap();
                } else {
                    both = b;
                }
            }
            reference.push(both);
        }
        for (k, ser) in series.into_iter().enumerate() {
            assert!(ser.len() <= ser.max_rows());
            s[k].report.intervals = ser.into_rows();
            if len_a == len_b {
                // Same length, same blocks: the agents coarsened identically.
                let spans = |r: &LoadReport| -> Vec<(u64, u64)> {
                    let at = |x: &IntervalRow| (x.start_s.round() as u64, x.span_intervals);
                    r.intervals.iter().map(at).collect()
                };
                assert_eq!(spans(&s[k].report), spans(&s[0].report));
            }
            // The same start instant (--start-at): no skew.
            s[k].report.start.as_mut().unwrap().started_unix_ns = 1_000_000_000_000;
        }
        let m = merge(&s, Options::default()).unwrap();
        assert!(m.intervals.len() <= 16 + 64, "{}", m.intervals.len());
        let mut covered = 0;
        for row in &m.intervals {
            let first = row.start_s.round() as usize;
            assert_eq!(first, covered, "rows are contiguous: {len_a} {len_b}");
            let last = (row.start_s + row.duration_s).round() as usize;
            let mut want = reference[first].clone();
            for r in &reference[first + 1..last] {
                want.merge(r).unwrap();
            }
            assert_eq!(row.requests, want.requests, "at {first}");
            assert_eq!(row.hdr_base64, want.hdr_base64, "at {first}");
            assert_eq!(row.p99_us, want.p99_us);
            assert!(row.span_intervals.is_power_of_two());
            assert_eq!(first as u64 % row.span_intervals, 0, "on its block");
            covered = last;
        }
        assert_eq!(covered as u64, len_a.max(len_b));
        let segments = &m.interval_segments;
        assert!(!segments.is_empty());
        assert_eq!(segments.last().unwrap().resolution_s, 1.0);
        assert_eq!(
            segments.iter().map(|s| s.rows).sum::<u64>(),
            m.intervals.len() as u64
        );
    }
}

/// The merge started from the first agent's report and kept its `tcp`: the merged result
/// claimed shard 0's namespace-wide counters (and their warnings) for the whole run.
#[test]
fn merge_drops_the_first_agents_tcp_counters() {
    let mut s = shards(&[1000; 12], 2);
    for (i, a) in s.iter_mut().enumerate() {
        let d = crate::tcp::TcpCounts {
            delayed_acks: 100 * (i as u64 + 1),
            ..Default::default()
        };
        let lat = stats::Latency::new();
        a.report.tcp = Some(crate::tcp::report(&crate::tcp::Evidence {
            deltas: &d,
            completed: 6,
            latency: &lat,
            connect: None,
            cpu_saturated: false,
            somaxconn: None,
            loopback: true,
            runtime: crate::tcp::Runtime::Other,
            links: &[],
        }));
    }
    let m = merge(&s, Options::default()).unwrap();
    assert!(m.tcp.is_none(), "{:?}", m.tcp);
    assert_eq!(m.tcp_warnings().count(), 0);
}

/// An agent with no responses has no figure per request (`None`), and it once made the
/// whole merge's figure `None`: it weighs nothing, so it is skipped.
#[test]
fn an_agent_without_responses_leaves_the_per_request_figures_to_the_others() {
    let mut busy = shard(0, 2, 12, &[1000; 12], 0);
    busy.client.voluntary_ctxt_per_request = Some(0.5);
    busy.client.involuntary_ctxt_per_request = Some(0.25);
    let mut idle = shard(1, 2, 12, &[], 3_000_000);
    idle.client.voluntary_ctxt_per_request = None;
    idle.client.involuntary_ctxt_per_request = None;
    let m = merge(
        &[src("a.json", busy.clone()), src("b.json", idle)],
        Options::default(),
    )
    .unwrap();
    assert_eq!(m.client.voluntary_ctxt_per_request, Some(0.5));
    assert_eq!(m.client.involuntary_ctxt_per_request, Some(0.25));
    // An agent with responses but no figure (an older result) still makes it unknown.
    let mut old = shard(1, 2, 12, &[1000; 12], 3_000_000);
    old.client.voluntary_ctxt_per_request = None;
    let m = merge(
        &[src("a.json", busy), src("b.json", old)],
        Options::default(),
    )
    .unwrap();
    assert_eq!(m.client.voluntary_ctxt_per_request, None);
}

/// The helpers' CPU: an agent's absent `dashboard_cpu_s` is a dashboard that did not run
/// (0), an absent `probe_cpu_s` a figure not recorded (unknown, so the total is too).
#[test]
fn helper_cpu_absent_from_an_agent_is_zero_when_nothing_ran_and_unknown_when_not_recorded() {
    let mut s = shards(&[1000; 12], 2);
    s[0].report.client.dashboard_cpu_s = Some(0.25);
    s[1].report.client.dashboard_cpu_s = None;
    s[0].report.client.probe_cpu_s = Some(0.5);
    s[1].report.client.probe_cpu_s = Some(0.25);
    let m = merge(&s, Options::default()).unwrap();
    assert_eq!(m.client.dashboard_cpu_s, Some(0.25));
    assert_eq!(m.client.probe_cpu_s, Some(0.75));
    s[1].report.client.probe_cpu_s = None;
    let m = merge(&s, Options::default()).unwrap();
    assert_eq!(m.client.probe_cpu_s, None);
    for a in &mut s {
        a.report.client.dashboard_cpu_s = None;
    }
    assert_eq!(
        merge(&s, Options::default())
            .unwrap()
            .client
            .dashboard_cpu_s,
        None
    );
}

/// Agents on the kernel's clock carry their kernel latency as `latency`, agents on the
/// read's as `kernel_latency`: the merge adds each one's, keeps it apart only when the
/// merged `latency` is not it, and drops it when a part did not measure it.
#[test]
fn agents_on_either_clock_merge_their_kernel_latencies() {
    let on = |clock| {
        Some(crate::ClientDelay {
            latency_clock: clock,
            p50_us: 1.0,
            p99_us: 1.0,
            max_us: 1.0,
            latency_p50_us: 1.0,
            stamped_reads: 6,
            unstamped_reads: 0,
            send_stamps: None,
        })
    };
    let mut kernel_500 = stats::Latency::new();
    for _ in 0..6 {
        kernel_500.record_ns(500);
    }
    let mut s = shards(&[1000; 12], 2);
    s[0].report.client.client_delay = on(LatencyClock::Kernel);
    s[1].report.client.client_delay = on(LatencyClock::ReadAsked);
    s[1].report.kernel_latency = Some(Distribution::of(&kernel_500));
    let m = merge(&s, Options::default()).unwrap();
    assert_eq!(
        m.client.client_delay.unwrap().latency_clock,
        LatencyClock::Mixed
    );
    let k = m.kernel_latency.as_ref().expect("kept apart from latency");
    let mut want = kernel_500.clone();
    for _ in 0..6 {
        want.record_ns(1000);
    }
    assert_eq!(
        stats::Latency::from_base64_exact(&k.hdr_base64).unwrap(),
        want
    );
    assert_eq!(m.latency_to_stamps(), Some(k));

    // Every agent on the kernel's clock: the merged latency is it, kept once.
    s[1].report.client.client_delay = on(LatencyClock::Kernel);
    s[1].report.kernel_latency = None;
    let m = merge(&s, Options::default()).unwrap();
    assert_eq!(m.kernel_latency, None);
    assert_eq!(m.latency_to_stamps(), Some(&m.latency));

    // A part on the read's clock without it (no stamps, or an older result): the sum would
    // be short, so there is none.
    s[1].report.client.client_delay = on(LatencyClock::ReadAsked);
    let m = merge(&s, Options::default()).unwrap();
    assert_eq!(m.kernel_latency, None);
    assert_eq!(m.latency_to_stamps(), None);
    assert_eq!(
        m.kernel_latency_line().as_deref(),
        Some("not measured by every part merged")
    );
}

/// HTTP/3's retries were the first shard's alone.
#[test]
fn http3_retries_are_summed_over_shards() {
    let mut s = shards(&[1000; 9], 3);
    for (i, src) in s.iter_mut().enumerate() {
        src.report.config.streams = Some(8);
        src.report.http3 = Some(crate::Http3Report {
            retries: i as u64 + 1,
            quic: None,
        });
    }
    let m = merge(&s, Options::default()).unwrap();
    assert_eq!(
        m.http3,
        Some(crate::Http3Report {
            retries: 6,
            quic: None
        })
    );
}

/// A shard's QUIC figures as a run writes them: `per` datagrams and 400 bytes each way
/// per request, one lost packet, one connection open at the end with an RTT of `rtt_us`.
fn quic(requests: u64, per: u64, rtt_us: u64) -> crate::QuicReport {
    let mut q: crate::QuicReport = serde_json::from_value(serde_json::json!({
        "datagrams_sent": requests * per, "datagrams_received": requests * per,
        "send_calls": requests * per, "receive_calls": 2 * requests * per,
        "bytes_sent": requests * 400, "bytes_received": requests * 400,
        "per_request": null, "datagrams_per_send_call": null, "datagrams_per_receive_call": null,
        "connections": 2, "handshakes_failed": 0, "packets_sent": requests * per,
        "packets_lost": 1, "bytes_lost": 1200, "loss_percent": null, "congestion_events": 1,
        "frames_sent": { "acks": 1, "crypto": 2, "stream": requests, "ping": 0, "max_data": 0,
            "max_stream_data": 0, "max_streams_bidi": 0, "streams_blocked_bidi": 0,
            "reset_stream": 0, "stop_sending": 0, "connection_close": 0 },
        "frames_received": { "acks": requests, "crypto": 3, "stream": requests, "ping": 0,
            "max_data": 0, "max_stream_data": 0, "max_streams_bidi": 1,
            "streams_blocked_bidi": 0, "reset_stream": 0, "stop_sending": 0,
            "connection_close": 0 },
        "at_end": { "connections": 1,
            "rtt_us": { "min": rtt_us, "median": rtt_us, "max": rtt_us },
            "cwnd_bytes": { "min": 12000.0, "median": 12000.0, "max": 12000.0 } }
    }))
    .unwrap();
    q.derive(requests);
    q
}

/// Shards' QUIC figures merge to the sums, with the ratios recomputed over the merged
/// requests and the RTT at the end the largest of the shards'.
#[test]
fn quic_figures_are_summed_over_shards_and_their_ratios_recomputed() {
    let mut s = shards(&[1000; 9], 3);
    for (i, src) in s.iter_mut().enumerate() {
        src.report.config.streams = Some(8);
        let n = src.report.requests.completed;
        src.report.http3 = Some(crate::Http3Report {
            retries: 0,
            // 2 datagrams per request on shards 0 and 2, 5 on shard 1.
            quic: Some(quic(n, if i == 1 { 5 } else { 2 }, 100 * (i as u64 + 1))),
        });
    }
    let m = merge(&s, Options::default()).unwrap();
    let q = m.http3.unwrap().quic.expect("every shard's QUIC figures");
    assert_eq!(q.datagrams_sent, 3 * 2 + 3 * 5 + 3 * 2);
    assert_eq!(q.bytes_sent, 9 * 400);
    assert_eq!(q.packets_lost, 3);
    assert_eq!(q.connections, 6);
    assert_eq!(q.frames_received.acks, 9);
    let p = q.per_request.expect("requests completed");
    assert_eq!(p.requests, 9, "the merged requests");
    assert_eq!(p.datagrams_sent, 27.0 / 9.0, "recomputed, not a shard's");
    assert_eq!(p.bytes_received, 400.0);
    assert_eq!(q.datagrams_per_send_call, Some(1.0));
    assert_eq!(q.loss_percent, Some(100.0 * 3.0 / 27.0));
    let e = q.at_end.expect("paths at the end");
    assert_eq!(e.connections, 3);
    assert_eq!(
        (e.rtt_us.min, e.rtt_us.median, e.rtt_us.max),
        (100.0, 300.0, 300.0)
    );
}

/// Shards with different `--streams` were merged as one plan.
#[test]
fn shards_of_different_streams_are_different_plans() {
    let mut s = shards(&[1000; 9], 3);
    for src in s.iter_mut() {
        src.report.config.streams = Some(8);
    }
    s[1].report.config.streams = Some(4);
    let e = merge(&s, Options::default()).unwrap_err();
    assert_eq!(e.text().settings(), [Setting::Streams], "{e}");
}

/// An old shard (HTTP/3 but no QUIC figures) merged with new ones left its requests in the
/// divisor and its datagrams out of the sums: per request figures read low. Without every
/// shard's figures there are none.
#[test]
fn a_shard_without_quic_figures_leaves_them_out_of_the_merge() {
    let mut s = shards(&[1000; 9], 3);
    for (i, src) in s.iter_mut().enumerate() {
        src.report.config.streams = Some(8);
        let n = src.report.requests.completed;
        src.report.http3 = Some(crate::Http3Report {
            retries: 1,
            quic: (i > 0).then(|| quic(n, 2, 100)),
        });
    }
    let m = merge(&s, Options::default()).unwrap();
    let h3 = m.http3.expect("every shard's HTTP/3 section");
    assert_eq!(h3.retries, 3);
    assert_eq!(h3.quic, None, "partial sums over all shards' requests");
}
