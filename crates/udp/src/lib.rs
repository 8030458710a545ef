//! UDP in batches for QUIC: GSO, one `sendmsg` carrying many datagrams of one size that the
//! kernel cuts apart, and GRO, one read returning the datagrams that arrived back to back,
//! with the size to cut them at.
//!
//! This crate owns the socket options (`UDP_SEGMENT`, `UDP_GRO`), the send of a batch
//! ([`send_segments`], to a connected socket or to an address), the choice between a batch
//! and one datagram a send ([`Batcher`], which turns GSO off for good once the kernel refused
//! a batch whose datagrams it then took one by one), the socket buffers a QUIC socket asks
//! for ([`BUFFER_BYTES`]), a GRO read with its source address ([`receive`]), and the cutting of a read
//! into datagrams ([`segments`], [`datagrams`]). It names no QUIC type and keeps no
//! connection: the load engine (a client, one connected socket per connection, its reads
//! taking the kernel's receive stamp beside GRO's size) and avatar (a server, one unconnected
//! socket per worker) drive it from their own loops.
//!
//! Everything goes through `nix`'s safe wrappers of the socket options and control
//! messages rather than `quinn-udp`: the load engine's reads must stay its own `recvmsg`,
//! which takes the kernel's receive stamp, and `quinn-udp` hands out neither that stamp nor
//! a way to ask for it.

#![forbid(unsafe_code)]

use std::io::{self, IoSlice, IoSliceMut};
use std::net::SocketAddr;
use std::os::fd::{AsFd, AsRawFd};

use bytes::BytesMut;
use nix::errno::Errno;
use nix::sys::socket::{
    recvmsg, sendmsg, setsockopt, sockopt, ControlMessage, ControlMessageOwned, MsgFlags,
    SockaddrStorage,
};

/// The most datagrams one send may carry: quinn's own driver's choice (its
/// `MAX_TRANSMIT_SEGMENTS`), well under the kernel's `UDP_MAX_SEGMENTS` (64).
pub const MAX_SEGMENTS: usize = 10;

/// The receive and send buffer a QUIC socket asks for, bytes. The kernel's default
/// (`net.core.rmem_default`, 208 KiB) holds about 150 full datagrams: a burst past it is
/// dropped, and QUIC pays for each drop with a loss detection. 1 MiB holds a window of 100
/// streams' small responses with room; the kernel caps it at `net.core.rmem_max` silently.
pub const BUFFER_BYTES: usize = 1 << 20;

/// Turns GRO on for `socket`; false when the kernel cannot (before Linux 5.0), and reads
/// then return one datagram each, as without it.
pub fn enable_gro(socket: &impl AsFd) -> bool {
    setsockopt(socket, sockopt::UdpGroSegment, &true).is_ok()
}

/// Sends `buf`, datagrams of `segment` bytes each (the last may be shorter), in one
/// `sendmsg`: the kernel cuts it apart (GSO). `to` is the destination of an unconnected
/// socket; `None` on a connected one.
///
/// `EIO` (the route's device cannot segment: no checksum offload), `EINVAL` (this batch or
/// its destination: a route MTU under segment plus headers, port 0, too many segments) and
/// `ENOPROTOOPT` (a kernel without `UDP_SEGMENT`) are refusals ([`gso_refused`]): [`Batcher`]
/// then sends the datagrams one at a time.
pub fn send_segments(
    socket: &impl AsRawFd,
    buf: &[u8],
    segment: usize,
    to: Option<SocketAddr>,
) -> io::Result<usize> {
    let size = u16::try_from(segment).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let iov = [IoSlice::new(buf)];
    let cmsg = [ControlMessage::UdpGsoSegments(&size)];
    let to = to.map(SockaddrStorage::from);
    sendmsg(
        socket.as_raw_fd(),
        &iov,
        &cmsg,
        MsgFlags::empty(),
        to.as_ref(),
    )
    .map_err(io::Error::from)
}

/// Sends `buf` as one datagram, in one `sendmsg`: to `to` on an unconnected socket, or with
/// `None` to a connected socket's peer.
pub fn send_one(socket: &impl AsRawFd, buf: &[u8], to: Option<SocketAddr>) -> io::Result<usize> {
    let iov = [IoSlice::new(buf)];
    let to = to.map(SockaddrStorage::from);
    sendmsg(
        socket.as_raw_fd(),
        &iov,
        &[],
        MsgFlags::empty(),
        to.as_ref(),
    )
    .map_err(io::Error::from)
}

