//! Kernel receive stamps: when each read's bytes entered the network stack, for any socket.
//!
//! Linux stamps every received segment as it enters the stack when a socket has
//! `SO_TIMESTAMPING` with `SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE`, and
//! `recvmsg` returns the stamp in an `SCM_TIMESTAMPING` control message; on TCP it is the
//! stamp of the last segment the read consumed. The engine measures a response's latency
//! to that stamp as well as to its read, so that what the client itself adds between the
//! two (an event loop busy with other connections, a preempted or slow-waking thread, a
//! coalescing wait) is told apart from the server's time.
//!
//! Send stamps come the same way, for a sample of the requests: with
//! `SOF_TIMESTAMPING_TX_SOFTWARE` the kernel stamps a write's last byte as it leaves the TCP
//! stack for the device (on loopback, the loopback's transmit), and queues the stamp on the
//! socket's error queue, keyed (`SOF_TIMESTAMPING_OPT_ID`, `_OPT_ID_TCP`) by the offset of
//! that byte among the bytes written since the option was set. Sampling is done by turning
//! `TX_SOFTWARE` on just before a sampled write and off just after ([`stamp_sends`]): the
//! option is read when the write is made, and a stamp comes for a segment that leaves
//! later too. nix has no per-`sendmsg` control message for it, and `unsafe` is not ours to
//! use; two `setsockopt` per sampled write cost less than a control message on every one.
//! The error queue is drained with [`drain_sends`].
//!
//! This module owns the socket side only: enabling the option ([`enable`]), a receive that
//! returns the bytes and the stamp ([`receive`], through a [`ControlBuf`] reused for every
//! read), and the arithmetic that moves a stamp from CLOCK_REALTIME onto the engine's
//! monotonic clock ([`ClockOffset`], [`kernel_ns`]). It names no protocol and no socket
//! type: TCP (plain or under TLS) uses it today, and a UDP socket (HTTP/3) can use it the
//! same way, since `SO_TIMESTAMPING` stamps datagrams as it stamps segments.

use std::io::{self, IoSliceMut};
use std::net::UdpSocket;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use nix::cmsg_space;
use nix::errno::Errno;
use nix::sys::socket::{
    recvmsg, setsockopt, sockopt, ControlMessageOwned, MsgFlags, TimestampingFlag, Timestamps,
};

/// One request in this many has its send stamped, per worker (the first, then every 64th).
///
/// Sampled because a send stamp is not free: two `setsockopt` around the write, the wake-up
/// the stamp raises (EPOLLERR) and a `recvmsg` on the error queue cost about as much as the
/// request's own write. On every request that would add several syscalls to the two a
/// kept-alive request costs; at 1 in 64 it adds under 0.1 syscall per request, while a
/// run of 10,000 requests still brings about 150 stamps, enough for a median and a p90
/// of the kernel's send lateness (a p99 needs longer runs, and says so by its count).
pub const SEND_SAMPLE_EVERY: u64 = 64;

/// The flags for receive stamps alone.
fn receive_flags() -> TimestampingFlag {
    TimestampingFlag::SOF_TIMESTAMPING_RX_SOFTWARE | TimestampingFlag::SOF_TIMESTAMPING_SOFTWARE
}

/// The flags kept on a socket whose sends may be sampled: receive stamps, and send stamps
/// keyed by the byte offset counted from the next byte written (`OPT_ID_TCP`; plain
/// `OPT_ID` would count from the oldest unacknowledged byte, one off while the SYN is), with
/// only the stamp looped back to the error queue (`OPT_TSONLY`), not the segment.
fn send_flags() -> TimestampingFlag {
    receive_flags()
        | TimestampingFlag::SOF_TIMESTAMPING_OPT_ID
        | TimestampingFlag::from_bits_retain(libc::SOF_TIMESTAMPING_OPT_ID_TCP)
        | TimestampingFlag::SOF_TIMESTAMPING_OPT_TSONLY
}

