//! Suites that parse: the committed ones, defaults, parameter rows, target selection and
//! which levels each scenario runs for each target.

use super::*;

mod open_level;

/// A small valid suite; the tests of `validate` break it one line at a time.
pub(super) const GOOD: &str = r#"
name = "t"
images = 5

[plan]
levels = [10, { name = "ab", connections = 10, requests = 1000, keepalive = false }]
duration = "1s"

[[scenario]]
name = "redirect"
[scenario.expect]
status = 302
headers = { Location = '^https://avatar\.example/Renard-(\d+)\.png$' }
all_images = true

[[target]]
name = "c"
language = "C"
dir = "targets/c-epoll"
build = "cc -o {out}/server server.c"
start = "{out}/server {port} {images}"
"#;

#[test]
fn the_default_suite_parses() {
    let s = Suite::parse(DEFAULT_SUITE, "built-in").unwrap();
    assert!(s.targets.iter().any(|t| t.name == "avatar"));
    assert!(s
        .plan
        .levels
        .iter()
        .any(|l| l.name == "ab" && l.requests == Some(100_000) && l.keepalive == Some(false)));
}

/// The backend-call suite: one service every target uses, its URL in every start
/// command, a request id per request that the answer must echo, and every row's
/// levels kept by --quick.
#[test]
fn the_backend_suite_parses() {
    let text = include_str!("../../../../suites/backend.toml");
    let mut s = Suite::parse(text, "suites/backend.toml").unwrap();
    assert_eq!(s.services.len(), 1);
    let hello = &s.services[0];
    assert_eq!(hello.name(), "hello");
    assert_eq!(
        hello.counter,
        Some(Counter {
            path: "/stats".into(),
            field: Some("requests".into())
        })
    );
    let rows: Vec<&str> = s.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        rows,
        [
            "java-blocking[threads=200,nodelay=true]",
            "java-blocking[threads=200,nodelay=false]",
            "java-blocking[threads=10000,nodelay=true]",
            "java-blocking[threads=10000,nodelay=false]",
            "java-async[nodelay=true]",
            "java-async[nodelay=false]",
            "java-virtual-threads",
            "java-netty",
            "go-nethttp",
            "go-nethttp[idle=1024]",
            "node-fetch[client=agent]",
            "node-fetch[client=fetch]",
            "python-aiohttp",
            "rust-hyper"
        ]
    );
    for t in &s.targets {
        assert_eq!(t.uses, ["hello"], "{}", t.name);
        assert!(t.start.contains("{service.hello.url}"), "{}", t.name);
        // Only java-blocking's 10,000-thread rows leave a level out, with its reason.
        let excluded: Vec<&str> = t.excluded_levels.keys().map(String::as_str).collect();
        let want: &[&str] = if t.name.starts_with("java-blocking[threads=10000,") {
            &["c10000"]
        } else {
            &[]
        };
        assert_eq!(excluded, want, "{}", t.name);
        assert!(t
            .excluded_levels
            .values()
            .all(|why| why.contains("heap") && why.contains("README")));
    }
    for sc in &s.scenarios {
        assert_eq!(sc.request_headers[0].name, "X-Request-Id");
        assert_eq!(sc.random_parts(), 1);
        assert_eq!(sc.header_echoes.len(), 1);
    }
    let levels: Vec<&str> = s.plan.levels.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(levels, ["c10", "c100", "c1000", "ab", "c10000"]);
    s.make_quick();
    for sc in &s.scenarios {
        assert!(!s.levels_for(sc, &s.targets[0]).is_empty(), "{}", sc.name);
    }
}

#[test]
fn a_good_suite_parses_with_defaults() {
    let s = Suite::parse(GOOD, "s.toml").unwrap();
    assert_eq!(s.images, 5);
    assert_eq!(s.plan.levels[0], timed_level(10));
    assert_eq!(s.plan.levels[1].requests, Some(1000));
    assert_eq!(s.plan.repeats, 3);
    assert_eq!(s.scenarios[0].method, "GET");
    assert!(s.scenarios[0].all_images);
    assert_eq!(s.targets[0].ready, Ready::Http);
}

