use super::*;

#[test]
fn ulimit_1024_is_short_for_10000_connections_but_not_for_100() {
    let machine = Machine {
        nofile: Some((1024, 1024)),
        somaxconn: Some(4096),
        ..Machine::default()
    };
    let notes = short_limits(&machine, 10_000);
    let checks: Vec<&str> = notes.iter().map(|n| n.check.as_str()).collect();
    assert_eq!(checks, ["ulimit -Hn", "ulimit -n"], "{notes:?}");
    assert_eq!(notes[0].observed, "1024");
    assert_eq!(notes[0].needed, "10064");
    assert_eq!(notes[0].fix.as_deref(), Some("ulimit -n 10064"));
    // Unreadable figures are not warned about; enough ones neither.
    assert!(short_limits(&machine, 100).is_empty());
}
