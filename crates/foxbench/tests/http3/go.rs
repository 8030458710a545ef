//! Against quic-go's HTTP/3 server (`tests/http3/go/server.go`), which misbehaves on
//! request by path: a slow answer, a reset stream, a GOAWAY. It listens on port 0 and
//! prints the address the kernel gave it, so no port is picked, freed and hoped for.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use super::super::support::tls::{openssl_self_signed, TempDir};
use super::super::{result, run};

/// The Go server, built and started; killed when dropped.
pub(super) struct GoH3 {
    child: Child,
    pub(super) addr: SocketAddr,
    cert: PathBuf,
    dir: TempDir,
}

impl GoH3 {
    /// None after a loud skip when Go or openssl is missing (a failure in CI).
    pub(super) fn start() -> Option<GoH3> {
        let go = testkit::require(
            "go",
            &["/usr/local/go/bin/go", "/usr/bin/go"],
            "install Go 1.24 or newer (https://go.dev/dl), or apt-get install golang-go",
        )?;
        let dir = TempDir::new("go-h3");
        let (cert, key) = openssl_self_signed(&dir.0, "server", "ec", &[])?;
        let bin = dir.0.join("server");
        let src = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/http3/go");
        // Built, not `go run`: killing `go run` would leave the server it started running.
        let out = Command::new(go)
            .args(["build", "-o"])
            .arg(&bin)
            .arg(".")
            .current_dir(src)
            .env("GOFLAGS", "-mod=readonly")
            .env("GOTOOLCHAIN", "local")
            .output()
            .expect("run go build");
        assert!(
            out.status.success(),
            "go build in {src}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut child = Command::new(&bin)
            .arg(&cert)
            .arg(&key)
            .arg(dir.0.join("closes"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the Go server");
        let stdout = child.stdout.take().unwrap();
        // Its first line is its address; the read ends when it prints it or exits.
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        let addr = match line.trim().parse() {
            Ok(a) => a,
            Err(_) => {
                let _ = child.kill();
                panic!("the Go server printed {line:?}, not its address");
            }
        };
        Some(GoH3 {
            child,
            addr,
            cert,
            dir,
        })
    }

    /// `foxbench load --http3` against it with `args`, the paths in `paths` taken in turn
    /// (--urls, round-robin); its JSON result, checked against the schema and the
    /// accounting law.
    pub(super) fn load(&self, paths: &[&str], args: &[&str]) -> Value {
        let urls = self.dir.0.join("urls");
        std::fs::write(&urls, paths.join("\n") + "\n").unwrap();
        let base = format!("https://127.0.0.1:{}/", self.addr.port());
        let mut all = vec![
            "load",
            "--http3",
            "--cacert",
            self.cert.to_str().unwrap(),
            "--urls",
            urls.to_str().unwrap(),
            "--json",
            "-",
        ];
        all.extend_from_slice(args);
        all.push(&base);
        let out = run(&all);
        assert!(
            out.status.success(),
            "{all:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        result(&out.stdout)
    }
}

impl GoH3 {
    /// The server's certificate, for `--cacert`.
    pub(super) fn cert(&self) -> &str {
        self.cert.to_str().unwrap()
    }

    /// A `--urls` file of `paths`.
    pub(super) fn urls(&self, paths: &[&str]) -> String {
        let urls = self.dir.0.join("urls");
        std::fs::write(&urls, paths.join("\n") + "\n").unwrap();
        urls.to_str().unwrap().to_owned()
    }

    /// The application error codes the server saw connections closed with ("0x105"),
    /// once `want` of them came or 10 s passed (the server writes them as it learns them).
    pub(super) fn closes(&self, want: usize) -> Vec<String> {
        let path = self.dir.0.join("closes");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let got: Vec<String> = std::fs::read_to_string(&path)
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.strip_prefix("closed ").map(str::to_owned))
                .collect();
            if got.len() >= want || std::time::Instant::now() > deadline {
                return got;
            }
            std::thread::yield_now();
        }
    }
}

impl Drop for GoH3 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The count of `code` among the run's errors by reason.
pub(super) fn reason(v: &Value, code: &str) -> u64 {
    v["errors_by_reason"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["code"] == code)
        .map(|r| r["count"].as_u64().unwrap())
        .sum()
}
