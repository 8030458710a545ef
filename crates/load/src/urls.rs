//! `--urls FILE`: a request list, one request per line.
//!
//! ```text
//! # comments and blank lines are skipped
//! http://127.0.0.1:6666/               a plain URL: the default method
//! GET /{hex:6}.svg                     a path: relative to the URL argument
//! POST http://127.0.0.1:6666/form @body.json
//! ```
//!
//! Every line must reach the same host and port (a first version: one connection pool).
//! A `@file` body is read relative to the list's own directory.

use std::path::{Path, PathBuf};

use crate::setting::{Setting, Text};
use crate::{RequestSpec, Target};

/// The longest request list accepted, in lines.
pub const MAX_LINES: usize = 1_000_000;

/// One request line, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlLine {
    /// 1-based line number.
    pub line: usize,
    /// The method, if the line gave one.
    pub method: Option<String>,
    /// An absolute http:// URL, or a path starting with `/`.
    pub url: String,
    /// The body file after `@`, if any.
    pub body_file: Option<String>,
}

/// A request list that cannot be used, with the line at fault. Its message names the
/// list's setting ([`UrlsError::text`]), which each caller words.
#[derive(Debug, PartialEq, Eq)]
pub enum UrlsError {
    /// A line is malformed.
    Line {
        /// The file's name.
        file: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong and how to fix it.
        problem: String,
    },
    /// The file cannot be read.
    Read {
        /// The path given.
        path: String,
        /// The operating system's reason.
        reason: String,
    },
    /// The file holds no request.
    Empty {
        /// The file's name.
        file: String,
    },
    /// The file has too many lines.
    TooLong {
        /// The file's name.
        file: String,
    },
}

impl UrlsError {
    /// What is wrong and how to fix it, its setting left for the caller to word.
    pub fn text(&self) -> Text {
        match self {
            UrlsError::Line {
                file,
                line,
                problem,
            } => format!("{file}:{line}: {problem}").into(),
            UrlsError::Read { path, reason } => Text::plain("cannot read ")
                .name(Setting::Urls)
                .then(format!(" {path}: {reason}")),
            UrlsError::Empty { file } => format!(
                "{file}: no request in the file: write one URL per line, e.g. \"GET http://127.0.0.1:8080/\""
            )
            .into(),
            UrlsError::TooLong { file } => format!(
                "{file}: more than {MAX_LINES} requests: use URL templates such as /{{int:1-1000000}} instead"
            )
            .into(),
        }
    }
}

impl std::fmt::Display for UrlsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.text().fmt(f)
    }
}

impl std::error::Error for UrlsError {}

fn is_url(token: &str) -> bool {
    token.starts_with('/') || token.contains("://")
}

/// Parses a request list; `source` names it in errors. Nothing is resolved or read.
pub fn parse_urls(text: &str, source: &str) -> Result<Vec<UrlLine>, UrlsError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let err = |problem: String| UrlsError::Line {
            file: source.to_string(),
            line,
            problem,
        };
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if out.len() == MAX_LINES {
            return Err(UrlsError::TooLong {
                file: source.to_string(),
            });
        }
        let tokens: Vec<&str> = trimmed.split_whitespace().collect();
        let (method, rest) = if is_url(tokens[0]) {
            (None, &tokens[..])
        } else {
            (Some(tokens[0]), &tokens[1..])
        };
        let Some((url, rest)) = rest.split_first() else {
            return Err(err(format!(
                "{:?} has no URL: write \"METHOD URL [@bodyfile]\" or a URL alone",
                tokens[0]
            )));
        };
        if !is_url(url) {
            return Err(err(format!(
                "{url:?} is not a URL: write an http:// URL or a path starting with '/'"
            )));
        }
        let body_file = match rest {
            [] => None,
            [body] => match body.strip_prefix('@') {
                Some(f) if !f.is_empty() => Some(f.to_string()),
                _ => {
                    return Err(err(format!(
                        "{body:?} after the URL: a body is given as @FILE"
                    )))
                }
            },
            more => {
                return Err(err(format!(
                    "{} words after the URL: write \"METHOD URL [@bodyfile]\"",
                    more.len()
                )))
            }
        };
        out.push(UrlLine {
            line,
            method: method.map(str::to_string),
            url: url.to_string(),
            body_file,
        });
    }
    if out.is_empty() {
        return Err(UrlsError::Empty {
            file: source.to_string(),
        });
    }
    Ok(out)
}

/// Reads a request list and turns it into requests.
///
/// `base` is the URL argument, if one was given: paths resolve against it and absolute
/// URLs must share its host and port. `defaults` gives the method, headers and body of a
/// line that names none. Returns the target every line reaches and the requests.
pub fn load_urls(
    path: &Path,
    base: Option<&Target>,
    defaults: &RequestSpec,
) -> Result<(Target, Vec<RequestSpec>), UrlsError> {
    let source = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| UrlsError::Read {
        path: source.clone(),
        reason: e.to_string(),
    })?;
    let dir = path.parent().map_or_else(PathBuf::new, Path::to_path_buf);
    let mut target = base.cloned();
    let mut requests = Vec::new();
    for l in parse_urls(&text, &source)? {
        let err = |problem: String| UrlsError::Line {
            file: source.clone(),
            line: l.line,
            problem,
        };
        let path = if l.url.starts_with('/') {
            if target.is_none() {
                return Err(err(format!(
                    "{} is a path, and there is no URL to resolve it against: give the URL argument too, or write absolute URLs",
                    l.url
                )));
            }
            l.url.clone()
        } else {
            let t = Target::parse(&l.url).map_err(|e| err(e.to_string()))?;
            match &target {
                Some(first) if (first.addr, &first.host_header) != (t.addr, &t.host_header) => {
                    return Err(err(format!(
                        "{} is not {}: every request of a list goes to one host and port",
                        t.host_header, first.host_header
                    )))
                }
                Some(_) => {}
                None => target = Some(t.clone()),
            }
            t.path
        };
        let mut spec = RequestSpec {
            path,
            ..defaults.clone()
        };
        if let Some(m) = &l.method {
            spec.method = m.clone();
        }
        if let Some(f) = &l.body_file {
            let p = dir.join(f);
            spec.body = std::fs::read(&p)
                .map_err(|e| err(format!("cannot read the body file {}: {e}", p.display())))?;
        }
        let t = target.as_ref().expect("set by an absolute URL or the base");
        // Encoding checks the method and the path's random parts, naming the line.
        spec.encode(t, false).map_err(|e| err(e.to_string()))?;
        requests.push(spec);
    }
    let target = target.expect("parse_urls returns at least one line");
    Ok((target, requests))
}

#[cfg(test)]
mod tests;
