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
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let addr = l.local_addr().unwrap();
    drop(l);
    assert_eq!(server(addr), Server::NotFound { port: addr.port() });
}

#[test]
fn a_documentation_address_is_not_local() {
    let addr: SocketAddr = "192.0.2.1:80".parse().unwrap();
    assert_eq!(server(addr), Server::NotLocal);
}