/// Asks the kernel to stamp what `socket` receives, in software, and with `send`, to be
/// ready to stamp sampled sends ([`stamp_sends`]). `Ok(true)`: sends can be stamped; a
/// kernel that refuses the send flags (before Linux 6.2, no `OPT_ID_TCP`) still stamps
/// reads. An error means no stamps will come: reads then return none, and latencies fall
/// back to the read.
///
/// Call it once the connect has started (not on a closed socket: the kernel refuses
/// `OPT_ID` there), before the first byte is written: keys count from there.
pub(crate) fn enable(socket: &impl AsFd, send: bool) -> io::Result<bool> {
    if send && setsockopt(socket, sockopt::Timestamping, &send_flags()).is_ok() {
        return Ok(true);
    }
    setsockopt(socket, sockopt::Timestamping, &receive_flags()).map_err(io::Error::from)?;
    Ok(false)
}

/// Turns the stamping of what `socket` sends on or off, on a socket [`enable`]d for it.
/// The key is not reset: the kernel resets it only when `OPT_ID` is newly set, and it stays
/// set here.
pub(crate) fn stamp_sends(socket: &impl AsFd, on: bool) -> io::Result<()> {
    let flags = match on {
        true => send_flags() | TimestampingFlag::SOF_TIMESTAMPING_TX_SOFTWARE,
        false => send_flags(),
    };
    setsockopt(socket, sockopt::Timestamping, &flags).map_err(io::Error::from)
}

/// A send stamp from the error queue: the key of the write's last byte (its offset among
/// the bytes written since [`enable`], wrapping at 2^32) and when it left, on
/// CLOCK_REALTIME in ns since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SendStamp {
    pub key: u32,
    pub stamp_ns: i64,
}

/// `SCM_TSTAMP_SND`: the stamp taken as the bytes left for the device (linux/errqueue.h).
const SCM_TSTAMP_SND: u32 = 0;

/// The most messages [`drain_sends`] reads in one call: it runs on an event, and the rest,
/// if any, raises the next.
const DRAIN_MAX: usize = 64;

/// Reads the socket's error queue until it is empty, handing each send stamp to `each`;
/// other messages (none are asked for) are read and dropped. Returns how many messages
/// were read. Run it whenever epoll says EPOLLERR: a queued stamp raises it, and it would
/// pass for a dead connection.
pub(crate) fn drain_sends(
    fd: RawFd,
    cmsg: &mut ControlBuf,
    mut each: impl FnMut(SendStamp),
) -> io::Result<usize> {
    let mut byte = [0u8; 1];
    for read in 0..DRAIN_MAX {
        let mut iov = [IoSliceMut::new(&mut byte)];
        let flags = MsgFlags::MSG_ERRQUEUE | MsgFlags::MSG_DONTWAIT;
        let msg = match recvmsg::<()>(fd, &mut iov, Some(&mut cmsg.0), flags) {
            Ok(msg) => msg,
            Err(Errno::EAGAIN) => return Ok(read),
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(e.into()),
        };
        let (mut stamp_ns, mut key) = (None, None);
        if let Ok(cmsgs) = msg.cmsgs() {
            for c in cmsgs {
                match c {
                    ControlMessageOwned::ScmTimestampsns(Timestamps { system, .. }) => {
                        let ns = system.tv_sec() * 1_000_000_000 + system.tv_nsec();
                        stamp_ns = (ns > 0).then_some(ns);
                    }
                    ControlMessageOwned::Ipv4RecvErr(ee, _)
                    | ControlMessageOwned::Ipv6RecvErr(ee, _)
                        if ee.ee_origin == libc::SO_EE_ORIGIN_TIMESTAMPING
                            && ee.ee_info == SCM_TSTAMP_SND =>
                    {
                        key = Some(ee.ee_data);
                    }
                    _ => {}
                }
            }
        }
        if let (Some(stamp_ns), Some(key)) = (stamp_ns, key) {
            each(SendStamp { key, stamp_ns });
        }
    }
    Ok(DRAIN_MAX)
}

