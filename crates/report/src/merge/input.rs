//! Splitting a stream into JSON documents, as `kubectl logs` prints a Job's pods.
//!
//! `kubectl logs` interleaves each pod's stdout and stderr, one after another, or line by
//! line with `--prefix` (`[pod/NAME/CONTAINER] ` before every line). A document starts at
//! a line whose first non-blank byte is `{` and ends where its braces balance (strings and
//! escapes respected); each prefix has its own document in progress, so prefixed pods'
//! lines may interleave. Lines outside any document (the text report, warnings, a
//! shell's noise) are skipped and counted; a document still open at the end of the stream
//! is reported, never dropped.

use super::{MergeError, Source};
use crate::LoadReport;

/// One JSON document found in a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// Where it came from: `NAME line N`, with the pod prefix when there was one.
    pub source: String,
    /// Its text.
    pub text: String,
}

/// What a stream held.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Split {
    /// The complete documents, in the order they ended.
    pub documents: Vec<Document>,
    /// Lines outside any document.
    pub skipped_lines: u64,
    /// Documents the stream ended inside of: their sources.
    pub unfinished: Vec<String>,
}

#[derive(Debug, Default)]
struct Open {
    text: String,
    depth: u64,
    in_string: bool,
    escaped: bool,
    first_line: usize,
}

impl Open {
    /// Feeds one line; true when the document is complete.
    fn feed(&mut self, line: &str) -> bool {
        for b in line.bytes() {
            if self.in_string {
                match (self.escaped, b) {
                    (true, _) => self.escaped = false,
                    (false, b'\\') => self.escaped = true,
                    (false, b'"') => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        self.text.push_str(line);
                        self.text.push('\n');
                        return true;
                    }
                }
                _ => {}
            }
        }
        self.text.push_str(line);
        self.text.push('\n');
        false
    }
}

/// `[pod/NAME/CONTAINER] ` (kubectl logs --prefix): the prefix and the rest of the line.
fn prefix(line: &str) -> (Option<&str>, &str) {
    if let Some(rest) = line.strip_prefix('[') {
        if let Some(end) = rest.find("] ") {
            let p = &rest[..end];
            if p.contains('/') && !p.contains(char::is_whitespace) {
                return (Some(p), &rest[end + 2..]);
            }
        }
    }
    (None, line)
}

/// Splits `text`, read from `name`, into documents.
pub fn split_stream(text: &str, name: &str) -> Split {
    let mut split = Split::default();
    // Documents in progress, by prefix (None: unprefixed lines). Few pods: a Vec is enough.
    let mut open: Vec<(Option<&str>, Open)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let (pfx, line) = prefix(raw);
        let slot = open.iter().position(|(p, _)| *p == pfx);
        let doc = match slot {
            Some(s) => &mut open[s].1,
            None if line.trim_start().starts_with('{') => {
                open.push((
                    pfx,
                    Open {
                        first_line: i + 1,
                        ..Open::default()
                    },
                ));
                &mut open.last_mut().expect("just pushed").1
            }
            None => {
                split.skipped_lines += 1;
                continue;
            }
        };
        if doc.feed(line) {
            let s = slot.unwrap_or(open.len() - 1);
            let (p, done) = open.swap_remove(s);
            split.documents.push(Document {
                source: source(name, p, done.first_line),
                text: done.text,
            });
        }
    }
    split.unfinished = open
        .into_iter()
        .map(|(p, o)| source(name, p, o.first_line))
        .collect();
    split
}

fn source(name: &str, prefix: Option<&str>, line: usize) -> String {
    match prefix {
        Some(p) => format!("{name} line {line} ({p})"),
        None => format!("{name} line {line}"),
    }
}

/// The load results a stream held, and what else it held.
#[derive(Debug, Clone, Default)]
pub struct Results {
    /// The load results, in the order they ended.
    pub sources: Vec<Source>,
    /// JSON documents that are not load results (their `schema` is another's).
    pub other_documents: u64,
    /// Lines outside any document.
    pub skipped_lines: u64,
    /// Documents the stream ended inside of (kept out only under `partial_ok`).
    pub unfinished: Vec<String>,
}

/// One file's load result.
pub fn read_result(name: &str, text: &str) -> Result<Source, MergeError> {
    let report = serde_json::from_str::<LoadReport>(text).map_err(|e| MergeError::NotAResult {
        source_name: name.to_string(),
        reason: e.to_string(),
    })?;
    Ok(Source {
        name: name.to_string(),
        report,
    })
}

/// The load results of a stream named `name`: documents of another schema are counted and
/// skipped; one that claims to be a load result and does not parse is an error, and so is
/// a document the stream ended inside of, unless `partial_ok`.
pub fn read_stream(text: &str, name: &str, partial_ok: bool) -> Result<Results, MergeError> {
    let split = split_stream(text, name);
    if let Some(first) = split.unfinished.first() {
        if !partial_ok {
            return Err(MergeError::Truncated {
                source_name: first.clone(),
            });
        }
    }
    let mut out = Results {
        skipped_lines: split.skipped_lines,
        unfinished: split.unfinished,
        ..Results::default()
    };
    for doc in split.documents {
        let value: serde_json::Value =
            serde_json::from_str(&doc.text).map_err(|e| MergeError::NotJson {
                source_name: doc.source.clone(),
                reason: e.to_string(),
            })?;
        if value.get("schema").and_then(|s| s.as_str()) != Some(crate::LOAD_SCHEMA) {
            out.other_documents += 1;
            continue;
        }
        let report =
            serde_json::from_value::<LoadReport>(value).map_err(|e| MergeError::NotAResult {
                source_name: doc.source.clone(),
                reason: e.to_string(),
            })?;
        out.sources.push(Source {
            name: doc.source,
            report,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
