//! The 302 picks every image, uniformly.

use std::collections::HashMap;
use std::io::Write;

use crate::common::{Avatar, Reader};

/// Chi-square with 20 degrees of freedom exceeds 65.42 with probability 1e-6 under uniformity,
/// so a correct generator fails this test about once in a million runs.
const CHI2_BOUND_DF20: f64 = 65.42;

#[test]
fn all_images_appear_with_uniform_counts() {
    let server = Avatar::start(&["--images", "21"]);
    let per_image = 1000;
    let total = 21 * per_image;
    let mut counts: HashMap<String, u32> = HashMap::new();
    let mut s = server.connect();
    let mut reader = Reader::new();
    let batch: Vec<u8> = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n".repeat(100);
    for _ in 0..total / 100 {
        s.write_all(&batch).unwrap();
        for _ in 0..100 {
            let resp = reader.read(&mut s, false);
            assert_eq!(resp.status, 302);
            assert_eq!(resp.header("cache-control"), Some("no-store"));
            *counts
                .entry(resp.header("location").unwrap().to_owned())
                .or_default() += 1;
        }
    }
    for n in 1..=21 {
        let loc = format!("https://avatar.example/Renard-{n}.png");
        assert!(
            counts.contains_key(&loc),
            "{loc} never appeared: {counts:?}"
        );
    }
    assert_eq!(counts.len(), 21, "unexpected locations: {counts:?}");
    let expected = f64::from(per_image);
    let chi2: f64 = counts
        .values()
        .map(|&c| (f64::from(c) - expected).powi(2) / expected)
        .sum();
    assert!(
        chi2 < CHI2_BOUND_DF20,
        "chi-square {chi2:.1} >= {CHI2_BOUND_DF20}: {counts:?}"
    );
}

#[test]
fn random_svg_redirects_to_varied_colours() {
    let server = Avatar::start(&[]);
    let mut s = server.connect();
    let mut reader = Reader::new();
    let mut seen = std::collections::HashSet::new();
    for _ in 0..50 {
        s.write_all(b"GET /random.svg HTTP/1.1\r\nHost: t\r\n\r\n")
            .unwrap();
        let resp = reader.read(&mut s, false);
        assert_eq!(resp.status, 302);
        let loc = resp.header("location").unwrap().to_owned();
        assert!(
            avatar::svg::color_from_path(loc.as_bytes()).is_some(),
            "{loc}"
        );
        seen.insert(loc);
    }
    assert!(
        seen.len() > 45,
        "only {} distinct colours in 50",
        seen.len()
    );
}
