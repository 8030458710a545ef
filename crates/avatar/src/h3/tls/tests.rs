use super::*;

#[test]
fn the_transport_takes_the_servers_limits() {
    let limits = Limits {
        max_concurrent_streams: 17,
        ..Limits::default()
    };
    let t = format!("{:?}", transport(&limits, Duration::from_secs(42)));
    for want in [
        "max_concurrent_bidi_streams: 17",
        "max_concurrent_uni_streams: 3",
        "stream_receive_window: 131072",
        "receive_window: 1048576",
        "send_window: 1048576",
        "max_idle_timeout: Some(42000)",
    ] {
        assert!(t.contains(want), "no {want:?} in {t}");
    }
}
