use super::*;
use report::shootout::{CellStatus, TierWindow};

/// A measured cell of target `t` with one service `hello`: the client's, the
/// target's and hello's CPU shares, and the base verdict.
fn cell(client: f64, target: f64, hello: f64, base: Bottleneck) -> Cell {
    let text = include_str!("../../../report/tests/data/results.json");
    let r = report::shootout::ShootoutResults::from_json(text).unwrap();
    let mut c = r
        .targets
        .iter()
        .flat_map(|t| t.cells.clone())
        .find(|c| c.summary.is_some() && !c.repeats.is_empty())
        .unwrap();
    c.status = CellStatus::Measured;
    let s = c.summary.as_mut().unwrap();
    s.client_cpu_percent = client;
    s.server_cpu_percent = target;
    s.server_cpu_us_per_request = Some(20.0);
    c.diagnosis = Some(Diagnosis {
        bottleneck: base,
        detail: "base".into(),
    });
    for r in &mut c.repeats {
        r.services = vec![TierWindow {
            name: "hello".into(),
            cpu_s: 0.1,
            cpu_percent: hello,
            cpu_us_per_request: Some(5.0),
            rss_peak_bytes: 3 << 20,
            threads_peak: 1,
        }];
    }
    c
}

#[test]
fn the_limiting_tier_is_named() {
    use Bottleneck::*;
    let two = Layout {
        client: vec![0],
        server: vec![1],
        services: vec![1],
    };
    let four = Layout {
        client: vec![0, 1],
        server: vec![2],
        services: vec![3],
    };
    let cases = [
        // (client %, target %, hello %, base verdict, layout) → (verdict, tier)
        (
            (95.0, 50.0, 40.0, ClientBound, &two),
            (ClientBound, "client"),
        ),
        (
            (50.0, 95.0, 4.0, ServerCpuBound, &two),
            (ServerCpuBound, "t"),
        ),
        (
            (40.0, 30.0, 97.0, Neither, &four),
            (ServiceCpuBound, "service hello"),
        ),
        // 2 CPUs: the target and hello fill CPU 1 together; hello used more of it.
        (
            (40.0, 35.0, 60.0, Neither, &two),
            (ServiceCpuBound, "service hello"),
        ),
        ((40.0, 60.0, 35.0, Neither, &two), (ServerCpuBound, "t")),
        // Apart, neither is full: waiting.
        ((40.0, 35.0, 60.0, Neither, &four), (Neither, "neither")),
        ((30.0, 20.0, 10.0, Neither, &two), (Neither, "neither")),
        ((30.0, 20.0, 10.0, Errors, &two), (Errors, "errors")),
        // The waiting verdicts stand with their evidence (they were once turned into
        // "neither" here, hiding the pool the connections named).
        ((30.0, 20.0, 10.0, PoolBound, &two), (PoolBound, "t")),
        ((30.0, 20.0, 10.0, LockBound, &two), (LockBound, "t")),
        (
            (30.0, 20.0, 10.0, BackendWait, &two),
            (BackendWait, "service hello"),
        ),
        // A full service still comes first.
        (
            (40.0, 30.0, 97.0, PoolBound, &four),
            (ServiceCpuBound, "service hello"),
        ),
        (
            (30.0, 50.0, 10.0, ServerThreadBound, &two),
            (ServerThreadBound, "t"),
        ),
    ];
    for ((client, target, hello, base, layout), (want, tier)) in cases {
        let mut c = cell(client, target, hello, base);
        conclude(&mut c, "t", layout);
        let d = c.diagnosis.as_ref().unwrap();
        assert_eq!(
            (d.bottleneck, c.limiting_tier.as_deref()),
            (want, Some(tier)),
            "{client} {target} {hello} {base:?}: {}",
            d.detail
        );
        assert!(
            d.detail.contains("tiers: t ") && d.detail.contains("hello "),
            "{}",
            d.detail
        );
        assert_eq!(c.tiers.len(), 2);
        assert_eq!(c.tiers[1].role, TierRole::Service);
        assert_eq!(c.tiers[1].cpu_us_per_request, Some(5.0));
    }
    let mut c = cell(40.0, 35.0, 60.0, Neither);
    conclude(&mut c, "t", &two);
    assert!(c
        .diagnosis
        .unwrap()
        .detail
        .starts_with("service hello CPU-bound: CPU 1 is full between tiers (t 35% + hello 60%)"),);
}

/// Regression (the database suite's quick run): go-sql with pool 150 at c150 filled
/// CPU 1 (100% busy on /proc/stat, 11% of it softirq) while the target (26%) and
/// postgres with its link (60%) added up to 86%; two futex waiters more than before
/// the load read as lock-bound. The CPU was full between the tiers.
#[test]
fn a_cpu_full_on_proc_stat_between_tiers_is_the_limit() {
    use report::shootout::{CpuUse, SystemSummary};
    let two = Layout {
        client: vec![0],
        server: vec![1],
        services: vec![1],
    };
    let cpu = |cpu: u64, busy: f64| CpuUse {
        cpu,
        user: busy / 2.0,
        nice: 0.0,
        system: busy / 2.0,
        irq: 0.0,
        softirq: 0.0,
        steal: 0.0,
        idle: 100.0 - busy,
        iowait: 0.0,
        busy,
    };
    let cases = [
        // (target %, postgres %, CPU 1 busy) → verdict
        ((26.0, 60.0, 100.0), Bottleneck::ServiceCpuBound),
        // Without /proc/stat's figure, 86% is not full.
        ((26.0, 60.0, 86.0), Bottleneck::LockBound),
        // Busy with other work: the tiers used under half of it.
        ((20.0, 10.0, 100.0), Bottleneck::LockBound),
    ];
    for ((target, hello, busy), want) in cases {
        let mut c = cell(40.0, target, hello, Bottleneck::LockBound);
        c.summary.as_mut().unwrap().system = Some(SystemSummary {
            client: vec![cpu(0, 45.0)],
            server: vec![cpu(1, busy)],
            ctxt_per_s: 17_000.0,
        });
        conclude(&mut c, "t", &two);
        let d = c.diagnosis.as_ref().unwrap();
        assert_eq!(d.bottleneck, want, "{target} {hello} {busy}: {}", d.detail);
        if want == Bottleneck::ServiceCpuBound {
            assert!(
                    d.detail.starts_with("service hello CPU-bound: CPU 1 is full between tiers (t 26% + hello 60%; 100% busy on /proc/stat)"),
                    "{}",
                    d.detail
                );
        }
    }
}

#[test]
fn a_cell_without_services_is_left_alone() {
    let mut c = cell(40.0, 35.0, 60.0, Bottleneck::Neither);
    for r in &mut c.repeats {
        r.services.clear();
    }
    let before = c.clone();
    conclude(&mut c, "t", &Layout::default());
    assert_eq!(c, before);
}