/// What [`Batcher::send_on`] did: the bytes the socket took (as [`Batcher::send`] says),
/// and the system calls it took to send them.
#[derive(Debug)]
pub struct Sent {
    /// The bytes sent, or the error of a transmit of which nothing went out.
    pub bytes: io::Result<usize>,
    /// `sendmsg` calls made, one for a batch, one a datagram after a refusal.
    pub calls: u64,
}

/// How QUIC's transmits go out: many datagrams a `sendmsg` while the kernel takes GSO, one a
/// `send` once it has refused a batch whose datagrams it then took one by one. A refusal
/// that the one-datagram sends share (a destination that takes nothing: port 0, an
/// unreachable route) says nothing about GSO, and leaves it on.
///
/// Keep one per destination (a connection) where one socket sends to many: `EIO` and
/// `EINVAL` can belong to one route. Only `ENOPROTOOPT` ([`Batcher::kernel_lacks_gso`]) says
/// the whole socket cannot.
#[derive(Debug)]
pub struct Batcher {
    gso: bool,
    no_kernel_gso: bool,
}

impl Default for Batcher {
    fn default() -> Self {
        Self {
            gso: true,
            no_kernel_gso: false,
        }
    }
}

impl Batcher {
    /// The datagrams to ask QUIC for at once (`poll_transmit`'s `max_datagrams`).
    pub fn max_datagrams(&self) -> usize {
        if self.gso {
            MAX_SEGMENTS
        } else {
            1
        }
    }

    /// Whether this batcher has given GSO up.
    pub fn gave_up(&self) -> bool {
        !self.gso
    }

    /// Whether GSO was given up on `ENOPROTOOPT`: the kernel has no `UDP_SEGMENT`, so no
    /// destination of this socket will take a batch.
    pub fn kernel_lacks_gso(&self) -> bool {
        self.no_kernel_gso
    }

    /// Sends one transmit on `socket` (to `to`, or with `None` to a connected socket's
    /// peer): [`Self::send`] through [`send_segments`] and [`send_one`], counting the calls.
    pub fn send_on(
        &mut self,
        socket: &impl AsRawFd,
        buf: &[u8],
        segment: Option<usize>,
        to: Option<SocketAddr>,
    ) -> Sent {
        let calls = std::cell::Cell::new(0);
        let bytes = self.send(
            buf,
            segment,
            |buf, segment| {
                calls.set(calls.get() + 1);
                send_segments(socket, buf, segment, to)
            },
            |datagram| {
                calls.set(calls.get() + 1);
                send_one(socket, datagram, to)
            },
        );
        Sent {
            bytes,
            calls: calls.get(),
        }
    }

    /// Sends one transmit, `buf` cut every `segment` bytes (QUIC's `segment_size`; `None`:
    /// one datagram): through `batch` (a GSO send) while GSO holds, else through `one`
    /// datagram at a time. A refusal sends the transmit one by one, and turns GSO off if
    /// the first datagram then goes out. One by one, a send that fails after others went
    /// out ends the transmit with what went out (the rest is lost, and QUIC sends it
    /// again); only a failure before any is an error.
    pub fn send(
        &mut self,
        buf: &[u8],
        segment: Option<usize>,
        mut batch: impl FnMut(&[u8], usize) -> io::Result<usize>,
        mut one: impl FnMut(&[u8]) -> io::Result<usize>,
    ) -> io::Result<usize> {
        let Some(segment) = segment.filter(|&s| s > 0 && s < buf.len()) else {
            return one(buf);
        };
        let mut refusal = None;
        if self.gso {
            match batch(buf, segment) {
                Err(e) if gso_refused(&e) => refusal = e.raw_os_error(),
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
            if let Some(errno) = refusal.take() {
                // The datagram went where the batch did not: the batch was refused.
                self.gso = false;
                self.no_kernel_gso = errno == libc::ENOPROTOOPT;
            }
        }
        Ok(sent)
    }
}

/// Whether a GSO send's error says the kernel or the device cannot segment, rather than
/// that this one send failed: `EIO` (no checksum offload on the route), `EINVAL` (this
/// batch or its destination: a route MTU under segment plus headers, port 0, too many
/// segments) or `ENOPROTOOPT` (a kernel without `UDP_SEGMENT`).
pub fn gso_refused(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error().map(Errno::from_raw),
        Some(Errno::EIO | Errno::EINVAL | Errno::ENOPROTOOPT)
    )
}

