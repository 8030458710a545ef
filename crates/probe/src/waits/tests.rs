use super::*;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// `(state, wchan, syscall)` as recorded from real threads on Linux 6.18 (and the
/// older kernels' names), and what each must be classified as.
#[test]
fn the_classifier_on_recorded_strings() {
    type Recorded = (char, &'static str, Option<&'static str>);
    let table: &[(Recorded, Wait)] = &[
        (('R', "0", None), Wait::Running),
        (('R', "futex_do_wait", None), Wait::Running),
        (('S', "futex_do_wait", None), Wait::Futex),
        (('S', "futex_wait_queue", None), Wait::Futex),
        (('S', "futex_wait_queue_me", None), Wait::Futex),
        (('S', "wait_woken", None), Wait::Socket),
        (('S', "sk_wait_data", None), Wait::Socket),
        (('S', "inet_csk_accept", None), Wait::Socket),
        (('S', "unix_stream_read_generic", None), Wait::Socket),
        (('S', "ep_poll", None), Wait::Epoll),
        (('S', "do_epoll_wait", None), Wait::Epoll),
        (('S', "do_sys_poll", None), Wait::Epoll),
        (('S', "do_select", None), Wait::Epoll),
        // Python's selectors.PollSelector (http.server's accept loop).
        (
            ('S', "poll_schedule_timeout.constprop.0", None),
            Wait::Epoll,
        ),
        (('D', "0", None), Wait::Disk),
        (('D', "io_schedule", None), Wait::Disk),
        (('S', "folio_wait_bit_common", None), Wait::Disk),
        (('S', "hrtimer_nanosleep", None), Wait::Sleep),
        (('S', "pipe_read", None), Wait::Sleep),
        (('S', "do_wait", None), Wait::Sleep),
        (('I', "0", None), Wait::Sleep),
        (('S', "", None), Wait::Sleep),
        // No wchan: the syscall in progress decides.
        (
            ('S', "0", Some("202 0x7f 0x80 0x2 0x0 0x0 0x0 0x7ffe 0x7f")),
            Wait::Futex,
        ),
        (
            (
                'S',
                "0",
                Some("232 0x3 0x7ffe 0x400 0xffffffff 0 0 0x7ffe 0x7f"),
            ),
            Wait::Epoll,
        ),
        (
            ('S', "0", Some("288 0x3 0x0 0x0 0x80800 0 0 0x7ffe 0x7f")),
            Wait::Socket,
        ),
        (
            ('S', "0", Some("45 0x5 0x7ffe 0x400 0x0 0 0 0x7ffe 0x7f")),
            Wait::Socket,
        ),
        (
            ('S', "0", Some("230 0x0 0x0 0x7ffe 0x7ffe 0 0 0x7ffe 0x7f")),
            Wait::Sleep,
        ),
        (('S', "0", Some("running")), Wait::Sleep),
        (('S', "0", Some("-1 0x7ffe 0x7f")), Wait::Sleep),
        (('S', "0", Some("")), Wait::Sleep),
    ];
    for &((state, wchan, syscall), want) in table {
        #[cfg(not(target_arch = "x86_64"))]
        if syscall.is_some() {
            continue;
        }
        assert_eq!(
            classify(state, wchan, syscall),
            want,
            "{state} {wchan:?} {syscall:?}"
        );
    }
}

