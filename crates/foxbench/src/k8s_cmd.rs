//! `foxbench k8s-job`: renders the Kubernetes Indexed Job that runs `foxbench load` as N
//! agents (`--shard $(JOB_COMPLETION_INDEX)/N`), from the same flags as `load`.
//!
//! A subcommand rather than a template: the start instant must be absolute and computed
//! when the Job is applied (the downward API cannot give pods a shared instant), N appears
//! in three places that must agree (`completions`, `parallelism`, `--shard`), and the load
//! flags are checked by `load`'s own parser before anything reaches a cluster.

use std::process::ExitCode;
use std::time::SystemTime;

use anyhow::{anyhow, bail, Result};
use clap::Args;

/// Flags of `foxbench k8s-job`.
#[derive(Args, Debug)]
#[command(
    after_help = "Example:\n  foxbench k8s-job --agents 3 --image registry.example/foxbench:0.1 -- -c 300 -d 60s http://web.default.svc:8080/ | kubectl apply -f -"
)]
pub struct K8sJobArgs {
    /// Agents: pods of the Indexed Job, spread one per node.
    #[arg(long = "agents", value_name = "N")]
    pub agents: u64,

    /// The container image holding /foxbench (deploy/Containerfile builds one).
    #[arg(long = "image")]
    pub image: String,

    /// The Job's name (pods are labelled foxbench/run=NAME; kubectl logs -l selects them).
    #[arg(long = "name", default_value = "foxbench")]
    pub name: String,

    /// When the agents start: RFC 3339, or +DURATION from now, rendered as an instant. Leave
    /// every pod time to be scheduled, pull the image and check the target.
    #[arg(long = "start-at", default_value = "+60s")]
    pub start_at: String,

    /// CPUs each agent requests and is limited to (its worker threads: --threads).
    #[arg(long = "cpus", default_value_t = 1)]
    pub cpus: u32,

    /// Memory each agent requests and is limited to.
    #[arg(long = "memory", default_value = "256Mi")]
    pub memory: String,

    /// `foxbench load`'s flags and URL, after `--` (without --shard, --start-at, --json).
    #[arg(last = true, required = true, value_name = "LOAD")]
    pub load: Vec<String>,
}

/// Flags the Job sets itself (or that have no place in a pod), and what to do instead.
const OWN_FLAGS: [(&str, &str); 8] = [
    ("--shard", "k8s-job gives each pod its share: use --agents"),
    (
        "--start-at",
        "k8s-job sets one instant for every pod: use k8s-job's --start-at",
    ),
    (
        "--json",
        "each pod writes its result to its log for foxbench merge",
    ),
    (
        "--hlog",
        "a pod's files are lost with it: merge the JSON results instead",
    ),
    ("--threads", "k8s-job sets it from --cpus"),
    ("-t", "k8s-job sets --threads from --cpus"),
    ("--quiet", "k8s-job sets it: the log carries only the JSON"),
    ("-q", "k8s-job sets --quiet: the log carries only the JSON"),
];

