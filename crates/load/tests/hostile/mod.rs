use super::*;

#[test]
fn reset_mid_body_is_a_read_error() {
    let s = Server::spawn(|mut c| {
        if c.next_request().is_some() {
            c.send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial");
            std::thread::sleep(Duration::from_millis(20));
            c.reset();
        }
    });
    let mut p = plan(&s.url());
    p.stop = Stop::Requests(20);
    let r = run(&p);
    assert_eq!(r.counts.read, 20, "{:?}", r.counts);
    assert_eq!(r.counts.ok, 0);
}

#[test]
fn garbage_status_line_is_a_parse_error() {
    let s = Server::spawn(|mut c| {
        while c.next_request().is_some() {
            c.send(b"HTTP/1.1 OK 200 whatever\r\n\r\n");
        }
    });
    let mut p = plan(&s.url());
    p.stop = Stop::Requests(20);
    let r = run(&p);
    assert_eq!(r.counts.parse, 20, "{:?}", r.counts);
}

#[test]
fn binary_garbage_is_a_parse_error() {
    let s = Server::spawn(|mut c| {
        while c.next_request().is_some() {
            c.send(&[0u8, 255, 13, 10, 13, 10, 1, 2, 3]);
        }
    });
    let mut p = plan(&s.url());
    p.stop = Stop::Requests(20);
    assert_eq!(run(&p).counts.parse, 20);
}

#[test]
fn longer_body_than_content_length_is_a_parse_error() {
    // The extra bytes would be read as the next response.
    let s = Server::spawn(|mut c| {
        while c.next_request().is_some() {
            c.send(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA");
        }
    });
    let mut p = plan(&s.url());
    p.connections = 1;
    p.threads = 1;
    p.stop = Stop::Requests(10);
    let r = run(&p);
    // Each connection: one response completes, then the stray bytes are garbage.
    assert!(r.counts.parse >= 1, "{:?}", r.counts);
    assert_eq!(
        r.counts.ok + r.counts.parse + r.counts.read,
        10,
        "{:?}",
        r.counts
    );
}

#[test]
fn shorter_body_than_content_length_times_out() {
    let s = Server::spawn(|mut c| {
        if c.next_request().is_some() {
            c.send(b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nshort");
            c.hold();
        }
    });
    let mut p = plan(&s.url());
    p.stop = Stop::Requests(8);
    p.timeout = Duration::from_millis(300);
    let r = run(&p);
    assert_eq!(r.counts.timeout, 8, "{:?}", r.counts);
}

#[test]
fn byte_at_a_time_trickle_still_parses() {
    let s = Server::spawn(|mut c| {
        while c.next_request().is_some() {
            let resp = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Long: abcdefghijklmnop\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
            for b in resp.iter() {
                if !c.send(std::slice::from_ref(b)) {
                    return;
                }
                let _ = c.stream.flush();
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    });
    let mut p = plan(&s.url());
    p.stop = Stop::Requests(12);
    p.timeout = Duration::from_secs(5);
    let r = run(&p);
    assert_eq!(r.counts.ok, 12, "{:?}", r.counts);
}

#[test]
fn stall_past_the_timeout_is_a_timeout() {
    let s = Server::spawn(|mut c| {
        if c.next_request().is_some() {
            c.send(b"HTTP/1.1 200 OK\r\n"); // half a head, then nothing
            c.hold();
        }
    });
    let mut p = plan(&s.url());
    p.stop = Stop::Requests(4);
    p.timeout = Duration::from_millis(300);
    let r = run(&p);
    assert_eq!(r.counts.timeout, 4, "{:?}", r.counts);
}

#[test]
fn silence_is_a_timeout_even_without_a_byte() {
    let s = Server::spawn(|c| c.hold());
    let mut p = plan(&s.url());
    p.stop = Stop::Requests(4);
    p.timeout = Duration::from_millis(300);
    let r = run(&p);
    assert_eq!(r.counts.timeout, 4, "{:?}", r.counts);
    assert_eq!(r.counts.ok, 0);
}

#[test]
fn silence_in_a_duration_run_ends_on_time() {
    let s = Server::spawn(|c| c.hold());
    let mut p = plan(&s.url());
    p.stop = Stop::Duration(Duration::from_millis(500));
    p.timeout = Duration::from_secs(30);
    let started = Instant::now();
    let r = run(&p);
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(r.counts.in_flight, r.counts.sent);
    assert_eq!(r.counts.sent, 4);
}

#[test]
fn close_after_k_requests() {
    // Answers 3 requests per connection, then closes without saying so.
    let s = Server::spawn(|mut c| {
        for _ in 0..3 {
            if c.next_request().is_none() {
                return;
            }
            c.send(support::REDIRECT);
        }
    });
    let mut p = plan(&s.url());
    p.stop = Stop::Requests(300);
    let r = run(&p);
    // With one request in flight per connection, the close is seen while idle (a
    // reconnect) or races the next request (a read error); nothing is lost.
    assert_eq!(
        r.counts.ok + r.counts.read + r.counts.write,
        300,
        "{:?}",
        r.counts
    );
    assert!(r.counts.ok >= 150, "{:?}", r.counts);
    assert!(s.accepts() >= 300 / 3 / 2);
    // Pipelined: requests beyond the third on a connection are lost as read errors.
    p.pipeline = 8;
    let r = run(&p);
    assert!(r.counts.read > 0, "{:?}", r.counts);
    assert_eq!(
        r.counts.ok + r.counts.read + r.counts.write,
        300,
        "{:?}",
        r.counts
    );
}

#[test]
fn unsolicited_bytes_are_a_parse_error_not_a_crash() {
    let s = Server::spawn(|mut c| {
        c.send(support::REDIRECT); // before any request
        while c.next_request().is_some() {
            c.send(support::REDIRECT);
        }
    });
    let mut p = plan(&s.url());
    p.stop = Stop::Requests(20);
    let r = run(&p);
    assert_eq!(r.counts.ok + r.counts.parse, 20, "{:?}", r.counts);
}
