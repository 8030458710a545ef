//! TLS peers for tests: certificates made in the test (a private CA and a leaf, with
//! rcgen), a small rustls server, and a real nginx with TLS in a temporary directory.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::{Conn, Server};

/// A directory removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(what: &str) -> TempDir {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let p = std::env::temp_dir().join(format!(
            "foxbench-load-{what}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A private CA and a leaf certificate it signed, as PEM files in a temporary directory.
pub struct Certs {
    pub dir: TempDir,
    /// The CA's certificate: what --cacert takes.
    pub ca: PathBuf,
    /// The leaf certificate and its key (ECDSA P-256).
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl Certs {
    /// A leaf for `names` (DNS names or IP addresses), signed by a fresh CA.
    pub fn for_names(names: &[&str]) -> Certs {
        let dir = TempDir::new("certs");
        let ca_key = KeyPair::generate().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "foxbench test CA");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca_cert = ca_params.self_signed(&ca_key).unwrap();
        let issuer = Issuer::new(ca_params, ca_key);
        let leaf_key = KeyPair::generate().unwrap();
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        let mut leaf_params = CertificateParams::new(names).unwrap();
        leaf_params
            .distinguished_name
            .push(DnType::CommonName, "foxbench test server");
        let leaf = leaf_params.signed_by(&leaf_key, &issuer).unwrap();
        let ca = dir.0.join("ca.pem");
        let cert = dir.0.join("cert.pem");
        let key = dir.0.join("key.pem");
        std::fs::write(&ca, ca_cert.pem()).unwrap();
        std::fs::write(&cert, leaf.pem()).unwrap();
        std::fs::write(&key, leaf_key.serialize_pem()).unwrap();
        Certs { dir, ca, cert, key }
    }

    /// A rustls server configuration serving this leaf.
    pub fn server_config(&self) -> Arc<rustls::ServerConfig> {
        self.server_config_versions(rustls::DEFAULT_VERSIONS)
    }

    /// The same, offering only `versions` (e.g. `&[&rustls::version::TLS12]`).
    pub fn server_config_versions(
        &self,
        versions: &[&'static rustls::SupportedProtocolVersion],
    ) -> Arc<rustls::ServerConfig> {
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&self.cert)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let key = PrivateKeyDer::from_pem_file(&self.key).unwrap();
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(versions)
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .unwrap();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Arc::new(config)
    }
}

