use super::*;
use load::Selection;

fn specs(p: &Plan, lines: &[(&str, &str)]) -> Vec<RequestSpec> {
    lines
        .iter()
        .map(|(m, path)| RequestSpec {
            method: m.to_string(),
            path: path.to_string(),
            ..RequestSpec::get(&p.target)
        })
        .collect()
}

#[test]
fn round_robin_sends_each_shape_in_turn_and_counts_it() {
    let (s, lines) = recording_server();
    let mut p = plan(&s.url());
    p.requests = specs(&p, &[("GET", "/a"), ("GET", "/b?x=1"), ("HEAD", "/c")]);
    p.stop = Stop::Requests(3000);
    let r = run(&p);
    assert_eq!(r.counts.ok, 3000, "{:?}", r.counts);
    let lines = lines.lock().unwrap();
    assert_eq!(lines.len(), 3000);
    for (i, want) in ["GET /a HTTP/1.1", "GET /b?x=1 HTTP/1.1", "HEAD /c HTTP/1.1"]
        .iter()
        .enumerate()
    {
        let seen = lines.iter().filter(|l| l == want).count() as u64;
        // Each worker cycles the table from its own offset; only the last partial
        // cycle of each of the 2 workers can be uneven.
        assert!(seen.abs_diff(1000) <= 2, "{want}: {seen} of 3000");
        assert_eq!(r.shapes[i].sent, seen, "the engine's count is the server's");
        assert_eq!(r.shapes[i].completed, seen);
    }
    // HEAD responses declare a body they do not carry: framed per request, no timeout.
    assert_eq!(r.counts.timeout + r.counts.parse, 0);
}

#[test]
fn random_selection_is_uniform_and_reproducible() {
    let paths = ["/0", "/1", "/2", "/3", "/4", "/5", "/6", "/7"];
    let once = |seed: u64| {
        let (s, lines) = recording_server();
        let mut p = plan(&s.url());
        p.connections = 1;
        p.threads = 1;
        p.selection = Selection::Random;
        p.seed = seed;
        let table: Vec<(&str, &str)> = paths.iter().map(|&x| ("GET", x)).collect();
        p.requests = specs(&p, &table);
        p.stop = Stop::Requests(4000);
        let r = run(&p);
        assert_eq!(r.counts.ok, 4000, "{:?}", r.counts);
        let seen = lines.lock().unwrap().clone();
        (r, seen)
    };
    let (r, a) = once(11);
    let counts: Vec<u64> = r.shapes.iter().map(|s| s.sent).collect();
    assert_eq!(counts.iter().sum::<u64>(), 4000);
    assert_uniform(&counts);
    assert_eq!(a, once(11).1, "the same seed sends the same sequence");
    assert_ne!(a, once(12).1, "another seed, another sequence");
}

#[test]
fn template_parts_are_valid_uniform_and_reproducible() {
    let once = |seed: u64| {
        let (s, lines) = recording_server();
        let mut p = plan(&format!("http://{}/doc/{{int:1-21}}/{{hex:6}}.svg", s.addr));
        p.connections = 1;
        p.threads = 1;
        p.seed = seed;
        p.stop = Stop::Requests(4200);
        let r = run(&p);
        assert_eq!(r.counts.ok, 4200, "{:?}", r.counts);
        let seen = lines.lock().unwrap().clone();
        seen
    };
    let a = once(3);
    let mut ints = [0u64; 21];
    let mut digits = [0u64; 16];
    for line in &a {
        let path = line
            .strip_prefix("GET /doc/")
            .and_then(|l| l.strip_suffix(".svg HTTP/1.1"))
            .unwrap_or_else(|| panic!("{line}"));
        let (n, hex) = path.split_once('/').unwrap_or_else(|| panic!("{line}"));
        let n: usize = n.parse().unwrap_or_else(|_| panic!("{line}"));
        assert!((1..=21).contains(&n), "{line}");
        ints[n - 1] += 1;
        assert_eq!(hex.len(), 6, "{line}");
        for c in hex.chars() {
            assert!(c.is_ascii_hexdigit() && !c.is_ascii_uppercase(), "{line}");
            digits[c.to_digit(16).unwrap() as usize] += 1;
        }
    }
    assert_uniform(&ints);
    assert_uniform(&digits);
    assert_eq!(a, once(3), "--seed reproduces every random part");
    assert_ne!(a, once(4));
}
