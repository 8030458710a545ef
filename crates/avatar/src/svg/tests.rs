use super::*;

#[test]
fn color_path_table() {
    let cases: &[(&[u8], Option<&[u8; 6]>)] = &[
        (b"/ff8800.svg", Some(b"ff8800")),
        (b"/FF8800.svg", Some(b"ff8800")),
        (b"/A8dB7d.svg", Some(b"a8db7d")),
        (b"/ff880.svg", None),
        (b"/ff88000.svg", None),
        (b"/gg8800.svg", None),
        (b"/ff8800.SVG", None),
        (b"ff8800.svg", None),
        (b"/ff8800.svgz", None),
        (b"/x/ff8800.svg", None),
    ];
    for &(path, want) in cases {
        assert_eq!(
            color_from_path(path).as_ref(),
            want,
            "{:?}",
            String::from_utf8_lossy(path)
        );
    }
}

#[test]
fn body_fills_every_placeholder() {
    let t = SvgTemplate::parse("<a f=\"{{color}}\"/><b f=\"{{color}}\"/>").unwrap();
    let mut out = Vec::new();
    t.write_body(b"a8db7d", &mut out);
    assert_eq!(out, b"<a f=\"#a8db7d\"/><b f=\"#a8db7d\"/>");
    assert_eq!(out.len(), t.body_len());
}

#[test]
fn template_without_placeholder_is_refused() {
    assert_eq!(
        SvgTemplate::parse("<svg/>").unwrap_err(),
        TemplateError::NoPlaceholder
    );
}

#[test]
fn default_fox_has_colour_and_stable_etag() {
    let t = SvgTemplate::default_fox();
    let mut out = Vec::new();
    t.write_body(b"ff8800", &mut out);
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("fill=\"#ff8800\""));
    assert!(!text.contains(PLACEHOLDER));
    let tag = t.etag(b"ff8800");
    assert!(tag.starts_with(b"\"ff8800-") && tag.ends_with(b"\""));
}

#[test]
fn random_colour_bits_format() {
    assert_eq!(&color_from_bits(0xdead_beef_00ff_8800), b"ff8800");
    assert_eq!(&color_from_bits(0x0000_0000_0000_0001), b"000001");
}
