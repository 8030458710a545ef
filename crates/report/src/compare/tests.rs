//! Comparisons of synthetic runs whose distributions are known, and of the committed runs.

use super::*;
use crate::shootout::ShootoutResults;
use stats::setting::PlanWording;

fn fixture() -> ShootoutResults {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/results.json");
    ShootoutResults::from_json(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A histogram whose p99 is `p99_us`: 985 samples at half of it, 15 at it.
fn latency(p99_us: f64) -> stats::Latency {
    let mut h = stats::Latency::new();
    let ns = (p99_us * 1e3) as u64;
    for i in 0..1000 {
        h.record_ns(if i < 985 { ns / 2 } else { ns });
    }
    h
}

/// One repeat's figures.
#[derive(Clone, Copy)]
struct Figures {
    rps: f64,
    p99_us: f64,
    cpu_us: f64,
    rss: u64,
}

const BASE: Figures = Figures {
    rps: 10_000.0,
    p99_us: 1_000.0,
    cpu_us: 50.0,
    rss: 10 << 20,
};

/// The fixture cut down to one target and one cell (avatar redirect c10), whose repeats
/// have the given figures; its merged histogram is theirs.
fn shootout(repeats: &[Figures]) -> Run {
    let mut r = fixture();
    r.targets.truncate(1);
    let t = &mut r.targets[0];
    t.cells.truncate(1);
    let cell = &mut t.cells[0];
    let template = cell.repeats[0].clone();
    let mut merged = stats::Latency::new();
    cell.repeats = repeats
        .iter()
        .map(|f| {
            let mut rep = template.clone();
            let h = latency(f.p99_us);
            merged.merge(&h).unwrap();
            rep.rps = f.rps;
            rep.latency = h.summary();
            rep.hdr_base64 = h.to_base64();
            rep.server.cpu_us_per_request = Some(f.cpu_us);
            rep.server.rss_peak_bytes = f.rss;
            rep
        })
        .collect();
    cell.summary.as_mut().unwrap().hdr_base64 = merged.to_base64();
    Run::Shootout(r)
}

/// Repeats of BASE with each figure scaled by `scale` and spread by the factors `noise`.
fn repeats(noise: &[f64], scale: impl Fn(Figures) -> Figures) -> Vec<Figures> {
    noise
        .iter()
        .map(|&k| {
            let f = scale(BASE);
            Figures {
                rps: f.rps * k,
                p99_us: f.p99_us * k,
                cpu_us: f.cpu_us * k,
                rss: (f.rss as f64 * k) as u64,
            }
        })
        .collect()
}

const NOISE_2PCT: [f64; 5] = [0.98, 1.01, 1.0, 1.02, 0.99];
const NOISE_2PCT_SHUFFLED: [f64; 5] = [1.0, 0.99, 1.02, 0.98, 1.01];

fn row<'a>(c: &'a Comparison, figure: &str) -> &'a Row {
    c.rows.iter().find(|r| r.figure == figure).unwrap()
}

fn run(base: &[Figures], new: &[Figures], opts: &Options) -> Comparison {
    compare(&[shootout(base)], &[shootout(new)], opts, &PlanWording).unwrap()
}

#[test]
fn identical_runs_give_only_tildes() {
    let a = repeats(&NOISE_2PCT, |f| f);
    let c = run(&a, &a, &Options::default());
    assert_eq!(c.rows.len(), 4);
    for r in &c.rows {
        assert_eq!(r.verdict, Verdict::Unchanged, "{r:?}");
        assert_eq!(r.ratio, Some(1.0), "{r:?}");
    }
    assert_eq!(c.tally.line(), "0 regressions, 0 improvements, 4 unchanged");
    assert!(c.protocol.is_empty());
    let text = c.to_text(&PlanWording);
    assert!(text.starts_with("protocol: identical\n"), "{text}");
    assert!(text.contains("0 regressions, 0 improvements, 4 unchanged"));
}

