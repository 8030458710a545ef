use super::*;

/// A writer that blocks until told to go on, then records.
struct Gate {
    open: Arc<(Mutex<bool>, Condvar)>,
    seen: Arc<Mutex<Vec<u8>>>,
}

impl Write for Gate {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let (lock, cv) = &*self.open;
        let mut open = lock.lock().unwrap();
        while !*open {
            open = cv.wait(open).unwrap();
        }
        self.seen.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_stuck_writer_drops_lines_instead_of_blocking() {
    let open = Arc::new((Mutex::new(false), Condvar::new()));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = AccessLog::start_with(Gate {
        open: Arc::clone(&open),
        seen: Arc::clone(&seen),
    })
    .unwrap();
    let mut sender = log.sender();
    sender.capacity_bytes = 10;
    let mut accepted = 0;
    for _ in 0..100 {
        accepted += usize::from(sender.send(b"line\n"));
    }
    // One batch may be in the stuck writer, two more fit the queue; the rest are refused.
    assert!((2..=4).contains(&accepted), "{accepted}");
    *open.0.lock().unwrap() = true;
    open.1.notify_all();
    log.close(Duration::from_secs(10));
    assert_eq!(seen.lock().unwrap().len(), accepted * 5);
    assert!(!sender.send(b"late\n"), "a closed log still took lines");
}
