//! The shootout over HTTP/2 end to end: nginx over TLS measured at an h2 level beside an
//! HTTP/1.1 one, verified over both; and an HTTP/1-only server (Python's `http.server`) in
//! an h2c scenario, refused by verification with one line and not measured.

use super::*;
use serde_json::json;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

const SUITE: &str = r#"
name = "h2 shootout"
[plan]
levels = [4, { name = "h2-4x4", connections = 4, http2 = true, streams = 4 }]
duration = "500ms"
repeats = 1
warmup = "300ms"

# nginx's image over TLS, at c4 over HTTP/1.1 and at h2-4x4 over h2 (ALPN, one listener).
[[scenario]]
name = "image"
path = "/images/Renard-1.png"
scheme = "https"
cacert = "{out}/tls/ca.pem"
targets = ["nginx-tls-static", "nginx-h2-only"]
levels = ["c4", "h2-4x4"]
[scenario.expect]
status = 200
headers = { Content-Type = '^image/png$' }
body = 'IHDR'

# HTTP/1.1 only, on a target whose levels keep only h2: skipped there, not verified.
[[scenario]]
name = "image-http1"
path = "/images/Renard-1.png"
scheme = "https"
cacert = "{out}/tls/ca.pem"
targets = ["nginx-h2-only"]
[scenario.expect]
status = 200

# The same listing over HTTP/1.1 and over h2c: Python's server speaks only HTTP/1.
[[scenario]]
name = "listing"
targets = ["python"]
keepalive = false   # HTTP/1.0: a connection per request
[scenario.expect]
status = 200
[[scenario]]
name = "listing-h2c"
http2 = true
targets = ["python"]
levels = ["h2-4x4"]
[scenario.expect]
status = 200

[[target]]
name = "nginx-tls-static"
language = "nginx (TLS)"
dir = "targets/nginx-tls"
requires = ["nginx", "openssl", "python3", "bash"]
build = "python3 image.py {out} && sh cert.sh {out}"
start = "bash run.sh {out} {port} static"
ready = "tcp"

[[target]]
name = "nginx-h2-only"
language = "nginx (TLS)"
dir = "targets/nginx-tls"
requires = ["nginx", "openssl", "python3", "bash"]
build = "python3 image.py {out} && sh cert.sh {out}"
start = "bash run.sh {out} {port} static"
ready = "tcp"
levels = ["h2-4x4"]

[[target]]
name = "python"
language = "Python"
dir = "targets/nginx-tls"
requires = ["python3"]
start = "python3 -m http.server {port} --bind 127.0.0.1"
"#;

fn cell<'a>(t: &'a Value, scenario: &str, level: &str) -> &'a Value {
    t["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["scenario"] == scenario && c["level"] == level)
        .unwrap_or_else(|| panic!("no cell {scenario} at {level}: {t}"))
}

