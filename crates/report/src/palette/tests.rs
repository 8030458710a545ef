use super::*;

/// The lines each chart draws, both pages' charts together; an objective's line (held or
/// failed) may be drawn on the rate, latency and errors charts, and a search's windows are
/// held or failed.
fn charts() -> [(&'static str, Vec<Line>); 6] {
    use Line::*;
    [
        ("rate", vec![Rate, Target, Errors, Held, Failed]),
        (
            "latency",
            vec![P50, P99, Max, ServiceP50, ServiceP99, Held, Failed],
        ),
        (
            "errors",
            vec![
                ErrorsConnect,
                ErrorsWrite,
                ErrorsRead,
                ErrorsParse,
                ErrorsTimeout,
                ErrorsTls,
                Held,
                Failed,
            ],
        ),
        ("connections", vec![Connections]),
        ("cpu", vec![Cpu, Spin, Saturated]),
        ("windows", vec![Held, Failed]),
    ]
}

/// p50 and the service time's p50 shared a colour on the dashboard (and its p99s too):
/// every series of a chart has its own.
#[test]
fn service_p50_has_a_colour_of_its_own() {
    for (chart, lines) in charts() {
        for (i, a) in lines.iter().enumerate() {
            for b in &lines[i + 1..] {
                assert_ne!(a.colour(), b.colour(), "{chart}: {a:?} and {b:?}");
            }
        }
    }
    let every: Vec<Line> = charts().into_iter().flat_map(|(_, l)| l).collect();
    for line in Line::ALL {
        assert!(every.contains(&line), "{line:?} is on no chart");
    }
}

#[test]
fn keys_are_unique_and_colours_are_hex() {
    let mut keys: Vec<&str> = Line::ALL.iter().map(|l| l.key()).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), Line::ALL.len());
    for line in Line::ALL {
        let c = line.colour();
        assert!(
            c.len() == 7 && c.starts_with('#') && c[1..].bytes().all(|b| b.is_ascii_hexdigit()),
            "{line:?}: {c}"
        );
        let [r, g, b] = line.rgb();
        assert_eq!(format!("#{r:02x}{g:02x}{b:02x}"), c);
    }
}