#[test]
fn a_20_percent_shift_with_5_repeats_is_reported() {
    let a = repeats(&NOISE_2PCT, |f| f);
    // req/s down 20% and p99 up 20%: both worse; CPU and RSS as before.
    let b = repeats(&NOISE_2PCT_SHUFFLED, |f| Figures {
        rps: f.rps * 0.8,
        p99_us: f.p99_us * 1.2,
        ..f
    });
    let c = run(&a, &b, &Options::default());
    let rps = row(&c, "req/s");
    assert_eq!(rps.verdict, Verdict::Regression);
    // The sets are fully apart: the smallest p of 5 and 5, 2/C(10,5).
    assert!((rps.p.unwrap() - 2.0 / 252.0).abs() < 1e-12);
    assert!((rps.ratio.unwrap() - 0.8).abs() < 1e-9);
    let (lo, hi) = rps.ratio_range.unwrap();
    assert!((lo - 0.8 * 0.98 / 1.02).abs() < 1e-9 && (hi - 0.8 * 1.02 / 0.98).abs() < 1e-9);
    let p99 = row(&c, "p99");
    assert_eq!(p99.verdict, Verdict::Regression);
    // The ratio is that of the merged histograms' p99, which HDR keeps to 0.1%.
    assert!((p99.ratio.unwrap() - 1.2).abs() < 0.003, "{p99:?}");
    assert_eq!(row(&c, "cpu/req").verdict, Verdict::Unchanged);
    assert_eq!(row(&c, "rss").verdict, Verdict::Unchanged);
    assert_eq!(c.tally.line(), "2 regressions, 0 improvements, 2 unchanged");
    let text = c.to_text(&PlanWording);
    assert!(
        text.contains("0.80× (0.77–0.83)  worse  0.008  5+5"),
        "{text}"
    );

    // The same shift the other way is an improvement for req/s and p99.
    let c = run(&b, &a, &Options::default());
    assert_eq!(row(&c, "req/s").verdict, Verdict::Improvement);
    assert_eq!(row(&c, "p99").verdict, Verdict::Improvement);
    assert_eq!(c.tally.improvements, 2);
}

#[test]
fn a_shift_inside_the_noise_is_not_reported() {
    // ±10% spread, 2% shift: the sets interleave.
    let noise = [0.9, 0.95, 1.0, 1.05, 1.1];
    let a = repeats(&noise, |f| f);
    let b = repeats(&noise, |f| Figures {
        rps: f.rps * 1.02,
        cpu_us: f.cpu_us * 1.02,
        ..f
    });
    let c = run(&a, &b, &Options::default());
    let rps = row(&c, "req/s");
    assert_eq!(rps.verdict, Verdict::Unchanged);
    assert!(rps.p.unwrap() > 0.5, "{rps:?}");
    assert_eq!(row(&c, "cpu/req").verdict, Verdict::Unchanged);
    assert_eq!(c.tally.unchanged, 4);
}

#[test]
fn too_few_repeats_give_no_verdict_and_say_why() {
    let a = repeats(&[1.0, 1.01], |f| f);
    let b = repeats(&[0.5, 0.51], |f| f);
    let c = run(&a, &b, &Options::default());
    let r = row(&c, "req/s");
    assert_eq!(r.verdict, Verdict::NoVerdict);
    assert!(r.note.as_ref().unwrap().contains("n=2+2: too few repeats"));
    assert_eq!(c.tally.no_verdict, 4);
    let text = c.to_text(&PlanWording);
    assert!(text.contains("  ?  ") && !text.contains("0.50×"), "{text}");

    // 3 and 3, fully apart: p = 0.1 at best, so no verdict at α = 0.05, but at α = 0.1.
    let a = repeats(&[1.0, 1.01, 0.99], |f| f);
    let b = repeats(&[0.5, 0.51, 0.49], |f| f);
    let c = run(&a, &b, &Options::default());
    let r = row(&c, "req/s");
    assert_eq!(r.verdict, Verdict::NoVerdict);
    assert!(
        r.note
            .as_ref()
            .unwrap()
            .contains("smallest possible p is 0.100"),
        "{r:?}"
    );
    let opts = Options {
        alpha: 0.1,
        ..Options::default()
    };
    assert_eq!(
        row(&run(&a, &b, &opts), "req/s").verdict,
        Verdict::Regression
    );
}