/// Renders the manifest for `args`, the start instant resolved at `now`.
pub fn render(args: &K8sJobArgs, now: SystemTime) -> Result<String> {
    let n = args.agents;
    if n == 0 || n > load::shard::MAX_SHARDS {
        bail!("--agents must be 1 to {}", load::shard::MAX_SHARDS);
    }
    for a in &args.load {
        let own = OWN_FLAGS.iter().find(|(o, _)| {
            a == o
                || a.starts_with(&format!("{o}="))
                || (o.len() == 2 && a.starts_with(o) && a.len() > 2 && !a.starts_with("--"))
        });
        if let Some((o, instead)) = own {
            bail!("{a}: leave {o} out of the load flags: {instead}");
        }
    }
    let name_ok = !args.name.is_empty()
        && args.name.len() <= 52
        && args
            .name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !args.name.starts_with('-')
        && !args.name.ends_with('-');
    if !name_ok {
        bail!(
            "--name {:?}: use 1 to 52 lowercase letters, digits and '-' (a DNS label)",
            args.name
        );
    }
    let at =
        load::start::resolve(&args.start_at, None, now).map_err(|e| anyhow!("--start-at: {e}"))?;
    let at = load::start::format_rfc3339(at);
    let mut argv: Vec<String> = vec![
        "load".into(),
        "--shard".into(),
        format!("$(JOB_COMPLETION_INDEX)/{n}"),
        "--start-at".into(),
        at.clone(),
        "--json".into(),
        "-".into(),
        "--quiet".into(),
        "--threads".into(),
        args.cpus.to_string(),
    ];
    argv.extend(args.load.iter().cloned());
    // Every agent's command must parse with load's own parser, and its share be non-empty.
    for i in [0, n - 1] {
        let concrete: Vec<String> = argv
            .iter()
            .map(|a| a.replace("$(JOB_COMPLETION_INDEX)", &i.to_string()))
            .collect();
        let parsed =
            crate::parse_load_args(&concrete).map_err(|e| anyhow!("the load flags: {e}"))?;
        if (parsed.connections as u64) < n {
            bail!(
                "-c {} cannot be shared by {n} agents: use at least {n} connections",
                parsed.connections
            );
        }
        if parsed.requests.is_some_and(|r| r < n) {
            bail!("-n cannot be shared by {n} agents: use at least {n} requests");
        }
    }
    let q = |s: &str| serde_json::to_string(s).expect("a string serializes");
    let args_yaml = argv.iter().map(|a| q(a)).collect::<Vec<_>>().join(", ");
    let name = &args.name;
    Ok(format!(
        r#"# Rendered by `foxbench k8s-job` (foxbench {version}); start instant {at}.
# kubectl apply -f THIS; kubectl wait --for=condition=complete --timeout=-1s job/{name};
# kubectl logs -l foxbench/run={name} --tail=-1 --prefix | foxbench merge -
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  labels:
    app.kubernetes.io/name: foxbench
    foxbench/run: {name}
spec:
  completionMode: Indexed
  completions: {n}
  parallelism: {n}
  # An agent that fails is not retried: a late or repeated shard would skew the merge.
  backoffLimit: 0
  ttlSecondsAfterFinished: 86400
  template:
    metadata:
      labels:
        app.kubernetes.io/name: foxbench
        foxbench/run: {name}
    spec:
      restartPolicy: Never
      affinity:
        podAntiAffinity:
          # One agent per node: agents sharing a node share its CPUs and NIC.
          requiredDuringSchedulingIgnoredDuringExecution:
            - labelSelector:
                matchLabels:
                  foxbench/run: {name}
              topologyKey: kubernetes.io/hostname
      containers:
        - name: foxbench
          image: {image}
          command: ["/foxbench"]
          args: [{args_yaml}]
          env:
            - name: JOB_COMPLETION_INDEX
              valueFrom:
                fieldRef:
                  fieldPath: metadata.annotations['batch.kubernetes.io/job-completion-index']
          resources:
            requests:
              cpu: "{cpus}"
              memory: {memory}
            limits:
              cpu: "{cpus}"
              memory: {memory}
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            runAsNonRoot: true
            runAsUser: 65532
"#,
        version = env!("CARGO_PKG_VERSION"),
        image = q(&args.image),
        cpus = args.cpus,
        memory = q(&args.memory),
    ))
}

/// Runs `foxbench k8s-job`: the manifest on stdout.
pub fn run(args: K8sJobArgs) -> Result<ExitCode> {
    let yaml = render(&args, SystemTime::now())?;
    use std::io::Write as _;
    std::io::stdout()
        .lock()
        .write_all(yaml.as_bytes())
        .map_err(|e| anyhow::Error::new(e).context("cannot write the manifest"))?;
    Ok(ExitCode::SUCCESS)
}
