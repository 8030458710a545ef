//! The backend-call suite's Rust front end: a hyper 1.x server on tokio's multi-threaded
//! runtime that answers `GET /[?query]` by calling `BACKEND_URL/hello[?query]` once with
//! hyper-util's legacy `Client` (a keep-alive pool), forwarding `X-Request-Id`.
//!
//! `backend-call-hyper PORT BACKEND_URL`; a backend failure is a 502; SIGTERM stops accepting,
//! gives in-flight requests 500 ms and exits. At most `BACKEND_CONNS` backend calls are in
//! flight at once (a tokio `Semaphore`): the legacy `Client` has no per-host connection cap and
//! would otherwise dial one backend connection per request in flight.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode, Uri};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::{TcpListener, TcpSocket};
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::Semaphore;

/// The bound on backend calls in flight, hence on backend connections: 10,000 waiting clients
/// share 1,024 pooled connections (README.md says why this size).
const BACKEND_CONNS: usize = 1024;
const SHUTDOWN_GRACE: Duration = Duration::from_millis(500);
const X_REQUEST_ID: &str = "x-request-id";
const USAGE: &str = "usage: backend-call-hyper PORT BACKEND_URL (e.g. 8080 http://127.0.0.1:9090)";

type Backend = Client<HttpConnector, Empty<Bytes>>;

fn text(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut res = Response::new(Full::new(Bytes::from(body)));
    *res.status_mut() = status;
    res.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    res
}

/// What every request handler shares: the client, its bound, and `BACKEND_URL/hello`.
struct Shared {
    client: Backend,
    calls: Semaphore,
    hello: String,
}

async fn front(shared: &Shared, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let hello = &shared.hello;
    if req.uri().path() != "/" {
        return text(StatusCode::NOT_FOUND, "not found\n".into());
    }
    let uri = match req.uri().query() {
        Some(q) => format!("{hello}?{q}"),
        None => hello.to_owned(),
    };
    let mut call = Request::get(uri);
    if let Some(id) = req.headers().get(X_REQUEST_ID) {
        call = call.header(X_REQUEST_ID, id.clone());
    }
    let call = match call.body(Empty::new()) {
        Ok(c) => c,
        Err(e) => {
            return text(
                StatusCode::BAD_GATEWAY,
                format!("bad backend request: {e}\n"),
            )
        }
    };
    // Held until the body is read, i.e. until the connection is back in the pool. The
    // semaphore is never closed, so acquire cannot fail.
    let Ok(_permit) = shared.calls.acquire().await else {
        return text(StatusCode::BAD_GATEWAY, "backend: shutting down\n".into());
    };
    let resp = match shared.client.request(call).await {
        Ok(r) => r,
        Err(e) => return text(StatusCode::BAD_GATEWAY, format!("backend: {e}\n")),
    };
    let (parts, body) = resp.into_parts();
    // Reading to the end hands the connection back to the pool.
    let body = match body.collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => return text(StatusCode::BAD_GATEWAY, format!("backend body: {e}\n")),
    };
    if parts.status != StatusCode::OK {
        return text(
            StatusCode::BAD_GATEWAY,
            format!("backend answered {}\n", parts.status),
        );
    }
    let mut res = Response::new(Full::new(body));
    res.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    if let Some(id) = parts.headers.get(X_REQUEST_ID) {
        res.headers_mut().insert(X_REQUEST_ID, id.clone());
    }
    res
}

fn parse_args() -> Result<(u16, String), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [port, backend] = args.as_slice() else {
        return Err(format!("expected 2 arguments, got {}", args.len()));
    };
    let port = port
        .parse()
        .map_err(|_| format!("PORT {port:?} is not a port number"))?;
    let uri: Uri = backend
        .parse()
        .map_err(|_| format!("BACKEND_URL {backend:?} is not a URL"))?;
    if uri.scheme_str() != Some("http") || uri.host().is_none() {
        return Err(format!("BACKEND_URL {backend:?} is not an http:// URL"));
    }
    Ok((port, format!("{}/hello", backend.trim_end_matches('/'))))
}

/// A listener with the kernel's largest backlog (capped by somaxconn; tokio's `bind` asks for
/// 1,024): 10,000 clients connect at once.
fn listen(port: u16) -> std::io::Result<TcpListener> {
    let socket = TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(SocketAddr::from(([127, 0, 0, 1], port)))?;
    socket.listen(65535)
}

/// Raises the soft RLIMIT_NOFILE to the hard limit, as Go's runtime and the JVM do by
/// themselves and Rust's std does not: 10,000 clients plus the backend pool need more than the
/// usual soft 1,024. Failing to raise it is not fatal (the accept loop backs off on EMFILE).
fn raise_nofile() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed by pointer.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                eprintln!(
                    "backend-call-hyper: cannot raise the soft RLIMIT_NOFILE to the hard limit"
                );
            }
        }
    }
}

#[tokio::main]
async fn main() {
    raise_nofile();
    let (port, hello) = parse_args().unwrap_or_else(|e| {
        eprintln!("backend-call-hyper: {e}; {USAGE}");
        std::process::exit(2);
    });
    let listener = listen(port).unwrap_or_else(|e| {
        eprintln!("backend-call-hyper: cannot listen on 127.0.0.1:{port}: {e}: is the port free?");
        std::process::exit(2);
    });
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    // The legacy Client has no cap on connections per host: the semaphore is the cap, and
    // the pool keeps as many idle ones (its default keeps all of them).
    let client: Backend = Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(BACKEND_CONNS)
        .pool_idle_timeout(Duration::from_secs(60))
        .build(connector);
    let shared = Arc::new(Shared {
        client,
        calls: Semaphore::new(BACKEND_CONNS),
        hello,
    });
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    let mut int = signal(SignalKind::interrupt()).expect("SIGINT handler");
    println!("listening on {}", listener.local_addr().expect("bound"));

    let graceful = GracefulShutdown::new();
    let http = http1::Builder::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, _) = match accepted {
                    Ok(a) => a,
                    Err(e) => {
                        // EMFILE and friends: back off instead of spinning on accept.
                        eprintln!("backend-call-hyper: accept failed: {e}: raise `ulimit -n`?");
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let shared = shared.clone();
                let service = service_fn(move |req| {
                    let shared = shared.clone();
                    async move { Ok::<_, Infallible>(front(&shared, req).await) }
                });
                let conn = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
                tokio::spawn(async move {
                    let _ = conn.await; // resets and garbage end the connection; nothing to log
                });
            }
            _ = term.recv() => break,
            _ = int.recv() => break,
        }
    }
    drop(listener);
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, pin!(graceful.shutdown())).await;
}
