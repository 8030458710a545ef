use super::*;

fn process_cpus() -> u64 {
    crate::process::allowed_cpus().len() as u64
}

#[test]
fn reads_the_machine() {
    assert_ne!(cpu_model(), "");
    assert!(
        kernel().chars().next().unwrap().is_ascii_digit(),
        "{}",
        kernel()
    );
    assert!(mem_total_bytes() > 1 << 20);
    assert!(nproc() >= process_cpus(), "nproc counts every online CPU");
    let s = sysctls();
    assert!(s["net.core.somaxconn"].parse::<u64>().is_ok(), "{s:?}");
    assert!(s["fs.nr_open"].parse::<u64>().is_ok(), "{s:?}");
    // Conntrack is recorded when its module is loaded, and left out otherwise.
    assert_eq!(
        s.contains_key("net.netfilter.nf_conntrack_max"),
        probe::machine::sysctl_exists("net.netfilter.nf_conntrack_max")
    );
    assert!(tool_version("sh").is_none() || tool_version("cc").is_some());
    assert!(tool_version("no-such-tool-foxbench").is_none());
}
