//! The avatar service on tokio + hyper 1.x: every request gets a 302 to one of N fox
//! avatars, `/<rrggbb>.svg` draws crates/avatar's fox in that colour, and `/random.svg`
//! redirects to a random colour.
//!
//! Usage: avatar-hyper PORT N [TEMPLATE]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CACHE_CONTROL, CONTENT_TYPE, LOCATION, X_CONTENT_TYPE_OPTIONS};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::signal::unix::{signal, SignalKind};

/// The fox from crates/avatar, byte for byte; `{{color}}` becomes `#rrggbb`.
const FOX: &str = include_str!("../../../crates/avatar/assets/fox.svg");
const PLACEHOLDER: &str = "{{color}}";
const DEFAULT_TEMPLATE: &str = "https://avatar.example/Renard-{n}.png";
/// In-flight requests get this long after SIGTERM before the rest are dropped.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(500);

/// What every request is answered from, built once at start.
struct Site {
    images: u32,
    /// The image template split at each `{n}`.
    location: Vec<String>,
    /// The fox split at each `{{color}}`.
    svg: Vec<&'static str>,
}

impl Site {
    fn location(&self, pick: u32) -> String {
        self.location.join(&pick.to_string())
    }

    fn svg_body(&self, color: &str) -> Bytes {
        self.svg.join(&format!("#{color}")).into()
    }
}

/// The lowercase colour if `path` is exactly `/` + 6 hex digits (any case) + `.svg`.
fn color_from_path(path: &str) -> Option<String> {
    let hex = path.strip_prefix('/')?.strip_suffix(".svg")?;
    (hex.len() == 6 && hex.bytes().all(|b| b.is_ascii_hexdigit())).then(|| hex.to_ascii_lowercase())
}

fn respond(site: &Site, req: &Request<Incoming>) -> Response<Full<Bytes>> {
    let path = req.uri().path();
    let mut res = Response::new(Full::new(Bytes::new()));
    if let Some(color) = color_from_path(path) {
        let h = res.headers_mut();
        h.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("image/svg+xml; charset=utf-8"),
        );
        h.insert(
            CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=31536000, immutable"),
        );
        h.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
        *res.body_mut() = Full::new(site.svg_body(&color));
        return res;
    }
    let location = if path == "/random.svg" {
        format!("/{:06x}.svg", fastrand::u32(..1 << 24))
    } else if path.ends_with(".svg") {
        *res.status_mut() = StatusCode::NOT_FOUND;
        return res;
    } else {
        site.location(fastrand::u32(1..=site.images))
    };
    *res.status_mut() = StatusCode::FOUND;
    let h = res.headers_mut();
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    // Checked at start: the template is a valid header value, and digits keep it one.
    h.insert(
        LOCATION,
        HeaderValue::try_from(location).expect("checked at start"),
    );
    res
}

fn parse_args() -> Result<(u16, Site), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !(2..=3).contains(&args.len()) {
        return Err(
            "usage: avatar-hyper PORT N [TEMPLATE]   (N in 1..65535, {n} in TEMPLATE)".into(),
        );
    }
    let port = args[0]
        .parse()
        .map_err(|_| format!("bad PORT {:?}: want 0..65535", args[0]))?;
    let images = match args[1].parse() {
        Ok(n @ 1..=65535) => n,
        _ => return Err(format!("bad N {:?}: want 1..65535", args[1])),
    };
    let template = args.get(2).map_or(DEFAULT_TEMPLATE, String::as_str);
    if HeaderValue::from_str(template).is_err() {
        return Err(format!(
            "bad TEMPLATE {template:?}: it must be a valid header value (visible ASCII)"
        ));
    }
    let site = Site {
        images,
        location: template.split("{n}").map(str::to_owned).collect(),
        svg: FOX.split(PLACEHOLDER).collect(),
    };
    Ok((port, site))
}

#[tokio::main]
async fn main() {
    let (port, site) = parse_args().unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2);
    });
    let site = Arc::new(site);
    let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port)))
        .await
        .unwrap_or_else(|e| {
            eprintln!("cannot listen on 127.0.0.1:{port}: {e}");
            std::process::exit(1);
        });
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    let mut int = signal(SignalKind::interrupt()).expect("SIGINT handler");
    println!("listening on {}", listener.local_addr().expect("bound"));

    let graceful = GracefulShutdown::new();
    // HTTP/1.1 and h2c with prior knowledge on the same port: auto reads the first bytes
    // and picks HTTP/2 when they are the connection preface. hyper has no Upgrade: h2c.
    let http = auto::Builder::new(TokioExecutor::new());
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue }; // EMFILE and friends: try again
                let _ = stream.set_nodelay(true);
                let site = site.clone();
                let service = service_fn(move |req| {
                    let res = respond(&site, &req);
                    async move { Ok::<_, Infallible>(res) }
                });
                let conn = http.serve_connection(TokioIo::new(stream), service).into_owned();
                let conn = graceful.watch(conn);
                tokio::spawn(async move {
                    let _ = conn.await; // resets and garbage end the connection; nothing to log
                });
            }
            _ = term.recv() => break,
            _ = int.recv() => break,
        }
    }
    // Stop accepting; idle connections close at once, busy ones finish their response.
    drop(listener);
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, pin!(graceful.shutdown())).await;
}
