//! The suite validation's mistakes: each bad suite gets one line naming the file, the line
//! and the key.

use super::*;
use crate::suite::tests::GOOD;

/// Each bad suite gets one line naming the file, the line and the key.
#[test]
fn bad_suites_name_the_line_and_key() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "duration = \"1s\"",
            "duration = \"1x\"",
            &["s.toml:7:", "plan.duration", "invalid duration unit"],
        ),
        (
            "build = \"cc",
            "biuld = \"cc",
            &["s.toml:20:", "target[0]", "unknown field `biuld`"],
        ),
        (
            "status = 302",
            "status = \"302\"",
            &["s.toml:12:", "scenario[0].expect.status"],
        ),
        (
            "(\\d+)\\.png$'",
            "(\\d+\\.png$'",
            &[
                "s.toml:13:",
                "scenario[0].expect.headers.Location",
                "invalid pattern",
            ],
        ),
        (
            "{out}/server {port} {images}",
            "{out}/server {prot} {images}",
            &[
                "s.toml:21:",
                "target[0].start",
                "unknown placeholder {prot}",
            ],
        ),
        (
            "{out}/server {port} {images}",
            "{out}/server {images}",
            &["s.toml:21:", "target[0].start", "no {port}"],
        ),
        (
            "connections = 10, requests",
            "connections = 0, requests",
            &["s.toml:6:", "plan.levels", "at least 1"],
        ),
        (
            "name = \"redirect\"",
            "name = \"redirect\"\npipeline = 0",
            &["s.toml:11:", "scenario[0].pipeline"],
        ),
        (
            "name = \"redirect\"",
            "name = \"redirect\"\ncoalesce = \"fast\"",
            &[
                "scenario[0].coalesce",
                "expected auto, off or a duration such as 50us",
            ],
        ),
        (
            "name = \"redirect\"",
            "name = \"redirect\"\ncoalesce = \"1s\"",
            &["scenario[0].coalesce", "at most 10 ms"],
        ),
        (
            "all_images = true",
            "all_images = true\n[scenario.expect.x]",
            &["s.toml:", "scenario[0].expect"],
        ),
        (
            "dir = \"targets/c-epoll\"",
            "dir = \"../etc\"",
            &["s.toml:19:", "target[0].dir"],
        ),
        (
            "images = 5",
            "images = 5\nimages = 6",
            &["s.toml:4:", "duplicate key"],
        ),
    ];
    for (from, to, want) in cases {
        assert!(GOOD.contains(from), "{from}");
        let text = GOOD.replacen(from, to, 1);
        let e = Suite::parse(&text, "s.toml").unwrap_err().to_string();
        assert!(!e.contains('\n'), "one line: {e}");
        for w in *want {
            assert!(e.contains(w), "{to:?}: want {w:?} in {e:?}");
        }
    }
}

#[test]
fn all_images_needs_a_capturing_location_pattern() {
    let text = GOOD.replace(r"(\d+)", r"\d+");
    let e = Suite::parse(&text, "s.toml").unwrap_err().to_string();
    assert!(
        e.contains("scenario[0].expect.all_images") && e.contains("s.toml:14:"),
        "{e}"
    );
}

#[test]
fn a_target_no_scenario_lists_is_refused() {
    let text = GOOD.replacen(
        "name = \"redirect\"",
        "name = \"redirect\"\ntargets = [\"c\"]",
        1,
    ) + "[[target]]\nname = \"d\"\nlanguage = \"C\"\ndir = \"x\"\nstart = \"{port}\"\n";
    let e = Suite::parse(&text, "s.toml").unwrap_err().to_string();
    assert_eq!(
        e,
        "s.toml:24: key `target[1].name`: \"d\" runs no scenario: each [[scenario]] lists its targets, and none lists \"d\""
    );
}

#[test]
fn a_target_excluded_from_every_quick_level_is_refused() {
    let text = GOOD
        .replacen("[plan]", "[quick]\nlevels = [10]\n[plan]", 1)
        .replacen(
            "start = \"{out}/server {port} {images}\"",
            "start = \"{out}/server {port} {images}\"\nexcluded_levels = { c10 = \"too slow\" }",
            1,
        );
    let e = Suite::parse(&text, "s.toml").unwrap_err().to_string();
    assert_eq!(
        e,
        "s.toml:24: key `target[0].excluded_levels`: it leaves no ordinary level of [quick] to measure, so a quick run would not measure this target: keep one of c10"
    );
    // Excluding a level the quick run does not have is fine.
    let ok = text.replace("c10 = ", "ab = ");
    let s = Suite::parse(&ok, "s.toml").unwrap();
    assert_eq!(s.targets[0].excluded_levels["ab"], "too slow");
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Syntax,
    Document,
    Key,
}

fn kind(e: &SuiteError) -> Kind {
    match e {
        SuiteError::Syntax { .. } => Kind::Syntax,
        SuiteError::Document { .. } => Kind::Document,
        SuiteError::Key { .. } => Kind::Key,
        SuiteError::UnknownTarget { .. } => panic!("not a parse error: {e}"),
    }
}

