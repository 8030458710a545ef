//! What a run records besides its cells: the protocol (the machine, the CPUs on each side,
//! the toolchains, the plan) and a target's result before its steps fill it in.

use std::time::{SystemTime, UNIX_EPOCH};

use report::shootout::{LevelInfo, Outcome, Param, PlanInfo, Protocol, TargetResult};

use super::Options;
use crate::cache;
use crate::suite::{Level, Multiplexed, Suite, TargetSpec};

fn level_info(l: &Level, plan: &crate::suite::Plan) -> LevelInfo {
    LevelInfo {
        name: l.name.clone(),
        connections: l.connections as u64,
        duration_s: (l.requests.is_none() && l.capacity.is_none())
            .then_some(plan.duration.as_secs_f64()),
        requests: l.requests,
        max_duration_s: l.requests.map(|_| l.max_duration.as_secs_f64()),
        keepalive: l.keepalive,
        repeats: l.repeats.unwrap_or(plan.repeats),
        tls_resume: l.tls_resume,
        capacity: l
            .capacity
            .as_ref()
            .map(|c| crate::capacity::info(c, l.max_duration)),
        rate: l.rate.as_ref().map(|r| r.text.clone()),
        http2_streams: l
            .protocol
            .filter(|p| p.version == Multiplexed::Http2)
            .map(|p| u64::from(p.streams)),
        http3_streams: l
            .protocol
            .filter(|p| p.version == Multiplexed::Http3)
            .map(|p| u64::from(p.streams)),
    }
}

/// The run's protocol: the machine, the CPUs on each side, the toolchains and the plan.
pub(super) fn protocol(
    suite: &Suite,
    opts: &Options,
    client_cpus: &[usize],
    server_cpus: &[usize],
    client_threads: usize,
) -> Protocol {
    let mut tools: Vec<String> = suite
        .targets
        .iter()
        .chain(suite.services.iter().map(|s| &s.target))
        .flat_map(|t| t.requires.clone())
        .collect();
    tools.sort();
    tools.dedup();
    let toolchains = tools
        .iter()
        .filter(|t| cache::which(t).is_some())
        .filter_map(|t| Some((t.clone(), crate::protocol::tool_version(t)?)))
        .collect();
    let nofile = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .unwrap_or((0, 0));
    let plan = &suite.plan;
    Protocol {
        started_unix_s: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        foxbench_version: env!("CARGO_PKG_VERSION").into(),
        cpu_model: crate::protocol::cpu_model(),
        kernel: crate::protocol::kernel(),
        nproc: crate::protocol::nproc(),
        mem_total_bytes: crate::protocol::mem_total_bytes(),
        sysctl: crate::protocol::sysctls(),
        ulimit_nofile: (nofile.0, nofile.1),
        client_cpus: client_cpus.to_vec(),
        server_cpus: server_cpus.to_vec(),
        service_cpus: Vec::new(),
        cpu_sharing: Vec::new(),
        client_threads: client_threads as u64,
        toolchains,
        command: opts.command.clone(),
        plan: PlanInfo {
            levels: plan.levels.iter().map(|l| level_info(l, plan)).collect(),
            repeats: plan.repeats,
            warmup_max_s: plan.warmup.as_secs_f64(),
            warmup_slice_s: plan.warmup_slice.as_secs_f64(),
            sample_interval_s: plan.sample_interval.as_secs_f64(),
            timeout_s: plan.timeout.as_secs_f64(),
            stop_grace_s: plan.stop_grace.as_secs_f64(),
        },
    }
}

pub(super) fn empty(spec: &TargetSpec, outcome: Outcome) -> TargetResult {
    TargetResult {
        name: spec.name.clone(),
        base: (!spec.params.is_empty()).then(|| spec.base.clone()),
        params: spec
            .params
            .iter()
            .map(|(name, value)| Param {
                name: name.clone(),
                value: value.clone(),
            })
            .collect(),
        skipped_scenarios: Vec::new(),
        services: spec.uses.clone(),
        language: spec.language.clone(),
        outcome,
        message: None,
        build: None,
        start_command: None,
        startup_ms: None,
        idle: None,
        verify: Vec::new(),
        cells: Vec::new(),
        log_tail: None,
    }
}
