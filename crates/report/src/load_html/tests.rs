use super::*;

#[test]
fn the_page_carries_every_chart_and_escapes_what_it_prints() {
    let mut r = crate::tests::sample();
    let mut h = stats::Latency::new();
    for us in 1..=1000u64 {
        h.record_ns(us * 1000);
    }
    r.latency = Distribution::of(&h);
    r.target.url = "http://127.0.0.1:1/<script>".into();
    r.slo = Some(
        "p99<1ms,rps>=100"
            .parse::<crate::slo::Slo>()
            .unwrap()
            .judge(&r, None),
    );
    let html = to_html(&r);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(!html.contains("<script>"), "unescaped");
    for id in ["chart-spectrum", "chart-rate", "chart-latency", "slo"] {
        assert!(html.contains(&format!("id=\"{id}\"")), "{id}");
    }
    assert_eq!(html.matches("<svg").count(), 3);
    assert!(html.contains("<code>rps&gt;=100</code>"));
    svg::assert_finite(&html);
    // The spectrum reaches p99.99 of the histogram: 1000 µs at the top.
    assert!(
        html.contains("request latency · p99.9985: 1.00ms"),
        "{html}"
    );
}

#[test]
fn a_ramp_without_a_constant_rate_is_described_as_the_open_model() {
    let mut r = crate::tests::sample();
    r.config.model = Model::Open;
    r.config.rate_per_sec = None;
    r.config.rate_schedule = Some("100→400 over 8s req/s, then 400".into());
    let d = describe(&r);
    assert!(d.starts_with("open model, 100→400 over 8s req/s"), "{d}");
}

#[test]
fn a_result_without_responses_or_intervals_still_renders() {
    let mut r = crate::tests::sample();
    r.latency = Distribution::of(&stats::Latency::new());
    r.intervals.clear();
    let html = to_html(&r);
    assert!(html.contains("no response was timed"));
    assert!(html.contains("no interval series in this result"));
    svg::assert_finite(&html);
}

/// The stroke of the series named `name` in `html` (its first one).
fn series_colour<'a>(html: &'a str, name: &str) -> &'a str {
    let at = html
        .find(&format!("<g class=\"series\"><title>{name}</title>"))
        .unwrap_or_else(|| panic!("no series {name}"));
    let rest = &html[at..];
    let stroke = rest.find("stroke=\"").expect("a stroke") + "stroke=\"".len();
    &rest[stroke..stroke + 7]
}

/// The dashboard drew p99 red and max orange where this page drew them the other way:
/// both take each series' colour from the one palette.
#[test]
fn p99_and_max_take_the_palettes_colours() {
    let r = crate::tests::sample();
    assert!(r.intervals.iter().any(|i| i.requests > 0));
    let html = to_html(&r);
    for (name, line) in [
        ("responses/s", Line::Rate),
        ("p50", Line::P50),
        ("p99", Line::P99),
        ("max", Line::Max),
    ] {
        assert_eq!(series_colour(&html, name), line.colour(), "{name}");
    }
}

/// The page says the send stamps were sampled, as the text report does: it once showed the
/// receive side's client delay and left the send stamps out.
#[test]
fn the_page_gives_the_sampled_send_stamps() {
    let mut r = crate::tests::sample();
    let brief = crate::Brief {
        count: 812,
        p50_us: 3.0,
        p99_us: 41.0,
        max_us: 190.0,
    };
    r.client.client_delay = Some(crate::ClientDelay {
        latency_clock: crate::LatencyClock::Kernel,
        p50_us: 1.0,
        p99_us: 2.0,
        max_us: 3.0,
        latency_p50_us: 100.0,
        stamped_reads: 1000,
        unstamped_reads: 0,
        send_stamps: Some(crate::SendStamps {
            every: 64,
            sampled: 812,
            returned: 812,
            matched: 812,
            lateness: None,
            delay: Some(brief),
        }),
    });
    let html = to_html(&r);
    assert!(
        html.contains(
            "<dt>send stamps</dt><dd>Send delay    (kernel, 1 in 64 requests sampled, 812 stamps): p50 3.0µs"
        ),
        "{html}"
    );
}
