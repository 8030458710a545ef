//! The worker asks no question of the protocol outside its implementations: a third
//! protocol is a new implementation of [`super::Http`], not an arm at each place.

use std::path::{Path, PathBuf};

/// The implementations and their own tests, by name: they may name their protocol. So may
/// this file, which lists the names.
const IMPLEMENTATIONS: [&str; 7] = [
    "http1.rs",
    "http1",
    "http2.rs",
    "http2",
    "http3.rs",
    "http3",
    "http/tests.rs",
];

/// What naming a protocol looks like in code, as whole identifiers: the plan's `Protocol`
/// (not the error kind `Kind::Protocol`), an implementation or its module, HTTP/2's
/// connection module (`crate::h2`, `h2::`, a field `.h2`) and its types.
const PROTOCOL_NAMES: [&str; 12] = [
    "Protocol",
    "Http1",
    "Http2",
    "Http3",
    "http1",
    "http2",
    "http3",
    "h2",
    "h3",
    "H2Counts",
    "H2Options",
    "H3Options",
];

/// The one selector (`run`, in select.rs) and the lines that bring its choices in: these,
/// and only these, may name a protocol.
fn selector(file: &str, code: &str, in_run: bool) -> bool {
    match file {
        "select.rs" => {
            in_run
                || [
                    "use crate::{LoadError, Protocol};",
                    "use super::http1::Http1;",
                    "use super::http2::Http2;",
                    "use super::http3::Http3;",
                ]
                .contains(&code)
        }
        "mod.rs" => ["mod http1;", "mod http2;", "mod http3;"].contains(&code),
        _ => false,
    }
}

/// Every `.rs` file under `dir`, with its path relative to `root`.
fn sources(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    for entry in std::fs::read_dir(dir).expect("the worker's sources are readable") {
        let path = entry.expect("a directory entry").path();
        let name = path
            .strip_prefix(root)
            .expect("under the root")
            .to_string_lossy()
            .replace('\\', "/");
        if IMPLEMENTATIONS.contains(&name.as_str()) {
            continue;
        }
        if path.is_dir() {
            sources(root, &path, out);
        } else if name.ends_with(".rs") {
            out.push((name, path));
        }
    }
}

/// Whether `name` occurs in `code` as a whole identifier, other than as `Kind::Protocol`.
fn names(code: &str, name: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    code.match_indices(name).any(|(i, _)| {
        let before = code[..i].chars().next_back();
        let after = code[i + name.len()..].chars().next();
        let whole = !before.is_some_and(ident) && !after.is_some_and(ident);
        whole && !(name == "Protocol" && code[..i].ends_with("Kind::"))
    })
}

/// The protocol names `text` uses outside the selector, as `file:line: name: line`.
fn offences(file: &str, text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut in_run = false;
    for (n, line) in text.lines().enumerate() {
        // Comments may name protocols; code may not. A string holding `//` would hide the
        // rest of its line: the worker has none.
        let code = line.split("//").next().unwrap_or("").trim();
        if file == "select.rs" && code.starts_with("pub(crate) fn run(") {
            in_run = true;
        }
        let excused = selector(file, code, in_run);
        if in_run && line == "}" {
            in_run = false;
        }
        // An alias would let the selector's names out under another name.
        if excused && names(code, "as") {
            found.push(format!(
                "worker/{file}:{}: an alias in the selector: {line}",
                n + 1
            ));
        }
        if excused {
            continue;
        }
        for name in PROTOCOL_NAMES {
            if names(code, name) {
                found.push(format!("worker/{file}:{}: {name}: {line}", n + 1));
            }
        }
    }
    found
}

#[test]
fn the_worker_names_no_protocol_outside_its_implementations() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/worker");
    let mut files = Vec::new();
    sources(&root, &root, &mut files);
    let scanned: Vec<&str> = files.iter().map(|(name, _)| name.as_str()).collect();
    for expected in [
        "mod.rs",
        "http.rs",
        "select.rs",
        "conn.rs",
        "stream.rs",
        "wakes.rs",
    ] {
        assert!(
            scanned.contains(&expected),
            "{expected} not scanned: {scanned:?}"
        );
    }
    let mut found = Vec::new();
    for (name, path) in &files {
        let text = std::fs::read_to_string(path).expect("a readable source");
        found.extend(offences(name, &text));
    }
    assert!(
        found.is_empty(),
        "protocol named outside its implementations:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_scan_catches_a_branch_on_the_protocol_and_its_aliases() {
    let caught = |file: &str, text: &str| !offences(file, text).is_empty();
    // Outside the selector, even in http.rs and on a line naming a variant.
    assert!(caught(
        "http.rs",
        "fn h2(p: Protocol) -> bool {\n    matches!(p, Protocol::Http2(_))\n}"
    ));
    assert!(caught("conn.rs", "use crate::h2::H2Counts;"));
    assert!(caught("mod.rs", "    pub h2: H2Counts,"));
    assert!(caught("conn.rs", "use crate::plan::Protocol as Which;"));
    assert!(caught("conn.rs", "use crate::h2 as two;"));
    assert!(caught("conn.rs", "if self.http.h2.is_some() {"));
    assert!(caught("stream.rs", "let c = h2::Conn::new(opts);"));
    assert!(caught("select.rs", "use super::http2::Http2 as Two;"));
    // What is not a protocol: the error kind, the neutral counts, comments.
    assert!(!caught("recorder.rs", "Kind::Protocol => c.protocol += n,"));
    assert!(!caught("mod.rs", "pub protocol: ProtocolCounts,"));
    assert!(!caught("conn.rs", "// HTTP/2's h2::Conn, in a comment"));
    // The selector itself, and only in its file.
    assert!(caught(
        "http.rs",
        "pub(crate) fn run(\n    protocol: Protocol,\n) {\n    match protocol {\n        Protocol::Http1 => x(Http1::new()),\n    }\n}"
    ));
    assert!(!caught(
        "select.rs",
        "pub(crate) fn run(\n    protocol: Protocol,\n) {\n    match protocol {\n        Protocol::Http1 => x(Http1::new()),\n    }\n}"
    ));
}
