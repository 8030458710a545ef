use std::io::{Read as _, Write};
use std::net::{TcpListener, TcpStream as StdTcpStream};

use super::*;

#[test]
fn an_unstamped_socket_read_clears_the_previous_reads_stamp() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut c = StdTcpStream::connect(l.local_addr().unwrap()).unwrap();
    let (s, _) = l.accept().unwrap();
    // Blocking, so the read below waits for the bytes rather than racing them.
    let mut stream = TcpStream::from_std(s);
    // Never asked for stamps: the kernel gives this socket's reads none.
    c.write_all(b"hello").unwrap();
    let mut cmsg = ControlBuf::new();
    // A stamp left by an earlier read.
    let mut stamp_ns = Some(42);
    let mut probe = ShortRead {
        stream: &mut stream,
        short: false,
        cmsg: Some(&mut cmsg),
        stamp_ns: &mut stamp_ns,
    };
    let mut buf = [0u8; 64];
    let n = probe.read(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"hello");
    assert_eq!(
        stamp_ns, None,
        "bytes from an unstamped read must not carry an earlier read's stamp"
    );
}
