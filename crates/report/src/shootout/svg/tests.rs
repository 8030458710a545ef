use super::*;

#[test]
fn num_never_prints_nan_or_inf() {
    for (v, want) in [
        (f64::NAN, "0"),
        (f64::INFINITY, "0"),
        (f64::NEG_INFINITY, "0"),
        (-0.01, "0"),
        (-0.0, "0"),
        (0.0, "0"),
        (12.0, "12"),
        (12.25, "12.2"),
        (12.26, "12.3"),
        (-3.5, "-3.5"),
        (1e6, "1000000"),
    ] {
        assert_eq!(num(v), want, "num({v})");
    }
}

#[test]
fn escaping_covers_markup_and_quotes() {
    for (s, want) in [
        ("", ""),
        ("plain µs", "plain µs"),
        (
            r#"<a href="x">&'"#,
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;",
        ),
        ("&amp;", "&amp;amp;"),
    ] {
        assert_eq!(esc(s), want, "esc({s:?})");
    }
}

#[test]
fn clip_counts_characters_not_bytes() {
    for (s, n, want) in [
        ("short", 10, "short"),
        ("exactly", 7, "exactly"),
        ("too long", 5, "too …"),
        ("µµµµ", 3, "µµ…"),
        ("ab", 0, "…"),
    ] {
        assert_eq!(clip(s, n), want, "clip({s:?}, {n})");
    }
}

#[test]
fn text_width_is_per_character() {
    for (s, size, want) in [("", 12.0, 0.0), ("abc", 10.0, 17.4), ("µs", 10.0, 11.6)] {
        assert!((text_width(s, size) - want).abs() < 1e-9, "{s:?}");
    }
}

#[test]
fn styles_follow_palette_then_markers_then_dashes() {
    for (i, colour, dash, marker) in [
        (0, PALETTE[0], None, Marker::Circle),
        (6, PALETTE[6], None, Marker::Circle),
        (7, PALETTE[7], None, Marker::Square),
        (13, PALETTE[13], None, Marker::Square),
        (14, PALETTE[0], Some("7 4"), Marker::Diamond),
        (21, PALETTE[7], Some("7 4"), Marker::Circle),
        (28, PALETTE[0], Some("2 3"), Marker::Square),
        (42, PALETTE[0], None, Marker::Circle),
    ] {
        assert_eq!(
            style(i),
            Style {
                colour,
                dash,
                marker
            },
            "style({i})"
        );
    }
}

#[test]
fn fourteen_styles_are_distinct() {
    let styles: Vec<Style> = (0..14).map(style).collect();
    for (i, a) in styles.iter().enumerate() {
        for b in &styles[i + 1..] {
            assert_ne!(a.colour, b.colour);
        }
    }
    assert_eq!(style(14).colour, style(0).colour);
    assert_ne!(style(14), style(0));
}
