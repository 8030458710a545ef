use super::*;

/// The committed schema is the one the types generate. To update it after changing
/// the types: `FOXBENCH_WRITE_SCHEMA=1 cargo test -p foxbench-report schema`.
#[test]
fn the_committed_schema_matches_the_types() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schemas/shootout.schema.json"
    );
    let generated = ShootoutResults::json_schema();
    if std::env::var_os("FOXBENCH_WRITE_SCHEMA").is_some() {
        std::fs::write(path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(committed == generated, "schemas/shootout.schema.json is stale: run FOXBENCH_WRITE_SCHEMA=1 cargo test -p foxbench-report schema");
}

#[test]
fn from_json_names_the_wrong_schema() {
    let e = ShootoutResults::from_json("{\"schema\": \"foxbench.load/1\"}").unwrap_err();
    assert!(e.contains("foxbench.shootout/1"), "{e}");
    assert!(ShootoutResults::from_json("nope")
        .unwrap_err()
        .contains("not JSON"));
}

#[test]
fn which_outcomes_fail_a_run() {
    use Outcome::*;
    for (o, fails) in [
        (Skipped, false),
        (BuildFailed, true),
        (StartFailed, true),
        (VerifyFailed, true),
        (Measured, false),
        (Crashed, true),
        (Interrupted, false),
    ] {
        assert_eq!(o.is_failure(), fails, "{o:?}");
    }
}

#[test]
fn median_of_odd_even_and_empty() {
    assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
    assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), Some(2.5));
    assert_eq!(median(&mut []), None);
}
