use super::*;

#[test]
fn a_skipped_targets_unreached_cells_are_excluded_not_failed() {
    // Every unreached cell was shown failed (red), a target skipped for a missing tool too.
    assert_eq!(unreached(Outcome::Skipped), Ended::Excluded);
    assert_eq!(unreached(Outcome::Interrupted), Ended::Interrupted);
    for o in [
        Outcome::BuildFailed,
        Outcome::StartFailed,
        Outcome::VerifyFailed,
        Outcome::Crashed,
    ] {
        assert_eq!(unreached(o), Ended::Failed, "{o:?}");
    }
}