/// Every kind of mistake, its variant and its whole line, as the single-string error
/// of before the variants wrote them.
#[test]
fn each_mistake_has_its_kind_and_exact_line() {
    use Kind::*;
    let cases: &[(&str, &str, Kind, &str)] = &[
        ("name = \"t\"", "name = ", Syntax, "s.toml:2: string values must be quoted, expected literal string"),
        ("name = \"t\"", "name = \"t\"\n[plan", Syntax, "s.toml:3: unclosed table, expected `]`"),
        ("images = 5", "images = 5\nimages = 6", Syntax, "s.toml:4: duplicate key"),
        ("duration = \"1s\"", "duration = \"1x\"", Key, "s.toml:7: key `plan.duration`: invalid duration unit \"x\" in \"1x\": use ms, s, m or h"),
        ("duration = \"1s\"", "duration = 5", Key, "s.toml:7: key `plan.duration`: invalid type: integer `5`, expected a string"),
        ("build = \"cc", "biuld = \"cc", Key, "s.toml:20: key `target[0].biuld`: unknown field `biuld`, expected one of `name`, `language`, `dir`, `requires`, `install`, `build`, `start`, `env`, `artifact`, `ready`, `ready_timeout`, `inputs`, `warmup`, `params`, `levels`, `excluded_levels`, `use`"),
        ("status = 302", "status = \"302\"", Key, "s.toml:12: key `scenario[0].expect.status`: invalid type: string \"302\", expected u16"),
        ("(\\d+)\\.png$'", "(\\d+\\.png$'", Key, "s.toml:13: key `scenario[0].expect.headers.Location`: invalid pattern \"^https://avatar\\\\.example/Renard-(\\\\d+\\\\.png$\": regex parse error: ^https://avatar\\.example/Renard-(\\d+\\.png$ ^ error: unclosed group"),
        ("{out}/server {port} {images}", "{out}/server {prot} {images}", Key, "s.toml:21: key `target[0].start`: unknown placeholder {prot} in \"{out}/server {prot} {images}\": use {port}, {images}, {template}, {out}, {dir}, or {param.NAME} for a parameter"),
        ("{out}/server {port} {images}", "{out}/server {images}", Key, "s.toml:21: key `target[0].start`: \"{out}/server {images}\" has no {port}: the target must listen where foxbench says"),
        ("{out}/server {port} {images}", " ", Key, "s.toml:21: key `target[0].start`: empty command"),
        ("connections = 10, requests", "connections = 0, requests", Key, "s.toml:6: key `plan.levels[1]`: connections must be at least 1"),
        ("connections = 10, requests = 1000", "connections = 10, requests = 0", Key, "s.toml:6: key `plan.levels[1]`: requests must be at least 1"),
        ("keepalive = false }", "keepalive = false, repeats = 0 }", Key, "s.toml:6: key `plan.levels[1]`: repeats must be at least 1"),
        ("keepalive = false }", "keepalive = false, colour = 1 }", Key, "s.toml:6: key `plan.levels[1]`: unknown field `colour`, expected one of `name`, `connections`, `requests`, `max_duration`, `keepalive`, `repeats`, `tls_resume`, `capacity`, `window`, `start_rate`, `rate`, `http2`, `http3`, `streams`"),
        ("{ name = \"ab\", connections = 10,", "{ name = \"ab\",", Key, "s.toml:6: key `plan.levels[1]`: missing field `connections`"),
        ("levels = [10,", "levels = [0,", Key, "s.toml:6: key `plan.levels[0]`: 0 connections: use 1 to 1000000"),
        ("levels = [10,", "levels = [\"x\",", Key, "s.toml:6: key `plan.levels[0]`: invalid type: string \"x\", expected a number of connections, or a table like { name = \"ab\", connections = 10, requests = 100000, keepalive = false }"),
        ("levels = [10, { name = \"ab\", connections = 10, requests = 1000, keepalive = false }]", "levels = []", Key, "s.toml:1: key `plan.levels`: no levels: give at least one, e.g. [10, 100]"),
        ("levels = [10,", "levels = [10, 10,", Key, "s.toml:1: key `plan.levels`: level \"c10\" appears twice: give one a name"),
        ("duration = \"1s\"", "duration = \"1s\"\nrepeats = 0", Key, "s.toml:1: key `plan.repeats`: must be at least 1"),
        ("duration = \"1s\"", "duration = \"1s\"\nclient_cpus = \"3-1\"", Key, "s.toml:8: key `plan.client_cpus`: invalid CPU list \"3-1\": expected e.g. \"0\", \"0-1\", \"0,2\" or \"auto\""),
        ("duration = \"1s\"", "duration = \"1s\"\nsmaple = 1", Key, "s.toml:8: key `plan.smaple`: unknown field `smaple`, expected one of `levels`, `duration`, `repeats`, `warmup`, `warmup_slice`, `timeout`, `sample_interval`, `stop_grace`, `client_cpus`, `server_cpus`, `service_cpus`, `build_timeout`"),
        ("name = \"redirect\"", "name = \"redirect\"\npipeline = 0", Key, "s.toml:11: key `scenario[0].pipeline`: 0: use 1 to 1024"),
        ("name = \"redirect\"", "name = \"redirect\"\npipeline = 2000", Key, "s.toml:11: key `scenario[0].pipeline`: 2000: use 1 to 1024"),
        ("name = \"redirect\"", "name = \"redirect\"\npath = \"x\"", Key, "s.toml:11: key `scenario[0].path`: \"x\" must start with /"),
        ("name = \"redirect\"", "name = \"redirect\"\nmethod = \"get\"", Key, "s.toml:11: key `scenario[0].method`: \"get\" is not an HTTP method like GET"),
        ("status = 302", "status = 99", Key, "s.toml:12: key `scenario[0].expect.status`: 99 is not an HTTP status"),
        ("all_images = true", "all_images = true\n[scenario.expect.x]", Key, "s.toml:15: key `scenario[0].expect.x`: unknown field `x`, expected one of `status`, `headers`, `body`, `all_images`, `body_xml_root`, `body_contains`"),
        ("(\\d+)", "\\d+", Key, "s.toml:14: key `scenario[0].expect.all_images`: needs a Location pattern in expect.headers whose first group captures the image number, e.g. '^https://avatar\\.example/Renard-(\\d+)\\.png$'"),
        ("dir = \"targets/c-epoll\"", "dir = \"../etc\"", Key, "s.toml:19: key `target[0].dir`: \"../etc\": give a path inside the suite's root, like targets/c"),
        ("dir = \"targets/c-epoll\"", "dir = \"/etc\"", Key, "s.toml:19: key `target[0].dir`: \"/etc\": give a path inside the suite's root, like targets/c"),
        ("dir = \"targets/c-epoll\"", "dir = \"\"", Key, "s.toml:19: key `target[0].dir`: \"\": give a path inside the suite's root, like targets/c"),
        ("images = 5", "images = 0", Key, "s.toml:1: key `images`: 0 images: use 1 to 65535"),
        ("images = 5", "images = 5\ntemplate = \"x\"", Key, "s.toml:1: key `template`: \"x\" has no {n} for the image number"),
        ("images = 5", "images = 5\ncolour = 1", Key, "s.toml:4: key `colour`: unknown field `colour`, expected one of `name`, `images`, `template`, `plan`, `quick`, `scenario`, `target`, `service`"),
        ("name = \"t\"", "nom = \"t\"", Key, "s.toml:2: key `nom`: unknown field `nom`, expected one of `name`, `images`, `template`, `plan`, `quick`, `scenario`, `target`, `service`"),
        ("name = \"c\"", "name = \"c d\"", Key, "s.toml:17: key `target[0].name`: \"c d\": use letters, digits, '-', '_' or '.'"),
        ("build = \"cc -o {out}/server server.c\"", "build = \"cc -o {out}/server server.c {port}\"", Key, "s.toml:20: key `target[0].build`: {port} is only known at start"),
        ("start = \"{out}/server {port} {images}\"", "start = \"{out}/server {port} {images}\"\n[[target]]\nname = \"c\"\nlanguage = \"C\"\ndir = \"x\"\nstart = \"{port}\"", Key, "s.toml:23: key `target[1].name`: target \"c\" is defined twice"),
        ("[[scenario]]\nname = \"redirect\"", "[[scenario]]\nname = \"redirect\"\n[scenario.expect]\nstatus = 200\n[[scenario]]\nname = \"redirect\"", Key, "s.toml:14: key `scenario[1].name`: scenario \"redirect\" is defined twice"),
        ("start = \"{out}/server {port} {images}\"", "start = \"{out}/server {port} {images}\"\nready = \"udp\"", Key, "s.toml:22: key `target[0].ready`: unknown variant `udp`, expected `tcp` or `http`"),
        ("start = \"{out}/server {port} {images}\"", "start = \"{out}/server {port} {images}\"\nready_timeout = \"soon\"", Key, "s.toml:22: key `target[0].ready_timeout`: invalid duration \"soon\": expected e.g. 10s, 500ms, 2m"),
        ("[plan]", "[quick]\nrepeats = 0\n[plan]", Key, "s.toml:1: key `quick.repeats`: must be at least 1"),
        ("[plan]", "[quick]\nlevels = [5, 5]\n[plan]", Key, "s.toml:1: key `quick.levels`: level \"c5\" appears twice: give one a name"),
        ("[plan]", "[quick]\nsmaple = 1\n[plan]", Key, "s.toml:6: key `quick.smaple`: unknown field `smaple`, expected one of `levels`, `duration`, `repeats`, `warmup`, `warmup_slice`"),
        ("[plan]", "scenario = []\ntarget = []\n[plan]", Syntax, "s.toml:11: duplicate key"),
        // Parameters: the key and line of every mistake.
        ("{out}/server {port} {images}", "{out}/server {port} {param.heap}", Key, "s.toml:21: key `target[0].start`: unknown {param.heap} in \"{out}/server {port} {param.heap}\": this target has no params: declare them, e.g. params = { heap = [\"a\", \"b\"] }"),
        ("start = \"{out}/server {port} {images}\"", "start = \"{out}/server {port} {param.heep}\"\nparams = { heap = [\"8m\"] }", Key, "s.toml:21: key `target[0].start`: unknown {param.heep} in \"{out}/server {port} {param.heep}\": this target's params are heap"),
        ("start = \"{out}/server {port} {images}\"", "start = \"{out}/server {port} {param.heap}\"\nparams = { heap = [\"8m\"] }\nenv = { X = \"{param.hep}\" }", Key, "s.toml:23: key `target[0].env.X`: unknown {param.hep} in \"{param.hep}\": this target's params are heap"),
        ("build = \"cc -o {out}/server server.c\"", "build = \"cc -D{param.opt} -o {out}/server server.c\"\nparams = { op = [\"x\"] }", Key, "s.toml:20: key `target[0].build`: unknown {param.opt} in \"cc -D{param.opt} -o {out}/server server.c\": this target's params are op"),
        ("start = \"{out}/server {port} {images}\"", "start = \"{out}/server {port} {param.heap}\"\nparams = { heap = [] }", Key, "s.toml:22: key `target[0].params.heap`: no values: give at least one, e.g. heap = [\"a\", \"b\"]"),
        ("start = \"{out}/server {port} {images}\"", "start = \"{out}/server {port} {param.heap}\"\nparams = { heap = [\"8m\", \"16m\", \"8m\"] }", Key, "s.toml:22: key `target[0].params`: row \"c[heap=8m]\" is defined twice"),
        ("start = \"{out}/server {port} {images}\"", "start = \"{out}/server {port} {param.heap}\"\nparams = { heap = [\"8m\"], gc = [\"G1\"] }", Key, "s.toml:22: key `target[0].params`: gc is never used: put {param.gc} in start, build or env"),
        ("start = \"{out}/server {port} {images}\"", "start = \"{out}/server {port} {param.a}{param.b}{param.c}\"\nparams = { a = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], b = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], c = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] }", Key, "s.toml:22: key `target[0].params`: 1000 rows (the cross product of 10 × 10 × 10 values) is more than 500: give fewer values, or list the rows wanted under one key"),
        ("start = \"{out}/server {port} {images}\"", "start = \"{out}/server {port} {images}\"\nparams = {}", Key, "s.toml:22: key `target[0].params`: no parameters: give e.g. params = { heap = [\"8m\", \"16m\"] }, or leave the key out"),
        ("start = \"{out}/server {port} {images}\"", "start = \"{out}/server {port} {param.heap}\"\nparams = { heap = \"8m\" }", Key, "s.toml:22: key `target[0].params.heap`: invalid type: string \"8m\", expected a list of values, e.g. [\"8m\", \"16m\"] or [2, 150]"),
        // Levels, targets and bodies of scenarios.
        ("start = \"{out}/server {port} {images}\"", "start = \"{out}/server {port} {images}\"\nlevels = [\"c7\"]", Key, "s.toml:22: key `target[0].levels`: \"c7\" is not a level of [plan]: use c10, ab"),
        ("start = \"{out}/server {port} {images}\"", "start = \"{out}/server {port} {images}\"\nlevels = []", Key, "s.toml:22: key `target[0].levels`: no levels: name at least one of c10, ab, or leave the key out for all"),
        ("start = \"{out}/server {port} {images}\"", "start = \"{out}/server {port} {images}\"\nexcluded_levels = { c7 = \"why\" }", Key, "s.toml:22: key `target[0].excluded_levels`: \"c7\" is not a level of [plan]: use c10, ab"),
        ("start = \"{out}/server {port} {images}\"", "start = \"{out}/server {port} {images}\"\nexcluded_levels = { ab = \" \" }", Key, "s.toml:22: key `target[0].excluded_levels`: \"ab\" has no reason: say why it is not measured, as the report will"),
        ("start = \"{out}/server {port} {images}\"", "start = \"{out}/server {port} {images}\"\nexcluded_levels = { ab = 5 }", Key, "s.toml:22: key `target[0].excluded_levels.ab`: invalid type: integer `5`, expected a string"),
        ("name = \"redirect\"", "name = \"redirect\"\ntargets = [\"nope\"]", Key, "s.toml:11: key `scenario[0].targets`: no target named \"nope\": the suite has c"),
        ("name = \"redirect\"", "name = \"redirect\"\ntargets = []", Key, "s.toml:11: key `scenario[0].targets`: no targets: leave the key out for every target"),
        ("name = \"redirect\"", "name = \"redirect\"\nlevels = [\"c100\"]", Key, "s.toml:11: key `scenario[0].levels`: \"c100\" is not a level of [plan]: use c10, ab"),
        ("[plan]", "[quick]\nlevels = [10]\n[[scenario]]\nname = \"s\"\nlevels = [\"ab\"]\n[scenario.expect]\nstatus = 200\n[plan]", Key, "s.toml:9: key `scenario[0].levels`: none of [\"ab\"] is a level of [quick], so a quick run would not measure it: add one of c10"),
        ("all_images = true", "all_images = true\nbody_contains = \"#{random.1}\"", Key, "s.toml:15: key `scenario[0].expect.body_contains`: {random.1} but the path \"/\" and headers have 0 random parts"),
        ("all_images = true", "all_images = true\nbody_contains = \"#{random.x}\"", Key, "s.toml:15: key `scenario[0].expect.body_contains`: \"#{random.x}\": write {random.N} with N from 1, the Nth random part of the path"),
        ("all_images = true", "all_images = true\nbody_xml_root = \"\"", Key, "s.toml:15: key `scenario[0].expect.body_xml_root`: \"\" is not an element name, e.g. \"svg\""),
        // Services, `use` and their placeholders.
        ("[[target]]", "[[service]]\nname = \"hello\"\ndir = \"h\"\nstart = \"h {port}\"\n[[service]]\nname = \"hello\"\ndir = \"h\"\nstart = \"h {port}\"\n[[target]]", Key, "s.toml:21: key `service[1].name`: service \"hello\" is defined twice"),
        // Regression (review of issue 10): a service and a target of one name shared a log file.
        ("[[target]]", "[[service]]\nname = \"c\"\ndir = \"h\"\nstart = \"h {port}\"\n[[target]]", Key, "s.toml:21: key `target[0].name`: \"c\" is a service's name too: rename one of them"),
        // Regression (review of issue 10): an unclosed service placeholder reached the command literally.
        ("start = \"{out}/server {port} {images}\"", "start = \"{out}/server {port} {service.db.url\"", Key, "s.toml:21: key `target[0].start`: unclosed placeholder {service.db.url in \"{out}/server {port} {service.db.url\": close it with }"),
        ("[[target]]", "[[service]]\nname = \"hello\"\ndir = \"h\"\nstart = \"h\"\n[[target]]", Key, "s.toml:19: key `service[0].start`: \"h\" has no {port}: the service must listen where foxbench says"),
        ("[[target]]", "[[service]]\nname = \"hello\"\ndir = \"h\"\nstart = \"h {port}\"\ncolour = 1\n[[target]]", Key, "s.toml:20: key `service[0].colour`: unknown field `colour`, expected one of `name`, `dir`, `requires`, `install`, `build`, `start`, `env`, `artifact`, `ready`, `ready_timeout`, `inputs`, `verify`, `counter`, `active`"),
        ("[[target]]", "[[service]]\nname = \"hello\"\ndir = \"h\"\nstart = \"h {port} {service.db.url}\"\n[[target]]", Key, "s.toml:19: key `service[0].start`: \"h {port} {service.db.url}\": a service's commands take no {service.*} or {param.*} placeholders"),
        ("[[target]]", "[[service]]\nname = \"hello\"\ndir = \"h\"\nstart = \"h {port}\"\nverify = { path = \"x\" }\n[[target]]", Key, "s.toml:20: key `service[0].verify`: path \"x\" must start with /"),
        ("[[target]]", "[[service]]\nname = \"hello\"\ndir = \"h\"\nstart = \"h {port}\"\ncounter = { field = \"n\" }\n[[target]]", Key, "s.toml:20: key `service[0].counter`: missing field `path`"),
        ("{out}/server {port} {images}", "{out}/server {port} {service.hello.url}", Key, "s.toml:21: key `target[0].start`: unknown service in {service.hello.url} in \"{out}/server {port} {service.hello.url}\": the suite has no [[service]]"),
        ("duration = \"1s\"", "duration = \"1s\"\nservice_cpus = \"x\"", Key, "s.toml:8: key `plan.service_cpus`: invalid CPU list \"x\": expected e.g. \"0\", \"0-1\", \"0,2\" or \"auto\""),
        // Request headers and their echoes.
        ("name = \"redirect\"", "name = \"redirect\"\nheaders = { X-Id = \"{hex:99}\" }", Key, "s.toml:11: key `scenario[0].headers.X-Id`: {hex:99}: the length must be 1 to 64 at column 1 of \"{hex:99}\": random parts are {hex:N} (N = 1-64) or {int:A-B} (0 <= A <= B); write {{ and }} for literal braces"),
        ("name = \"redirect\"", "name = \"redirect\"\nheaders = { \"X Id\" = \"1\" }", Key, "s.toml:11: key `scenario[0].headers.X Id`: \"X Id\": \"1\" is not a header: a token name, a value on one line"),
        ("headers = { Location", "headers = { X-Id = '^{random.1}$', Location", Key, "s.toml:13: key `scenario[0].expect.headers.X-Id`: {random.1} but the request has 0 random parts (the path's, then its headers')"),
        ("headers = { Location", "headers = { X-Id = '^({random.1}$', Location", Key, "s.toml:13: key `scenario[0].expect.headers.X-Id`: invalid pattern \"^(0$\": regex parse error: ^(0$ ^ error: unclosed group"),
        // Capacity levels: the objective parsed at load, the search checked against its budget.
        ("levels = [10,", "levels = [10, { name = \"cap\", connections = 5, capacity = \"p99<10ms\", rate = 100 },", Key, "s.toml:6: key `plan.levels[1]`: a capacity level searches for its own rates: drop rate, or capacity"),
        ("levels = [10,", "levels = [10, { name = \"cap\", connections = 5, capacity = \"p99<10\" },", Key, "s.toml:6: key `plan.levels[1]`: capacity: \"p99<10\": the threshold \"10\" needs a time unit (us, ms or s), e.g. p99<5ms"),
        ("levels = [10,", "levels = [10, { name = \"cap\", connections = 5, capacity = \"latency<10ms\" },", Key, "s.toml:6: key `plan.levels[1]`: capacity: \"latency<10ms\": unknown metric \"latency\": use p<N> (p50, p99, p99.9; p99[service] names the service-time histogram), errors, rps"),
        ("levels = [10,", "levels = [10, { name = \"cap\", connections = 5, capacity = \"p99[service]<10ms\" },", Key, "s.toml:6: key `plan.levels[1]`: capacity: \"p99[service]<10ms\": the shootout judges the corrected latency only: drop [service]"),
        ("levels = [10,", "levels = [10, { name = \"cap\", connections = 5, capacity = 5 },", Key, "s.toml:6: key `plan.levels[1].capacity`: invalid type: integer `5`, expected a string"),
        ("levels = [10,", "levels = [10, { name = \"cap\", connections = 5, capacity = \"p99<10ms\", requests = 10 },", Key, "s.toml:6: key `plan.levels[1]`: a capacity level runs timed windows of a search: drop requests and repeats"),
        ("levels = [10,", "levels = [10, { name = \"cap\", connections = 5, capacity = \"p99<10ms\", repeats = 2 },", Key, "s.toml:6: key `plan.levels[1]`: a capacity level runs timed windows of a search: drop requests and repeats"),
        ("levels = [10,", "levels = [10, { name = \"cap\", connections = 5, capacity = \"p99<10ms\", max_duration = \"1s\" },", Key, "s.toml:6: key `plan.levels[1]`: max_duration 1s does not hold one window of 1s (and 250ms to set it up): raise max_duration or shorten window"),
        ("levels = [10,", "levels = [10, { name = \"cap\", connections = 5, capacity = \"p99<10ms\", window = \"0s\" },", Key, "s.toml:6: key `plan.levels[1].window`: invalid duration \"0s\": must be positive"),
        ("levels = [10,", "levels = [10, { name = \"cap\", connections = 5, capacity = \"p99<10ms\", window = \"2s\", max_duration = \"2s\" },", Key, "s.toml:6: key `plan.levels[1]`: max_duration 2s does not hold one window of 2s (and 250ms to set it up): raise max_duration or shorten window"),
        ("levels = [10,", "levels = [10, { name = \"cap\", connections = 5, capacity = \"p99<10ms\", start_rate = 0 },", Key, "s.toml:6: key `plan.levels[1]`: start_rate 0 is not a rate: give a positive number of requests per second"),
        ("levels = [10,", "levels = [10, { name = \"cap\", connections = 5, capacity = \"p99<10ms\", start_rate = -5.0 },", Key, "s.toml:6: key `plan.levels[1]`: start_rate -5 is not a rate: give a positive number of requests per second"),
        ("levels = [10,", "levels = [10, { name = \"cap\", connections = 5, window = \"1s\" },", Key, "s.toml:6: key `plan.levels[1]`: window and start_rate belong to a capacity level: add capacity = \"p99<10ms\" or drop them"),
        ("levels = [10,", "levels = [10, { name = \"cap\", connections = 5, start_rate = 100.0 },", Key, "s.toml:6: key `plan.levels[1]`: window and start_rate belong to a capacity level: add capacity = \"p99<10ms\" or drop them"),
        ("start = \"{out}/server {port} {images}\"", "start = \"{out}/server {port} {images}\"\nlevels = [\"cap\"]", Key, "s.toml:22: key `target[0].levels`: \"cap\" is not a level of [plan]: use c10, ab"),
        // TLS scenarios.
        ("name = \"redirect\"", "name = \"redirect\"\nscheme = \"tls\"", Key, "s.toml:11: key `scenario[0].scheme`: \"tls\": use \"http\" (the default) or \"https\""),
        ("name = \"redirect\"", "name = \"redirect\"\ninsecure = true", Key, "s.toml:11: key `scenario[0].insecure`: only for TLS: add scheme = \"https\""),
        ("name = \"redirect\"", "name = \"redirect\"\nscheme = \"https\"\ninsecure = true\ncacert = \"{out}/c.pem\"", Key, "s.toml:13: key `scenario[0].cacert`: insecure = true checks no certificate, so a cacert has no use: keep one of the two"),
        ("name = \"redirect\"", "name = \"redirect\"\nscheme = \"https\"\ncacert = \"{port}/{outt}/c.pem\"", Key, "s.toml:12: key `scenario[0].cacert`: unknown placeholder {outt} in \"{port}/{outt}/c.pem\": use {port}, {images}, {template}, {out}, {dir}, or {param.NAME} for a parameter"),
        ("name = \"redirect\"", "name = \"redirect\"\npath = \"/{hex:99}.svg\"", Key, "s.toml:11: key `scenario[0].path`: {hex:99}: the length must be 1 to 64 at column 2 of \"/{hex:99}.svg\": random parts are {hex:N} (N = 1-64) or {int:A-B} (0 <= A <= B); write {{ and }} for literal braces"),
    ];
    for (from, to, want_kind, want) in cases {
        assert!(GOOD.contains(from), "{from}");
        let e = Suite::parse(&GOOD.replacen(from, to, 1), "s.toml").unwrap_err();
        assert_eq!(
            (kind(&e), e.to_string().as_str()),
            (*want_kind, *want),
            "{to:?}"
        );
    }
    let whole: &[(&str, Kind, &str)] = &[
        ("", Document, "f.toml:1: missing field `name`"),
        (
            "name = \"x\"",
            Document,
            "f.toml:1: missing field `scenario`",
        ),
        (
            "name = \"x\"\nscenario = []\ntarget = []",
            Key,
            "f.toml:1: key `scenario`: no [[scenario]]: add one",
        ),
        (
            "name = \"x\"\n[[scenario]]\nname = \"s\"\n[scenario.expect]\nstatus = 200\n",
            Document,
            "f.toml:1: missing field `target`",
        ),
    ];
    for (text, want_kind, want) in whole {
        let e = Suite::parse(text, "f.toml").unwrap_err();
        assert_eq!(
            (kind(&e), e.to_string().as_str()),
            (*want_kind, *want),
            "{text:?}"
        );
    }
}

