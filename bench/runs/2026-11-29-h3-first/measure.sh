#!/usr/bin/env bash
# foxbench --http3 vs --http2 (TLS over TCP) against the same caddy; client on CPU 0, caddy on CPU 1.
set -u
F=/work/wt/h3-target/release/foxbench
cd /tmp/h3t
pkill -f "caddy run --config /tmp/h3t/Caddyfile" 2>/dev/null
pkill -f "caddy run --config Caddyfile" 2>/dev/null
sleep 0.5
taskset -c 1 caddy run --config /tmp/h3t/Caddyfile --adapter caddyfile > caddy.log 2>&1 &
CADDY=$!
for i in $(seq 1 100); do ss -uln | grep -q 28443 && ss -tln | grep -q 28443 && break; sleep 0.1; done
grep -E "RcvbufErrors|Udp:" /proc/net/snmp | head -2 > snmp.before
for round in 1 2; do
  for proto in http3 http2; do
    taskset -c 0 $F load --$proto https://127.0.0.1:28443/ -c 10 --streams 10 -d 5s --cacert cert.pem --json run-$proto-$round.json > /dev/null 2> err-$proto-$round.txt
    python3 - "$proto" "$round" <<'PY'
import json,sys
d=json.load(open(f"run-{sys.argv[1]}-{sys.argv[2]}.json"))
r=d["requests"]; c=d["client"]
print(sys.argv[1], sys.argv[2], "req/s %.0f" % d["throughput"]["requests_per_sec"], "ok", r["ok"], "errors", r["errors"], "in_flight", r["in_flight"],
      "cpu_us/req %.1f" % (c["cpu_us_per_request"] or 0), "cpu%% %.0f" % c["cpu_percent"], "saturated", c["saturated"])
PY
  done
done
grep -E "Udp:" /proc/net/snmp | head -2 > snmp.after
echo before; cat snmp.before; echo after; cat snmp.after
kill $CADDY; wait $CADDY 2>/dev/null
