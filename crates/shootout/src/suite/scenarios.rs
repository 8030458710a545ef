//! A suite's `[[scenario]]` tables checked: request, expected answer, targets, levels and
//! TLS, each mistake naming the scenario's key and its line.

use regex::Regex;

use super::raw::{one_line, HeaderPattern, RawScenario};
use super::validate::{line_key, LevelNames, Source};
use super::{
    Echo, Level, Multiplexed, RequestHeader, Scenario, ScenarioTls, SuiteError, TargetSpec,
};

pub(super) fn scenarios(
    raw: Vec<RawScenario>,
    src: &Source,
    levels: &LevelNames,
    targets: &[TargetSpec],
) -> Result<Vec<Scenario>, SuiteError> {
    let mut scenarios: Vec<Scenario> = Vec::new();
    for (i, s) in raw.into_iter().enumerate() {
        // The line is that of the key's last part: `status` is written under [scenario.expect].
        let err = |k: &str, problem: String| {
            src.key(
                src.line("[[scenario]]", i, line_key(k)),
                &format!("scenario[{i}].{k}"),
                problem,
            )
        };
        if scenarios.iter().any(|o| o.name == s.name) {
            return Err(err(
                "name",
                format!("scenario {:?} is defined twice", s.name),
            ));
        }
        if s.pipeline == 0 || s.pipeline > 1024 {
            return Err(err("pipeline", format!("{}: use 1 to 1024", s.pipeline)));
        }
        if !s.path.starts_with('/') {
            return Err(err("path", format!("{:?} must start with /", s.path)));
        }
        // The path as the load engine will take it: random parts only in path and query.
        let template = load::Template::parse(&s.path)
            .map_err(|e| e.to_string())
            .and_then(|_| {
                load::Target::parse(&format!("http://127.0.0.1:1{}", s.path))
                    .map_err(|e| e.to_string())
            })
            .and_then(|t| load::Template::parse(&t.path).map_err(|e| e.to_string()))
            .map_err(|e| err("path", one_line(&e)))?;
        if s.method.is_empty() || !s.method.bytes().all(|b| b.is_ascii_uppercase()) {
            return Err(err(
                "method",
                format!("{:?} is not an HTTP method like GET", s.method),
            ));
        }
        if !(100..=599).contains(&s.expect.status) {
            return Err(err(
                "expect.status",
                format!("{} is not an HTTP status", s.expect.status),
            ));
        }
        let mut headers: Vec<(String, Regex)> = Vec::new();
        let mut header_echoes: Vec<(String, Echo)> = Vec::new();
        for (k, v) in s.expect.headers {
            match v {
                HeaderPattern::Fixed(re) => headers.push((k, re)),
                HeaderPattern::Echo(e) => header_echoes.push((k, e)),
            }
        }
        let mut request_headers = Vec::new();
        for (name, value) in s.headers {
            let template = load::Template::parse(&value)
                .map_err(|e| err(&format!("headers.{name}"), one_line(&e.to_string())))?;
            if load::parse_header(&format!("{name}: {value}")).is_err() {
                return Err(err(
                    &format!("headers.{name}"),
                    format!(
                        "{name:?}: {value:?} is not a header: a token name, a value on one line"
                    ),
                ));
            }
            request_headers.push(RequestHeader {
                name,
                value,
                template,
            });
        }
        if s.expect.all_images {
            let loc = headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("location"));
            if !matches!(loc, Some((_, re)) if re.captures_len() > 1) {
                return Err(err("expect.all_images",
                    "needs a Location pattern in expect.headers whose first group captures the image number, e.g. '^https://avatar\\.example/Renard-(\\d+)\\.png$'".into(),
                ));
            }
        }
        let holes = std::iter::once(&template)
            .chain(request_headers.iter().map(|h| &h.template))
            .flat_map(|t| &t.pieces)
            .filter(|p| matches!(p, load::Piece::Hole(_)))
            .count();
        for (name, e) in &header_echoes {
            if e.parts_needed() > holes {
                return Err(err(
                    &format!("expect.headers.{name}"),
                    format!(
                        "{{random.{}}} but the request has {holes} random part{} (the path's, then its headers')",
                        e.parts_needed(),
                        if holes == 1 { "" } else { "s" }
                    ),
                ));
            }
        }
        let body_contains = s
            .expect
            .body_contains
            .as_deref()
            .map(Echo::parse)
            .transpose()
            .map_err(|m| err("expect.body_contains", m))?;
        if let Some(e) = &body_contains {
            if e.parts_needed() > holes {
                return Err(err(
                    "expect.body_contains",
                    format!(
                        "{{random.{}}} but the path {:?} and headers have {holes} random part{}",
                        e.parts_needed(),
                        s.path,
                        if holes == 1 { "" } else { "s" }
                    ),
                ));
            }
        }
        if let Some(root) = &s.expect.body_xml_root {
            if root.is_empty() || root.contains(char::is_whitespace) {
                return Err(err(
                    "expect.body_xml_root",
                    format!("{root:?} is not an element name, e.g. \"svg\""),
                ));
            }
        }
        if let Some(names) = &s.targets {
            if names.is_empty() {
                return Err(err(
                    "targets",
                    "no targets: leave the key out for every target".into(),
                ));
            }
            if let Some(n) = names
                .iter()
                .find(|n| !targets.iter().any(|t| &t.base == *n))
            {
                let mut have: Vec<&str> = Vec::new();
                for t in targets {
                    if !have.contains(&t.base.as_str()) {
                        have.push(&t.base);
                    }
                }
                return Err(err(
                    "targets",
                    format!("no target named {n:?}: the suite has {}", have.join(", ")),
                ));
            }
        }
        if let Some(names) = &s.levels {
            levels.check(names).map_err(|m| err("levels", m))?;
        }
        let protocol = match (s.http2, s.http3) {
            (true, true) => {
                return Err(err(
                    "http3",
                    "http2 and http3 both set: a scenario speaks one protocol at every level; drop one, and name levels of the other in levels".into(),
                ))
            }
            (true, false) => Some(Multiplexed::Http2),
            (false, true) => Some(Multiplexed::Http3),
            (false, false) => None,
        };
        multiplexed(
            (protocol, s.pipeline, s.keepalive, s.levels.as_deref()),
            levels,
        )
        .map_err(|(k, m)| err(k, m))?;
        let coalesce = match &s.coalesce {
            None => load::Coalesce::Auto,
            Some(text) => load::Coalesce::parse(text).map_err(|m| err("coalesce", m))?,
        };
        coalesce
            .check()
            .map_err(|e| err("coalesce", e.problem().worded(&crate::wording::SuiteKeys)))?;
        let idle = match &s.idle {
            None => load::Idle::Auto,
            Some(text) => load::Idle::parse(text).map_err(|m| err("idle", m))?,
        };
        if idle == load::Idle::Spin && coalesce != load::Coalesce::Auto {
            return Err(err(
                "idle",
                "\"spin\" never sleeps, so the scenario's coalesce has no meaning with it: drop coalesce, or use idle = \"auto\"".into(),
            ));
        }
        let client = (s.cert.map(|c| c.0), s.key.map(|c| c.0));
        let tls = ScenarioTls::read(s.scheme.as_deref(), s.insecure, s.cacert.map(|c| c.0))
            .and_then(|tls| ScenarioTls::with_client(tls, client))
            .map_err(|(key, m)| err(key, m))?;
        if tls.is_none() {
            http3_without_tls(protocol, s.levels.as_deref(), levels).map_err(|(k, m)| err(k, m))?;
        }
        scenarios.push(Scenario {
            name: s.name,
            method: s.method,
            path: s.path,
            template,
            request_headers,
            keepalive: s.keepalive,
            pipeline: s.pipeline,
            status: s.expect.status,
            headers,
            header_echoes,
            body: s.expect.body.map(|p| p.0),
            all_images: s.expect.all_images,
            xml_root: s.expect.body_xml_root,
            body_contains,
            targets: s.targets,
            levels: s.levels,
            tls,
            protocol,
            coalesce,
            idle,
        });
    }
    Ok(scenarios)
}