/// The gate's message once said 5 repeats a side were needed at α = 0.05; 4 and 4
/// reach p = 2/70 ≈ 0.029.
#[test]
fn repeats_needed_is_the_fewest_that_can_reach_alpha() {
    assert_eq!(repeats_needed(0.05), 4);
    assert_eq!(repeats_needed(0.1), 3);
    assert_eq!(repeats_needed(0.5), MIN_REPEATS);
    assert_eq!(repeats_needed(0.01), 5);
    for alpha in [0.5, 0.1, 0.05, 0.02, 0.01, 0.001] {
        let n = repeats_needed(alpha);
        assert!(smallest_p(n, n) <= alpha, "{alpha}: {n}");
        assert!(
            n == MIN_REPEATS || smallest_p(n - 1, n - 1) > alpha,
            "{alpha}: {n}"
        );
    }
}

#[test]
fn p99s_within_the_histogram_precision_are_equal() {
    // Every repeat of a side has the same p99, and the new side's is one bucket above:
    // the repeats are fully apart (p = 0.008), but the histograms cannot tell them apart.
    let h = stats::Latency::new();
    let base_ns = 1_000_000u64;
    let next_ns = h.highest_equivalent(base_ns) + 1;
    assert!(h.lowest_equivalent(next_ns) > h.highest_equivalent(base_ns));
    let at = |ns: u64| {
        vec![
            Figures {
                p99_us: ns as f64 / 1e3,
                ..BASE
            };
            5
        ]
    };
    let c = run(&at(base_ns), &at(next_ns), &Options::default());
    let r = row(&c, "p99");
    assert!(r.p.unwrap() < 0.01, "{r:?}");
    assert_eq!(r.verdict, Verdict::Unchanged);
    assert_eq!(
        r.note.as_deref(),
        Some("equal within the histograms' precision")
    );
    // Twice as far as the precision is a change.
    let c = run(&at(base_ns), &at(base_ns * 2), &Options::default());
    assert_eq!(row(&c, "p99").verdict, Verdict::Regression);
}

#[test]
fn protocol_differences_are_listed_and_hardware_leads() {
    let a = shootout(&repeats(&NOISE_2PCT, |f| f));
    let mut b = a.clone();
    let Run::Shootout(r) = &mut b else {
        unreachable!()
    };
    r.protocol.cpu_model = "Intel Xeon".into();
    r.protocol.kernel = "6.19.0".into();
    r.protocol.nproc = 4;
    r.protocol.server_cpus = vec![2, 3];
    r.protocol.ulimit_nofile = (1024, 4096);
    r.protocol
        .sysctl
        .insert("net.core.somaxconn".into(), "128".into());
    r.protocol.toolchains.insert("go".into(), "go1.27".into());
    r.protocol.foxbench_version = "0.2.0".into();
    r.suite.text = r.suite.text.replacen("repeats", "repeats = 9 #", 1);
    r.protocol.started_unix_s += 1000;
    r.protocol.command = "elsewhere".into();
    let c = compare(
        std::slice::from_ref(&a),
        &[b],
        &Options::default(),
        &PlanWording,
    )
    .unwrap();
    let fields: Vec<&str> = c.protocol.iter().map(|d| d.field.as_str()).collect();
    assert_eq!(
        fields,
        [
            "cpu_model",
            "nproc",
            "foxbench_version",
            "kernel",
            "server_cpus",
            "suite.text",
            "sysctl.net.core.somaxconn",
            "toolchains.go",
            "ulimit_nofile"
        ]
    );
    assert!(c.protocol[0].hardware && c.protocol[1].hardware && !c.protocol[2].hardware);
    let text = c.to_text(&PlanWording);
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with(
            "warning: different hardware (cpu_model: AMD EPYC → Intel Xeon; nproc: 1 → 4)"
        ),
        "{first}"
    );
    assert!(
        text.contains("  kernel: 6.18.44-fc-v769 → 6.19.0\n"),
        "{text}"
    );
    assert!(text.contains("  suite.text: line "), "{text}");
    let e = c.same_machine_error().unwrap();
    assert!(e.contains("cpu_model: AMD EPYC → Intel Xeon"), "{e}");
    // The same machine passes.
    let same = compare(
        std::slice::from_ref(&a),
        std::slice::from_ref(&a),
        &Options::default(),
        &PlanWording,
    )
    .unwrap();
    assert_eq!(same.same_machine_error(), None);
}