/// `openssl req -x509 -newkey KEY ... -subj /CN=127.0.0.1 -addext subjectAltName=...`
/// with each of `addext` added, as a new user makes a certificate (`name.pem` and
/// `name.key` in `dir`): without `basicConstraints` OpenSSL 3 marks it CA:TRUE. Returns
/// (cert, key); None when openssl is missing (skipped loudly, failed in CI).
pub fn openssl_self_signed(
    dir: &Path,
    name: &str,
    key: &str,
    addext: &[&str],
) -> Option<(PathBuf, PathBuf)> {
    let openssl = testkit::require("openssl", &["/usr/bin/openssl"], "apt-get install openssl")?;
    let cert = dir.join(format!("{name}.pem"));
    let keyfile = dir.join(format!("{name}.key"));
    let mut cmd = Command::new(openssl);
    cmd.args(["req", "-x509", "-newkey", key]);
    if key == "ec" {
        cmd.args(["-pkeyopt", "ec_paramgen_curve:prime256v1"]);
    }
    cmd.args(["-nodes", "-days", "2", "-subj", "/CN=127.0.0.1"])
        .args(["-addext", "subjectAltName=IP:127.0.0.1"]);
    for ext in addext {
        cmd.args(["-addext", ext]);
    }
    let out = cmd
        .arg("-keyout")
        .arg(&keyfile)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("openssl runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some((cert, keyfile))
}

/// A rustls server that answers every request head with a 302, kept alive.
pub fn tls_redirect_server(config: Arc<rustls::ServerConfig>) -> Server {
    Server::spawn(move |conn: Conn| {
        let counters = conn.counters.clone();
        let Ok(session) = rustls::ServerConnection::new(config.clone()) else {
            return;
        };
        let mut tls = rustls::StreamOwned::new(session, conn.stream);
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            while let Some(end) = find(&buf, b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                buf.drain(..end + 4);
                counters
                    .requests
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let close = head.contains("\r\nconnection: close");
                let resp = format!(
                    "HTTP/1.1 302 Found\r\nLocation: /x\r\nContent-Length: 0\r\n{}\r\n",
                    if close { "Connection: close\r\n" } else { "" }
                );
                if tls.write_all(resp.as_bytes()).is_err() {
                    return;
                }
                if close {
                    tls.conn.send_close_notify();
                    let _ = tls.flush();
                    return;
                }
            }
            match tls.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
    })
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The nginx binary, or None after a loud skip (a failure under `FOXBENCH_REQUIRE`).
#[track_caller]
pub fn nginx_binary() -> Option<PathBuf> {
    testkit::require(
        "nginx",
        &["/usr/sbin/nginx", "/usr/bin/nginx"],
        "apt-get install nginx-light",
    )
}

/// A private nginx with TLS on a free loopback port, one worker, logging per request the
/// TLS version, whether the session was reused and the connection's serial number.
pub struct Nginx {
    child: Child,
    pub addr: SocketAddr,
    pub log: PathBuf,
    _dir: TempDir,
}

impl Nginx {
    /// Starts nginx serving `certs` with `protocols` (e.g. "TLSv1.2 TLSv1.3").
    pub fn start(bin: &Path, certs: &Certs, protocols: &str) -> Nginx {
        Nginx::start_with(bin, &certs.cert, &certs.key, protocols, "")
    }

    /// Starts nginx serving `cert` and `key`, with `extra` directives in its server block
    /// (e.g. `ssl_verify_client on;`). The log's fifth field is `$ssl_client_verify`.
    pub fn start_with(bin: &Path, cert: &Path, key: &Path, protocols: &str, extra: &str) -> Nginx {
        let dir = TempDir::new("nginx");
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let d = dir.0.display();
        let log = dir.0.join("access.log");
        let conf = format!(
            "daemon off; master_process off; worker_processes 1; pid {d}/nginx.pid; error_log {d}/error.log;\n\
             events {{ worker_connections 1024; }}\n\
             http {{\n\
               client_body_temp_path {d}/body; proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fcgi;\n\
               uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;\n\
               log_format tls '$ssl_protocol $ssl_session_reused $connection $connection_requests $ssl_client_verify';\n\
               access_log {log} tls;\n\
               keepalive_requests 100000;\n\
               server {{\n\
                 listen 127.0.0.1:{port} ssl;\n\
                 ssl_certificate {cert}; ssl_certificate_key {key};\n\
                 ssl_protocols {protocols};\n\
                 ssl_session_cache shared:TLS:1m; {extra}\n\
                 location / {{ return 302 https://avatar.example/Renard-1.png; }}\n\
               }}\n\
             }}\n",
            log = log.display(),
            cert = cert.display(),
            key = key.display(),
        );
        Nginx::launch(bin, dir, &conf, port, log)
    }

    /// Starts nginx speaking HTTP/2 on a free loopback port: h2 over TLS with `certs`, else
    /// h2c; `http2_max_concurrent_streams` as given. The access log has one line per request:
    /// `$server_protocol $status $connection $connection_requests $ssl_session_reused`.
    pub fn h2(bin: &Path, certs: Option<&Certs>, max_streams: u32) -> Nginx {
        let dir = TempDir::new("nginx-h2");
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let d = dir.0.display();
        let log = dir.0.join("access.log");
        let tls = match certs {
            Some(c) => format!(
                "ssl_certificate {}; ssl_certificate_key {};",
                c.cert.display(),
                c.key.display()
            ),
            None => String::new(),
        };
        let conf = format!(
            "daemon off; master_process off; worker_processes 1; pid {d}/nginx.pid; error_log {d}/error.log;\n\
             events {{ worker_connections 1024; }}\n\
             http {{\n\
               client_body_temp_path {d}/body; proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fcgi;\n\
               uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;\n\
               log_format h2 '$server_protocol $status $connection $connection_requests $ssl_session_reused';\n\
               access_log {log} h2;\n\
               keepalive_requests 1000000;\n\
               http2_max_concurrent_streams {max_streams};\n\
               server {{\n\
                 listen 127.0.0.1:{port} {ssl}http2;\n\
                 {tls}\n\
                 location / {{ return 302 https://avatar.example/Renard-1.png; }}\n\
                 location /ok {{ return 200 \"ok\"; }}\n\
               }}\n\
             }}\n",
            log = log.display(),
            ssl = if certs.is_some() { "ssl " } else { "" },
        );
        Nginx::launch(bin, dir, &conf, port, log)
    }

    fn launch(bin: &Path, dir: TempDir, conf: &str, port: u16, log: PathBuf) -> Nginx {
        let conf_path = dir.0.join("nginx.conf");
        std::fs::write(&conf_path, conf).unwrap();
        let child = Command::new(bin)
            .arg("-p")
            .arg(&dir.0)
            .arg("-c")
            .arg(&conf_path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start nginx");
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let mut n = Nginx {
            child,
            addr,
            log,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(addr).is_err() {
            if let Ok(Some(status)) = n.child.try_wait() {
                let err = std::fs::read_to_string(n._dir.0.join("error.log")).unwrap_or_default();
                panic!("nginx exited with {status}: {err}");
            }
            assert!(Instant::now() < deadline, "nginx did not listen on {addr}");
            std::thread::sleep(Duration::from_millis(10));
        }
        n
    }

    /// The access log's lines, once it holds `n` of them (polled, with a deadline).
    pub fn log_lines(&self, n: usize) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = std::fs::read_to_string(&self.log).unwrap_or_default();
            let lines: Vec<String> = text.lines().map(String::from).collect();
            if lines.len() >= n || Instant::now() > deadline {
                return lines;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
