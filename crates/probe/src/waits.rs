//! What a process tree's threads are waiting on: every thread's state and `wchan` from
//! `/proc/<pid>/task/<tid>/`, classified, and many samples into a histogram. This is the
//! thread dump of a tool that cannot attach a debugger.
//!
//! The classes are a table of the kernel functions a thread sleeps in ([`WCHAN_RULES`]),
//! recorded on this project's kernel (6.18) by `waits_of_real_threads_on_this_kernel`,
//! with the syscall in progress (`/proc/.../syscall`) as the fallback when the kernel
//! gives no `wchan` ("0").

use std::collections::BTreeMap;

use procfs::process::Process;

use crate::{tree, ProbeError};

/// What one thread was doing at a sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Wait {
    /// Running or runnable (`R`).
    Running,
    /// Asleep on a futex: a lock, a condition variable, a pool's queue.
    Futex,
    /// Asleep in a socket read, receive or accept.
    Socket,
    /// Idle in an event loop: epoll, poll or select.
    Epoll,
    /// Uninterruptible (`D`) or asleep in block I/O.
    Disk,
    /// Any other sleep (a timer, a pipe, a signal wait).
    Sleep,
}

impl Wait {
    /// Every class, in histogram order.
    pub const ALL: [Wait; 6] = [
        Wait::Running,
        Wait::Futex,
        Wait::Socket,
        Wait::Epoll,
        Wait::Disk,
        Wait::Sleep,
    ];
}

/// Kernel functions (`wchan`) a thread sleeps in, by prefix, and what the sleep means.
/// Recorded on Linux 6.18: a `std::sync::Mutex` or `Condvar` waits in `futex_do_wait`
/// (`futex_wait_queue` on older kernels), a TCP read in `wait_woken` under
/// `sk_wait_data`, a Unix stream read in `unix_stream_read_generic`, an accept in
/// `inet_csk_accept`, `epoll_wait` in `ep_poll` (`do_epoll_wait`), `poll` in
/// `do_sys_poll` or `poll_schedule_timeout`, a sleep in `hrtimer_nanosleep`.
pub const WCHAN_RULES: &[(&str, Wait)] = &[
    ("futex_", Wait::Futex),
    ("ep_poll", Wait::Epoll),
    ("do_epoll_wait", Wait::Epoll),
    ("do_sys_poll", Wait::Epoll),
    ("poll_schedule_timeout", Wait::Epoll),
    ("do_select", Wait::Epoll),
    ("core_sys_select", Wait::Epoll),
    ("sk_wait_data", Wait::Socket),
    ("wait_woken", Wait::Socket),
    ("tcp_recvmsg", Wait::Socket),
    ("inet_csk_accept", Wait::Socket),
    ("unix_stream_read_generic", Wait::Socket),
    ("unix_stream_data_wait", Wait::Socket),
    ("__skb_wait_for_more_packets", Wait::Socket),
    ("__skb_recv_datagram", Wait::Socket),
    ("sk_stream_wait_memory", Wait::Socket),
    ("inet_wait_for_connect", Wait::Socket),
    ("io_schedule", Wait::Disk),
    ("folio_wait", Wait::Disk),
    ("bit_wait_io", Wait::Disk),
    ("wait_on_page", Wait::Disk),
    ("blk_", Wait::Disk),
    ("jbd2_", Wait::Disk),
];

/// The class of a syscall in progress, for a sleeping thread whose `wchan` is 0: x86-64
/// and aarch64 numbers from `libc`.
fn syscall_class(nr: i64) -> Option<Wait> {
    let table: &[(i64, Wait)] = &[
        (libc::SYS_futex, Wait::Futex),
        (libc::SYS_epoll_pwait, Wait::Epoll),
        (libc::SYS_ppoll, Wait::Epoll),
        (libc::SYS_pselect6, Wait::Epoll),
        (libc::SYS_recvfrom, Wait::Socket),
        (libc::SYS_recvmsg, Wait::Socket),
        (libc::SYS_accept, Wait::Socket),
        (libc::SYS_accept4, Wait::Socket),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_epoll_wait, Wait::Epoll),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_poll, Wait::Epoll),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_select, Wait::Epoll),
    ];
    table.iter().find(|(n, _)| *n == nr).map(|(_, w)| *w)
}

/// Classifies one thread from its state letter, its `wchan` (`"0"` or empty when the
/// kernel gives none) and, if read, the first field of its `syscall` file.
pub fn classify(state: char, wchan: &str, syscall: Option<&str>) -> Wait {
    match state {
        'R' => return Wait::Running,
        'D' => return Wait::Disk,
        _ => {}
    }
    let wchan = wchan.trim();
    if let Some((_, w)) = WCHAN_RULES.iter().find(|(p, _)| wchan.starts_with(p)) {
        return *w;
    }
    if wchan.is_empty() || wchan == "0" {
        let nr = syscall.and_then(|s| s.split_whitespace().next()?.parse::<i64>().ok());
        if let Some(w) = nr.and_then(syscall_class) {
            return w;
        }
    }
    Wait::Sleep
}

/// One thread at one sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadWait {
    /// Its thread id.
    pub tid: i32,
    /// Its state letter (`R`, `S`, `D`, ...).
    pub state: char,
    /// Where it sleeps in the kernel, `0` when nowhere (or not given).
    pub wchan: String,
    /// What that means.
    pub wait: Wait,
}

/// Samples every thread of the tree rooted at `root` once. A thread that exits between
/// the listing and the read is left out.
pub fn thread_waits(root: i32) -> Result<Vec<ThreadWait>, ProbeError> {
    let mut out = Vec::new();
    for pid in tree(root)? {
        let Ok(p) = Process::new(pid) else { continue };
        let Ok(tasks) = p.tasks() else { continue };
        for task in tasks.flatten() {
            let Ok(stat) = task.stat() else { continue };
            if stat.state == 'Z' || stat.state == 'X' {
                continue;
            }
            let dir = format!("/proc/{pid}/task/{}", task.tid);
            let wchan = std::fs::read_to_string(format!("{dir}/wchan")).unwrap_or_default();
            let wchan = wchan.trim().to_string();
            let syscall = (stat.state != 'R' && (wchan.is_empty() || wchan == "0"))
                .then(|| std::fs::read_to_string(format!("{dir}/syscall")).ok())
                .flatten();
            let wait = classify(stat.state, &wchan, syscall.as_deref());
            out.push(ThreadWait {
                tid: task.tid,
                state: stat.state,
                wchan: if wchan.is_empty() { "0".into() } else { wchan },
                wait,
            });
        }
    }
    Ok(out)
}

/// Samples of a tree's threads over a window, added up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WaitHistogram {
    /// Samples taken.
    pub samples: u64,
    /// Thread observations in each class, summed over the samples.
    pub counts: BTreeMap<Wait, u64>,
    /// The most threads seen in one sample.
    pub threads_peak: u64,
    /// Thread observations by `wchan` of sleeping threads, summed over the samples.
    pub wchans: BTreeMap<String, u64>,
}

impl WaitHistogram {
    /// Adds one sample of every thread.
    pub fn add(&mut self, threads: &[ThreadWait]) {
        self.samples += 1;
        self.threads_peak = self.threads_peak.max(threads.len() as u64);
        for t in threads {
            *self.counts.entry(t.wait).or_default() += 1;
            if t.wait != Wait::Running {
                *self.wchans.entry(t.wchan.clone()).or_default() += 1;
            }
        }
    }

    /// Thread observations, all classes.
    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }
}

#[cfg(test)]
mod tests {
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
}
