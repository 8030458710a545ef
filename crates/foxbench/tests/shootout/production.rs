//! `suites/production.toml` end to end in quick mode (nginx terminating TLS in front of
//! avatar and java-httpserver, nginx serving an image, avatar direct; caddy in front of
//! avatar and serving the image, over HTTP/1.1, h2 and h3), and verification
//! over TLS failing cleanly against a certificate the scenario does not trust. Each test
//! is skipped, with one line, on a machine without nginx, caddy or openssl (scripts/test
//! installs them).

use super::*;

/// The repository root: suites and targets are found from it.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Whether nginx, caddy and openssl are installed; false after a loud skip naming the missing one
/// (a failure under `FOXBENCH_REQUIRE`, as in CI).
fn tools() -> bool {
    [
        ("nginx", "nginx-light"),
        ("caddy", "caddy"),
        ("openssl", "openssl"),
    ]
    .into_iter()
    .all(|(cmd, package)| {
        let candidates = ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"]
            .map(|d| format!("{d}/{cmd}"));
        let candidates = candidates.each_ref().map(String::as_str);
        testkit::require(cmd, &candidates, &format!("apt-get install {package}")).is_some()
    })
}

/// The process behind the proxy in a proxied target.
fn app_of(target: &str) -> Option<&'static str> {
    match target {
        "nginx-tls-avatar" | "caddy-tls-avatar" => Some("avatar"),
        "nginx-tls-java" => Some("java"),
        _ => None,
    }
}

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn quick_production_suite_measures_the_tls_path() {
    if !tools() {
        return;
    }
    let out = tmp("production");
    let o = Shootout::new("suites/production.toml", &out)
        .dir(&root())
        .cache(Cache::Default)
        .arg("--quick")
        .run();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let v = results(&out);
    assert_eq!(v["suite"]["name"], "production path");
    for name in [
        "nginx-tls-avatar",
        "nginx-tls-java",
        "nginx-tls-static",
        "avatar",
        "caddy-tls-avatar",
        "caddy-tls-static",
    ] {
        let t = target(&v, name);
        assert_eq!(t["outcome"], "measured", "{name}: {}\n{err}", t["message"]);
        // The proxy (or server) in front: nginx, or caddy with HTTP/3 on UDP beside it.
        let caddy = name.starts_with("caddy");
        let proxy = if caddy { "caddy" } else { "nginx" };
        // HTTP/2 on the targets that run h2 levels, on the same listener.
        let h2 = caddy || matches!(name, "nginx-tls-avatar" | "nginx-tls-static");
        for ver in t["verify"].as_array().unwrap() {
            assert_eq!(ver["passed"], true, "{name}: {ver}");
            assert_eq!(ver["keepalive"], true, "{name}: {ver}");
            assert_eq!(ver["http2"].as_bool(), h2.then_some(true), "{name}: {ver}");
            assert_eq!(
                ver["http3"].as_bool(),
                caddy.then_some(true),
                "{name}: {ver}"
            );
        }
        let tls = name.starts_with("nginx-tls") || caddy;
        let mut app_us = 0.0;
        let levels: Vec<&str> = t["cells"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["level"].as_str().unwrap())
            .collect();
        let want: &[&str] = match (tls, h2) {
            _ if caddy => &["c10", "h2-10x10", "h3-10x10"],
            (true, true) => &["c10", "ab", "ab-full", "h2-10x10", "h2-new"],
            (true, false) => &["c10", "ab", "ab-full"],
            _ => &["c10", "ab"],
        };
        assert_eq!(levels, want, "{name}");
        for c in t["cells"].as_array().unwrap() {
            let level = c["level"].as_str().unwrap();
            assert_eq!(c["status"], "measured", "{name} {level}: {}", c["message"]);
            let s = &c["summary"];
            let r = &c["repeats"][0];
            let completed = n(&r["requests"]["completed"]);
            assert!(completed > 0, "{name} {level}");
            if !tls {
                assert!(
                    c["tls_resume"].is_null() && r["handshakes"].is_null(),
                    "{name}"
                );
                continue;
            }
            assert_eq!(c["tls_resume"], level != "ab-full", "{name} {level}");
            assert_eq!(
                (c["protocol"].as_str(), r["http2"]["alpn"].as_str()),
                match level.get(..3) {
                    Some("h2-") => (Some("h2"), Some("h2")),
                    Some("h3-") => (Some("h3"), None),
                    _ => (Some("http/1.1"), None),
                },
                "{name} {level}"
            );
            let (full, resumed) = (n(&r["handshakes"]["full"]), n(&r["handshakes"]["resumed"]));
            let opened = n(&r["connections"]["opened"]);
            assert_eq!(
                full + resumed,
                opened,
                "{name} {level}: one handshake per connection"
            );
            match level {
                // Kept alive: a handshake per connection, not per request.
                "c10" | "h2-10x10" | "h3-10x10" => {
                    assert!(opened <= 20 && completed > opened, "{name}: {r}")
                }
                // A new connection per request, resumed after the first few (over h2 too:
                // each an ALPN h2 handshake).
                "ab" | "h2-new" => assert!(resumed > full && opened >= completed, "{name}: {r}"),
                // The same without resumption: a full handshake every time.
                _ => assert!(resumed == 0 && full >= completed, "{name}: {r}"),
            }
            assert!(s["handshakes_full_per_s"].as_f64().unwrap() > 0.0 || level == "ab");
            // The tree's processes apart: nginx, and the app behind it for a proxy, each
            // named in every cell. /proc counts CPU in 10 ms ticks, so an app that spends
            // 7 µs on each of 500 requests may read 0 in one short quick-mode cell: its
            // CPU is checked over the target's cells below.
            let cost = |proc: &str| {
                s["processes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|p| p["name"] == proc)
                    .map(|p| p["cpu_us_per_request"].as_f64().unwrap())
            };
            assert!(cost(proxy).unwrap_or(0.0) > 0.0, "{name} {level}: {s}");
            if let Some(app) = app_of(name) {
                app_us += cost(app).unwrap_or_else(|| panic!("{name} {level}: no {app}: {s}"));
            }
        }
        if let Some(app) = app_of(name) {
            assert!(app_us > 0.0, "{name}: {app} used no CPU in any cell");
        }
    }
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        md.contains("### TLS handshakes and CPU per process"),
        "{md}"
    );
    let row = md
        .lines()
        .find(|l| l.starts_with("| nginx-tls-avatar |") && l.contains("no resumption"))
        .unwrap_or_else(|| panic!("no ab-full row for nginx-tls-avatar:\n{md}"));
    assert!(row.contains("nginx ") && row.contains(" µs"), "{row}");
    // h2 beside HTTP/1.1 on the same proxy, nginx's and avatar's CPU apart.
    assert!(
        md.contains("### HTTP/2 and HTTP/3 against HTTP/1.1"),
        "{md}"
    );
    let row = md
        .lines()
        .find(|l| {
            l.starts_with("| nginx-tls-avatar | redirect-tls | h2-10x10 (h2, 10 streams) | c10 |")
        })
        .unwrap_or_else(|| panic!("no h2-10x10 row for nginx-tls-avatar:\n{md}"));
    assert!(row.contains("nginx ") && row.contains("avatar "), "{row}");
    // caddy's three protocols on one proxy: h3 beside HTTP/1.1 and beside h2.
    let row = md
        .lines()
        .find(|l| {
            l.starts_with("| caddy-tls-avatar | redirect-tls | h3-10x10 (h3, 10 streams) | c10 |")
        })
        .unwrap_or_else(|| panic!("no h3-10x10 row for caddy-tls-avatar:\n{md}"));
    assert!(
        row.contains("caddy ") && row.contains("avatar ") && row.contains("× (h2-10x10) |"),
        "{row}"
    );
    // The progress lines say it as the report does.
    assert!(
        err.contains("TLS handshakes ") && err.contains("/s full"),
        "{err}"
    );
    std::fs::remove_dir_all(&out).unwrap();
}