/// A plain-HTTP scenario that would speak HTTP/3 (`http3 = true`, or an HTTP/3 level in
/// its `levels`): refused, as QUIC always runs TLS. The key at fault, and the problem.
fn http3_without_tls(
    protocol: Option<Multiplexed>,
    names: Option<&[String]>,
    levels: &LevelNames,
) -> Result<(), (&'static str, String)> {
    const FIX: &str = "HTTP/3 runs over QUIC, which always runs TLS: set scheme = \"https\" (with cacert or insecure), or drop";
    if protocol == Some(Multiplexed::Http3) {
        return Err(("http3", format!("http3 = true without TLS: {FIX} http3")));
    }
    let named = |l: &&Level| names.is_some_and(|n| n.contains(&l.name));
    match levels
        .all()
        .filter(named)
        .find(|l| l.protocol.is_some_and(|p| p.version == Multiplexed::Http3))
    {
        Some(l) => Err((
            "levels",
            format!(
                "HTTP/3 level {:?} in a scenario without TLS: {FIX} the level from levels",
                l.name
            ),
        )),
        None => Ok(()),
    }
}

/// A scenario's HTTP/2 and HTTP/3 levels checked against its own keys, as `foxbench load`
/// refuses `--pipeline` under `--http2` or `--http3` and `--streams` above 1 without
/// keep-alive: the key at fault, and the problem naming the level.
/// `scenario` is its protocol, `pipeline`, `keepalive` and `levels`.
fn multiplexed(
    (all, pipeline, keepalive, names): (Option<Multiplexed>, usize, bool, Option<&[String]>),
    levels: &LevelNames,
) -> Result<(), (&'static str, String)> {
    let named = |l: &Level| names.is_some_and(|n| n.contains(&l.name));
    for l in levels.all() {
        let version = match (l.protocol, all) {
            (Some(p), _) if named(l) || all == Some(p.version) => p.version,
            (None, Some(m)) => m,
            _ => continue,
        };
        let name = version.name();
        let streams = l.protocol.map_or(1, |h| h.streams);
        if pipeline > 1 {
            return Err((
                "pipeline",
                format!(
                    "pipeline = {} at {name} level {:?}: pipelining has no meaning under {name}, where streams multiplex requests; drop pipeline, or set the level's streams",
                    pipeline, l.name
                ),
            ));
        }
        if streams > 1 && !l.keepalive.unwrap_or(keepalive) {
            return Err((
                "keepalive",
                format!(
                    "keepalive = false at {name} level {:?} with streams = {streams}: a new connection per request carries one stream; drop keepalive = false, or set the level's streams = 1",
                    l.name
                ),
            ));
        }
    }
    Ok(())
}