#[test]
fn files_of_one_side_are_pooled_and_their_differences_listed() {
    let a1 = shootout(&repeats(&[1.0, 1.01, 0.99], |f| f));
    let a2 = shootout(&repeats(&[1.02, 0.98], |f| f));
    let mut b = shootout(&repeats(&NOISE_2PCT, |f| Figures {
        rps: f.rps * 0.5,
        ..f
    }));
    if let Run::Shootout(r) = &mut b {
        r.protocol.kernel = "other".into();
    }
    let c = compare(
        &[a1, a2],
        &[b.clone(), b],
        &Options::default(),
        &PlanWording,
    )
    .unwrap();
    let r = row(&c, "req/s");
    assert_eq!(
        (r.base.as_ref().unwrap().n, r.new.as_ref().unwrap().n),
        (5, 10)
    );
    assert_eq!(r.verdict, Verdict::Regression);
    assert_eq!(c.protocol.len(), 1);
}

#[test]
fn fail_on_fails_only_significant_changes_beyond_the_limits() {
    let a = repeats(&NOISE_2PCT, |f| f);
    let b = repeats(&NOISE_2PCT_SHUFFLED, |f| Figures {
        rps: f.rps * 0.8,
        ..f
    });
    let gate = |text: &str| Options {
        fail_on: text.parse().unwrap(),
        ..Options::default()
    };
    let c = run(&a, &b, &gate("req/s<-10%,p99>+20%,cpu/req>+10%"));
    assert_eq!(c.failures.len(), 1, "{:?}", c.failures);
    let f = &c.failures[0];
    assert_eq!((f.target.as_str(), f.cell.as_str()), ("avatar", "c10"));
    assert!(
        f.line()
            .starts_with("avatar c10 req/s: -20.0% (p=0.008) breaks req/s<-10%"),
        "{}",
        f.line()
    );
    assert!(run(&a, &b, &gate("req/s<-25%")).failures.is_empty());
    assert!(run(&a, &b, &gate("p99>+1%")).failures.is_empty());
    // The same 20% inside ±30% noise is not significant, so it fails nothing.
    let wide = [0.7, 0.85, 1.0, 1.15, 1.3];
    let c = run(
        &repeats(&wide, |f| f),
        &repeats(&wide, |f| Figures {
            rps: f.rps * 0.8,
            ..f
        }),
        &gate("req/s<-10%"),
    );
    assert_eq!(row(&c, "req/s").verdict, Verdict::Unchanged);
    assert!(c.failures.is_empty());
    // Too few repeats: no verdict, no failure, and the rows it could not judge are counted.
    let c = run(&a[..2], &b[..2], &gate("req/s<-10%"));
    assert!(c.failures.is_empty());
    assert_eq!(c.ungated(&"req/s<-10%".parse().unwrap()), 1);
}

