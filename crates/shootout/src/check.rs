//! The kinds of verification check, and the one place each kind becomes the name a report
//! shows.
//!
//! Reports carry a check as [`report::shootout::Check`], whose `name` is text; code here
//! decides by [`CheckKind`], never by comparing names.

use report::shootout::Check;

/// What a verification check looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckKind {
    /// The answer to one request on its own connection.
    Response,
    /// Several requests answered on one connection that stays open.
    KeepAlive,
    /// Every one of the N images seen.
    AllImages,
    /// The same answers over HTTP/2, for a scenario that also runs HTTP/2 levels.
    Http2,
    /// The same answers over HTTP/3, for a scenario that also runs HTTP/3 levels.
    Http3,
}

impl CheckKind {
    /// The name reports show for the check (`Check::name`).
    pub fn name(self) -> &'static str {
        match self {
            CheckKind::Response => "response",
            CheckKind::KeepAlive => "keep-alive",
            CheckKind::AllImages => "all images",
            CheckKind::Http2 => "http/2",
            CheckKind::Http3 => "http/3",
        }
    }

    /// Whether failing it means the answers are wrong. Keep-alive, HTTP/2 and HTTP/3 are
    /// reported apart: a target that closes every connection, or speaks only HTTP/1.1,
    /// answers correctly, and only its keep-alive, HTTP/2 or HTTP/3 levels are excluded.
    pub fn judges_answers(self) -> bool {
        !matches!(
            self,
            CheckKind::KeepAlive | CheckKind::Http2 | CheckKind::Http3
        )
    }
}

/// The checks of one verification, in order, each with its kind.
#[derive(Debug, Default)]
pub struct Checks(Vec<(CheckKind, Check)>);

impl Checks {
    /// Records a check's result (the error is its detail); returns whether it passed.
    pub fn record(&mut self, kind: CheckKind, result: Result<(), String>) -> bool {
        let passed = result.is_ok();
        self.0.push((
            kind,
            Check {
                name: kind.name().into(),
                passed,
                detail: result.err(),
            },
        ));
        passed
    }

    /// The check recorded last, to amend.
    pub fn last_mut(&mut self) -> Option<&mut Check> {
        self.0.last_mut().map(|(_, c)| c)
    }

    /// True when every check that judges the answers passed.
    pub fn answers_ok(&self) -> bool {
        self.0.iter().all(|(k, c)| c.passed || !k.judges_answers())
    }

    /// The checks as reports carry them.
    pub fn into_report(self) -> Vec<Check> {
        self.0.into_iter().map(|(_, c)| c).collect()
    }
}

#[cfg(test)]
mod tests;
