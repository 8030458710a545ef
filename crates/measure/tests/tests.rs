//! `measure` end to end: one window of a real load over loopback, into its record.

use std::cell::Cell;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

use load::{Control, Plan, Stop, Target};

/// A server on 127.0.0.1:0 that answers every request head with a 200 and no body, each
/// connection on its own thread; it lives as long as the test process.
fn ok_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let addr = listener.local_addr().expect("has an address");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut stream = stream;
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                while let Ok(n) = stream.read(&mut chunk) {
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        buf.drain(..end + 4);
                        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
                        if stream.write_all(ok).is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    format!("http://{addr}/")
}

#[test]
fn one_window_becomes_one_record() {
    let target = Target::parse(&ok_server()).expect("a loopback URL parses");
    let plan = Plan {
        connections: 2,
        threads: 1,
        stop: Stop::Requests(300),
        ..Plan::new(target)
    };
    let control = Control::new(plan.effective_threads());
    // A thread beside the load that used 10 ms of CPU during the window.
    let calls = Cell::new(0u64);
    let beside = || {
        calls.set(calls.get() + 1);
        probe::OwnUsage {
            user: Duration::from_millis(10 * (calls.get() - 1)),
            ..probe::OwnUsage::default()
        }
    };
    let mut ended = 0;
    let window = measure::window::run(
        &plan,
        &control,
        Some(&beside),
        measure::window::Sockets::Watch,
        &mut || {},
        &mut |_| {},
        &mut || {
            ended += 1;
            probe::OwnUsage::default()
        },
    );
    assert_eq!(
        (calls.get(), ended),
        (2, 1),
        "an edge on each side, one end"
    );
    assert!(control.stopped(), "the window stops its control");
    let result = window.result.as_ref().expect("the load runs");
    assert_eq!(result.counts.completed(), 300);
    assert!(
        window.spent.wall >= result.elapsed,
        "the window's time base holds the engine's"
    );
    assert_eq!(
        window.spent.beside.map(|b| b.user),
        Some(Duration::from_millis(10))
    );

    let report =
        measure::record::load_report(&plan, 1, result, Vec::new(), &window, &load::PlanWording);
    assert_eq!(report.protocol.as_deref(), Some("http/1.1"));
    assert_eq!(report.requests.completed, 300);
    let c = &report.client;
    assert_eq!(c.cpus, 1);
    assert_eq!(
        c.dashboard_cpu_s,
        Some(0.01),
        "the CPU beside the load, left out"
    );
    assert!(
        c.probe_cpu_s.is_some(),
        "the socket reader's CPU, told apart"
    );
    assert!(c.cpu_us_per_request.is_some());
    assert!(c.voluntary_ctxt_per_request.is_some(), "{c:?}");
    // Where the kernel's counters can be read, the window read them and reported them.
    if probe::tcp_counters().is_ok() {
        assert!(report.tcp.is_some(), "the TCP counters' report is missing");
    }
}

/// The environment variable that makes [`child_ok_server`] serve.
const SERVE: &str = "FOXBENCH_MEASURE_TEST_SERVE";

/// Not a test: [`ok_server`] in a process of its own (this binary run again), so that its
/// threads' context switches are not the test process's. It prints its URL and serves
/// until its stdin closes.
#[test]
#[ignore = "run by server_process"]
fn child_ok_server() {
    if std::env::var_os(SERVE).is_none() {
        return;
    }
    println!("serving {}", ok_server());
    std::io::stdout().flush().expect("stdout");
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
}

/// [`child_ok_server`] started; its URL. Dropping the child's stdin ends it.
#[track_caller]
fn server_process() -> (std::process::Child, String) {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    let mut child = Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", "child_ok_server", "--ignored", "--nocapture"])
        .env(SERVE, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the test binary runs again");
    let mut out = std::io::BufReader::new(child.stdout.take().expect("piped"));
    let mut line = String::new();
    let url = loop {
        line.clear();
        if out.read_line(&mut line).expect("the child's stdout") == 0 {
            panic!("the child ended without saying where it serves");
        }
        if let Some(url) = line.trim_end().strip_prefix("serving ") {
            break url.to_string();
        }
    };
    // The rest of its output (the harness's lines) is drained, not cut off.
    std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
    (child, url)
}

/// The context-switch figures count the load generator alone. They once counted the
/// signal watcher (a 50 ms poll) beside the load, and a test whose server ran in the test
/// process counted the server's switches as the client's and could not fail.
#[test]
fn the_clients_context_switches_leave_its_helpers_out() {
    let (mut server, url) = server_process();
    let plan = Plan {
        connections: 2,
        threads: 1,
        stop: Stop::Requests(2000),
        ..Plan::new(Target::parse(&url).expect("a loopback URL parses"))
    };
    let control = Control::new(plan.effective_threads());
    // A helper that sleeps 100 times (100 voluntary switches at least) inside the window:
    // it starts at the opening edge (`started`) and is joined by `ended`, before the
    // closing edge.
    let (go, started) = std::sync::mpsc::channel::<()>();
    let helper = std::thread::spawn(move || {
        let _ = started.recv();
        for _ in 0..100 {
            std::thread::sleep(Duration::from_millis(1));
        }
        probe::thread_usage()
    });
    let mut helper = Some(helper);
    let mut helper_usage = probe::OwnUsage::default();
    let before = probe::own_usage();
    let window = measure::window::run(
        &plan,
        &control,
        None,
        measure::window::Sockets::Watch,
        &mut || {
            let _ = go.send(());
        },
        &mut |_| {},
        &mut || {
            let h = helper.take().expect("ended once");
            helper_usage = h.join().expect("the helper ends");
            helper_usage
        },
    );
    let process = probe::own_usage().since(&before);
    drop(server.stdin.take());
    let _ = server.wait();
    let result = window.result.as_ref().expect("the load runs");
    let completed = result.counts.completed();
    assert_eq!(completed, 2000);
    let client = measure::record::client(result, &window.spent, 1);
    let per_request = client.voluntary_ctxt_per_request.expect("responses");
    let switches = (per_request * completed as f64).round() as u64;
    assert!(helper_usage.voluntary_ctxt >= 100, "{helper_usage:?}");
    // The helper's switches are in the process's, once: not in the client's as well.
    assert!(
        switches + helper_usage.voluntary_ctxt <= process.voluntary_ctxt,
        "client {switches} + helper {} > process {}",
        helper_usage.voluntary_ctxt,
        process.voluntary_ctxt
    );
    // One worker on 2 connections to a server in another process sleeps in epoll_wait
    // and is woken about once per response, never twice (a server in this process added
    // its own reads' switches, one more per request).
    assert!(
        (0.05..=1.5).contains(&per_request),
        "{per_request} voluntary switches per response"
    );
}