#[test]
fn fail_on_parsing() {
    #[rustfmt::skip]
    let good: &[(&str, Figure, gate::Bound, f64)] = &[
        ("req/s<-10%", Figure::Rps, gate::Bound::Below, -10.0),
        ("rps<-2.5%", Figure::Rps, gate::Bound::Below, -2.5),
        (" p99 > +20% ", Figure::Latency(99.0), gate::Bound::Above, 20.0),
        ("p99.9>+0%", Figure::Latency(99.9), gate::Bound::Above, 0.0),
        ("cpu/req>+10%", Figure::CpuPerRequest, gate::Bound::Above, 10.0),
        ("rss>+50%", Figure::RssPeak, gate::Bound::Above, 50.0),
    ];
    for &(text, figure, bound, percent) in good {
        let l: Limit = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(
            (l.figure, l.bound, l.percent),
            (figure, bound, percent),
            "{text}"
        );
    }
    let all: FailOn = "req/s<-10%,p99>+20%,cpu/req>+10%".parse().unwrap();
    assert_eq!(all.limits.len(), 3);
    let bad = [
        ("latency>+5%", "unknown figure \"latency\": use req/s, p<N>"),
        ("p0>+5%", "unknown figure \"p0\""),
        ("p101>+5%", "unknown figure \"p101\""),
        ("p99>20%", "needs a sign: p99>+20% or p99>-20%"),
        ("p99>+20", "needs the unit %, e.g. p99>+20%"),
        ("p99>+20ms", "needs the unit %"),
        (
            "req/s=-10%",
            "give a figure, < or >, and a signed percentage",
        ),
        ("req/s<-x%", "is not a percentage"),
        ("req/s<-100%", "is not a percentage above -100%"),
        ("", "is empty"),
        ("req/s<-10%,,oops", "give a figure, < or >"),
    ];
    for (text, needle) in bad {
        let e = text.parse::<FailOn>().unwrap_err().to_string();
        assert!(e.contains(needle), "{text:?}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
    // A figure this kind does not compare.
    let e = "p50>+10%"
        .parse::<FailOn>()
        .unwrap()
        .check(Kind::Shootout)
        .unwrap_err();
    assert!(
        e.to_string().contains(
            "p50 is not compared in shootout results; they have req/s, p99, cpu/req, rss"
        ),
        "{e}"
    );
    assert!("p50>+10%"
        .parse::<FailOn>()
        .unwrap()
        .check(Kind::Load)
        .is_ok());
}

proptest::proptest! {
    /// Any text parses or fails with one line; a limit built from parts reads back as them.
    #[test]
    fn fail_on_never_panics_and_reads_back(
        junk in "\\PC{0,40}",
        figure in proptest::sample::select(vec!["req/s", "p99", "p99.9", "p50", "cpu/req", "rss"]),
        below in proptest::bool::ANY,
        percent in -99.0f64..1000.0,
    ) {
        match junk.parse::<FailOn>() {
            Ok(g) => proptest::prop_assert!(g.limits.iter().all(|l| l.percent.is_finite())),
            Err(e) => proptest::prop_assert!(!e.to_string().contains('\n')),
        }
        let text = format!("{figure}{}{percent:+}%", if below { '<' } else { '>' });
        let l: Limit = text.parse().unwrap();
        proptest::prop_assert_eq!(l.figure.name(), Figure::parse(figure).unwrap().name());
        proptest::prop_assert_eq!(l.bound, if below { Bound::Below } else { Bound::Above });
        proptest::prop_assert_eq!(l.percent, percent);
    }
}

#[test]
fn the_committed_runs_compare_and_old_files_load() {
    let committed = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../bench/runs/2026-11-22-shootout/results.json"
    );
    let bench = Run::from_json(&std::fs::read_to_string(committed).unwrap()).unwrap();
    let old = Run::Shootout(fixture());
    for (a, b) in [
        (&bench, &old),
        (&old, &bench),
        (&bench, &bench),
        (&old, &old),
    ] {
        let c = compare(
            std::slice::from_ref(a),
            std::slice::from_ref(b),
            &Options::default(),
            &PlanWording,
        )
        .unwrap();
        assert!(!c.rows.is_empty());
        assert!(!c.to_text(&PlanWording).is_empty() && !c.to_markdown(&PlanWording).is_empty());
        let t = &c.tally;
        assert_eq!(
            t.regressions + t.improvements + t.unchanged + t.no_verdict,
            c.rows.len()
        );
    }
    // With itself, nothing changed; its 3 repeats a side get verdicts at α = 0.1.
    let opts = Options {
        alpha: 0.1,
        ..Options::default()
    };
    let c = compare(
        std::slice::from_ref(&bench),
        std::slice::from_ref(&bench),
        &opts,
        &PlanWording,
    )
    .unwrap();
    assert_eq!((c.tally.regressions, c.tally.improvements), (0, 0));
    assert!(c.tally.unchanged > 100, "{:?}", c.tally);
    // The fixture (2 repeats, 1 CPU) against the committed run: nproc differs.
    let c = compare(&[bench], &[old], &Options::default(), &PlanWording).unwrap();
    assert!(c.protocol.iter().any(|d| d.field == "nproc" && d.hardware));
}

#[test]
fn mixed_kinds_and_nothing_in_common_are_errors() {
    let s = shootout(&repeats(&NOISE_2PCT, |f| f));
    let l = load_run(1000.0, 100.0);
    assert_eq!(
        compare(
            std::slice::from_ref(&s),
            &[l],
            &Options::default(),
            &PlanWording
        ),
        Err(CompareError::MixedKinds)
    );
    let mut other = s.clone();
    if let Run::Shootout(r) = &mut other {
        r.targets[0].name = "someone-else".into();
    }
    assert_eq!(
        compare(&[s], &[other], &Options::default(), &PlanWording),
        Err(CompareError::NothingInCommon)
    );
    assert!(Run::from_json("{\"schema\": \"x\"}")
        .unwrap_err()
        .contains("foxbench.load/1"));
}

/// Regression (review of issue 15): a histogram that did not decode was dropped without a
/// word, and p99 quietly fell back to the repeats' median.
#[test]
fn a_corrupt_histogram_is_refused_naming_the_cell() {
    let Run::Load(mut r) = load_run(1000.0, 100.0) else {
        unreachable!()
    };
    r.latency.hdr_base64 = "bm90IGEgaGlzdG9ncmFt".into();
    let text = serde_json::to_string(&r).unwrap();
    let e = Run::from_json(&text).unwrap_err();
    assert!(
        e.contains("latency: hdr_base64 is not an HdrHistogram"),
        "{e}"
    );
    let committed = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/results.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(committed).unwrap()).unwrap();
    let cell = v["targets"][0]["cells"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|c| !c["summary"].is_null())
        .expect("a measured cell");
    cell["summary"]["hdr_base64"] = "AAAA".into();
    let e = Run::from_json(&v.to_string()).unwrap_err();
    assert!(e.contains("hdr_base64 is not an HdrHistogram"), "{e}");
}