/// GOOD with a `hello` service before its target: the mistakes a target makes with
/// services, each named by its line and key.
#[test]
fn service_mistakes_name_the_line_and_key() {
    let base = GOOD.replacen(
        "[[target]]",
        "[[service]]\nname = \"hello\"\ndir = \"h\"\nstart = \"h {port}\"\n[[target]]",
        1,
    );
    let start = "start = \"{out}/server {port} {images}\"";
    let cases: &[(&str, &str, &str)] = &[
        (start, "start = \"{out}/server {port}\"\nuse = [\"nope\"]", "s.toml:26: key `target[0].use`: no service named \"nope\": the suite's services are hello"),
        (start, "start = \"{out}/server {port}\"\nuse = [\"hello\", \"hello\"]", "s.toml:26: key `target[0].use`: \"hello\" is listed twice"),
        (start, "start = \"{out}/server {port} {service.helo.url}\"", "s.toml:25: key `target[0].start`: unknown service in {service.helo.url} in \"{out}/server {port} {service.helo.url}\": the suite's services are hello"),
        (start, "start = \"{out}/server {port} {service.hello.prot}\"", "s.toml:25: key `target[0].start`: {service.hello.prot} in \"{out}/server {port} {service.hello.prot}\": a service placeholder is {service.hello.port}, .host or .url"),
        (start, "start = \"{out}/server {port} {service.hello.url}\"\nuse = []", "s.toml:25: key `target[0].start`: {service.hello.url} but the target's use leaves out \"hello\": add it, e.g. use = [\"hello\"]"),
        ("build = \"cc -o {out}/server server.c\"", "build = \"cc -DP={service.hello.port} -o {out}/server server.c\"", "s.toml:24: key `target[0].build`: {service.hello.port}: a service's port is only known at start, so it may appear only in start"),
        (start, "start = \"{out}/server {port}\"\nenv = { B = \"{service.hello.url}\" }", "s.toml:26: key `target[0].env.B`: {service.hello.url}: a service's port is only known at start, so it may appear only in start"),
    ];
    for (from, to, want) in cases {
        assert!(base.contains(from), "{from}");
        let e = Suite::parse(&base.replacen(from, to, 1), "s.toml").unwrap_err();
        assert_eq!(
            (kind(&e), e.to_string().as_str()),
            (Kind::Key, *want),
            "{to:?}"
        );
    }
    // Without `use`, a target uses every service; with params, each row keeps its use.
    let s = Suite::parse(
        &base.replacen(
            start,
            "start = \"{out}/server {port} {service.hello.url} {param.n}\"\nparams = { n = [1, 2] }",
            1,
        ),
        "s.toml",
    )
    .unwrap();
    assert_eq!(s.services.len(), 1);
    assert_eq!(s.targets.len(), 2);
    for t in &s.targets {
        assert_eq!(t.uses, ["hello"]);
        assert!(
            t.start.ends_with("{service.hello.url} ") || t.start.contains("{service.hello.url}")
        );
    }
    assert_eq!(
        s.targets[1].start,
        "{out}/server {port} {service.hello.url} 2"
    );
}

