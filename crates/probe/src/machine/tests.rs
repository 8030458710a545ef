use super::*;

#[test]
fn sockstat_is_parsed() {
    let text = "sockets: used 47\nTCP: inuse 20005 orphan 0 tw 514 alloc 20011 mem 9654\nUDP: inuse 0 mem 0\n";
    assert_eq!(sockstat_tcp_pages(text), Some(9654));
    assert_eq!(sockstat_tcp_pages("TCP: inuse 1\n"), None);
    assert_eq!(sockstat_tcp_pages(""), None);
    assert_eq!(numbers::<2>("32768\t60999\n"), Some([32768, 60999]));
    assert_eq!(numbers::<2>("32768"), None);
    assert_eq!(numbers::<1>("x"), None);
    assert_eq!(loadavg_tasks("30.96 33.61 28.16 24/306 690\n"), Some(306));
    assert_eq!(loadavg_tasks("30.96 33.61"), None);
}

#[test]
fn reads_this_machine() {
    let m = Machine::read();
    assert!(m.nofile.is_some_and(|(soft, hard)| soft <= hard), "{m:?}");
    assert!(sysctl_exists("net.core.somaxconn"));
    assert!(sysctl("net.core.somaxconn").is_some());
    assert!(!sysctl_exists("net.no.such.setting"));
    assert!(kernel_release().is_some_and(|k| k.starts_with(|c: char| c.is_ascii_digit())));
    assert!(mem_total_bytes().is_some_and(|b| b > 1 << 20));
    assert!(cpu_model().is_some_and(|c| !c.is_empty()));
}