#[test]
fn an_h2_level_is_verified_and_measured_over_h2_and_an_http1_server_is_not() {
    for (tool, install) in [
        ("nginx", "nginx-light"),
        ("openssl", "openssl"),
        ("python3", "python3"),
    ] {
        let dirs = ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"];
        if testkit::require(tool, &dirs, install).is_none() {
            return;
        }
    }
    let out = tmp("http2");
    let suite = out.join("suite.toml");
    std::fs::write(&suite, SUITE).unwrap();
    let o = Shootout::new(&suite, &out.join("run"))
        .root(root())
        .cache(Cache::Default)
        .run();
    let err = String::from_utf8_lossy(&o.stderr);
    let v = results(&out.join("run"));

    // nginx: verified over HTTP/1.1 and h2, both cells measured, each with its protocol.
    let nginx = target(&v, "nginx-tls-static");
    assert_eq!(nginx["outcome"], "measured", "{}\n{err}", nginx["message"]);
    let ver = &nginx["verify"][0];
    assert_eq!(
        (&ver["passed"], &ver["http2"]),
        (&Value::Bool(true), &Value::Bool(true)),
        "{ver}"
    );
    assert!(
        ver["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "http/2" && c["passed"] == true),
        "{ver}"
    );
    let h1 = cell(nginx, "image", "c4");
    assert_eq!(
        (&h1["status"], &h1["protocol"]),
        (&json!("measured"), &json!("http/1.1")),
        "{h1}"
    );
    assert!(
        h1["streams"].is_null() && h1["repeats"][0]["http2"].is_null(),
        "{h1}"
    );
    let h2 = cell(nginx, "image", "h2-4x4");
    assert_eq!(h2["status"], "measured", "{}\n{err}", h2["message"]);
    assert_eq!(
        (&h2["protocol"], &h2["streams"]),
        (&json!("h2"), &json!(4)),
        "{h2}"
    );
    let r = &h2["repeats"][0];
    assert!(n(&r["requests"]["completed"]) > 0, "{r}");
    assert_eq!(
        n(&r["status"]["200"]),
        n(&r["requests"]["completed"]),
        "{r}"
    );
    let sec = &r["http2"];
    assert_eq!(sec["alpn"], "h2", "{sec}");
    assert_eq!(sec["streams"], 4, "{sec}");
    assert!(
        n(&sec["streams_used_max"]) >= 1 && n(&sec["streams_used_max"]) <= 4,
        "{sec}"
    );
    assert!(n(&sec["connections"]) >= 4, "{sec}");
    // Kept alive: a TLS handshake per connection, not per request.
    let opened = n(&r["connections"]["opened"]);
    assert!(
        opened <= 8 && n(&r["requests"]["completed"]) > opened,
        "{r}"
    );

    // A target whose levels keep only h2: the HTTP/1.1-only scenario is skipped, one line,
    // neither verified nor loaded; the h2 level runs.
    let only = target(&v, "nginx-h2-only");
    assert_eq!(only["outcome"], "measured", "{}\n{err}", only["message"]);
    assert!(
        only["skipped_scenarios"]
            .as_array()
            .unwrap()
            .contains(&json!("image-http1")),
        "{only}"
    );
    let verified: Vec<&str> = only["verify"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["scenario"].as_str().unwrap())
        .collect();
    assert_eq!(verified, ["image"], "{only}");
    assert_eq!(
        cell(only, "image", "h2-4x4")["status"],
        "measured",
        "{only}"
    );
    assert_eq!(only["cells"].as_array().unwrap().len(), 1, "{only}");
    assert!(
        err.contains("image-http1: skipped, none of its levels runs on this target"),
        "{err}"
    );

    // Python: its HTTP/1.1 scenario measured; the h2c one refused with one line, and its
    // cell not measured.
    let py = target(&v, "python");
    assert_eq!(py["outcome"], "measured", "{}\n{err}", py["message"]);
    let listing = py["verify"].as_array().unwrap();
    assert_eq!(
        (&listing[0]["passed"], &listing[0]["http2"]),
        (&json!(true), &Value::Null)
    );
    let refused = &listing[1];
    assert_eq!(
        (&refused["passed"], &refused["http2"]),
        (&json!(false), &json!(false)),
        "{refused}"
    );
    let detail = refused["checks"][0]["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("target python does not speak HTTP/2 (h2c prior knowledge): ")
            && !detail.contains('\n'),
        "{detail}"
    );
    assert_eq!(cell(py, "listing", "c4")["status"], "measured");
    let skipped = cell(py, "listing-h2c", "h2-4x4");
    assert_eq!(skipped["status"], "excluded", "{skipped}");
    assert_eq!(skipped["protocol"], "h2c");
    assert!(
        skipped["repeats"].as_array().unwrap().is_empty(),
        "{skipped}"
    );
    assert!(
        err.contains("verify listing-h2c: response: target python does not speak HTTP/2 (h2c prior knowledge)"),
        "{err}"
    );

    // The report sets h2 beside HTTP/1.1 at the same connections.
    let md = std::fs::read_to_string(out.join("run/summary.md")).unwrap();
    assert!(
        md.contains("### HTTP/2 and HTTP/3 against HTTP/1.1"),
        "{md}"
    );
    let row = md
        .lines()
        .find(|l| l.starts_with("| nginx-tls-static | image | h2-4x4 (h2, 4 streams) |"))
        .unwrap_or_else(|| panic!("no h2 row for nginx:\n{md}"));
    assert!(row.contains("| c4 |") && row.contains(" µs"), "{row}");
    std::fs::remove_dir_all(&out).unwrap();
}

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}