#[test]
fn line_of_key_finds_the_nth_table_or_its_header() {
    let text = "[[t]]\na = 1\n[[t]]\nb = 2\n";
    let cases = [
        ("a", 0, 2),
        ("b", 0, 1),
        ("b", 1, 4),
        ("a", 1, 3),
        ("a", 2, 1),
    ];
    for (key, n, line) in cases {
        assert_eq!(
            line_of_key(text, "[[t]]", n, key),
            line,
            "{key} in table {n}"
        );
    }
}

/// GOOD with its `ab` level replaced by `level` and `extra` written after the scenario's
/// name.
fn with_h2(level: &str, extra: &str) -> String {
    GOOD.replace(
        "{ name = \"ab\", connections = 10, requests = 1000, keepalive = false }",
        level,
    )
    .replace(
        "name = \"redirect\"",
        &format!("name = \"redirect\"{extra}"),
    )
}

/// Each HTTP/2 mistake in a suite: one line naming the file, the line and the key, and the
/// level at fault, as `foxbench load` refuses the same flags.
#[test]
fn http2_mistakes_name_the_level_the_key_and_the_line() {
    let h2 = "{ name = \"h2\", connections = 10, http2 = true, streams = 10 }";
    let cases: &[(&str, &str, &str)] = &[
        (
            "{ name = \"s4\", connections = 10, streams = 4 }",
            "",
            "s.toml:6: key `plan.levels[1]`: streams belong to an HTTP/2 or HTTP/3 level: add http2 = true or http3 = true, or drop streams (HTTP/1.1 pipelines with the scenario's pipeline)",
        ),
        (
            "{ name = \"h\", connections = 10, http2 = true, streams = 0 }",
            "",
            "s.toml:6: key `plan.levels[1]`: streams = 0: use 1 to 1024",
        ),
        (
            "{ name = \"h\", connections = 10, http2 = true, streams = 2000 }",
            "",
            "s.toml:6: key `plan.levels[1]`: streams = 2000: use 1 to 1024",
        ),
        (
            "{ name = \"h\", connections = 10, http2 = true, streams = 10, keepalive = false }",
            "",
            "s.toml:6: key `plan.levels[1]`: streams = 10 with keepalive = false: a new connection per request carries one stream; set streams = 1 or drop keepalive = false",
        ),
        (
            "{ name = \"h\", connections = 10, http2 = 1 }",
            "",
            "s.toml:6: key `plan.levels[1].http2`: invalid type: integer `1`, expected a boolean",
        ),
        (
            h2,
            "",
            "s.toml:6: key `plan.levels[1]`: HTTP/2 level \"h2\" runs for no scenario: name it in the levels of the scenarios whose targets speak HTTP/2, or set http2 = true on one",
        ),
        (
            h2,
            "\nhttp2 = true\npipeline = 4",
            "s.toml:12: key `scenario[0].pipeline`: pipeline = 4 at HTTP/2 level \"c10\": pipelining has no meaning under HTTP/2, where streams multiplex requests; drop pipeline, or set the level's streams",
        ),
        (
            h2,
            "\nlevels = [\"c10\", \"h2\"]\npipeline = 4",
            "s.toml:12: key `scenario[0].pipeline`: pipeline = 4 at HTTP/2 level \"h2\": pipelining has no meaning under HTTP/2, where streams multiplex requests; drop pipeline, or set the level's streams",
        ),
        (
            h2,
            "\nlevels = [\"c10\", \"h2\"]\nkeepalive = false",
            "s.toml:12: key `scenario[0].keepalive`: keepalive = false at HTTP/2 level \"h2\" with streams = 10: a new connection per request carries one stream; drop keepalive = false, or set the level's streams = 1",
        ),
        (
            "10",
            "\nhttp2 = \"yes\"",
            "s.toml:11: key `scenario[0].http2`: invalid type: string \"yes\", expected a boolean",
        ),
    ];
    for (level, extra, want) in cases {
        let text = with_h2(level, extra);
        let e = Suite::parse(&text, "s.toml").expect_err(want).to_string();
        assert_eq!(&e, want, "{level} {extra}");
    }
    // Pipelining is refused only where HTTP/2 runs: an HTTP/1.1 scenario beside an h2 level
    // it does not name may pipeline.
    let fine = with_h2(h2, "\npipeline = 4").replace(
        "[[target]]",
        "[[scenario]]\nname = \"h2s\"\nlevels = [\"h2\"]\n[scenario.expect]\nstatus = 302\n\n[[target]]",
    );
    Suite::parse(&fine, "s.toml").unwrap();
}

