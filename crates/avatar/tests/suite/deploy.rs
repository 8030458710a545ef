//! The shipped deployment files: nginx with TLS in front of avatar, and the systemd unit.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{require_tool, write_png, Avatar, ChildGuard, TempDir, BIN, MANIFEST_DIR};

fn deploy_file(rel: &str) -> String {
    let path = Path::new(MANIFEST_DIR).join("../../deploy").join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[track_caller]
fn replace_once(text: &str, from: &str, to: &str) -> String {
    assert!(
        text.contains(from),
        "deploy/nginx/avatar.conf no longer contains {from:?}; update the test"
    );
    text.replace(from, to)
}

#[test]
fn nginx_terminates_tls_serves_images_and_proxies_with_keep_alive() {
    require_tool("openssl", "version", "openssl");
    require_tool("nginx", "-v", "nginx-light");
    require_tool("curl", "--version", "curl");
    let dir = TempDir::new("nginx");
    let d = dir.path();
    let cert = d.join("cert.pem");
    let key = d.join("key.pem");
    let out = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
        ])
        .args(["-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "openssl: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::create_dir_all(d.join("srv/images")).unwrap();
    write_png(&d.join("srv/images/Renard-1.png"), [255, 136, 0]);

    let avatar = Avatar::start(&["--workers", "1"]);
    let https_port = free_port();
    let http_port = free_port();
    let conf = deploy_file("nginx/avatar.conf");
    let conf = replace_once(
        &conf,
        "server 127.0.0.1:6666;",
        &format!("server {};", avatar.addr),
    );
    let conf = replace_once(
        &conf,
        "listen 443 ssl http2;",
        &format!("listen 127.0.0.1:{https_port} ssl http2;"),
    );
    let conf = replace_once(&conf, "listen [::]:443 ssl http2;", "");
    let conf = replace_once(
        &conf,
        "listen 80;",
        &format!("listen 127.0.0.1:{http_port};"),
    );
    let conf = replace_once(&conf, "listen [::]:80;", "");
    let conf = replace_once(
        &conf,
        "/etc/ssl/avatar/fullchain.pem",
        cert.to_str().unwrap(),
    );
    let conf = replace_once(&conf, "/etc/ssl/avatar/privkey.pem", key.to_str().unwrap());
    let conf = replace_once(
        &conf,
        "root /srv/avatar;",
        &format!("root {};", d.join("srv").display()),
    );
    let main = format!(
        "worker_processes 1;\nevents {{ worker_connections 256; }}\nhttp {{\n include /etc/nginx/mime.types;\n \
         access_log off;\n client_body_temp_path {p}/body;\n proxy_temp_path {p}/proxy;\n \
         fastcgi_temp_path {p}/fastcgi;\n uwsgi_temp_path {p}/uwsgi;\n scgi_temp_path {p}/scgi;\n{conf}\n}}\n",
        p = d.display()
    );
    std::fs::write(d.join("nginx.conf"), main).unwrap();
    // One process, as bench/avatar.py runs it: with a master, killing the guard's child (the
    // master) would orphan the workers to PID 1.
    let global = format!(
        "daemon off; master_process off; pid {}/nginx.pid; error_log stderr;",
        d.display()
    );
    let test = Command::new("nginx")
        .arg("-p")
        .arg(d)
        .arg("-c")
        .arg(d.join("nginx.conf"))
        .args(["-g", &global, "-t"])
        .output()
        .unwrap();
    assert!(
        test.status.success(),
        "nginx -t: {}",
        String::from_utf8_lossy(&test.stderr)
    );
    let nginx = ChildGuard(
        Command::new("nginx")
            .arg("-p")
            .arg(d)
            .arg("-c")
            .arg(d.join("nginx.conf"))
            .args(["-g", &global])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let base = format!("https://localhost:{https_port}");
    let curl = |path: &str, fmt: &str| -> String {
        let out = Command::new("curl")
            .args([
                "-sS",
                "--max-time",
                "10",
                "--cacert",
                cert.to_str().unwrap(),
            ])
            .args(["--resolve", &format!("localhost:{https_port}:127.0.0.1")])
            .args(["-o", "/dev/null", "-w", fmt, &format!("{base}{path}")])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "curl {path}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    // Wait for nginx to listen.
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", https_port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "nginx did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let redirect = curl("/", "%{http_code} %{redirect_url}");
    assert!(
        redirect.starts_with("302 https://avatar.example/Renard-"),
        "{redirect}"
    );
    let svg = curl(
        "/ff8800.svg",
        "%{http_code} %{content_type} %{size_download}",
    );
    assert!(
        svg.starts_with("200 image/svg+xml; charset=utf-8 "),
        "{svg}"
    );
    let png = curl("/images/Renard-1.png", "%{http_code} %{content_type}");
    assert_eq!(png, "200 image/png");
    assert_eq!(curl("/metrics", "%{http_code}"), "404");
    let plain = Command::new("curl")
        .args([
            "-sS",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            &format!("http://127.0.0.1:{http_port}/"),
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&plain.stdout), "301");
    // Keep-alive upstream: many proxied requests, few upstream connections.
    for _ in 0..20 {
        curl("/", "%{http_code}");
    }
    let accepted = avatar.metric("avatar_connections_accepted_total");
    let requests = avatar.metric("avatar_requests_total{route=\"redirect\",status=\"302\"}");
    assert!(requests >= 21, "{requests}");
    // The guard used to kill only the master, orphaning the workers to PID 1.
    let nginx_pid = nginx.0.id();
    let children = children_of(nginx_pid);
    drop(nginx);
    assert_gone(&children, &d.display().to_string());
    // Every curl run is a new TLS connection to nginx, but nginx reuses its upstream connections.
    assert!(
        accepted <= 5,
        "avatar accepted {accepted} connections for {requests} proxied requests"
    );
}

/// Processes whose parent is `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    let mut children = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
        let after = &stat[stat.rfind(')').map_or(0, |i| i + 1)..];
        if after.split_whitespace().nth(1) == Some(&pid.to_string()) {
            children.push(child);
        }
    }
    children
}

/// Processes whose command line contains `needle`.
fn processes_mentioning(needle: &str) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(needle) {
            found.push((pid, cmdline));
        }
    }
    found
}