/// Holds the kernel's receive stamping on for the life of the process, and waits until it
/// is on.
///
/// Linux turns stamping on for the whole stack when the first socket asks for it, and does
/// so later, from a work queue: a run that started at once saw its first hundred reads
/// unstamped on a loaded machine. This socket (a UDP loopback socket talking to itself) asks
/// first and sends itself datagrams until one comes back stamped, or `patience` ends (a
/// kernel without stamps: runs then fall back to the read). It is made once per process
/// ([`warm`]) and kept, so that no later run (a `--find-max` window, a shootout repeat)
/// pays for it again, and a run's sockets closing never turns stamping off in between.
pub(crate) struct Warm {
    _socket: Option<UdpSocket>,
    /// A datagram came back stamped.
    pub stamped: bool,
}

/// How long [`warm`] waits for a first stamp: a kernel that accepts the option but gives
/// none would otherwise hold the first run up for ever.
const WARM_PATIENCE: Duration = Duration::from_millis(500);

/// The process's warm socket, made by the first call (which waits for the first stamp, at
/// most [`WARM_PATIENCE`]) and held until the process ends; later calls return it at once.
pub(crate) fn warm() -> &'static Warm {
    static WARM: OnceLock<Warm> = OnceLock::new();
    WARM.get_or_init(|| Warm::up(WARM_PATIENCE))
}

impl Warm {
    pub(crate) fn up(patience: Duration) -> Self {
        let Ok(socket) = UdpSocket::bind("127.0.0.1:0") else {
            return Self {
                _socket: None,
                stamped: false,
            };
        };
        let ready = socket
            .local_addr()
            .and_then(|a| socket.connect(a))
            .and_then(|()| enable(&socket, false).map(drop))
            .and_then(|()| socket.set_read_timeout(Some(Duration::from_millis(5))));
        let mut stamped = false;
        if ready.is_ok() {
            let end = Instant::now() + patience;
            let (mut buf, mut cmsg) = ([0u8; 8], ControlBuf::new());
            while !stamped && Instant::now() < end {
                if socket.send(b"stamp").is_err() {
                    break;
                }
                if let Ok(got) = receive(socket.as_raw_fd(), &mut buf, &mut cmsg) {
                    stamped = got.stamp_ns.is_some();
                }
            }
        }
        Self {
            _socket: Some(socket),
            stamped,
        }
    }
}

/// Room for one `SCM_TIMESTAMPING` control message, GRO's segment size beside it (UDP), and
/// the extended error beside it on the error queue ([`drain_sends`]), made once and reused
/// for every read (one per worker), so that a stamped read allocates nothing.
pub(crate) struct ControlBuf(Vec<u8>);

impl ControlBuf {
    pub(crate) fn new() -> Self {
        Self(cmsg_space!(
            Timestamps,
            libc::sock_extended_err,
            libc::sockaddr_in6,
            libc::c_int
        ))
    }
}

impl Default for ControlBuf {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for ControlBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ControlBuf")
    }
}

/// A read: its byte count and, when the kernel stamped it, the stamp on CLOCK_REALTIME in
/// ns since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamped {
    pub n: usize,
    pub stamp_ns: Option<i64>,
    /// UDP with GRO on ([`udp::enable_gro`]): the size of each datagram the kernel
    /// coalesced into this read (the last may be shorter); `None` for one datagram, and
    /// always over TCP.
    pub segment: Option<usize>,
}