/// A `foxbench load` result of `rps` req/s whose latencies are all `us`.
fn load_run(rps: f64, us: f64) -> Run {
    let mut lat = stats::Latency::new();
    for _ in 0..100 {
        lat.record_ns((us * 1e3) as u64);
    }
    let counts = stats::Counts {
        sent: rps as u64,
        ok: rps as u64,
        ..Default::default()
    };
    let report = crate::LoadReport::new(
        crate::TargetInfo {
            url: "http://127.0.0.1:8080/avatar".into(),
            address: "127.0.0.1:8080".into(),
            method: "GET".into(),
        },
        crate::LoadConfig {
            model: crate::Model::Closed,
            rate_per_sec: None,
            rate_schedule: None,
            connections: 10,
            threads: 1,
            pipeline: 1,
            streams: None,
            keepalive: true,
            requests: None,
            duration_s: Some(1.0),
            timeout_s: 1.0,
            connect_timeout_s: 1.0,
            selection: crate::Selection::RoundRobin,
            seed: 0,
            interval_s: 1.0,
            coalesce: "auto".into(),
            idle: "sleep".into(),
            idle_reason: String::new(),
        },
        crate::Measured {
            counts: &counts,
            latency: &lat,
            connect: &stats::Latency::new(),
            tls: None,
            open: None,
            status: &[(200, rps as u64)],
            elapsed: std::time::Duration::from_secs(1),
            interrupted: false,
        },
        Vec::new(),
        Vec::new(),
        crate::Client::measure(1, 0.1, 0.1, 1.0, rps as u64, 0),
    );
    Run::Load(report)
}

