use super::*;

/// The headline `foxbench shootout` prints is the summary up to its per-target details,
/// as the binary once cut it at the literal `### Targets`, for the fixture and every
/// committed run.
#[test]
fn headline_is_the_summary_before_its_targets() {
    let paths = crate::shootout::committed_results();
    for p in &paths {
        let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{p}: {e}"));
        let r = ShootoutResults::from_json(&text).unwrap_or_else(|e| panic!("{p}: {e}"));
        let md = to_markdown(&r);
        let head = headline_markdown(&r);
        assert_eq!(head, md.split("### Targets").next().unwrap(), "{p}");
        assert!(md[head.len()..].starts_with("### Targets\n"), "{p}");
    }
}
