#!/usr/bin/env bash
# Validates the Kubernetes manifests against the Kubernetes schemas (kubernetes-validate,
# from PyPI, which ships them; no cluster is needed), and checks that the committed example
# is what `foxbench k8s-job` renders. Ends with "N passed, N failed" (scripts/test counts it).
# Usage: bash deploy/k8s/test.sh [path/to/foxbench]
set -uo pipefail
cd "$(dirname "$0")/../.."
if [ $# -ge 1 ]; then fox=$1
else cargo build -q --locked -p foxbench || exit 2; fox=target/debug/foxbench; fi
k8s=1.30.0           # the oldest Kubernetes the Job is checked against
pass=0; fail=0
ok()  { pass=$((pass + 1)); echo "ok: $*"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

venv=${FOXBENCH_K8S_VENV:-${TMPDIR:-/tmp}/foxbench-k8s-venv}
if [ ! -x "$venv/bin/kubernetes-validate" ]; then
  python3 -m venv "$venv" && "$venv/bin/pip" install -q 'kubernetes-validate==1.37.0' \
    || { echo "cannot install kubernetes-validate from PyPI"; echo "0 passed, 1 failed"; exit 1; }
fi
validate() { "$venv/bin/kubernetes-validate" --strict --quiet -k "$k8s" "$@"; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# The committed example is exactly the renderer's output for its flags.
example_flags=(--agents 3 --image ghcr.io/example/foxbench:0.1 --start-at 2030-01-01T00:00:00Z
  -- -c 300 -d 60s http://web.default.svc.cluster.local:8080/)
"$fox" k8s-job "${example_flags[@]}" > "$tmp/example.yaml"
if diff -u deploy/k8s/job.yaml "$tmp/example.yaml" > "$tmp/diff"; then ok "deploy/k8s/job.yaml is current"
else bad "deploy/k8s/job.yaml is stale: regenerate with foxbench k8s-job ${example_flags[*]} > deploy/k8s/job.yaml"; cat "$tmp/diff"; fi

# Every shape the renderer produces passes the schemas.
i=0
for flags in "--agents 1 --image foxbench:dev -- -n 1000 http://10.0.0.1/" \
             "--agents 8 --image r.example/fb@sha256:0123 --cpus 2 --memory 1Gi --name shoot-8 -- -R 1000..20000/60s -c 800 http://web:8080/" \
             "--agents 3 --image foxbench:dev --start-at +5m -- --no-keepalive -c 30 -d 10s https://web.example/ --insecure"; do
  i=$((i + 1))
  # shellcheck disable=SC2086
  if "$fox" k8s-job $flags > "$tmp/r$i.yaml" && validate "$tmp/r$i.yaml"; then ok "rendered: $flags"
  else bad "rendered: $flags"; fi
done
if validate deploy/k8s/job.yaml; then ok "deploy/k8s/job.yaml passes the Kubernetes $k8s schemas"
else bad "deploy/k8s/job.yaml fails the Kubernetes $k8s schemas"; fi

# The validator is not vacuous: a Job with a wrong field type and an unknown field fails.
sed 's/completions: 3/completions: three/' deploy/k8s/job.yaml > "$tmp/wrong.yaml"
sed 's/parallelism: 3/parallelism: 3\n  paralelism: 3/' deploy/k8s/job.yaml > "$tmp/unknown.yaml"
for f in wrong unknown; do
  if validate "$tmp/$f.yaml" > /dev/null 2>&1; then bad "a broken manifest ($f) passed"
  else ok "a broken manifest ($f) is refused"; fi
done

# Flags the renderer must refuse, each in one line, exit 2.
for flags in "--agents 0 --image x -- http://h/" \
             "--agents 4 --image x -- -c 3 http://h/" \
             "--agents 2 --image x -- --shard 0/2 http://h/" \
             "--agents 2 --image x -- --bogus http://h/" \
             "--agents 2 --image x --name Bad_Name -- http://h/"; do
  # shellcheck disable=SC2086
  out=$("$fox" k8s-job $flags 2>&1 >/dev/null); code=$?
  if [ "$code" -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ]; then ok "refused: $flags"
  else bad "not refused in one line with exit 2 ($code): $flags: $out"; fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