/// GOOD with a second scenario for one target only, and a plain target beside a
/// parameterized one of the same name that runs at one level.
fn with_params() -> Suite {
    let text = GOOD.replace(
        "[[target]]",
        r##"[[scenario]]
name = "svg"
path = "/{hex:6}.svg"
targets = ["j"]
levels = ["c10"]
[scenario.expect]
status = 200
body_xml_root = "svg"
body_contains = 'fill="#{random.1}"'

[[target]]
name = "j"
language = "Java"
dir = "targets/java-httpserver"
build = "javac -d {out} A.java"
start = "java -Xmx32m -cp {out} A {port}"

[[target]]
name = "j"
language = "Java"
dir = "targets/java-httpserver"
build = "javac -d {out} A.java"
start = "java {param.jvm} -Xss{param.stack} -cp {out} A {port}"
env = { JAVA_OPTS = "-D{param.stack}" }
params = { jvm = ["-Xmx8m", "-Xmx16m -XX:+UseZGC"], stack = ["256k", "1m"] }
levels = ["c10"]

[[target]]"##,
    );
    Suite::parse(&text, "p.toml").unwrap()
}

#[test]
fn params_expand_into_named_rows_with_their_commands() {
    let s = with_params();
    let names: Vec<&str> = s.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "j",
            "j[jvm=-Xmx8m,stack=256k]",
            "j[jvm=-Xmx8m,stack=1m]",
            "j[jvm=-Xmx16m -XX:+UseZGC,stack=256k]",
            "j[jvm=-Xmx16m -XX:+UseZGC,stack=1m]",
            "c"
        ]
    );
    let row = &s.targets[3];
    assert_eq!(row.base, "j");
    assert_eq!(
        row.start,
        "java -Xmx16m -XX:+UseZGC -Xss256k -cp {out} A {port}"
    );
    assert_eq!(row.env["JAVA_OPTS"], "-D256k");
    assert_eq!(row.build.as_deref(), Some("javac -d {out} A.java"));
    assert_eq!(
        row.params,
        [
            ("jvm".to_string(), "-Xmx16m -XX:+UseZGC".to_string()),
            ("stack".to_string(), "256k".to_string())
        ]
    );
    assert_eq!(row.file_stem(), "j_jvm=-Xmx16m_-XX_+UseZGC_stack=256k_");
    // The plain row runs every level; the parameter rows only c10.
    let (redirect, svg) = (&s.scenarios[0], &s.scenarios[1]);
    let level_names =
        |sc, t| -> Vec<String> { s.levels_for(sc, t).iter().map(|l| l.name.clone()).collect() };
    assert_eq!(level_names(redirect, &s.targets[0]), ["c10", "ab"]);
    assert_eq!(level_names(redirect, row), ["c10"]);
    assert_eq!(level_names(svg, &s.targets[0]), ["c10"]);
    // The svg scenario is for j's rows only.
    assert!(svg.applies_to(row) && svg.applies_to(&s.targets[0]));
    assert!(!svg.applies_to(&s.targets[5]) && redirect.applies_to(&s.targets[5]));
    assert_eq!(
        svg.body_contains.as_ref().unwrap().fill(&["a8db7d".into()]),
        "fill=\"#a8db7d\""
    );
}

#[test]
fn select_keeps_all_rows_of_a_target_or_one_row() {
    let mut s = with_params();
    s.select(&["j".into()]).unwrap();
    assert_eq!(s.targets.len(), 5);
    let mut s = with_params();
    s.select(&["j[jvm=-Xmx8m,stack=1m]".into(), "c".into()])
        .unwrap();
    let names: Vec<&str> = s.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["j[jvm=-Xmx8m,stack=1m]", "c"]);
    let e = with_params().select(&["k".into()]).unwrap_err().to_string();
    assert!(e.ends_with("it has j, c"), "{e}");
}

