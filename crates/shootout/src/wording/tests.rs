use super::*;

/// A setting no suite gives (the engine's defaults, a merge's, a limit check's) is worded
/// in the plan's words, never as a key the suite lacks nor as a flag.
#[test]
fn a_setting_without_a_key_is_worded_in_the_plans_words() {
    let keyless: Vec<_> = Setting::ALL
        .into_iter()
        .filter(|&s| suite_key(s).is_none())
        .collect();
    for s in [
        Setting::Threads,
        Setting::Select,
        Setting::Shard,
        Setting::PartialOk,
        Setting::ClosesPerS,
        Setting::ServerThreads,
        Setting::Alpha,
        Setting::SameMachine,
    ] {
        assert!(keyless.contains(&s), "{s:?} has a suite key");
    }
    for s in keyless {
        assert_eq!(SuiteKeys.name(s), format!("the {} setting", s.name()));
        assert_eq!(SuiteKeys.drop(s), format!("unset the {} setting", s.name()));
        assert_eq!(
            SuiteKeys.give(&[s]),
            format!("set the {} setting in the suite", s.name())
        );
    }
    assert_eq!(
        SuiteKeys.name(Setting::ClosesPerS),
        "the closes per second setting"
    );
}

/// Every key a setting is worded as is a key of its table in a suite file, as serde
/// reads it (a field of the raw table, or a key the level's reader matches).
#[test]
fn every_suite_key_is_read_from_its_table() {
    let raw = include_str!("../suite/raw.rs");
    let table_struct = |table: &str| match table {
        "scenario" => "struct RawScenario",
        "plan" => "struct RawPlan",
        _ => "Deserialize<'de> for Level", // the level's hand-written reader
    };
    for s in Setting::ALL {
        let Some(k) = suite_key(s) else { continue };
        let at = raw.find(table_struct(k.table)).expect("the table's reader");
        let rest = &raw[at..];
        let end = rest.find("\n}\n").expect("the reader's end");
        let body = &rest[..end];
        for (key, _) in k.keys {
            assert!(
                body.contains(&format!("pub(super) {key}:"))
                    || body.contains(&format!("\"{key}\" =>")),
                "{s:?} is worded as the {}'s {key}, which it does not read",
                k.table
            );
        }
    }
}