/// Each HTTP/3 mistake in a suite: one line naming the file, the line, the key and the
/// level or scenario at fault, with the fix.
#[test]
fn http3_mistakes_name_the_level_the_key_and_the_line() {
    let h3 = "{ name = \"h3\", connections = 10, http3 = true, streams = 10 }";
    let https = "\nscheme = \"https\"\ninsecure = true";
    let cases: &[(&str, String, &str)] = &[
        (
            "{ name = \"both\", connections = 10, http2 = true, http3 = true }",
            String::new(),
            "s.toml:6: key `plan.levels[1]`: level \"both\" sets both http2 and http3: a level speaks one protocol; drop one, and add a level for the other",
        ),
        (
            h3,
            String::new(),
            "s.toml:6: key `plan.levels[1]`: HTTP/3 level \"h3\" runs for no scenario: name it in the levels of the scenarios whose targets speak HTTP/3, or set http3 = true on one",
        ),
        (
            h3,
            "\nhttp3 = true".into(),
            "s.toml:11: key `scenario[0].http3`: http3 = true without TLS: HTTP/3 runs over QUIC, which always runs TLS: set scheme = \"https\" (with cacert or insecure), or drop http3",
        ),
        (
            h3,
            "\nlevels = [\"c10\", \"h3\"]".into(),
            "s.toml:11: key `scenario[0].levels`: HTTP/3 level \"h3\" in a scenario without TLS: HTTP/3 runs over QUIC, which always runs TLS: set scheme = \"https\" (with cacert or insecure), or drop the level from levels",
        ),
        (
            h3,
            format!("{https}\nhttp2 = true\nhttp3 = true"),
            "s.toml:14: key `scenario[0].http3`: http2 and http3 both set: a scenario speaks one protocol at every level; drop one, and name levels of the other in levels",
        ),
        (
            h3,
            format!("{https}\nlevels = [\"c10\", \"h3\"]\npipeline = 4"),
            "s.toml:14: key `scenario[0].pipeline`: pipeline = 4 at HTTP/3 level \"h3\": pipelining has no meaning under HTTP/3, where streams multiplex requests; drop pipeline, or set the level's streams",
        ),
    ];
    for (level, extra, want) in cases {
        let text = with_h2(level, extra);
        let e = Suite::parse(&text, "s.toml").expect_err(want).to_string();
        assert_eq!(&e, want, "{level} {extra}");
    }
    // Over TLS the same scenario and level are fine.
    let fine = with_h2(h3, &format!("{https}\nlevels = [\"c10\", \"h3\"]"));
    Suite::parse(&fine, "s.toml").unwrap();
}
