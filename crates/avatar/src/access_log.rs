//! The access log's writer thread: workers hand it each loop turn's lines, and it alone blocks
//! on stdout.
//!
//! The queue is bounded: when stdout is slower than the requests (a full pipe, a stuck
//! terminal), lines are dropped and counted, so the event loops never wait for the log.

use std::io::{self, Write};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// Bytes of log lines the queue holds before it drops new ones: at ~70 bytes a line, about
/// 15,000 lines, a fraction of a second at full speed.
pub const QUEUE_BYTES: usize = 1 << 20;

#[derive(Debug, Default)]
struct Queue {
    buf: Vec<u8>,
    closed: bool,
}

#[derive(Debug, Default)]
struct Shared {
    queue: Mutex<Queue>,
    ready: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // The queue holds only bytes; a panic elsewhere cannot leave it inconsistent.
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The writer thread; closing it lets it write what is queued and stop.
#[derive(Debug)]
pub struct AccessLog {
    shared: Arc<Shared>,
    done: mpsc::Receiver<()>,
}

/// A worker's end of the queue.
#[derive(Debug, Clone)]
pub struct LogSender {
    shared: Arc<Shared>,
    capacity_bytes: usize,
}

impl AccessLog {
    /// Starts the writer thread, writing to stdout.
    pub fn start() -> io::Result<AccessLog> {
        AccessLog::start_with(io::stdout())
    }

    fn start_with(mut out: impl Write + Send + 'static) -> io::Result<AccessLog> {
        let shared = Arc::new(Shared::default());
        let (done_tx, done) = mpsc::channel();
        let thread_shared = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("avatar-access-log".into())
            .stack_size(64 * 1024)
            .spawn(move || {
                let mut batch = Vec::new();
                loop {
                    {
                        let mut queue = thread_shared.lock();
                        while queue.buf.is_empty() && !queue.closed {
                            queue = thread_shared
                                .ready
                                .wait(queue)
                                .unwrap_or_else(|e| e.into_inner());
                        }
                        if queue.buf.is_empty() {
                            break;
                        }
                        std::mem::swap(&mut queue.buf, &mut batch);
                    }
                    // A failed write (stdout closed) loses these lines; the loops do not care.
                    let _ = out.write_all(&batch).and_then(|()| out.flush());
                    batch.clear();
                }
                let _ = done_tx.send(());
            })?;
        Ok(AccessLog { shared, done })
    }

    /// A handle for a worker.
    pub fn sender(&self) -> LogSender {
        LogSender {
            shared: Arc::clone(&self.shared),
            capacity_bytes: QUEUE_BYTES,
        }
    }

    /// Lets the thread write what is queued, waiting at most `limit` for it (stdout may be
    /// stuck for good).
    pub fn close(self, limit: Duration) {
        self.shared.lock().closed = true;
        self.shared.ready.notify_one();
        let _ = self.done.recv_timeout(limit);
    }
}

impl LogSender {
    /// Queues `lines`; returns false, queuing nothing, when the queue is full or closed.
    pub fn send(&self, lines: &[u8]) -> bool {
        let mut queue = self.shared.lock();
        if queue.closed || queue.buf.len() + lines.len() > self.capacity_bytes {
            return false;
        }
        let was_empty = queue.buf.is_empty();
        queue.buf.extend_from_slice(lines);
        drop(queue);
        if was_empty {
            self.shared.ready.notify_one();
        }
        true
    }
}

#[cfg(test)]
mod tests;
