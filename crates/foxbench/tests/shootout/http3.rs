//! The shootout over HTTP/3 end to end: caddy over TLS measured at c4 (HTTP/1.1), an h2
//! level and an h3 level, verified over each; and nginx, which speaks no HTTP/3, keeps its
//! HTTP/1.1 cell while its h3 cell is skipped with the reason, in one line.

use super::*;
use serde_json::json;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

const SUITE: &str = r#"
name = "h3 shootout"
[plan]
levels = [
  4,
  { name = "h2-4x4", connections = 4, http2 = true, streams = 4 },
  { name = "h3-4x4", connections = 4, http3 = true, streams = 4 },
]
duration = "500ms"
repeats = 1
warmup = "300ms"

# caddy's redirect over TLS: HTTP/1.1 and h2 on TCP, h3 on UDP, one port number.
[[scenario]]
name = "redirect"
scheme = "https"
cacert = "{out}/tls/ca.pem"
targets = ["caddy"]
levels = ["c4", "h2-4x4", "h3-4x4"]
[scenario.expect]
status = 302
headers = { Location = '^https://avatar\.example/Renard-1\.png$' }

# nginx's image over TLS: no UDP listener, so its h3 level is skipped, not the target.
[[scenario]]
name = "image"
path = "/images/Renard-1.png"
scheme = "https"
cacert = "{out}/tls/ca.pem"
targets = ["nginx-tls-static"]
levels = ["c4", "h3-4x4"]
[scenario.expect]
status = 200
headers = { Content-Type = '^image/png$' }

[[target]]
name = "caddy"
language = "caddy config"
dir = "targets/caddy"
requires = ["caddy", "openssl"]
build = "sh ../nginx-tls/cert.sh {out}"
start = "bash run.sh {out} {port} redirect 1"
ready = "tcp"

[[target]]
name = "nginx-tls-static"
language = "nginx (TLS)"
dir = "targets/nginx-tls"
requires = ["nginx", "openssl", "python3", "bash"]
build = "python3 image.py {out} && sh cert.sh {out}"
start = "bash run.sh {out} {port} static"
ready = "tcp"
"#;

fn cell<'a>(t: &'a Value, scenario: &str, level: &str) -> &'a Value {
    t["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["scenario"] == scenario && c["level"] == level)
        .unwrap_or_else(|| panic!("no cell {scenario} at {level}: {t}"))
}

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn an_h3_level_is_verified_and_measured_over_h3_and_a_server_without_it_keeps_its_other_cells() {
    for (tool, install) in [
        ("caddy", "caddy"),
        ("nginx", "nginx-light"),
        ("openssl", "openssl"),
        ("python3", "python3"),
    ] {
        let dirs = ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"];
        if testkit::require(tool, &dirs, install).is_none() {
            return;
        }
    }
    let out = tmp("http3");
    let suite = out.join("suite.toml");
    std::fs::write(&suite, SUITE).unwrap();
    let o = Shootout::new(&suite, &out.join("run"))
        .root(root())
        .cache(Cache::Default)
        .run();
    let err = String::from_utf8_lossy(&o.stderr);
    let v = results(&out.join("run"));

    // caddy: verified over HTTP/1.1, h2 and h3; each cell measured with its protocol.
    let caddy = target(&v, "caddy");
    assert_eq!(caddy["outcome"], "measured", "{}\n{err}", caddy["message"]);
    let ver = &caddy["verify"][0];
    assert_eq!(
        (&ver["passed"], &ver["http2"], &ver["http3"]),
        (&json!(true), &json!(true), &json!(true)),
        "{ver}"
    );
    for (level, protocol, streams) in [
        ("c4", "http/1.1", Value::Null),
        ("h2-4x4", "h2", json!(4)),
        ("h3-4x4", "h3", json!(4)),
    ] {
        let c = cell(caddy, "redirect", level);
        assert_eq!(c["status"], "measured", "{}\n{err}", c["message"]);
        assert_eq!(
            (&c["protocol"], &c["streams"]),
            (&json!(protocol), &streams),
            "{c}"
        );
        let r = &c["repeats"][0];
        assert!(n(&r["requests"]["ok"]) > 0, "{r}");
        assert_eq!(
            n(&r["status"]["302"]),
            n(&r["requests"]["completed"]),
            "{r}"
        );
    }
    // The report sets the h3 cell beside caddy's HTTP/1.1 and h2 cells of its connections
    // (and its streams): three protocols on one server.
    let md = std::fs::read_to_string(out.join("run/summary.md")).unwrap();
    let row = md
        .lines()
        .find(|l| l.starts_with("| caddy | redirect | h3-4x4 (h3, 4 streams) | c4 |"))
        .unwrap_or_else(|| panic!("no h3 row beside c4:\n{md}"));
    assert!(row.contains("× (h2-4x4) |"), "{row}");
    let levels = v["protocol"]["plan"]["levels"].as_array().unwrap();
    let h3 = levels.iter().find(|l| l["name"] == "h3-4x4").unwrap();
    assert_eq!(
        (&h3["http3_streams"], &h3["http2_streams"]),
        (&json!(4), &Value::Null),
        "{h3}"
    );

    // nginx: its HTTP/1.1 cell measured; the h3 one skipped with the reason, one line.
    let nginx = target(&v, "nginx-tls-static");
    assert_eq!(nginx["outcome"], "measured", "{}\n{err}", nginx["message"]);
    let ver = &nginx["verify"][0];
    assert_eq!(
        (&ver["passed"], &ver["http3"]),
        (&json!(true), &json!(false)),
        "{ver}"
    );
    assert_eq!(cell(nginx, "image", "c4")["status"], "measured");
    let skipped = cell(nginx, "image", "h3-4x4");
    assert_eq!(
        (&skipped["status"], &skipped["protocol"]),
        (&json!("excluded"), &json!("h3")),
        "{skipped}"
    );
    let why = skipped["message"].as_str().unwrap();
    assert!(
        why.contains("target nginx-tls-static does not speak HTTP/3 (h3 over QUIC): ")
            && !why.contains('\n')
            && !why.contains("--http3"),
        "{why}"
    );
    assert!(
        err.lines().any(|l| l.contains(
            "verify image: ok over HTTP/1.1, but target nginx-tls-static does not speak HTTP/3"
        )),
        "{err}"
    );
    std::fs::remove_dir_all(&out).unwrap();
}
