use super::*;

fn part(streams_used: u64, max: Option<u64>, rst: &[(&str, u64)]) -> Http2Report {
    Http2Report {
        alpn: None,
        streams: 10,
        server_max_streams: max,
        server_max_streams_highest: max,
        streams_used_max: streams_used,
        connections: 2,
        retries: 1,
        id_rollovers: 0,
        pings_answered: 0,
        header_bytes_sent: 50,
        header_bytes_sent_decoded: 100,
        header_bytes_received: 20,
        header_bytes_received_decoded: 100,
        hpack_saving_sent_percent: Some(50.0),
        hpack_saving_received_percent: Some(80.0),
        rst_stream: rst.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        goaway: BTreeMap::new(),
        stream_window: 1,
        connection_window: 1,
    }
}

#[test]
fn agents_sections_add_up() {
    let a = part(5, Some(8), &[("CANCEL", 1)]);
    let b = part(7, Some(6), &[("CANCEL", 2), ("INTERNAL_ERROR", 1)]);
    let m = Http2Report::merge([Some(&a), Some(&b)].into_iter()).unwrap();
    assert_eq!((m.connections, m.retries), (4, 2));
    assert_eq!(m.server_max_streams, Some(6));
    assert_eq!(m.server_max_streams_highest, Some(8));
    assert_eq!(m.streams_used_max, 7);
    assert_eq!(m.rst_stream["CANCEL"], 3);
    assert_eq!(m.rst_stream["INTERNAL_ERROR"], 1);
    // Per direction, from the summed bytes: sent 100/200, received 40/200.
    assert_eq!(m.hpack_saving_sent_percent, Some(50.0));
    assert_eq!(m.hpack_saving_received_percent, Some(80.0));
    assert!(Http2Report::merge([Some(&a), None].into_iter()).is_none());
}
