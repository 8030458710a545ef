use super::*;

fn fill_str(t: &Template, rng: &mut Rng) -> String {
    let mut out = Vec::new();
    t.fill(rng, &mut out);
    String::from_utf8(out).unwrap()
}

#[test]
fn parses_holes_literals_and_escapes() {
    let t = Template::parse("/{hex:6}.svg?n={int:1-21}&b={{x}}").unwrap();
    assert_eq!(
        t.pieces,
        vec![
            Piece::Literal(b"/".to_vec()),
            Piece::Hole(Hole::Hex(6)),
            Piece::Literal(b".svg?n=".to_vec()),
            Piece::Hole(Hole::Int { lo: 1, hi: 21 }),
            Piece::Literal(b"&b={x}".to_vec()),
        ]
    );
    assert_eq!(t.max_len(), 1 + 6 + 7 + 2 + 6);
    assert!(!t.is_literal());
    assert!(Template::parse("/plain").unwrap().is_literal());
    assert_eq!(Template::parse("").unwrap(), Template::default());
}

#[test]
fn rejects_bad_templates_in_one_line_naming_the_column() {
    for (bad, column, what) in [
        ("/{hex:0}", 2, "1 to 64"),
        ("/{hex:65}", 2, "1 to 64"),
        ("/{hex:x}", 2, "1 to 64"),
        ("/a{int:5-1}", 3, "larger"),
        ("/{int:1}", 2, "range"),
        ("/{int:a-b}", 2, "whole numbers"),
        ("/{int:-1-5}", 2, "whole numbers"),
        ("/{uuid:4}", 2, "unknown"),
        ("/{hex6}", 2, "no ':'"),
        ("/{hex:6", 2, "no '}'"),
        ("/x}", 3, "no '{'"),
    ] {
        let e = Template::parse(bad).unwrap_err();
        assert_eq!(e.column, column, "{bad}: {e}");
        let text = e.to_string();
        assert!(text.contains(what), "{bad}: {text}");
        assert!(!text.contains('\n'));
    }
}

#[test]
fn fills_valid_values_reproducibly() {
    let t = Template::parse("/{hex:6}/{int:1-21}/{hex:40}/{int:0-0}").unwrap();
    let (mut a, mut b, mut c) = (Rng::new(7, 0), Rng::new(7, 0), Rng::new(8, 0));
    let mut differs = false;
    for _ in 0..1000 {
        let s = fill_str(&t, &mut a);
        assert_eq!(s, fill_str(&t, &mut b), "same seed, same values");
        differs |= s != fill_str(&t, &mut c);
        let parts: Vec<&str> = s.split('/').collect();
        assert_eq!(parts[1].len(), 6);
        assert!(parts[1]
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        let n: u64 = parts[2].parse().unwrap();
        assert!((1..=21).contains(&n), "{n}");
        assert_eq!(parts[3].len(), 40);
        assert_eq!(parts[4], "0");
    }
    assert!(differs, "another seed gives other values");
    assert_ne!(
        fill_str(&t, &mut Rng::new(7, 1)),
        fill_str(&t, &mut Rng::new(7, 0))
    );
}

#[test]
fn int_extremes_and_decimal() {
    let mut out = Vec::new();
    for v in [0, 9, 10, 99, 100, u64::MAX] {
        out.clear();
        push_decimal(v, &mut out);
        assert_eq!(out, v.to_string().as_bytes());
        assert_eq!(digits(v), v.to_string().len());
    }
    let mut rng = Rng::new(1, 0);
    let full = Hole::Int {
        lo: 0,
        hi: u64::MAX,
    };
    out.clear();
    full.fill(&mut rng, &mut out);
    assert!(out.len() <= full.max_len());
    for _ in 0..1000 {
        assert!(rng.below_inclusive(2) <= 2);
    }
}