/// A suite with a capacity level in [plan] and another in [quick], opted into by some
/// targets and not by a scenario that names its own levels.
const WITH_CAPACITY: &str = r#"
name = "t"
images = 5

[plan]
levels = [10, 100, { name = "cap", connections = 50, capacity = "p99<10ms, errors<1%", max_duration = "20s", window = "1500ms", start_rate = 4000 }]

[quick]
levels = [10, { name = "cap-quick", connections = 50, capacity = "p99<10ms", max_duration = "10s" }]

[[scenario]]
name = "redirect"
[scenario.expect]
status = 302
headers = { Location = '^https://avatar\.example/Renard-(\d+)\.png$' }
all_images = true

[[scenario]]
name = "svg"
path = "/{hex:6}.svg"
levels = ["c10"]
[scenario.expect]
status = 200

[[target]]
name = "a"
language = "C"
dir = "targets/c-epoll"
start = "{out}/server {port}"
levels = ["cap", "cap-quick"]

[[target]]
name = "b"
language = "C"
dir = "targets/c-epoll"
start = "{out}/server {port}"
levels = ["cap"]

[[target]]
name = "c"
language = "C"
dir = "targets/c-epoll"
start = "{out}/server {port}"

[[target]]
name = "d"
language = "C"
dir = "targets/c-epoll"
start = "{out}/server {port}"
levels = ["c10", "cap"]
"#;

