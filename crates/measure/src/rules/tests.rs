use std::time::Duration;

use load::{Arrival, Coalesce, H2Options, Plan, Protocol, Rate, Target};
use stats::Latency;

use super::{protocol_name, rules_latency, with_arrival};

#[test]
fn protocol_name_is_h2_over_tls_and_h2c_without() {
    let h2 = Protocol::Http2(H2Options::default());
    let table = [
        (Protocol::Http1, false, "http/1.1"),
        (Protocol::Http1, true, "http/1.1"),
        (h2, true, "h2"),
        (h2, false, "h2c"),
    ];
    for (protocol, tls, name) in table {
        assert_eq!(
            protocol_name(&protocol, tls),
            name,
            "{protocol:?} tls={tls}"
        );
    }
}

fn histogram(values_ns: &[u64]) -> Latency {
    let mut h = Latency::new();
    for v in values_ns {
        h.record_ns(*v);
    }
    h
}

#[test]
fn rules_read_the_service_time_when_there_is_one() {
    let latency = histogram(&[5_000_000]);
    let service = histogram(&[40_000]);
    let none = Latency::new();
    // The closed model records no service time: the latency is read.
    assert_eq!(
        rules_latency(&latency, &none).percentile_ns(50.0),
        latency.percentile_ns(50.0)
    );
    // The open model records one: it is read, not the latency from the due time.
    assert_eq!(
        rules_latency(&latency, &service).percentile_ns(50.0),
        service.percentile_ns(50.0)
    );
}

#[test]
fn an_open_window_never_coalesces_and_validates() {
    let target = Target::parse("http://127.0.0.1:1/").expect("parses");
    let open = Arrival::Open {
        rate: Rate::constant(100.0),
    };
    let table = [
        (Coalesce::Auto, Arrival::Closed, Coalesce::Auto),
        (
            Coalesce::Fixed(Duration::from_micros(50)),
            Arrival::Closed,
            Coalesce::Fixed(Duration::from_micros(50)),
        ),
        (Coalesce::Auto, open.clone(), Coalesce::Off),
        (
            Coalesce::Fixed(Duration::from_micros(50)),
            open.clone(),
            Coalesce::Off,
        ),
        (Coalesce::Off, open, Coalesce::Off),
    ];
    for (given, arrival, in_effect) in table {
        let plan = Plan {
            coalesce: given,
            ..Plan::new(target.clone())
        };
        let plan = with_arrival(plan, arrival.clone());
        assert_eq!(plan.coalesce, in_effect, "{given:?} {arrival:?}");
        assert_eq!(plan.coalesce, plan.coalesce_in_effect());
        assert_eq!(plan.validate(), Ok(()), "{given:?} {arrival:?}");
    }
}

/// The protocol's name is made in one place: a second `"h2c"` in the workspace's code
/// (comments and tests aside) is a second naming, which drifts from this one.
#[test]
fn the_protocol_is_named_here_only() {
    let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    let mut dirs = vec![crates];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !matches!(name.as_str(), "tests" | "target" | "benches" | "fuzz") {
                    dirs.push(path);
                }
            } else if name.ends_with(".rs") && name != "tests.rs" {
                let text = std::fs::read_to_string(&path).unwrap();
                let code = text.lines().filter(|l| !l.trim_start().starts_with("//"));
                if code.filter(|l| l.contains("\"h2c\"")).count() > 0 {
                    found.push(path);
                }
            }
        }
    }
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].ends_with("measure/src/rules.rs"), "{found:?}");
}
