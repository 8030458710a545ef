use super::*;

fn table(paths: &[&str], selection: Selection) -> RequestTable {
    let t = Target::parse("http://127.0.0.1:1/").unwrap();
    let reqs: Vec<RequestSpec> = paths
        .iter()
        .map(|p| RequestSpec {
            path: p.to_string(),
            method: if p.starts_with("/h") { "HEAD" } else { "GET" }.into(),
            ..RequestSpec::default()
        })
        .collect();
    RequestTable::new(&t, &reqs, selection, false, false).unwrap()
}

#[test]
fn round_robin_cycles_from_the_worker_offset() {
    let t = table(&["/a", "/b", "/head"], Selection::RoundRobin);
    assert!(t.shapes[2].head && !t.shapes[0].head);
    let mut p = Picker::new(1, 1, 3);
    let got: Vec<usize> = (0..6).map(|_| p.pick(&t)).collect();
    assert_eq!(got, [1, 2, 0, 1, 2, 0]);
    assert_eq!(t.max_len, t.shapes[2].template.max_len());
}

#[test]
fn random_selection_is_reproducible_and_covers_the_table() {
    let t = table(&["/a", "/b", "/c", "/d"], Selection::Random);
    let run = |seed| {
        let mut p = Picker::new(seed, 0, 4);
        (0..400).map(|_| p.pick(&t)).collect::<Vec<_>>()
    };
    let a = run(9);
    assert_eq!(a, run(9));
    assert_ne!(a, run(10));
    for shape in 0..4 {
        let n = a.iter().filter(|&&i| i == shape).count();
        assert!((50..150).contains(&n), "shape {shape}: {n} of 400");
    }
}
