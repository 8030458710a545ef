use super::*;

#[test]
fn a_request_is_a_headers_frame_of_the_fields_http1_sends_and_its_body_a_data_frame() {
    let target = Target::parse("https://127.0.0.1:8443/x?y=1").expect("a literal URL");
    let spec = RequestSpec {
        method: "POST".into(),
        path: "/x?y=1".into(),
        headers: vec![
            ("X-Test".into(), "1".into()),
            ("Connection".into(), "close".into()),
        ],
        body: b"hello".to_vec(),
        ..RequestSpec::default()
    };
    let bytes = request(&target, &spec).expect("a literal request");
    let head = frame::parse_header(&bytes, 1 << 16)
        .expect("a frame")
        .expect("a whole header");
    assert_eq!(head.kind, frame::Kind::Headers);
    let end = head.header_len + head.len as usize;
    let fields = qpack::decode(&bytes[head.header_len..end], 1 << 16).expect("it decodes");
    let get = |n: &str| {
        fields
            .iter()
            .find(|(k, _)| k == n.as_bytes())
            .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
    };
    assert_eq!(get(":method").as_deref(), Some("POST"));
    assert_eq!(get(":scheme").as_deref(), Some("https"));
    assert_eq!(get(":authority").as_deref(), Some("127.0.0.1:8443"));
    assert_eq!(get(":path").as_deref(), Some("/x?y=1"));
    assert_eq!(get("x-test").as_deref(), Some("1"));
    assert_eq!(get("content-length").as_deref(), Some("5"));
    assert_eq!(
        get("connection"),
        None,
        "a connection-specific field went out"
    );
    assert_eq!(get("host"), None, "Host goes as :authority");
    let data = frame::parse_header(&bytes[end..], 1 << 16)
        .expect("a frame")
        .expect("a whole header");
    assert_eq!(data.kind, frame::Kind::Data);
    assert_eq!(&bytes[end + data.header_len..], b"hello");
}

#[test]
fn random_parts_are_refused_over_http3() {
    let target = Target::parse("https://127.0.0.1:8443/").expect("a literal URL");
    let spec = RequestSpec {
        path: "/{hex:6}".into(),
        ..RequestSpec::default()
    };
    assert!(matches!(
        request(&target, &spec),
        Err(TargetError::RandomOverHttp3)
    ));
}

#[test]
fn the_reports_h3_error_names_are_h3wires() {
    let ours: Vec<(u64, &str)> = stats::reason::H3_ERRORS
        .iter()
        .map(|(c, n)| (u64::from(*c), *n))
        .collect();
    assert_eq!(ours, h3wire::error::ALL.to_vec());
}

#[test]
fn a_crypto_error_is_a_tls_alert() {
    assert_eq!(alert_of(0x178), Some(NO_APPLICATION_PROTOCOL));
    assert_eq!(alert_of(0x12a), Some(42));
    assert_eq!(alert_of(0x0a), None);
    assert_eq!(alert_of(0x200), None);
}

/// The worker's close sent at most one datagram and the preflight none: the server held
/// the connection until its idle timeout. Every datagram the close makes goes.
#[test]
fn closing_a_connection_hands_its_connection_close_to_the_socket() {
    let connector = Connector::new("127.0.0.1", &tls::TlsOptions::default(), Alpn::H3)
        .expect("a default TLS configuration");
    let client = connector.quic().expect("QUIC's client configuration");
    let mut endpoint = Endpoint::new(Arc::new(EndpointConfig::default()), None, false, None);
    let now = Instant::now();
    let addr: SocketAddr = "127.0.0.1:4433".parse().unwrap();
    let (_, mut conn) = endpoint.connect(now, client, addr, "127.0.0.1").unwrap();
    let mut buf = Vec::new();
    // The Initial goes first, as the worker sends it.
    while conn.poll_transmit(now, 1, &mut buf).is_some() {
        buf.clear();
    }
    let mut sent = Vec::new();
    let n = close(&mut conn, now, h3wire::error::H3_NO_ERROR, &mut buf, |d| {
        sent.push(d.len())
    });
    assert!(n >= 1 && sent.len() == n, "{n} datagrams, {sent:?} sent");
    assert!(sent.iter().all(|&len| len > 0));
    assert!(
        conn.poll_transmit(now, 1, &mut buf).is_none(),
        "left unsent"
    );
}

/// A UDP port closed (ICMP port unreachable) is waited for until the connect timeout by
/// the blocking client (a server may bind UDP after TCP), and refused at once by the
/// preflight: deterministic, on a port nothing opens.
#[test]
fn a_closed_udp_port_is_waited_for_by_the_client_and_refused_at_once_by_the_preflight() {
    let port = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let target = Target::parse(&format!("https://127.0.0.1:{port}/")).unwrap();
    let tls = crate::TlsOptions::default();
    let run = |closed, wait| {
        let start = Instant::now();
        let r = Quic::handshake(&target, &tls, (wait, wait), closed);
        (r.err(), start.elapsed())
    };
    let wait = Duration::from_millis(300);
    let (err, took) = run(ClosedPort::WaitsForIt, wait);
    assert!(matches!(err, Some(SetupError::NoHttp3 { .. })), "{err:?}");
    assert!(took >= wait, "gave up after {took:?}, before {wait:?}");
    // A longer timeout here, for a loaded machine: refused means before it, not at 300 ms.
    let wait = Duration::from_secs(3);
    let (err, took) = run(ClosedPort::Refuses, wait);
    assert!(matches!(err, Some(SetupError::NoHttp3 { .. })), "{err:?}");
    assert!(took < wait, "refused only after {took:?}");
}
