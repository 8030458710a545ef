use super::*;

/// The preflight's wait for the server's first record ends only once a whole record
/// (5-byte header and the length it gives) has come.
#[test]
fn whole_record_needs_its_header_and_its_length() {
    assert!(!whole_record(&[]));
    assert!(!whole_record(&[0x17, 3, 3, 0]));
    assert!(!whole_record(&[0x17, 3, 3, 0, 2, 1]));
    assert!(whole_record(&[0x17, 3, 3, 0, 2, 1, 2]));
    assert!(whole_record(&[0x15, 3, 3, 0, 0]));
    assert!(whole_record(&[0x17, 3, 3, 0, 1, 9, 0x17]));
}

#[test]
fn preflight_names_a_dead_port() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let plan = Plan::new(Target::parse(&format!("http://127.0.0.1:{port}/")).unwrap());
    let e = preflight(&plan).unwrap_err().to_string();
    assert!(
        e.contains("connection refused") && e.contains("is the server running"),
        "{e}"
    );
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let plan = Plan::new(Target::parse(&format!("http://{}/", l.local_addr().unwrap())).unwrap());
    preflight(&plan).unwrap();
}

#[test]
fn fd_limit_refuses_what_the_hard_limit_cannot_give() {
    use nix::sys::resource::{getrlimit, Resource};
    let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    raise_fd_limit(100).unwrap();
    if hard < u64::from(u32::MAX) {
        let e = raise_fd_limit(hard as usize).unwrap_err().to_string();
        assert!(e.contains("hard limit"), "{e}");
    }
}

/// The shootout asks for both ends of its largest level (20,000 files at 10,000
/// connections with a service) and only warns when the hard limit is short; the refusal
/// once left the soft limit where it was (1,024 on a fresh machine), so even 10,000
/// connections failed.
#[test]
fn fd_limit_short_hard_limit_still_raises_the_soft_one() {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    if hard >= u64::from(u32::MAX) || hard < 256 {
        return; // unlimited or tiny: nothing to ask beyond it
    }
    setrlimit(Resource::RLIMIT_NOFILE, 1024.min(hard / 2), hard).unwrap();
    assert!(raise_fd_limit(hard as usize).is_err());
    assert_eq!(getrlimit(Resource::RLIMIT_NOFILE).unwrap(), (hard, hard));
}