/// Polls this process's threads until every named thread is in its expected class.
fn await_classes(want: &[(i32, Wait)]) -> (Vec<ThreadWait>, bool) {
    let me = std::process::id() as i32;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let all = thread_waits(me).unwrap();
        let ok = want
            .iter()
            .all(|(tid, w)| all.iter().any(|t| t.tid == *tid && t.wait == *w));
        if ok || Instant::now() > deadline {
            return (all, ok);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn gettid() -> i32 {
    nix::unistd::gettid().as_raw()
}

/// Parks real threads in each kind of wait and reads them back: the experiment the
/// wchan table was recorded from (run with `--nocapture` to see the names).
#[test]
fn waits_of_real_threads_on_this_kernel() {
    let lock = Arc::new(Mutex::new(()));
    let held = lock.lock().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<(&'static str, i32, Wait)>();
    // A thread parked on a held mutex.
    let l2 = lock.clone();
    let t_futex = tx.clone();
    let futex = std::thread::spawn(move || {
        t_futex.send(("mutex", gettid(), Wait::Futex)).unwrap();
        drop(l2.lock().unwrap());
    });
    // A thread blocked reading a TCP socket that nothing writes to until the end.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let mut client = TcpStream::connect(addr).unwrap();
    let (mut server_side, _) = listener.accept().unwrap();
    let t_tcp = tx.clone();
    let tcp = std::thread::spawn(move || {
        t_tcp.send(("tcp read", gettid(), Wait::Socket)).unwrap();
        let mut b = [0u8; 1];
        let _ = server_side.read(&mut b);
    });
    // A thread blocked in accept.
    let t_acc = tx.clone();
    let acc_listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let acc_addr = acc_listener.local_addr().unwrap();
    let accept = std::thread::spawn(move || {
        t_acc.send(("accept", gettid(), Wait::Socket)).unwrap();
        let _ = acc_listener.accept();
    });
    // A thread blocked reading a Unix stream.
    let (mut ua, mut ub) = UnixStream::pair().unwrap();
    let t_unix = tx.clone();
    let unix = std::thread::spawn(move || {
        t_unix.send(("unix read", gettid(), Wait::Socket)).unwrap();
        let mut b = [0u8; 1];
        let _ = ub.read(&mut b);
    });
    // A thread in epoll_wait on an epoll fd with one idle socket.
    let (mut ea, eb) = UnixStream::pair().unwrap();
    let t_ep = tx.clone();
    let epoll = std::thread::spawn(move || {
        use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags, EpollTimeout};
        let ep = Epoll::new(EpollCreateFlags::empty()).unwrap();
        ep.add(&eb, EpollEvent::new(EpollFlags::EPOLLIN, 1))
            .unwrap();
        t_ep.send(("epoll_wait", gettid(), Wait::Epoll)).unwrap();
        let mut events = [EpollEvent::empty(); 1];
        let _ = ep.wait(&mut events, EpollTimeout::NONE);
    });
    // A thread asleep on a timer (left to finish on its own after the test).
    let t_sleep = tx.clone();
    std::thread::spawn(move || {
        t_sleep.send(("sleep", gettid(), Wait::Sleep)).unwrap();
        std::thread::sleep(Duration::from_secs(60));
    });
    drop(tx);
    let named: Vec<(&str, i32, Wait)> = rx.iter().take(6).collect();
    let want: Vec<(i32, Wait)> = named.iter().map(|(_, t, w)| (*t, *w)).collect();
    let (all, ok) = await_classes(&want);
    for (name, tid, w) in &named {
        let seen = all.iter().find(|t| t.tid == *tid);
        println!("{name:>10}: expected {w:?}, saw {seen:?}");
    }
    // Release everyone.
    drop(held);
    client.write_all(b"x").unwrap();
    let _ = TcpStream::connect(acc_addr);
    ua.write_all(b"x").unwrap();
    ea.write_all(b"x").unwrap();
    for h in [futex, tcp, accept, unix, epoll] {
        h.join().unwrap();
    }
    assert!(
        ok,
        "threads not classified as expected: {named:?} in {all:?}"
    );
    let mut h = WaitHistogram::default();
    h.add(&all);
    h.add(&all[..1]);
    assert_eq!((h.samples, h.threads_peak), (2, all.len() as u64));
    assert_eq!(h.total(), all.len() as u64 + 1);
    assert!(
        h.counts.get(&Wait::Futex).copied().unwrap_or(0) >= 1,
        "{h:?}"
    );
    assert!(h.wchans.keys().all(|w| !w.is_empty()), "{h:?}");
}

#[test]
fn a_missing_tree_is_gone() {
    assert!(matches!(
        thread_waits(i32::MAX - 7),
        Err(ProbeError::Gone(_))
    ));
}
