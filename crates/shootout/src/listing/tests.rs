use super::*;

const SUITE: &str = r#"
name = "t"
images = 7
template = "http://x/{n}.png"
[[scenario]]
name = "redirect"
[scenario.expect]
status = 302
[[service]]
name = "db"
dir = "db"
start = "run {port}"
[[target]]
name = "j"
language = "Java"
dir = "targets/j"
build = "javac -d {out} {dir}/A.java"
start = "java {param.heap} -cp {out} A {port} {images} {template} {service.db.url}"
params = { heap = ["-Xmx8m", "-Xmx16m"] }
env = { K = "{param.heap}" }
"#;

#[test]
fn fills_what_the_shootout_fills_and_leaves_the_rest() {
    let suite = Suite::parse(SUITE, "t.toml").unwrap();
    let root = Path::new("/nonexistent-root");
    let values = [
        ("port".to_string(), "8080".to_string()),
        ("service.db.port".to_string(), "5432".to_string()),
    ];
    let l = listing(&suite, root, Path::new("/nonexistent-cache"), &values);
    assert_eq!(l.targets.len(), 2, "one entry per parameter row");
    let t = &l.targets[0];
    assert_eq!(t.name, "j[heap=-Xmx8m]");
    assert_eq!(t.base, "j");
    assert_eq!(t.params["heap"], "-Xmx8m");
    assert_eq!(t.dir, root.join("targets/j"));
    assert_eq!(
        t.build.as_deref(),
        Some("javac -d {out} /nonexistent-root/targets/j/A.java"),
        "{{out}} was not given: it stays"
    );
    assert_eq!(
        t.start,
        "java -Xmx8m -cp {out} A 8080 7 http://x/{n}.png http://127.0.0.1:5432"
    );
    assert_eq!(t.env["K"], "-Xmx8m");
    assert_eq!(l.targets[1].start.split(' ').nth(1), Some("-Xmx16m"));
    assert_eq!(l.services[0].start, "run 8080");
    assert_eq!(l.filled["service.db.host"], "127.0.0.1");
}

/// `built` is the entry the shootout's builder uses (the same key), once it holds a
/// finished build; a scenario's `targets` and `http2` say which targets speak HTTP/2.
#[test]
fn built_is_the_builders_entry_and_http2_follows_the_scenarios() {
    let suite = r#"
name = "t"
images = 3
template = "http://x/{n}.png"
[[scenario]]
name = "redirect"
[scenario.expect]
status = 302
[[scenario]]
name = "redirect-h2"
http2 = true
targets = ["a"]
[scenario.expect]
status = 302
[[target]]
name = "a"
language = "sh"
dir = "a"
build = "echo built > {out}/x"
start = "run {out} {port}"
[[target]]
name = "b"
language = "sh"
dir = "b"
start = "run {port}"
"#;
    let suite = Suite::parse(suite, "t.toml").unwrap();
    let root = std::env::temp_dir().join(format!("foxbench-listing-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for d in ["a", "b", "cache", "logs"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    let cache = root.join("cache");
    let l = listing(&suite, &root, &cache, &[]);
    assert_eq!(l.targets[0].built, None, "nothing built yet");
    let (a, b) = (&suite.targets[0], &suite.targets[1]);
    let setup = Setup::new(a, &root, root.join("logs")).unwrap();
    let never = std::sync::atomic::AtomicBool::new(false);
    let builder = crate::lifecycle::Builder {
        cache: &cache,
        timeout: std::time::Duration::from_secs(60),
        interrupt: &never,
        build_cpus: &[],
        client_cpus: &[],
    };
    let done = builder.build(&setup).unwrap();
    let l = listing(&suite, &root, &cache, &[]);
    let out = done.out.canonicalize().unwrap();
    assert_eq!(l.targets[0].built.as_deref(), Some(out.as_path()));
    assert_eq!(std::fs::read_to_string(out.join("x")).unwrap(), "built\n");
    assert_eq!(l.targets[1].built, None, "b was never built");
    assert_eq!(l.targets[0].scenarios, ["redirect", "redirect-h2"]);
    assert!(l.targets[0].http2);
    assert_eq!(l.targets[1].scenarios, ["redirect"]);
    assert!(
        !l.targets[1].http2,
        "{}: no scenario speaks h2 to it",
        b.name
    );
    assert!(l.scenarios[1].http2 && !l.scenarios[0].http2);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_given_value_overrides_the_suites() {
    let suite = Suite::parse(SUITE, "t.toml").unwrap();
    let values = [
        ("images".to_string(), "3".to_string()),
        ("out".to_string(), "/o".to_string()),
    ];
    let l = listing(&suite, Path::new("/r"), Path::new("/c"), &values);
    assert!(
        l.targets[0]
            .start
            .contains("-cp /o A {port} 3 http://x/{n}.png"),
        "{}",
        l.targets[0].start
    );
}
