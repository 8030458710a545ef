use super::*;

#[test]
fn failures_give_their_outcome_and_message() {
    let stop = |killed, leftovers, survivors| Abandoned {
        stop: StopReport {
            killed,
            leftovers,
            survivors,
        },
        log_tail: "last".into(),
    };
    let addr = SocketAddr::from(([127, 0, 0, 1], 9));
    let check = Check {
        name: "response".into(),
        passed: false,
        detail: Some("status 500 (expected 302)".into()),
    };
    let cases = [
            (
                TargetFailure::NotReady {
                    reason: NotReady::TimedOut {
                        after: Duration::from_secs(3),
                        ready: Ready::Http,
                        addr,
                    },
                    left: stop(false, 0, 0),
                },
                Outcome::StartFailed,
                "not ready after 3s (no HTTP response on 127.0.0.1:9): raise ready_timeout if it starts slowly",
            ),
            (
                TargetFailure::NotReady {
                    reason: NotReady::Interrupted,
                    left: stop(true, 1, 0),
                },
                Outcome::StartFailed,
                "interrupted while waiting for readiness; SIGTERM was ignored, so SIGKILL was sent, 1 process of its own stopped with it",
            ),
            (
                TargetFailure::WrongAnswers {
                    first: Some(check),
                    left: stop(false, 2, 1),
                },
                Outcome::VerifyFailed,
                "verification failed: response: status 500 (expected 302); 2 processes of its own stopped with it, 1 process survived SIGKILL",
            ),
            (
                TargetFailure::Build {
                    info: Box::new(BuildInfo {
                        command: "make".into(),
                        key: "k".into(),
                        cached: false,
                        seconds: 0.0,
                        artifact_bytes: None,
                        artifact: None,
                    }),
                    error: BuildError::TimedOut(Duration::from_secs(600)),
                    log: PathBuf::from("logs/t.build.log"),
                    log_tail: "cc ...".into(),
                },
                Outcome::BuildFailed,
                "build took longer than 600s: raise plan.build_timeout (log: logs/t.build.log)",
            ),
            (
                TargetFailure::NoPort(io::Error::other("none left")),
                Outcome::StartFailed,
                "no free loopback port: none left",
            ),
        ];
    for (f, outcome, message) in cases {
        assert_eq!(
            (f.outcome(false), f.to_string().as_str()),
            (outcome, message)
        );
    }
    let interrupted = TargetFailure::NotReady {
        reason: NotReady::Interrupted,
        left: stop(false, 0, 0),
    };
    assert_eq!(interrupted.outcome(true), Outcome::Interrupted);
}
