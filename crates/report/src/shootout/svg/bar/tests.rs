use super::super::{assert_finite, PALETTE};
use super::*;

fn int(v: f64) -> String {
    format!("{v:.0}")
}

fn bar(value: f64, hollow: bool) -> Bar {
    Bar {
        label: "<b>".into(),
        value,
        text: int(value),
        colour: PALETTE[0],
        hollow,
        tip: "tip".into(),
    }
}

#[test]
fn degenerate_bar_charts_stay_finite() {
    for horizontal in [true, false] {
        for values in [
            vec![],
            vec![0.0],
            vec![0.0, 0.0],
            vec![f64::NAN, 3.0],
            vec![1e12, 1.0],
        ] {
            let svg = bar_chart(&BarChart {
                title: "t".into(),
                bars: values.iter().map(|&v| bar(v, false)).collect(),
                axis: Axis::new("v", Scale::Linear, int),
                horizontal,
                width: 500.0,
                empty_note: "none".into(),
            });
            assert_finite(&svg);
            assert!(!svg.contains("<b>"));
        }
    }
}

#[test]
fn bar_rects_solid_and_hollow() {
    for (hollow, want) in [
        (
            false,
            r##"<rect x="1" y="2.5" width="30" height="16" fill="#1f77b4"/>"##,
        ),
        (
            true,
            r##"<rect x="1" y="2.5" width="30" height="16" fill="#1f77b4" fill-opacity="0.28" stroke="#1f77b4" stroke-width="1.5"/>"##,
        ),
    ] {
        let mut out = String::new();
        bar_rect(&mut out, 1.0, 2.5, 30.0, 16.0, &bar(7.0, hollow));
        assert_eq!(out, want, "hollow {hollow}");
    }
}