/// Waits (up to 10 s) until none of `pids` and no process mentioning `prefix` is left.
#[track_caller]
fn assert_gone(pids: &[u32], prefix: &str) {
    let start = Instant::now();
    loop {
        let alive: Vec<u32> = pids
            .iter()
            .copied()
            .filter(|p| Path::new(&format!("/proc/{p}")).exists())
            .collect();
        let mentioning = processes_mentioning(prefix);
        if alive.is_empty() && mentioning.is_empty() {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "nginx left processes behind: children {alive:?}, with {prefix} in their command line {mentioning:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The `ExecStart=` command of the shipped unit, split into words.
fn exec_start() -> Vec<String> {
    let unit = deploy_file("systemd/avatar.service");
    let line = unit
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .expect("ExecStart= line");
    line.split_whitespace().map(str::to_owned).collect()
}

#[test]
fn systemd_unit_exec_start_matches_the_cli() {
    let words = exec_start();
    assert_eq!(words[0], "/usr/local/bin/avatar");
    let out = Command::new(BIN)
        .args(&words[1..])
        .arg("--check")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ExecStart arguments refused by the real CLI: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn systemd_unit_parses() {
    let unit = deploy_file("systemd/avatar.service");
    // Parse check: sections and key=value lines only.
    let mut section = String::new();
    for line in unit.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with('[') {
            assert!(line.ends_with(']'), "{line}");
            section = line.to_owned();
            continue;
        }
        assert!(!section.is_empty(), "key outside a section: {line}");
        let (key, _) = line
            .split_once('=')
            .unwrap_or_else(|| panic!("not key=value: {line}"));
        assert!(key.chars().all(|c| c.is_ascii_alphanumeric()), "{key}");
    }
    for needed in [
        "[Unit]",
        "[Service]",
        "[Install]",
        "KillSignal=SIGTERM",
        "DynamicUser=yes",
    ] {
        assert!(unit.contains(needed), "missing {needed}");
    }
    // systemd-analyze, when this machine has it, checks the unit fully (with the real binary).
    if Command::new("systemd-analyze")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("systemd-analyze not installed (Debian package systemd): parse check only");
        return;
    }
    let dir = TempDir::new("systemd");
    let path = dir.path().join("avatar.service");
    std::fs::write(&path, unit.replace("/usr/local/bin/avatar", BIN)).unwrap();
    let out = Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success() && !String::from_utf8_lossy(&out.stderr).contains("avatar.service:"),
        "systemd-analyze verify: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn systemd_memory_max_holds_max_connections() {
    let unit = deploy_file("systemd/avatar.service");
    let memory_max = unit
        .lines()
        .find_map(|l| l.strip_prefix("MemoryMax="))
        .expect("MemoryMax= line");
    let mib: u64 = memory_max
        .strip_suffix('M')
        .expect("MemoryMax in M")
        .parse()
        .unwrap();
    let words = exec_start();
    let at = words
        .iter()
        .position(|w| w == "--max-connections")
        .expect("--max-connections in ExecStart");
    let connections: u64 = words[at + 1].parse().unwrap();
    // At least 8 KiB a connection: kernel socket memory is charged to the cgroup.
    assert!(
        mib << 20 >= connections * 8 * 1024,
        "MemoryMax={memory_max} cannot hold --max-connections {connections}"
    );
}
