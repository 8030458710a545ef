//! Checks a target's answers before any load: status, headers, body (a pattern, well-formed
//! XML with a given root, text echoing the request's random parts), every image, and
//! keep-alive, over the blocking [`Session`] (plain or TLS, HTTP/1.1 or HTTP/2, framed as
//! the load engine frames; see [`crate::client`]). A scenario that runs HTTP/2 or HTTP/3
//! levels is verified over that protocol too ([`with_protocol`]); over HTTP/2 and HTTP/3,
//! keep-alive is many streams on one connection.
//!
//! A scenario whose path has random parts (`/{hex:6}.svg`) gets a concrete path per
//! request, filled from a generator with a fixed seed, so a run verifies the same paths.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use report::shootout::Verification;

use crate::check::{CheckKind, Checks};
use crate::judge::{judge, Requests, VERIFY_SEED};
use crate::suite::{Multiplexed, Scenario};

pub use crate::client::{Client, Endpoint, Response, Session};

/// The fields that bear on reusing the connection after `r`, as sent.
fn reuse_fields(r: &Response) -> String {
    let shown: Vec<String> = r
        .headers
        .iter()
        .filter(|(k, _)| {
            ["connection", "transfer-encoding", "content-length"]
                .iter()
                .any(|n| k.eq_ignore_ascii_case(n))
        })
        .map(|(k, v)| format!("{k}: {v}"))
        .collect();
    if shown.is_empty() {
        "no Connection, Content-Length or Transfer-Encoding field".into()
    } else {
        shown.join(", ")
    }
}

/// Verifies a target at `at` for one scenario. `images` is N.
pub fn verify(at: &Endpoint, s: &Scenario, images: u32, timeout: Duration) -> Verification {
    let mut checks = Checks::default();
    let mut seen = BTreeSet::new();
    let mut keepalive = None;
    let mut requests = Requests::of(s, VERIFY_SEED);
    // 1. One request on its own connection, with Connection: close.
    let req = requests.next_request();
    // A target that does not speak HTTP/3 at all is recorded under the check `http/3`, not
    // as a wrong answer, so that a scenario over HTTP/3 alone only loses its HTTP/3 cells
    // ([`over_only`]).
    let mut no_http3 = false;
    let first = Session::connect(at, timeout)
        .map_err(|u| {
            no_http3 = u.no_http3;
            u.line
        })
        .and_then(|mut c| c.send(&s.method, &req.path, &req.headers, true));
    let ok = match &first {
        Ok(r) => checks.record(
            CheckKind::Response,
            judge(s, &req, r).map(|i| {
                seen.extend(i);
            }),
        ),
        Err(e) if no_http3 => checks.record(CheckKind::Http3, Err(e.clone())),
        Err(e) => checks.record(CheckKind::Response, Err(e.clone())),
    };
    if ok {
        // 2. Keep-alive: several requests on one connection, each answered, none closing it.
        let probe = 20;
        // A wrong answer here is a wrong answer, not a keep-alive failure.
        let mut wrong = None;
        let ka = (|| -> Result<(), String> {
            let mut c = Session::open(at, timeout)?;
            for i in 0..probe {
                let req = requests.next_request();
                let r = c
                    .send(&s.method, &req.path, &req.headers, false)
                    .map_err(|e| {
                        if i == 0 {
                            e
                        } else {
                            format!("request {} on the same connection: {e}", i + 1)
                        }
                    })?;
                let image = judge(s, &req, &r).map_err(|e| {
                    let e = format!("request {} on a kept-alive connection: {e}", i + 1);
                    wrong = Some(e.clone());
                    e
                })?;
                seen.extend(image);
                if r.close {
                    return Err(format!(
                        "the server ends the connection after request {} ({})",
                        i + 1,
                        reuse_fields(&r)
                    ));
                }
            }
            Ok(())
        })();
        if let Some(e) = wrong {
            checks.record(CheckKind::Response, Err(e));
        }
        keepalive = Some(ka.is_ok());
        let required = s.keepalive;
        let passed = checks.record(CheckKind::KeepAlive, ka);
        if !passed && !required {
            // Not needed by this scenario: recorded, not failed.
            if let Some(c) = checks.last_mut() {
                c.passed = true;
                c.detail = c.detail.take().map(|d| format!("not required: {d}"));
            }
        }
        // 3. Every image, over fresh or kept connections, bounded in count and time.
        if s.all_images {
            let want = u64::from(images);
            let limit = (want * 60).max(200);
            let end = Instant::now() + timeout.max(Duration::from_secs(10));
            let mut sent = 0;
            let mut conn: Option<Session> = None;
            let mut failure = None;
            while (seen.len() as u64) < want && sent < limit && Instant::now() < end {
                if conn.is_none() {
                    conn = match Session::open(at, timeout) {
                        Ok(c) => Some(c),
                        Err(e) => {
                            failure = Some(e);
                            break;
                        }
                    };
                }
                let c = conn.as_mut().expect("just set");
                sent += 1;
                let req = requests.next_request();
                match c.send(&s.method, &req.path, &req.headers, false) {
                    Ok(r) => {
                        match judge(s, &req, &r) {
                            Ok(i) => seen.extend(i),
                            Err(e) => {
                                failure = Some(format!("response {sent}: {e}"));
                                break;
                            }
                        }
                        if r.close {
                            conn = None;
                        }
                    }
                    Err(e) => {
                        failure = Some(format!("response {sent}: {e}"));
                        break;
                    }
                }
            }
            let out_of_range: Vec<u64> = seen
                .iter()
                .copied()
                .filter(|&i| i == 0 || i > want)
                .collect();
            let res = if let Some(f) = failure {
                Err(f)
            } else if !out_of_range.is_empty() {
                Err(format!(
                    "image numbers outside 1..={want}: {out_of_range:?}"
                ))
            } else if (seen.len() as u64) < want {
                let missing: Vec<u64> = (1..=want).filter(|i| !seen.contains(i)).take(10).collect();
                Err(format!(
                    "{} of {want} images in {sent} requests; never saw {missing:?}",
                    seen.len()
                ))
            } else {
                Ok(())
            };
            checks.record(CheckKind::AllImages, res);
        }
    }
    // Keep-alive is reported on its own (`keepalive`): a target that closes connections
    // answers correctly, and only the keep-alive levels are excluded.
    let passed = checks.answers_ok() && !no_http3;
    Verification {
        scenario: s.name.clone(),
        passed,
        checks: checks.into_report(),
        images_seen: s.all_images.then_some(seen.len() as u64),
        images_expected: s.all_images.then_some(u64::from(images)),
        keepalive,
        http2: None,
        http3: None,
    }
}

