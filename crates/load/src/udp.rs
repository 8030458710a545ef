//! UDP in batches for HTTP/3: GSO, one `sendmsg` carrying many datagrams of one size that
//! the kernel cuts apart, and GRO, one read returning the datagrams that arrived back to
//! back, with the size to cut them at ([`crate::stamps::Stamped::segment`]).
//!
//! Both through `nix`'s safe wrappers of the socket options (`UDP_SEGMENT`, `UDP_GRO`) and
//! control messages, rather than `quinn-udp`: the reads must stay the engine's own
//! `recvmsg`, which takes the kernel's receive stamp beside GRO's segment size, and
//! `quinn-udp` hands out neither that stamp nor a way to ask for it.

use std::io::{self, IoSlice};
use std::os::fd::{AsFd, AsRawFd};

use nix::errno::Errno;
use nix::sys::socket::{sendmsg, setsockopt, sockopt, ControlMessage, MsgFlags};

/// The most datagrams one send may carry: quinn's own driver's choice (its
/// `MAX_TRANSMIT_SEGMENTS`), well under the kernel's `UDP_MAX_SEGMENTS` (64).
pub(crate) const MAX_SEGMENTS: usize = 10;

/// Turns GRO on for `socket`; false when the kernel cannot (before Linux 5.0), and reads
/// then return one datagram each, as without it.
pub(crate) fn enable_gro(socket: &impl AsFd) -> bool {
    setsockopt(socket, sockopt::UdpGroSegment, &true).is_ok()
}

/// Sends `buf`, datagrams of `segment` bytes each (the last may be shorter), on the
/// connected `socket` in one `sendmsg`: the kernel cuts it apart (GSO).
///
/// `EIO` means the route's device cannot segment (no checksum offload): [`Batcher`] then
/// turns GSO off and sends one datagram at a time ([`gso_refused`]).
pub(crate) fn send_segments(
    socket: &impl AsRawFd,
    buf: &[u8],
    segment: usize,
) -> io::Result<usize> {
    let size = u16::try_from(segment).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let iov = [IoSlice::new(buf)];
    let cmsg = [ControlMessage::UdpGsoSegments(&size)];
    sendmsg::<()>(socket.as_raw_fd(), &iov, &cmsg, MsgFlags::empty(), None).map_err(io::Error::from)
}

/// How a worker sends QUIC's transmits: many datagrams a `sendmsg` while the kernel takes
/// GSO, one a `send` from the first refusal on (for the whole worker: every connection of
/// it goes the same route).
#[derive(Debug)]
pub(crate) struct Batcher {
    gso: bool,
}

impl Default for Batcher {
    fn default() -> Self {
        Self { gso: true }
    }
}

impl Batcher {
    /// The datagrams to ask QUIC for at once (`poll_transmit`'s `max_datagrams`).
    pub(crate) fn max_datagrams(&self) -> usize {
        if self.gso {
            MAX_SEGMENTS
        } else {
            1
        }
    }

    /// Sends one transmit, `buf` cut every `segment` bytes (QUIC's `segment_size`; `None`:
    /// one datagram): through `batch` (a GSO send) while GSO holds, else through `one`
    /// datagram at a time. A refusal turns GSO off and the transmit goes one by one. One
    /// by one, a send that fails after others went out ends the transmit with what went
    /// out (the rest is lost, and QUIC sends it again); only a failure before any is an
    /// error.
    pub(crate) fn send(
        &mut self,
        buf: &[u8],
        segment: Option<usize>,
        mut batch: impl FnMut(&[u8], usize) -> io::Result<usize>,
        mut one: impl FnMut(&[u8]) -> io::Result<usize>,
    ) -> io::Result<usize> {
        let Some(segment) = segment.filter(|&s| s > 0 && s < buf.len()) else {
            return one(buf);
        };
        if self.gso {
            match batch(buf, segment) {
                Err(e) if gso_refused(&e) => self.gso = false,
                sent => return sent,
            }
        }
        let mut sent = 0;
        for datagram in buf.chunks(segment) {
            match one(datagram) {
                Ok(n) => sent += n,
                Err(e) if sent == 0 => return Err(e),
                Err(_) => break,
            }
        }
        Ok(sent)
    }
}

/// Whether a GSO send's error says the kernel or the device cannot segment, rather than
/// that this one send failed: `EIO` (no checksum offload on the route), `EINVAL` or
/// `ENOPROTOOPT` (a kernel without `UDP_SEGMENT`).
pub(crate) fn gso_refused(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error().map(Errno::from_raw),
        Some(Errno::EIO | Errno::EINVAL | Errno::ENOPROTOOPT)
    )
}

/// The datagrams `n` bytes held: cut every `segment` bytes (a GRO read, a GSO send), or one.
pub(crate) fn datagrams(n: usize, segment: Option<usize>) -> usize {
    match segment {
        Some(s) if s > 0 => n.div_ceil(s),
        _ => usize::from(n > 0),
    }
}

#[cfg(test)]
mod tests;
