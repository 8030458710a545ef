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
        (Protocol::Http3(load::H3Options::default()), true, "h3"),
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

/// The workspace's non-test sources (tests, benches, fuzz targets and `tests.rs` files
/// aside), each with its lines of code (comment lines aside).
fn sources() -> Vec<(std::path::PathBuf, Vec<String>)> {
    let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = Vec::new();
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
                let code = text
                    .lines()
                    .filter(|l| !l.trim_start().starts_with("//"))
                    .map(str::to_string)
                    .collect();
                out.push((path, code));
            }
        }
    }
    out
}

/// The files, and lines, where `telltale` holds of a line and the lines after it.
fn found(telltale: &dyn Fn(&[String]) -> bool) -> Vec<String> {
    let mut hits = Vec::new();
    for (path, code) in sources() {
        for i in 0..code.len() {
            if telltale(&code[i..]) {
                hits.push(format!("{}:{}", path.display(), code[i].trim()));
            }
        }
    }
    hits
}

/// Whether a line of code builds the name `h2c`: the literal (`"h2c"`, `r"h2c"`,
/// `b"h2c"`), or `h2` and `c` put together (`concat!("h2", "c")`, `format!("{}c", "h2")`,
/// `"h2".to_string() + "c"`).
fn names_h2c(line: &str) -> bool {
    line.contains("h2c\"")
        || (line.contains("\"h2")
            && (line.contains("\"c\"") || (line.contains("c\"") && line.contains("{"))))
}

#[test]
fn the_h2c_scan_catches_the_ways_of_building_the_name() {
    for line in [
        r#"let n = "h2c";"#,
        r#"let n = r"h2c";"#,
        r#"concat!("h2", "c")"#,
        r#""h2".to_string() + "c""#,
        r#"format!("{}c", "h2")"#,
        r#"format!("h2{}", "c")"#,
    ] {
        assert!(names_h2c(line), "{line}");
    }
    for line in [r#"alpn == b"h2""#, r#"unwrap_or("h2")"#, "let h2 = conn;"] {
        assert!(!names_h2c(line), "{line}");
    }
}

/// The protocol's name is made in one place: a second `h2c` built in the workspace's code
/// (comments and tests aside) is a second naming, which drifts from this one.
#[test]
fn the_protocol_is_named_here_only() {
    let hits = found(&|code| names_h2c(&code[0]));
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert!(hits[0].contains("measure/src/rules.rs"), "{hits:?}");
}

/// The TCP rules read the service time in the open model, decided in `rules_latency`:
/// every `tcp::Evidence` built takes its latency from it, and no other code picks the
/// latency when the service time is empty (`if service.is_empty() { latency }`).
#[test]
fn the_rules_latency_is_chosen_here_only() {
    let evidence = found(&|code| {
        code[0].contains("Evidence {")
            && !code[0].contains("struct")
            && code
                .iter()
                .take_while(|l| !l.trim_start().starts_with('}'))
                .any(|l| l.trim_start().starts_with("latency:") && !l.contains("rules_latency("))
    });
    assert!(
        evidence.is_empty(),
        "the rules' latency chosen elsewhere: {evidence:?}"
    );
    let choice = found(&|code| {
        code[0].contains("service.is_empty()")
            && code.iter().take(3).any(|l| {
                let t = l
                    .trim()
                    .trim_start_matches(['&', '{', ' '])
                    .trim_end_matches(['}', ' ']);
                t.ends_with("latency") && !t.contains(' ')
            })
    });
    assert_eq!(choice.len(), 1, "{choice:?}");
    assert!(choice[0].contains("measure/src/rules.rs"), "{choice:?}");
}

/// "The open model never coalesces" is decided in `Plan::coalesce_in_effect` and applied
/// to a window whose arrival changes in `with_arrival`: `Coalesce::Off` is named only where
/// the mode is parsed, shown, decided and run (load's plan.rs and worker/coalesce.rs), and
/// a plan's `coalesce` is set only from the flag or here.
#[test]
fn coalescing_in_effect_is_decided_here_only() {
    let off = found(&|code| code[0].contains("Coalesce::Off"));
    let homes = ["load/src/plan.rs", "load/src/worker/coalesce.rs"];
    let elsewhere: Vec<&String> = off
        .iter()
        .filter(|h| !homes.iter().any(|home| h.contains(home)))
        .collect();
    assert!(elsewhere.is_empty(), "{elsewhere:?}");
    let set = found(&|code| code[0].contains(".coalesce = "));
    let homes = ["measure/src/rules.rs", "foxbench/src/load_cmd.rs"];
    let elsewhere: Vec<&String> = set
        .iter()
        .filter(|h| !homes.iter().any(|home| h.contains(home)))
        .collect();
    assert!(elsewhere.is_empty(), "{elsewhere:?}");
}