impl Multiplexed {
    /// Whether the target answered right over it, as `v` records; `None` when not checked.
    pub fn passed_over(self, v: &Verification) -> Option<bool> {
        match self {
            Multiplexed::Http2 => v.http2,
            Multiplexed::Http3 => v.http3,
        }
    }

    fn record_over(self, v: &mut Verification, passed: bool) {
        match self {
            Multiplexed::Http2 => v.http2 = Some(passed),
            Multiplexed::Http3 => v.http3 = Some(passed),
        }
    }

    /// The check that records the answers over it.
    pub fn check(self) -> CheckKind {
        match self {
            Multiplexed::Http2 => CheckKind::Http2,
            Multiplexed::Http3 => CheckKind::Http3,
        }
    }
}

/// A scenario that speaks only `m` (`http2 = true`, `http3 = true`), verified over it: its
/// result is the scenario's. A target that does not speak HTTP/3 at all (its check `http/3`
/// failed: see [`verify`]) answered nothing wrong: the scenario passes and only its HTTP/3
/// cells are excluded, with the reason.
pub fn over_only(m: Multiplexed, mut v: Verification) -> Verification {
    let name = m.check().name();
    let not_spoken = v.checks.iter().any(|c| !c.passed && c.name == name);
    let passed = v.passed;
    m.record_over(&mut v, passed);
    v.passed |= not_spoken;
    v
}

/// A scenario verified over its own protocol (`v`) that also runs levels of `m`, verified
/// over `m` (`other`): `v`'s answers decide whether the scenario passes, and `other`'s,
/// recorded as the check `http/2` or `http/3` (its detail the first failure), whether its
/// levels of `m` are measured.
pub fn with_protocol(m: Multiplexed, mut v: Verification, other: &Verification) -> Verification {
    let passed = other.passed;
    m.record_over(&mut v, passed);
    v.checks.push(report::shootout::Check {
        name: m.check().name().into(),
        passed,
        detail: (!passed).then(|| {
            other
                .checks
                .iter()
                .find(|c| !c.passed)
                .and_then(|c| c.detail.clone())
                .unwrap_or_else(|| "failed".into())
        }),
    });
    v
}

#[cfg(test)]
mod tests;
