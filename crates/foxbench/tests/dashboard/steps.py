"""Drives headless Chromium through the DevTools protocol along a list of steps.

Usage: steps.py CHROMIUM STEPS.json
STEPS.json is a list of objects, each one step, run in order:
  {"open": URL, "page": NAME}                       open a tab, called NAME (or load URL in it)
  {"open_file": PATH, "page": NAME, "s": SECS}      the same, once PATH exists, with the URL it holds
  {"open_eval": JS, "from": PAGE, "page": NAME}     the same, with the URL JS gives in tab PAGE
  {"wait": JS, "page": NAME, "key": K, "s": SECS}   poll JS until truthy; out[K] = its value (or null)
  {"eval": JS, "page": NAME, "key": K}              out[K] = JS's value
  {"sleep": SECS}
  {"shot": PATH, "page": NAME, "whole": BOOL}       a PNG of the page (whole: beyond the window)
  {"touch": PATH}                                   create PATH: a cue for the test
Prints one JSON object of the keys (and K_s: seconds from the start when each was read);
the Rust test asserts on it. Every wait has a deadline.
cdp.py is the load dashboard's own script; this one serves the other tests.
"""
import base64
import json
import re
import subprocess
import sys
import tempfile
import time

import websocket

chromium, steps_path = sys.argv[1:3]
steps = json.load(open(steps_path))
profile = tempfile.mkdtemp(prefix="foxbench-steps-")
proc = subprocess.Popen(
    [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
     "--remote-debugging-port=0", "--user-data-dir=" + profile, "--window-size=1200,1400",
     "about:blank"],
    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
out = {}
try:
    ws_url = None
    deadline = time.time() + 60
    while time.time() < deadline and ws_url is None:
        m = re.search(r"DevTools listening on (ws://\S+)", proc.stderr.readline())
        if m:
            ws_url = m.group(1)
    assert ws_url, "chromium printed no DevTools URL"
    ws = websocket.create_connection(ws_url, timeout=120)
    ids = iter(range(1, 1 << 30))
    pages = {}

    def call(method, session=None, **params):
        i = next(ids)
        msg = {"id": i, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        ws.send(json.dumps(msg))
        end = time.time() + 120
        while time.time() < end:
            r = json.loads(ws.recv())
            if r.get("id") == i:
                if "error" in r:
                    raise RuntimeError(f"{method}: {r['error']}")
                return r.get("result", {})
        raise RuntimeError(f"{method}: no answer")

    def js(session, expr):
        r = call("Runtime.evaluate", session, expression=expr, returnByValue=True)
        return r.get("result", {}).get("value")

    t0 = time.time()
    for step in steps:
        page = pages.get(step.get("page"))
        if "open" in step or "open_file" in step or "open_eval" in step:
            url = step.get("open")
            if "open_eval" in step:
                url = js(pages[step["from"]], step["open_eval"])
                assert url, "no URL from " + step["open_eval"]
                out[step["page"] + "_url"] = url
            elif url is None:
                end = time.time() + float(step.get("s", 60))
                while url is None and time.time() < end:
                    try:
                        url = open(step["open_file"]).read().strip() or None
                    except OSError:
                        time.sleep(0.1)
                assert url, "no URL in " + step["open_file"]
            if step["page"] in pages:
                # A tab opened ahead (about:blank): loading a page in it is quicker on a
                # loaded machine than a new tab.
                call("Page.navigate", pages[step["page"]], url=url)
            else:
                t = call("Target.createTarget", url=url)["targetId"]
                pages[step["page"]] = call("Target.attachToTarget", targetId=t, flatten=True)["sessionId"]
        elif "wait" in step:
            end, v = time.time() + float(step.get("s", 60)), None
            while time.time() < end:
                try:
                    v = js(page, step["wait"])
                except RuntimeError:
                    v = None
                if v:
                    break
                time.sleep(0.1)
            out[step["key"]] = v or None
            out[step["key"] + "_s"] = round(time.time() - t0, 2)
        elif "eval" in step:
            out[step["key"]] = js(page, step["eval"])
            out[step["key"] + "_s"] = round(time.time() - t0, 2)
        elif "sleep" in step:
            time.sleep(float(step["sleep"]))
        elif "shot" in step:
            data = call("Page.captureScreenshot", page, format="png",
                        captureBeyondViewport=bool(step.get("whole", True)))["data"]
            with open(step["shot"], "wb") as f:
                f.write(base64.b64decode(data))
        elif "touch" in step:
            open(step["touch"], "w").close()
finally:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
print(json.dumps(out))
