use super::super::{assert_finite, style, Scale};
use super::*;

fn int(v: f64) -> String {
    format!("{v:.0}")
}

fn chart(scale: Scale, series: Vec<Series>) -> String {
    line_chart(&LineChart {
        title: "t".into(),
        x: Axis::new("x", scale, int),
        y: Axis::new("y", scale, int),
        series,
        width: 600.0,
        height: 300.0,
        rules: vec![(f64::NAN, "nan rule".into()), (1.0, "one".into())],
        empty_note: "nothing".into(),
    })
}

fn series(points: Vec<(f64, f64)>) -> Series {
    Series {
        name: "s".into(),
        style: style(0),
        points: points.into_iter().map(|(x, y)| Point::new(x, y)).collect(),
        markers: true,
    }
}

#[test]
fn degenerate_line_charts_stay_finite() {
    for scale in [Scale::Linear, Scale::Log] {
        for pts in [
            vec![],
            vec![(1.0, 1.0)],
            vec![(0.0, 0.0)],
            vec![(0.0, 0.0), (0.0, 0.0)],
            vec![(5.0, 7.0), (5.0, 7.0)],
            vec![(f64::NAN, 1.0), (1.0, f64::INFINITY), (-1.0, -5.0)],
            vec![(1e-300, 1e300), (1e300, 1e-300)],
        ] {
            let svg = chart(scale, vec![series(pts.clone())]);
            assert_finite(&svg);
            assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"), "{svg}");
        }
        assert_finite(&chart(scale, vec![]));
    }
    assert!(chart(Scale::Log, vec![series(vec![(0.0, 0.0)])]).contains("nothing"));
}

#[test]
fn a_lone_point_gets_a_marker_without_markers() {
    let mut s = series(vec![(1.0, 2.0)]);
    s.markers = false;
    assert!(chart(Scale::Linear, vec![s]).contains("<circle"));
}

#[test]
fn markers_by_shape() {
    for (i, hollow, tip, want) in [
        (
            0,
            false,
            None,
            r##"<circle cx="10" cy="20" r="4" fill="#1f77b4" stroke="#1f77b4" stroke-width="1.6"/>"##,
        ),
        (
            7,
            true,
            Some("a<b"),
            r##"<rect x="6.4" y="16.4" width="7.2" height="7.2" fill="#fff" stroke="#17becf" stroke-width="1.6"><title>a&lt;b</title></rect>"##,
        ),
        (
            14,
            false,
            Some("p"),
            r##"<path d="M10 15.2L14.8 20L10 24.8L5.2 20Z" fill="#1f77b4" stroke="#1f77b4" stroke-width="1.6"><title>p</title></path>"##,
        ),
    ] {
        let mut out = String::new();
        marker(&mut out, style(i), (10.0, 20.0), 4.0, hollow, tip);
        assert_eq!(out, want, "style({i})");
    }
}