#[test]
fn capacity_levels_parse_and_run_only_where_named() {
    let s = Suite::parse(WITH_CAPACITY, "s.toml").unwrap();
    let cap = s.plan.levels[2].capacity.as_ref().unwrap();
    assert_eq!(cap.objective, "p99<10ms, errors<1%");
    assert_eq!(cap.slo.clauses.len(), 2);
    assert_eq!(cap.window, Duration::from_millis(1500));
    assert_eq!(cap.start_per_sec, 4000.0);
    assert_eq!(s.plan.levels[2].max_duration, Duration::from_secs(20));
    assert!(s.plan.levels[..2].iter().all(|l| l.capacity.is_none()));
    let names = |s: &Suite, sc: usize, t: usize| -> Vec<String> {
        s.levels_for(&s.scenarios[sc], &s.targets[t])
            .iter()
            .map(|l| l.name.clone())
            .collect()
    };
    // (scenario, target) → levels, in the full run then in --quick.
    type Case<'a> = ((usize, usize), &'a [&'a str], &'a [&'a str]);
    let cases: [Case; 8] = [
        ((0, 0), &["c10", "c100", "cap"], &["c10", "cap-quick"]),
        ((0, 1), &["c10", "c100", "cap"], &["c10"]),
        ((0, 2), &["c10", "c100"], &["c10"]),
        ((0, 3), &["c10", "cap"], &["c10"]),
        ((1, 0), &["c10"], &["c10"]),
        ((1, 1), &["c10"], &["c10"]),
        ((1, 2), &["c10"], &["c10"]),
        ((1, 3), &["c10"], &["c10"]),
    ];
    let mut quick = s.clone();
    quick.make_quick();
    let q = quick.plan.levels[1].capacity.as_ref().unwrap();
    assert_eq!(
        (q.window, q.start_per_sec),
        (Duration::from_secs(1), 1000.0),
        "the defaults"
    );
    for ((sc, t), full, short) in cases {
        assert_eq!(names(&s, sc, t), full, "scenario {sc}, target {t}");
        assert_eq!(
            names(&quick, sc, t),
            short,
            "--quick: scenario {sc}, target {t}"
        );
    }
}

/// The avatar challenge searches the capacity of issue 12's five servers, on the
/// redirect only; --quick of avatar alone.
#[test]
fn the_default_suite_searches_the_capacity_of_five_servers() {
    let full = Suite::parse(DEFAULT_SUITE, "built-in").unwrap();
    let mut quick = full.clone();
    quick.make_quick();
    let running = |s: &Suite, level: &str| -> Vec<(String, String)> {
        let mut v = Vec::new();
        for sc in &s.scenarios {
            for t in s.targets.iter().filter(|t| sc.applies_to(t)) {
                if s.levels_for(sc, t).iter().any(|l| l.name == level) {
                    v.push((sc.name.clone(), t.name.clone()));
                }
            }
        }
        v
    };
    let five = [
        "avatar",
        "c-epoll",
        "nginx",
        "go-nethttp",
        "java-httpserver",
    ];
    let want = |names: &[&str]| -> Vec<(String, String)> {
        names
            .iter()
            .map(|n| ("redirect".to_string(), n.to_string()))
            .collect()
    };
    assert_eq!(running(&full, "cap"), want(&five));
    assert_eq!(running(&quick, "cap-quick"), want(&["avatar"]));
    let cap = full.plan.levels.iter().find(|l| l.name == "cap").unwrap();
    assert_eq!(cap.capacity.as_ref().unwrap().objective, "p99<10ms");
    // Every other level still runs for the five.
    let avatar = full.targets.iter().find(|t| t.name == "avatar").unwrap();
    assert_eq!(
        full.levels_for(&full.scenarios[0], avatar).len(),
        full.plan.levels.len()
    );
}

#[test]
fn cpu_lists() {
    assert_eq!(parse_cpus("auto").unwrap(), None);
    assert_eq!(parse_cpus("0").unwrap(), Some(vec![0]));
    assert_eq!(parse_cpus("2-3,0").unwrap(), Some(vec![0, 2, 3]));
    for bad in ["", "a", "3-1", "-1", "1,,2"] {
        assert!(parse_cpus(bad).is_err(), "{bad}");
    }
}

#[test]
fn quick_mode_shortens_the_plan() {
    let mut s = Suite::parse(DEFAULT_SUITE, "built-in").unwrap();
    let full = s.plan.clone();
    s.make_quick();
    assert!(s.plan.duration <= full.duration && s.plan.repeats <= full.repeats);
    assert!(s.plan.levels.len() <= full.levels.len());
}

#[test]
fn select_names_missing_targets() {
    let mut s = Suite::parse(GOOD, "s.toml").unwrap();
    let e = s.select(&["nope".into()]).unwrap_err().to_string();
    assert!(e.contains("nope") && e.contains("it has c"), "{e}");
    s.select(&["c".into()]).unwrap();
    assert_eq!(s.targets.len(), 1);
}

#[test]
fn an_unknown_target_is_its_own_kind_with_the_same_line() {
    let mut s = Suite::parse(GOOD, "s.toml").unwrap();
    let e = s.select(&["c".into(), "nope".into()]).unwrap_err();
    assert!(matches!(&e, SuiteError::UnknownTarget { name, .. } if name == "nope"));
    assert_eq!(
        e.to_string(),
        r#"no target named "nope" in suite "t": it has c"#
    );
}

/// HTTP/2 levels run only for the scenarios that name them or set `http2 = true`; such a
/// scenario speaks HTTP/2 at every level, with the level's streams or one.
#[test]
fn http2_levels_run_where_named_or_for_http2_scenarios() {
    let text = GOOD
        .replace(
            "{ name = \"ab\", connections = 10, requests = 1000, keepalive = false }",
            "{ name = \"h2-10x10\", connections = 10, http2 = true, streams = 10 }, { name = \"h2-new\", connections = 10, requests = 100, keepalive = false, http2 = true }",
        )
        .replace(
            "[[target]]",
            "[[scenario]]\nname = \"named\"\nlevels = [\"c10\", \"h2-10x10\"]\n[scenario.expect]\nstatus = 302\n\n[[scenario]]\nname = \"all-h2\"\nhttp2 = true\n[scenario.expect]\nstatus = 302\n\n[[target]]",
        );
    let s = Suite::parse(&text, "s.toml").unwrap();
    let t = &s.targets[0];
    let runs = |sc: usize| -> Vec<(String, HttpVersion)> {
        let sc = &s.scenarios[sc];
        s.levels_for(sc, t)
            .iter()
            .map(|l| (l.name.clone(), sc.version(l)))
            .collect()
    };
    let h2 = |streams| HttpVersion::Http2 { streams };
    let named = |v: &[(&str, HttpVersion)]| -> Vec<(String, HttpVersion)> {
        v.iter().map(|(n, h)| (n.to_string(), *h)).collect()
    };
    // No levels filter: the HTTP/1.1 levels only.
    assert_eq!(runs(0), named(&[("c10", HttpVersion::Http1)]));
    assert_eq!(
        runs(1),
        named(&[("c10", HttpVersion::Http1), ("h2-10x10", h2(10))])
    );
    assert_eq!(
        runs(2),
        named(&[("c10", h2(1)), ("h2-10x10", h2(10)), ("h2-new", h2(1))])
    );
    let levels = || s.plan.levels.iter();
    assert!(!s.scenarios[0].runs(
        Multiplexed::Http2,
        levels().filter(|l| l.protocol.is_none())
    ));
    assert!(s.scenarios[1].runs(Multiplexed::Http2, levels()));
}

/// The production suite's h2 levels run on nginx-tls-avatar and nginx-tls-static and on
/// the two caddy targets, and its h3 levels on the caddy targets alone (nginx 1.22 has no
/// QUIC), in the full run and in --quick; the other targets keep their HTTP/1.1 levels.
#[test]
fn the_production_suite_runs_h2_on_nginx_and_caddy_and_h3_on_caddy_only() {
    let text = include_str!("../../../../suites/production.toml");
    let full = Suite::parse(text, "suites/production.toml").unwrap();
    let mut quick = full.clone();
    quick.make_quick();
    // Each target's multiplexed levels and their streams, h2 or h3 as asked, sorted.
    let cells = |s: &Suite, h3: bool| -> Vec<(String, String, u32)> {
        let mut v = Vec::new();
        for sc in &s.scenarios {
            for t in s.targets.iter().filter(|t| sc.applies_to(t)) {
                for l in s.levels_for(sc, t) {
                    match (sc.version(l), h3) {
                        (HttpVersion::Http2 { streams }, false)
                        | (HttpVersion::Http3 { streams }, true) => {
                            v.push((t.name.clone(), l.name.clone(), streams))
                        }
                        _ => {}
                    }
                }
            }
        }
        v.sort();
        v
    };
    let want = |targets: &[&str], levels: &[(&str, u32)]| -> Vec<(String, String, u32)> {
        let mut v: Vec<_> = targets
            .iter()
            .flat_map(|t| {
                levels
                    .iter()
                    .map(|(l, n)| (t.to_string(), l.to_string(), *n))
            })
            .collect();
        v.sort();
        v
    };
    let nginx = ["nginx-tls-avatar", "nginx-tls-static"];
    let caddy = ["caddy-tls-avatar", "caddy-tls-static"];
    let mut h2 = want(
        &nginx,
        &[
            ("h2-10x10", 10),
            ("h2-100x10", 10),
            ("h2-1000x1", 1),
            ("h2-new", 1),
        ],
    );
    h2.extend(want(&caddy, &[("h2-10x10", 10), ("h2-100x10", 10)]));
    h2.sort();
    assert_eq!(cells(&full, false), h2);
    let mut h2 = want(&nginx, &[("h2-10x10", 10), ("h2-new", 1)]);
    h2.extend(want(&caddy, &[("h2-10x10", 10)]));
    h2.sort();
    assert_eq!(cells(&quick, false), h2);
    assert_eq!(
        cells(&full, true),
        want(&caddy, &[("h3-10x10", 10), ("h3-100x10", 10)])
    );
    assert_eq!(cells(&quick, true), want(&caddy, &[("h3-10x10", 10)]));
    let new = full
        .plan
        .levels
        .iter()
        .find(|l| l.name == "h2-new")
        .unwrap();
    assert_eq!((new.keepalive, new.tls_resume), (Some(false), None));
    // The java proxy and the bare app keep every HTTP/1.1 level.
    for name in ["nginx-tls-java", "avatar"] {
        let t = full.targets.iter().find(|t| t.name == name).unwrap();
        let sc = full.scenarios.iter().find(|s| s.applies_to(t)).unwrap();
        let levels: Vec<&str> = full
            .levels_for(sc, t)
            .iter()
            .map(|l| l.name.as_str())
            .collect();
        assert!(
            levels.starts_with(&["c10", "c100", "c1000", "ab"]),
            "{name}: {levels:?}"
        );
    }
}

/// The avatar challenge's h2c scenario as the lead will add it (suites/avatar.toml): the
/// redirect without a `levels` filter still runs no h2 level on any target, and
/// `redirect-h2` runs only its h2 levels, on its targets, with their streams.
#[test]
fn the_avatar_redirect_h2_scenario_runs_only_its_h2_levels() {
    let text = DEFAULT_SUITE
        .replacen(
            "  # The capacity under p99 < 10 ms",
            "  { name = \"h2-10x1\", connections = 10, http2 = true },\n  { name = \"h2-10x10\", connections = 10, http2 = true, streams = 10 },\n  { name = \"h2-100x10\", connections = 100, http2 = true, streams = 10 },\n  { name = \"h2-1000x10\", connections = 1000, http2 = true, streams = 10 },\n  # The capacity under p99 < 10 ms",
            1,
        )
        .replacen(
            "  { name = \"cap-quick\"",
            "  { name = \"h2-10x10\", connections = 10, http2 = true, streams = 10 },\n  { name = \"cap-quick\"",
            1,
        )
        .replacen(
            "[[target]]",
            "[[scenario]]\nname = \"redirect-h2\"\nhttp2 = true\ntargets = [\"avatar\", \"rust-hyper\"]\nlevels = [\"h2-10x1\", \"h2-10x10\", \"h2-100x10\", \"h2-1000x10\"]\n[scenario.expect]\nstatus = 302\nheaders = { Location = '^https://avatar\\.example/Renard-([0-9]+)\\.png$' }\nall_images = true\n\n[[target]]",
            1,
        );
    assert_ne!(text, DEFAULT_SUITE);
    let full = Suite::parse(&text, "avatar.toml").unwrap();
    let mut quick = full.clone();
    quick.make_quick();
    for s in [&full, &quick] {
        for sc in &s.scenarios {
            for t in s.targets.iter().filter(|t| sc.applies_to(t)) {
                let h2: Vec<(String, HttpVersion)> = s
                    .levels_for(sc, t)
                    .iter()
                    .filter(|l| sc.version(l) != HttpVersion::Http1)
                    .map(|l| (l.name.clone(), sc.version(l)))
                    .collect();
                if sc.name != "redirect-h2" {
                    assert!(h2.is_empty(), "{} on {}: {h2:?}", sc.name, t.name);
                    continue;
                }
                let all = s.levels_for(sc, t).len();
                assert_eq!(h2.len(), all, "{}: every level h2", t.name);
                assert!(["avatar", "rust-hyper"].contains(&t.base.as_str()));
            }
        }
    }
    let avatar = full.targets.iter().find(|t| t.name == "avatar").unwrap();
    let sc = full
        .scenarios
        .iter()
        .find(|s| s.name == "redirect-h2")
        .unwrap();
    let levels: Vec<(&str, HttpVersion)> = full
        .levels_for(sc, avatar)
        .iter()
        .map(|l| (l.name.as_str(), sc.version(l)))
        .collect();
    let h2 = |streams| HttpVersion::Http2 { streams };
    assert_eq!(
        levels,
        [
            ("h2-10x1", h2(1)),
            ("h2-10x10", h2(10)),
            ("h2-100x10", h2(10)),
            ("h2-1000x10", h2(10))
        ]
    );
}

#[test]
fn a_scenario_coalesces_as_it_says_and_auto_by_default() {
    let s = Suite::parse(GOOD, "s.toml").unwrap();
    assert_eq!(s.scenarios[0].coalesce, load::Coalesce::Auto);
    for (value, want) in [
        ("\"off\"", load::Coalesce::Off),
        (
            "\"50us\"",
            load::Coalesce::Fixed(std::time::Duration::from_micros(50)),
        ),
    ] {
        let text = GOOD.replace(
            "name = \"redirect\"",
            &format!("name = \"redirect\"\ncoalesce = {value}"),
        );
        let s = Suite::parse(&text, "s.toml").unwrap();
        assert_eq!(s.scenarios[0].coalesce, want, "{value}");
    }
}

#[test]
fn a_scenario_idles_as_it_says_and_auto_by_default() {
    let s = Suite::parse(GOOD, "s.toml").unwrap();
    assert_eq!(s.scenarios[0].idle, load::Idle::Auto);
    for (value, want) in [
        ("\"spin\"", load::Idle::Spin),
        ("\"sleep\"", load::Idle::Sleep),
    ] {
        let text = GOOD.replace(
            "name = \"redirect\"",
            &format!("name = \"redirect\"\nidle = {value}"),
        );
        let s = Suite::parse(&text, "s.toml").unwrap();
        assert_eq!(s.scenarios[0].idle, want, "{value}");
    }
    for (extra, needle) in [
        ("idle = \"busy\"", "expected spin, sleep or auto"),
        (
            "idle = \"spin\"\ncoalesce = \"off\"",
            "the scenario's coalesce has no meaning with it: drop coalesce",
        ),
    ] {
        let text = GOOD.replace(
            "name = \"redirect\"",
            &format!("name = \"redirect\"\n{extra}"),
        );
        let e = Suite::parse(&text, "s.toml").unwrap_err().to_string();
        assert!(e.contains("idle") && e.contains(needle), "{extra}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
}

/// HTTP/3 levels are modelled as HTTP/2's: `http3 = true` with `streams` (1 by default),
/// run only where named or for an `http3 = true` scenario, each level its own protocol.
#[test]
fn http3_levels_run_where_named_with_one_stream_by_default() {
    let text = GOOD
        .replace(
            "{ name = \"ab\", connections = 10, requests = 1000, keepalive = false }",
            "{ name = \"h2-10x10\", connections = 10, http2 = true, streams = 10 }, { name = \"h3-10x10\", connections = 10, http3 = true, streams = 10 }, { name = \"h3-10x1\", connections = 10, http3 = true }",
        )
        .replace(
            "[[target]]",
            "[[scenario]]\nname = \"named\"\nscheme = \"https\"\ninsecure = true\nlevels = [\"c10\", \"h2-10x10\", \"h3-10x10\"]\n[scenario.expect]\nstatus = 302\n\n[[scenario]]\nname = \"all-h3\"\nscheme = \"https\"\ninsecure = true\nhttp3 = true\n[scenario.expect]\nstatus = 302\n\n[[target]]",
        );
    let s = Suite::parse(&text, "s.toml").unwrap();
    let t = &s.targets[0];
    let runs = |sc: usize| -> Vec<(String, HttpVersion)> {
        let sc = &s.scenarios[sc];
        s.levels_for(sc, t)
            .iter()
            .map(|l| (l.name.clone(), sc.version(l)))
            .collect()
    };
    let named = |v: &[(&str, HttpVersion)]| -> Vec<(String, HttpVersion)> {
        v.iter().map(|(n, h)| (n.to_string(), *h)).collect()
    };
    let (h2, h3) = (
        |streams| HttpVersion::Http2 { streams },
        |streams| HttpVersion::Http3 { streams },
    );
    // No filter: HTTP/1.1 only; named: each level its protocol.
    assert_eq!(runs(0), named(&[("c10", HttpVersion::Http1)]));
    assert_eq!(
        runs(1),
        named(&[
            ("c10", HttpVersion::Http1),
            ("h2-10x10", h2(10)),
            ("h3-10x10", h3(10))
        ])
    );
    // An http3 scenario: every ordinary level over h3 (one stream), and the h3 levels, not
    // the h2 one.
    assert_eq!(
        runs(2),
        named(&[("c10", h3(1)), ("h3-10x10", h3(10)), ("h3-10x1", h3(1))])
    );
    let over = |sc: usize, m| {
        let sc = &s.scenarios[sc];
        sc.runs(m, s.levels_for(sc, t).into_iter())
    };
    assert!(over(1, Multiplexed::Http3) && over(1, Multiplexed::Http2));
    assert!(!over(0, Multiplexed::Http3));
    assert!(over(2, Multiplexed::Http3) && !over(2, Multiplexed::Http2));
}

/// The committed suites written before HTTP/3 (every `suites/*.toml` but avatar-h3's) parse
/// as before: each scenario runs, on each target, the levels it did, each at the version
/// its keys give it (a level's `http2` or `http3` and `streams`, then the scenario's
/// `http2`), read from the file itself; HTTP/3 only where a level says `http3` (the
/// production suite's caddy levels, added since).
#[test]
fn suites_written_before_http3_parse_unchanged() {
    let dir = format!("{}/../../suites", env!("CARGO_MANIFEST_DIR"));
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .filter(|p| !p.ends_with("avatar-h3.toml"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 5, "{paths:?}");
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap();
        let s = Suite::parse(&text, &path.display().to_string()).unwrap();
        let raw: toml::Value = toml::from_str(&text).unwrap();
        let flag =
            |t: &toml::Value, key: &str| t.get(key).and_then(toml::Value::as_bool) == Some(true);
        // A suite without `[plan] levels` runs the default ones, none of them HTTP/2.
        let none = Vec::new();
        let raw_levels = raw
            .get("plan")
            .and_then(|p| p.get("levels"))
            .and_then(toml::Value::as_array)
            .unwrap_or(&none);
        let raw_level = |name: &str| {
            raw_levels
                .iter()
                .find(|l| l.get("name").and_then(toml::Value::as_str) == Some(name))
        };
        let raw_scenarios = raw["scenario"].as_array().unwrap();
        let old_version = |sc: usize, level: &str| {
            let l = raw_level(level);
            let streams = l
                .and_then(|l| l.get("streams"))
                .and_then(toml::Value::as_integer)
                .unwrap_or(1) as u32;
            let h2 = l.is_some_and(|l| flag(l, "http2"));
            if l.is_some_and(|l| flag(l, "http3")) {
                return HttpVersion::Http3 { streams };
            }
            match (h2, flag(&raw_scenarios[sc], "http2")) {
                (true, _) => HttpVersion::Http2 { streams },
                (false, true) => HttpVersion::Http2 { streams: 1 },
                (false, false) => HttpVersion::Http1,
            }
        };
        for (i, sc) in s.scenarios.iter().enumerate() {
            for t in &s.targets {
                for l in s.levels_for(sc, t) {
                    assert_eq!(
                        sc.version(l),
                        old_version(i, &l.name),
                        "{} {} {} {}",
                        path.display(),
                        sc.name,
                        t.name,
                        l.name
                    );
                }
                // An HTTP/2 level runs where a scenario asks HTTP/2 or names it, as before.
                for l in &s.plan.levels {
                    let h2 = raw_level(&l.name).is_some_and(|rl| flag(rl, "http2"));
                    if h2 && !flag(&raw_scenarios[i], "http2") {
                        let named = sc.levels.as_ref().is_some_and(|n| n.contains(&l.name));
                        let runs = s.levels_for(sc, t).iter().any(|x| x.name == l.name);
                        assert!(!runs || named, "{} {} {}", path.display(), sc.name, l.name);
                    }
                }
            }
        }
    }
}