#[test]
fn load_runs_compare_on_req_s_and_latency_percentiles() {
    let a: Vec<Run> = [1000.0, 1010.0, 990.0, 1020.0, 980.0]
        .iter()
        .map(|&r| load_run(r, 100.0))
        .collect();
    let b: Vec<Run> = [700.0, 710.0, 690.0, 720.0, 680.0]
        .iter()
        .map(|&r| load_run(r, 300.0))
        .collect();
    let c = compare(&a, &b, &Options::default(), &PlanWording).unwrap();
    assert_eq!(c.kind, Kind::Load);
    let names: Vec<&str> = c.rows.iter().map(|r| r.figure.as_str()).collect();
    assert_eq!(names, ["req/s", "p50", "p90", "p99", "p99.9"]);
    assert_eq!(row(&c, "req/s").verdict, Verdict::Regression);
    assert_eq!(
        (
            row(&c, "req/s").target.as_str(),
            row(&c, "req/s").cell.as_str()
        ),
        ("GET /avatar", "c10")
    );
    // Every latency was 100 µs then 300 µs: the same in each repeat, so the repeats tie
    // within a side and the sides are fully apart.
    assert_eq!(row(&c, "p99").verdict, Verdict::Regression);
    assert!((row(&c, "p50").ratio.unwrap() - 3.0).abs() < 0.01);
    assert!(c.protocol.is_empty() && !c.machine_recorded);
    assert!(c
        .same_machine_error()
        .unwrap()
        .contains("load results do not record the machine"));
    assert!(c
        .to_text(&PlanWording)
        .contains("note: load results do not record the machine"));
    let same = compare(&a, &a, &Options::default(), &PlanWording).unwrap();
    assert!(same.rows.iter().all(|r| r.verdict == Verdict::Unchanged));
}

#[test]
fn json_and_markdown() {
    let a = repeats(&NOISE_2PCT, |f| f);
    let b = repeats(&NOISE_2PCT_SHUFFLED, |f| Figures {
        rps: f.rps * 0.8,
        ..f
    });
    let c = run(&a, &b, &Options::default());
    // serde_json may round a float's last bit, so the rest is compared exactly.
    let back: Comparison = serde_json::from_str(&c.to_json()).unwrap();
    assert_eq!(
        (&back.tally, &back.protocol, back.rows.len()),
        (&c.tally, &c.protocol, 4)
    );
    for (x, y) in back.rows.iter().zip(&c.rows) {
        assert_eq!(
            (&x.figure, x.verdict, &x.note),
            (&y.figure, y.verdict, &y.note)
        );
        assert!((x.p.unwrap() - y.p.unwrap()).abs() < 1e-12);
    }
    let md = c.to_markdown(&PlanWording);
    assert!(
        md.contains("| req/s | base | new | change | p | n |\n|---|---:|---:|---:|---:|---:|\n"),
        "{md}"
    );
    assert!(
        md.contains(
            "| avatar c10 | 10.0k ±2% | 8.0k ±2% | **0.80× (0.77–0.83)** worse | 0.008 | 5+5 |"
        ),
        "{md}"
    );
    assert!(
        md.contains("**1 regression, 0 improvements, 3 unchanged** (α = 0.05)"),
        "{md}"
    );
}

/// The committed schema is the one the types generate. To update it after changing the
/// types: `FOXBENCH_WRITE_SCHEMA=1 cargo test -p foxbench-report schema`.
#[test]
fn the_committed_compare_schema_matches_the_types() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schemas/compare.schema.json"
    );
    let generated = Comparison::json_schema();
    if std::env::var_os("FOXBENCH_WRITE_SCHEMA").is_some() {
        std::fs::write(path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(committed == generated, "schemas/compare.schema.json is stale: run FOXBENCH_WRITE_SCHEMA=1 cargo test -p foxbench-report schema");
}