/// A scenario that checks the certificate against the system's roots fails verification
/// against nginx's private CA with one line naming the suite keys that fix it; the same
/// target passes with `insecure = true`.
#[test]
fn tls_verification_names_cacert_and_insecure() {
    if !tools() {
        return;
    }
    let out = tmp("tls-verify");
    let suite = out.join("suite.toml");
    std::fs::write(
        &suite,
        r#"
name = "tls verify"
[plan]
levels = [1]
duration = "300ms"
repeats = 1
warmup = "300ms"
[[scenario]]
name = "system-roots"
path = "/images/Renard-1.png"
scheme = "https"
[scenario.expect]
status = 200
[[scenario]]
name = "insecure"
path = "/images/Renard-1.png"
scheme = "https"
insecure = true
[scenario.expect]
status = 200
headers = { Content-Type = '^image/png$' }
[[target]]
name = "nginx-tls-static"
language = "nginx (TLS)"
dir = "targets/nginx-tls"
requires = ["nginx", "openssl", "python3", "bash"]
build = "python3 image.py {out} && sh cert.sh {out}"
start = "bash run.sh {out} {port} static"
"#,
    )
    .unwrap();
    let o = Shootout::new(&suite, &out.join("run"))
        .root(root())
        .cache(Cache::Default)
        .run();
    let err = String::from_utf8_lossy(&o.stderr);
    let v = results(&out.join("run"));
    let t = target(&v, "nginx-tls-static");
    let strict = &t["verify"][0];
    assert_eq!(strict["passed"], false, "{strict}");
    let detail = strict["checks"][0]["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("TLS to 127.0.0.1:")
            && detail.contains("self-signed or from an unknown authority")
            && detail.contains("cacert = \"FILE\" or insecure = true")
            && !detail.contains('\n'),
        "{detail}"
    );
    assert_eq!(t["verify"][1]["passed"], true, "{}", t["verify"][1]);
    assert_eq!(t["outcome"], "measured", "{err}");
    assert!(err.contains("verify system-roots: "), "{err}");
    std::fs::remove_dir_all(&out).unwrap();
}

/// `--list` shows which scenarios speak TLS and how they check the certificate, and which
/// levels make a full handshake per connection; it needs no tool installed.
#[test]
fn list_shows_the_tls_scenarios_and_levels() {
    // A plain command, not a `Shootout`: `--list` starts nothing and writes no results.
    let o = foxbench()
        .args(["shootout", "suites/production.toml", "--list"])
        .current_dir(root())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let line = |start: &str| {
        text.lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no line {start:?} in:\n{text}"))
            .to_string()
    };
    assert!(
        line("scenario redirect-tls").contains(", https (cacert {out}/tls/ca.pem)"),
        "{text}"
    );
    assert!(!line("scenario redirect ").contains("https"), "{text}");
    assert!(
        line("level ab-full").ends_with(", no TLS resumption"),
        "{text}"
    );
    assert!(
        line("level h2-10x10").contains(", HTTP/2 × 10 streams"),
        "{text}"
    );
    assert!(!line("level c10").contains("HTTP/2"), "{text}");
    assert!(!line("level ab ").contains("TLS"), "{text}");
    for t in [
        "nginx-tls-avatar",
        "nginx-tls-java",
        "nginx-tls-static",
        "avatar",
        "caddy-tls-avatar",
        "caddy-tls-static",
    ] {
        line(&format!("target {t} "));
    }
}
