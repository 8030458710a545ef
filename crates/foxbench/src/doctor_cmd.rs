//! `foxbench doctor`: flags, and the findings printed (their notes' settings worded as
//! flags); the checks are `load::os_limits`.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use load::os_limits::{check, short, Demand, Finding, Machine, Severity};

/// The schema name of `--json`, as committed at `schemas/doctor.schema.json`.
pub const DOCTOR_SCHEMA: &str = "foxbench-doctor/1";

/// Flags of `foxbench doctor`.
#[derive(Args, Debug)]
pub struct DoctorArgs {
    /// Concurrent connections the run will hold, all to one address and port.
    #[arg(short, long, default_value_t = 10_000, value_parser = at_least_one)]
    pub connections: u64,
    /// New connections per second that this side closes first (each holds its port 60 s in
    /// TIME_WAIT). Default: none; foxbench without keep-alive lets the server close.
    #[arg(long, visible_alias = "closes-per-s", value_name = "CONNECTIONS_PER_S", value_parser = at_least_one)]
    pub rate: Option<u64>,
    /// Threads the server will run, for a thread per connection (a 10,000-thread pool):
    /// checks ulimit -u, kernel.threads-max, kernel.pid_max and vm.max_map_count.
    #[arg(long, value_parser = at_least_one)]
    pub threads: Option<u64>,
    /// The target is on another host: tcp_tw_reuse = 2 (the default) reuses TIME_WAIT ports
    /// on loopback only, so --rate's closes then hold their ports 60 s.
    #[arg(long)]
    pub remote: bool,
    /// The run speaks HTTP/3: checks the UDP socket buffer caps (net.core.rmem_max and
    /// wmem_max) against what each connection's socket asks for.
    #[arg(long)]
    pub http3: bool,
    /// Print the findings as JSON (schemas/doctor.schema.json).
    #[arg(long)]
    pub json: bool,
}

fn at_least_one(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("must be a whole number, such as 10000".into()),
    }
}

/// Checks this machine for the demand; exit 1 when a limit is short.
pub fn run(args: DoctorArgs) -> Result<ExitCode> {
    let demand = Demand {
        connections: args.connections,
        closes_per_s: args.rate,
        threads: args.threads,
        remote: args.remote,
        udp: args.http3,
    };
    let findings: Vec<Finding<String>> = check(&Machine::read(), &demand)
        .iter()
        .map(|f| f.worded(&crate::cli::Flags))
        .collect();
    let shorts = short(&findings).count();
    let mut out = std::io::stdout().lock();
    if args.json {
        let doc = serde_json::json!({
            "schema": DOCTOR_SCHEMA,
            "demand": demand,
            "short": shorts,
            "findings": findings,
        });
        serde_json::to_writer_pretty(&mut out, &doc)?;
        writeln!(out)?;
    } else {
        out.write_all(text(&demand, &findings).as_bytes())?;
    }
    Ok(if shorts == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(crate::cli::exit::FAILED)
    })
}

fn text(demand: &Demand, findings: &[Finding<String>]) -> String {
    let mut s = format!(
        "foxbench doctor: {} connections to one address and port, {}\n",
        demand.connections,
        match demand.closes_per_s {
            Some(r) => format!("{r} a second closed by this side (TIME_WAIT)"),
            None => "TIME_WAIT on the server's side (--rate for a client that closes first)".into(),
        }
    );
    for f in findings {
        s += &format!(
            "{:<8}{:<32}{}, needs {}\n",
            f.severity.as_str(),
            f.check,
            f.observed,
            f.needed
        );
    }
    let shorts = short(findings).count();
    if shorts == 0 {
        s += "nothing short\n";
    } else {
        s += &format!("{shorts} short; to fix (as root):\n");
    }
    // Each fix once (the soft and hard open-files limits share one), then why.
    let mut fixes: Vec<&str> = Vec::new();
    for f in findings.iter().filter(|f| f.severity != Severity::Ok) {
        match f.fix.as_deref() {
            Some(fix) if !fixes.contains(&fix) => {
                fixes.push(fix);
                s += &format!("  {fix}\n");
            }
            _ => {}
        }
        s += &format!(
            "      # {} ({}): {}\n",
            f.check,
            f.severity.as_str(),
            f.note
        );
    }
    s
}
