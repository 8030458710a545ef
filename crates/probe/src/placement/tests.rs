use std::net::{Ipv4Addr, SocketAddr, TcpListener};

use super::*;

#[test]
fn cpus_are_named_as_ranges() {
    assert_eq!(CpuList::of([0]).cpus_named(), "CPU 0");
    assert_eq!(CpuList::of([0, 1, 2, 3]).cpus_named(), "CPUs 0-3");
    assert_eq!(CpuList::of([0, 2, 4, 5]).cpus_named(), "CPUs 0,2,4-5");
    assert_eq!(
        CpuList::of_ranges(&[(0, 1), (4, 4)]).cpus_named(),
        "CPUs 0-1,4"
    );
}

#[test]
fn own_listener_is_found_with_own_cpus() {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let addr = l.local_addr().unwrap();
    assert_eq!(server(addr), Server::Found { cpus: own_cpus() });
}

#[test]
fn a_port_nobody_listens_on_is_not_found() {
    // A TCP socket bound and kept, never listening: the port stays taken (no
    // SO_REUSEADDR), so no test beside this one can listen on it before the probe looks,
    // as one could on a port freed by closing a listener.
    use nix::sys::socket::{bind, getsockname, socket, AddressFamily, SockFlag, SockType};
    use nix::sys::socket::{SockaddrIn, SockaddrLike};
    let held = socket(
        AddressFamily::Inet,
        SockType::Stream,
        SockFlag::SOCK_CLOEXEC,
        None,
    )
    .unwrap();
    bind(
        std::os::fd::AsRawFd::as_raw_fd(&held),
        &SockaddrIn::new(127, 0, 0, 1, 0),
    )
    .unwrap();
    let bound: SockaddrIn = getsockname(std::os::fd::AsRawFd::as_raw_fd(&held)).unwrap();
    assert_eq!(bound.family(), Some(AddressFamily::Inet));
    let addr = SocketAddr::new(Ipv4Addr::LOCALHOST.into(), bound.port());
    // Nobody else can listen there now.
    assert!(TcpListener::bind(addr).is_err(), "port {addr} not held");
    assert_eq!(server(addr), Server::NotFound { port: addr.port() });
}

/// Where `net.ipv4.ip_nonlocal_bind=1` any address can be bound: binding no longer tells
/// a local address from another.
#[test]
fn a_documentation_address_is_not_local() {
    let addr: SocketAddr = "192.0.2.1:80".parse().unwrap();
    assert_eq!(server(addr), Server::NotLocal);
}
