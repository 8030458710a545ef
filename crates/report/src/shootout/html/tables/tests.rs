use super::*;

#[test]
fn outcome_badges() {
    for (o, want) in [
        (
            Outcome::Measured,
            "<span class=\"badge b-good\">measured</span>",
        ),
        (
            Outcome::Skipped,
            "<span class=\"badge b-warn\">skipped</span>",
        ),
        (
            Outcome::Interrupted,
            "<span class=\"badge b-warn\">interrupted</span>",
        ),
        (
            Outcome::VerifyFailed,
            "<span class=\"badge b-bad\">verify-failed</span>",
        ),
    ] {
        assert_eq!(outcome_badge(o), want);
    }
}

#[test]
fn bottleneck_badges() {
    for (b, want) in [
        (
            Bottleneck::ServerCpuBound,
            "<span class=\"badge b-good\">server-CPU-bound</span>",
        ),
        (
            Bottleneck::ClientBound,
            "<span class=\"badge b-warn\">client-bound</span>",
        ),
        (
            Bottleneck::ServerThreadBound,
            "<span class=\"badge b-warn\">server-thread-bound</span>",
        ),
        (
            Bottleneck::Neither,
            "<span class=\"badge b-warn\">neither</span>",
        ),
        (
            Bottleneck::Errors,
            "<span class=\"badge b-bad\">errors</span>",
        ),
    ] {
        assert_eq!(bottleneck_badge(b), want);
    }
}
