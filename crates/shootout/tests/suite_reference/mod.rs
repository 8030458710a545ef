//! Every key a suite file may hold is in the suite reference, `docs/suites.md`, under the
//! heading of its table.
//!
//! The keys come from the suite's own deserializer, not from a list kept here: a suite with
//! an unknown key in a table is refused with serde's "unknown field `x`, expected one of
//! `a`, `b`, ...", which names every key that table's struct in `suite/raw.rs` accepts (all
//! of them deny unknown fields).

use shootout::suite::Suite;

/// Each table: a suite that reaches it with an unknown key, and its heading in the reference.
const TABLES: &[(&str, &str)] = &[
    ("BOGUS_KEY = 1", "## Top level"),
    ("[plan]\nBOGUS_KEY = 1", "## `[plan]`"),
    ("[plan]\nlevels = [{ BOGUS_KEY = 1 }]", "## Levels"),
    ("[quick]\nBOGUS_KEY = 1", "## `[quick]`"),
    ("[[scenario]]\nBOGUS_KEY = 1", "## `[[scenario]]`"),
    (
        "[[scenario]]\nname = \"s\"\n[scenario.expect]\nBOGUS_KEY = 1",
        "## `[scenario.expect]`",
    ),
    ("[[target]]\nBOGUS_KEY = 1", "## `[[target]]`"),
    ("[[service]]\nBOGUS_KEY = 1", "## `[[service]]`"),
    ("[[service]]\nverify = { BOGUS_KEY = 1 }", "### `verify`"),
    ("[[service]]\ncounter = { BOGUS_KEY = 1 }", "### `counter`"),
];

fn reference() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/suites.md");
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The keys the deserializer accepts where `probe` puts its unknown key.
#[track_caller]
fn keys(probe: &str) -> Vec<String> {
    let text = format!("name = \"t\"\n{probe}\n");
    let err = match Suite::parse(&text, "probe.toml") {
        Ok(_) => panic!("{probe:?}: an unknown key was accepted"),
        Err(e) => e.to_string(),
    };
    assert!(
        err.contains("unknown field `BOGUS_KEY`"),
        "{probe:?}: {err}"
    );
    let (_, expected) = err
        .split_once("expected")
        .unwrap_or_else(|| panic!("{probe:?}: no key list in {err}"));
    let keys: Vec<String> = expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    assert!(!keys.is_empty(), "{probe:?}: {err}");
    keys
}

/// The text under `heading`, up to the next heading.
#[track_caller]
fn section<'a>(doc: &'a str, heading: &str) -> &'a str {
    let start = doc
        .lines()
        .position(|l| l == heading)
        .unwrap_or_else(|| panic!("docs/suites.md has no line {heading:?}"));
    let offset: usize = doc.lines().take(start + 1).map(|l| l.len() + 1).sum();
    let rest = &doc[offset.min(doc.len())..];
    let end = rest
        .lines()
        .scan(0, |at, l| {
            let here = *at;
            *at += l.len() + 1;
            Some((here, l))
        })
        .find(|(_, l)| l.starts_with("## ") || l.starts_with("### "))
        .map_or(rest.len(), |(at, _)| at);
    &rest[..end]
}

#[test]
fn every_suite_key_is_in_the_reference_under_its_table() {
    let doc = reference();
    let mut missing = Vec::new();
    let mut total = 0;
    for (probe, heading) in TABLES {
        let text = section(&doc, heading);
        for key in keys(probe) {
            total += 1;
            if !text.contains(&format!("`{key}`")) {
                missing.push(format!("{key} (under {heading})"));
            }
        }
    }
    assert!(
        total > 60,
        "only {total} keys found: the probes no longer reach the tables"
    );
    assert!(
        missing.is_empty(),
        "suite keys missing from docs/suites.md: {}",
        missing.join(", ")
    );
}

#[test]
fn the_probes_find_keys_that_exist() {
    // The extraction itself: known keys of three tables.
    assert!(keys("[plan]\nBOGUS_KEY = 1").contains(&"duration".to_string()));
    assert!(keys("[plan]\nlevels = [{ BOGUS_KEY = 1 }]").contains(&"tls_resume".to_string()));
    assert!(keys("[[target]]\nBOGUS_KEY = 1").contains(&"use".to_string()));
}
