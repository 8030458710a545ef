"""Drives headless Chromium through the DevTools protocol against a live dashboard.

Usage: cdp.py CHROMIUM URL OUTDIR REPORT_HTML
Writes screenshots and the final pages' HTML into OUTDIR and prints one JSON object of what
it observed; the Rust test asserts on it. Every wait has a deadline, and each condition is
polled for, so a slow browser start costs time, not the check. Once the live checks are
done it creates OUTDIR/live-checked, the caller's cue to end the run (with Ctrl-C).
"""
import base64
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import websocket

chromium, url, outdir, report_html = sys.argv[1:5]
profile = tempfile.mkdtemp(prefix="foxbench-cdp-")
proc = subprocess.Popen(
    [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
     "--remote-debugging-port=0", "--user-data-dir=" + profile, "--window-size=1200,1400",
     "about:blank"],
    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
out = {}
try:
    ws_url = None
    deadline = time.time() + 30
    while time.time() < deadline and ws_url is None:
        line = proc.stderr.readline()
        m = re.search(r"DevTools listening on (ws://\S+)", line)
        if m:
            ws_url = m.group(1)
    assert ws_url, "chromium printed no DevTools URL"
    # bench/soak.py allows longer: a page of 3,000 intervals on a loaded CPU is slow to swap.
    call_timeout_s = float(os.environ.get("CDP_CALL_TIMEOUT_S", "120"))
    ws = websocket.create_connection(ws_url, timeout=call_timeout_s)
    ids = iter(range(1, 1 << 30))

    def call(method, session=None, **params):
        i = next(ids)
        msg = {"id": i, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        ws.send(json.dumps(msg))
        end = time.time() + call_timeout_s
        while time.time() < end:
            r = json.loads(ws.recv())
            if r.get("id") == i:
                if "error" in r:
                    raise RuntimeError(f"{method}: {r['error']}")
                return r.get("result", {})
        raise RuntimeError(f"{method}: no answer")

    def open_page(u):
        t = call("Target.createTarget", url=u)["targetId"]
        return call("Target.attachToTarget", targetId=t, flatten=True)["sessionId"]

    def js(session, expr):
        r = call("Runtime.evaluate", session, expression=expr, returnByValue=True)
        return r.get("result", {}).get("value")

    def wait_for(session, expr, seconds):
        end = time.time() + seconds
        while time.time() < end:
            v = js(session, expr)
            if v:
                return v
            time.sleep(0.1)
        return None

    def shot(session, name):
        data = call("Page.captureScreenshot", session, format="png",
                    captureBeyondViewport=True)["data"]
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(base64.b64decode(data))

    points = "Number(document.body && document.body.getAttribute('data-points') || 0)"
    page = open_page(url)
    live_wait_s = float(os.environ.get("CDP_LIVE_WAIT_S", "60"))
    out["first_points"] = wait_for(page, points, live_wait_s) or 0
    time.sleep(1.0)
    out["second_points"] = js(page, points)
    # The stall: the largest p99 drawn so far, in µs (uPlot's data of the latency chart).
    out["max_p99_us_drawn"] = wait_for(
        page, "window.foxbench && Math.max.apply(null, window.foxbench.charts.lat.data[2].filter(v => v != null)) >= 500000"
        " && Math.max.apply(null, window.foxbench.charts.lat.data[2].filter(v => v != null))",
        live_wait_s)
    # The broken --slo clause's line (the first after p50, p99, max) is drawn red.
    out["slo_line_stroke"] = js(
        page, "(() => { const u = window.foxbench.charts.lat; return u.series[4].stroke(u, 4); })()")
    # bench/soak.py waits into the run before its mid-run screenshot.
    time.sleep(float(os.environ.get("CDP_MID_RUN_DELAY_S", "0")))
    shot(page, "dashboard-mid-run.png")
    # A page that joins late gets the history at once.
    late = open_page(url)
    out["first_points_when_late_joined"] = js(page, points)
    out["late_points"] = wait_for(
        late, f"{points} >= {out['first_points_when_late_joined'] or 0} - 2 && {points}",
        live_wait_s) or 0
    open(os.path.join(outdir, "live-checked"), "w").close()
    # The run ends: the page becomes the final report.
    out["became_report"] = bool(wait_for(
        page, "!!document.getElementById('foxbench-download') && !document.getElementById('c-rate')",
        float(os.environ.get("CDP_END_WAIT_S", "60"))))
    time.sleep(0.5)
    shot(page, "dashboard-final.png")
    final = js(page, "(() => { const a = document.getElementById('foxbench-download');"
                     " const c = a.cloneNode(true); a.remove(); const h = document.documentElement.outerHTML;"
                     " document.body.appendChild(c); return h; })()")
    with open(os.path.join(outdir, "final-page.html"), "w") as f:
        f.write(final or "")
    end = time.time() + float(os.environ.get("CDP_REPORT_WAIT_S", "60"))
    while not os.path.exists(report_html) and time.time() < end:
        time.sleep(0.1)
    rep_html = None
    if os.path.exists(report_html):
        rep = open_page("file://" + os.path.abspath(report_html))
        # Polled until the file itself has loaded: the new target starts on about:blank, and
        # an evaluation during the navigation gets nothing.
        rep_html = wait_for(rep, "location.protocol === 'file:' && document.readyState === 'complete'"
                                 " && document.documentElement.outerHTML", 30)
    with open(os.path.join(outdir, "report-page.html"), "w") as f:
        f.write(rep_html or "")
    out["download_href"] = js(page, "document.getElementById('foxbench-download').href")
finally:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
print(json.dumps(out))