/// The datagrams `n` bytes held: cut every `segment` bytes (a GRO read, a GSO send), or one.
pub fn datagrams(n: usize, segment: Option<usize>) -> usize {
    match segment {
        Some(s) if s > 0 => n.div_ceil(s),
        _ => usize::from(n > 0),
    }
}

/// The datagrams of one read, `data` cut every `segment` bytes (GRO's size; `None`: the
/// read is one datagram), each a view of `data`'s one allocation (`BytesMut::split_to`).
pub fn segments(data: BytesMut, segment: Option<usize>) -> Segments {
    let stride = segment.unwrap_or(data.len()).max(1);
    Segments { data, stride }
}

/// The iterator [`segments`] returns.
#[derive(Debug)]
pub struct Segments {
    data: BytesMut,
    stride: usize,
}

impl Iterator for Segments {
    type Item = BytesMut;

    fn next(&mut self) -> Option<BytesMut> {
        if self.data.is_empty() {
            return None;
        }
        let at = self.stride.min(self.data.len());
        Some(self.data.split_to(at))
    }
}

/// A read by [`receive`]: its byte count, who sent it, and GRO's segment size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Received {
    /// The bytes read.
    pub n: usize,
    /// The sender; `None` only for an address family this crate does not know.
    pub from: Option<SocketAddr>,
    /// With GRO on ([`enable_gro`]): the size of each datagram the kernel coalesced into
    /// this read (the last may be shorter); `None` for one datagram.
    pub segment: Option<usize>,
    /// The read did not fit the buffer (`MSG_TRUNC`) or its control message did not
    /// (`MSG_CTRUNC`): `n` then keeps only the whole datagrams read (a GRO read cut short
    /// at a segment boundary), or is 0 (one datagram cut short, or a read whose segment
    /// size was lost, is dropped).
    pub truncated: bool,
}

/// Room for GRO's control message, made once per socket's reader and reused for every read.
#[derive(Debug)]
pub struct ControlBuf(Vec<u8>);

impl ControlBuf {
    /// Room for one `UDP_GRO` control message.
    pub fn new() -> Self {
        Self(nix::cmsg_space!(libc::c_int))
    }
}

impl Default for ControlBuf {
    fn default() -> Self {
        Self::new()
    }
}

/// Reads one datagram, or with GRO on the datagrams of one flow that arrived back to back,
/// into `buf`, with the sender's address and the size to cut them at ([`segments`]). A
/// read the buffer cannot hold is cut to its whole datagrams, or dropped
/// ([`Received::truncated`]): a buffer of `u16::MAX` bytes holds any.
///
/// Hand-written on the hot path rather than `recv_from`: one `recvmsg` costs what the
/// `recvfrom` it replaces did, and it is the only way to GRO's size.
#[inline]
pub fn receive(
    socket: &impl AsRawFd,
    buf: &mut [u8],
    cmsg: &mut ControlBuf,
) -> io::Result<Received> {
    let mut iov = [IoSliceMut::new(buf)];
    let msg = recvmsg::<SockaddrStorage>(
        socket.as_raw_fd(),
        &mut iov,
        Some(&mut cmsg.0),
        MsgFlags::empty(),
    )
    .map_err(io::Error::from)?;
    let mut segment = None;
    if let Ok(cmsgs) = msg.cmsgs() {
        for c in cmsgs {
            if let ControlMessageOwned::UdpGroSegments(size) = c {
                segment = usize::try_from(size).ok().filter(|&s| s > 0);
            }
        }
    }
    let from = msg.address.and_then(|a| socket_addr(&a));
    let mut n = msg.bytes;
    let truncated = msg
        .flags
        .intersects(MsgFlags::MSG_TRUNC | MsgFlags::MSG_CTRUNC);
    if msg.flags.contains(MsgFlags::MSG_CTRUNC) {
        n = 0;
    } else if msg.flags.contains(MsgFlags::MSG_TRUNC) {
        n = segment.map_or(0, |s| n - n % s);
    }
    Ok(Received {
        n,
        from,
        segment,
        truncated,
    })
}

fn socket_addr(a: &SockaddrStorage) -> Option<SocketAddr> {
    if let Some(v4) = a.as_sockaddr_in() {
        return Some(SocketAddr::from(std::net::SocketAddrV4::from(*v4)));
    }
    let v6 = a.as_sockaddr_in6()?;
    Some(SocketAddr::from(std::net::SocketAddrV6::from(*v6)))
}

#[cfg(test)]
mod tests;