/// Reads into `buf` with `recvmsg`, taking the kernel's receive stamp.
///
/// Hand-written here, on the hot path, rather than through `Read::read`: one `recvmsg`
/// with a control buffer costs what the `recvfrom` it replaces did (the same syscall
/// count, no allocation), and it is the only way to the stamp.
#[inline]
pub(crate) fn receive(fd: RawFd, buf: &mut [u8], cmsg: &mut ControlBuf) -> io::Result<Stamped> {
    let mut iov = [IoSliceMut::new(buf)];
    let msg = recvmsg::<()>(fd, &mut iov, Some(&mut cmsg.0), MsgFlags::empty())
        .map_err(io::Error::from)?;
    let mut stamp_ns = None;
    let mut segment = None;
    if let Ok(cmsgs) = msg.cmsgs() {
        for c in cmsgs {
            match c {
                ControlMessageOwned::ScmTimestampsns(Timestamps { system, .. }) => {
                    let ns = system.tv_sec() * 1_000_000_000 + system.tv_nsec();
                    // A zero stamp is the kernel saying it has none (e.g. no RX flag).
                    if ns > 0 {
                        stamp_ns = Some(ns);
                    }
                }
                ControlMessageOwned::UdpGroSegments(size) => {
                    segment = usize::try_from(size).ok().filter(|&s| s > 0);
                }
                _ => {}
            }
        }
    }
    Ok(Stamped {
        n: msg.bytes,
        stamp_ns,
        segment,
    })
}

/// The distance between CLOCK_REALTIME and the engine's monotonic clock (ns since the run's
/// epoch), to move kernel stamps onto the latter.
///
/// Taken at the start of the run and again at each worker tick (10 ms): three vDSO clock
/// reads. Between two takes the clocks can drift apart only by NTP's slew, at most 500 ppm:
/// 5 µs per 10 ms tick. A step of the realtime clock (settimeofday) shows at the next take;
/// until then [`kernel_ns`] keeps every figure within the read latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ClockOffset {
    /// Realtime ns since the Unix epoch minus monotonic ns since the run's epoch.
    realtime_minus_mono_ns: i64,
}

/// The widest gap between the two monotonic reads of a [`ClockOffset::take`] that it
/// keeps without retrying: two vDSO reads take well under a microsecond.
const TAKE_GAP_NS: i64 = 20_000;

/// How many times [`ClockOffset::take`] reads the clocks at most.
const TAKE_TRIES: usize = 3;

impl ClockOffset {
    /// The offset as it stands now: a realtime reading between two monotonic ones, against
    /// their midpoint. A thread preempted between the reads would skew the offset by the
    /// time it was off the CPU: when the monotonic reads are more than [`TAKE_GAP_NS`]
    /// apart the take is retried, up to [`TAKE_TRIES`] times in all (the last stands).
    pub(crate) fn take(epoch: Instant) -> Self {
        Self::take_with(
            || epoch.elapsed().as_nanos() as i64,
            || {
                SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as i64)
            },
        )
    }

    /// [`Self::take`] on given clocks.
    fn take_with(mut mono: impl FnMut() -> i64, mut real: impl FnMut() -> i64) -> Self {
        let mut offset = Self::from_readings(0, 0);
        for _ in 0..TAKE_TRIES {
            let before = mono();
            let realtime = real();
            let after = mono();
            offset = Self::from_readings(realtime, before + (after - before) / 2);
            if after - before <= TAKE_GAP_NS {
                break;
            }
        }
        offset
    }

    /// The offset between a realtime and a monotonic reading made together.
    pub(crate) fn from_readings(realtime_ns: i64, mono_ns: i64) -> Self {
        Self {
            realtime_minus_mono_ns: realtime_ns - mono_ns,
        }
    }

    /// A realtime stamp on the monotonic clock (ns since the run's epoch); 0 for a stamp
    /// before the epoch.
    #[inline]
    pub(crate) fn mono_ns(self, stamp_realtime_ns: i64) -> u64 {
        u64::try_from(stamp_realtime_ns - self.realtime_minus_mono_ns).unwrap_or(0)
    }
}

/// The kernel latency of a response started at `start_ns`, read at `read_ns`, whose bytes
/// arrived at `arrived_ns` (all monotonic): never above the read latency. With no stamp, or
/// a stamp before the start (a realtime clock step, or an offset taken badly: no response
/// arrives before its request), it is the read latency.
#[inline]
pub(crate) fn kernel_ns(start_ns: u64, arrived_ns: Option<u64>, read_ns: u64) -> u64 {
    let read = read_ns.saturating_sub(start_ns);
    match arrived_ns {
        Some(at) if at >= start_ns => (at - start_ns).min(read),
        _ => read,
    }
}

#[cfg(test)]
mod tests;
