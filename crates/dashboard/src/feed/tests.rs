use super::*;

#[test]
fn a_feed_sends_each_item_once_and_keeps_only_its_bound() {
    let mut f = Feeds::default();
    f.push(Feed::Windows, &1);
    f.push(Feed::Windows, &2);
    let (out, seen) = f.since([0; 4]);
    assert_eq!(out, vec![(Feed::Windows, "[1,2]".to_string())]);
    f.push(Feed::Windows, &3);
    let (out, seen) = f.since(seen);
    assert_eq!(out, vec![(Feed::Windows, "[3]".to_string())]);
    assert!(f.since(seen).0.is_empty());
    for i in 0..Feed::Windows.kept() + 5 {
        f.push(Feed::Windows, &i);
    }
    let (out, _) = f.since([0; 4]);
    assert_eq!(out[0].1.matches(',').count() + 1, Feed::Windows.kept());
}

#[test]
fn the_next_run_empties_only_the_per_run_feeds() {
    let mut f = Feeds::default();
    f.push(Feed::Service, &"a");
    f.push(Feed::Cells, &"b");
    f.next_run();
    let (out, seen) = f.since([0; 4]);
    assert_eq!(out, vec![(Feed::Cells, "[\"b\"]".to_string())]);
    assert_eq!(seen[Feed::Service.index()], 1);
}
