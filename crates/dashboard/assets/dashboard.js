// The live page: uPlot charts fed by the run's Server-Sent Events. Points are kept in
// arrays of the page; the server's series is bounded, and so are these (MAX_POINTS).
// One page for every kind of run (meta.kind): "load", "find-max" (the windows' chart above
// the current window's charts) and "shootout" (the matrix; `?cell=N` shows cell N's charts
// while it runs).
(function () {
  "use strict";
  var MAX_POINTS = 20000;
  // Each series' colour, from the report's palette (report::palette), as the load page
  // draws it: filled in by the server.
  var C = /*COLOURS*/;
  var KINDS = ["connect", "write", "read", "parse", "timeout", "tls"];
  var meta = null, rows = [], gauges = [], service = [], windows = [], cells = [], cellAt = {};
  var charts = {}, pending = false;
  var wantCell = (function () {
    var m = /[?&]cell=(\d+)/.exec(location.search);
    return m ? Number(m[1]) : null;
  })();
  var W = function () { return Math.max(400, Math.min(1100, window.innerWidth - 40)); };
  var $ = function (id) { return document.getElementById(id); };

  function target(t) {
    var p = meta.target;
    if (!p.length) return null;
    if (t <= p[0][0]) return p[0][1];
    for (var i = 1; i < p.length; i++) {
      if (t <= p[i][0]) {
        var a = p[i - 1], b = p[i];
        return a[1] + (b[1] - a[1]) * (t - a[0]) / Math.max(1e-9, b[0] - a[0]);
      }
    }
    return p[p.length - 1][1];
  }

  function sloLines(chart) {
    return meta.slo.filter(function (c) { return c.chart === chart; });
  }

  function holds(c, v) {
    return c.op === "<" ? v < c.threshold : c.op === "<=" ? v <= c.threshold
      : c.op === ">" ? v > c.threshold : v >= c.threshold;
  }

  function broken(c) {
    if (c.chart === "latency") {
      var key = c.percentile === 50 ? "p50_us" : c.percentile === 99 ? "p99_us"
        : c.percentile === 100 ? "max_us" : null;
      if (!key) return false;
      return rows.some(function (r) { return r.requests > 0 && !holds(c, r[key]); });
    }
    var req = 0, err = 0, dur = 0;
    rows.forEach(function (r) { req += r.requests; err += r.errors; dur += r.duration_s; });
    if (!rows.length) return false;
    if (c.chart === "rate") return !holds(c, req / Math.max(1e-9, dur));
    return !holds(c, 100 * err / Math.max(1, req + err));
  }

  function make(id, series, scales, yAxis, xAxis) {
    var el = $(id);
    var opts = {
      width: W(), height: 220, scales: scales || { x: { time: false } },
      axes: [xAxis || { label: "seconds into the run" }, yAxis || { size: 60 }],
      series: [{ label: xAxis ? "x" : "t (s)" }].concat(series),
      legend: { live: true }
    };
    return new uPlot(opts, [[]].concat(series.map(function () { return []; })), el);
  }

  // A clause's line: green while it holds, red once broken (uPlot calls it on each draw).
  function sloStroke(c) {
    return function () { return broken(c) ? C.failed : C.held; };
  }

  var usAxis = {
    size: 80,
    values: function (u, vals) { return vals.map(function (v) { return fmtUs(null, v); }); }
  };

  function open() { return meta.model === "open"; }

  // The windows' chart of a search: held and failed windows as points, the objective's
  // latency clauses as lines. It lives across windows: made once.
  function setupWindows() {
    if (charts.win) return;
    $("c-win").style.display = "block";
    var s = [
      { label: "held", stroke: C.held, fill: C.held, paths: function () { return null; }, points: { show: true, size: 10 }, value: fmtUs },
      { label: "failed", stroke: C.failed, fill: C.failed, paths: function () { return null; }, points: { show: true, size: 10 }, value: fmtUs }
    ];
    sloLines("latency").forEach(function (c) {
      s.push({ label: c.text, stroke: C.failed, dash: [4, 4], value: fmtUs });
    });
    charts.win = make("c-win", s, { x: { time: false }, y: { distr: 3, log: 10 } }, usAxis,
      { label: "offered rate, requests/s (the window's -R)" });
  }

  function setup() {
    $("kind").textContent = meta.kind === "shootout" ? "foxbench shootout"
      : meta.kind === "find-max" ? "foxbench load --find-max" : "foxbench load";
    $("url").textContent = meta.url;
    $("title").textContent = meta.title;
    $("title").style.display = meta.title ? "block" : "none";
    ["rate", "lat", "err", "conn", "cpu"].forEach(function (k) {
      if (charts[k]) { charts[k].destroy(); delete charts[k]; }
    });
    if (meta.kind === "find-max") setupWindows();
    $("matrix").style.display = meta.kind === "shootout" ? "block" : "none";
    var showRun = meta.kind !== "shootout" || (wantCell !== null && meta.run === wantCell);
    $("runcharts").style.display = showRun ? "block" : "none";
    var rate = [{ label: "req/s", stroke: C.rate, width: 2 }];
    if (meta.target.length) rate.push({ label: "target", stroke: C.target, dash: [6, 4] });
    sloLines("rate").forEach(function (c) { rate.push({ label: c.text, stroke: sloStroke(c), dash: [2, 2] }); });
    charts.rate = make("c-rate", rate);
    var lat = [
      { label: "p50", stroke: C.p50, value: fmtUs },
      { label: "p99", stroke: C.p99, width: 2, value: fmtUs },
      { label: "max", stroke: C.max, value: fmtUs }
    ];
    sloLines("latency").forEach(function (c) { lat.push({ label: c.text, stroke: sloStroke(c), dash: [2, 2], value: fmtUs }); });
    if (open()) {
      lat.push({ label: "service p50", stroke: C.service_p50, dash: [8, 4], value: fmtUs });
      lat.push({ label: "service p99", stroke: C.service_p99, dash: [8, 4], width: 2, value: fmtUs });
    }
    charts.lat = make("c-lat", lat, { x: { time: false }, y: { distr: 3, log: 10 } }, usAxis);
    var err = KINDS.map(function (k) { return { label: k, stroke: C["errors_" + k] }; });
    sloLines("errors").forEach(function (c) { err.push({ label: c.text + " (% of requests)", stroke: sloStroke(c), dash: [2, 2] }); });
    charts.err = make("c-err", err);
    charts.conn = make("c-conn", [{ label: "connections", stroke: C.connections }]);
    charts.cpu = make("c-cpu", [
      { label: "client CPU %", stroke: C.cpu, width: 2 },
      { label: "of it, spin (empty polls) %", stroke: C.spin, dash: [8, 4] },
      { label: "client-bound above (CPU less spin)", stroke: C.saturated, dash: [4, 4] }
    ], { x: { time: false }, y: { range: [0, 105] } });
    var slo = $("slo");
    slo.textContent = "";
    meta.slo.forEach(function (c, i) {
      var s = document.createElement("span");
      s.id = "slo-" + i;
      s.textContent = (meta.kind === "find-max" ? "--find-max " : "--slo ") + c.text;
      slo.appendChild(s);
    });
  }

  function fmtUs(u, v) {
    if (v == null) return "-";
    return v >= 1e6 ? (v / 1e6).toFixed(2) + " s" : v >= 1e3 ? (v / 1e3).toFixed(2) + " ms" : v.toFixed(1) + " µs";
  }

  function drawWindows() {
    if (!charts.win) return;
    var w = windows.filter(function (p) { return p.p99_us != null; }).slice()
      .sort(function (a, b) { return a.offered_per_sec - b.offered_per_sec; });
    // From 0 to a little past the highest rate: the objective's line spans the chart,
    // not only the windows' rates.
    var ends = w.length ? [{ offered_per_sec: 0 }].concat(w, [{ offered_per_sec: w[w.length - 1].offered_per_sec * 1.1 }]) : [];
    var x = ends.map(function (p) { return p.offered_per_sec; });
    var d = [x, ends.map(function (p) { return p.p99_us == null ? null : p.passed ? p.p99_us : null; }),
      ends.map(function (p) { return p.p99_us == null || p.passed ? null : p.p99_us; })];
    sloLines("latency").forEach(function (c) { d.push(x.map(function () { return c.threshold; })); });
    charts.win.setData(d);
    document.body.setAttribute("data-windows", String(w.length));
  }

  function drawMatrix() {
    var targets = [], levels = [];
    cells.forEach(function (c) {
      if (targets.indexOf(c.target) < 0) targets.push(c.target);
      if (levels.indexOf(c.level) < 0) levels.push(c.level);
    });
    var head = $("matrix").querySelector("thead"), body = $("matrix").querySelector("tbody");
    head.innerHTML = "";
    body.innerHTML = "";
    var tr = document.createElement("tr");
    ["target"].concat(levels).forEach(function (t) {
      var th = document.createElement("th"); th.textContent = t; tr.appendChild(th);
    });
    head.appendChild(tr);
    targets.forEach(function (t) {
      var row = document.createElement("tr");
      var th = document.createElement("th"); th.textContent = t; row.appendChild(th);
      levels.forEach(function (l) {
        var td = document.createElement("td");
        var c = cellAt[t + "\u0000" + l];
        if (c) {
          td.className = c.status;
          td.setAttribute("data-status", c.status);
          var text = c.status === "measured" && c.requests_per_sec != null
            ? Math.round(c.requests_per_sec) + " req/s"
            : c.status + (c.reason ? ": " + c.reason : "");
          if (c.status === "running" && c.run != null) {
            var a = document.createElement("a");
            a.href = "?cell=" + c.run;
            a.textContent = "running: live charts";
            a.className = "live";
            td.appendChild(a);
          } else {
            td.textContent = text;
          }
        }
        row.appendChild(td);
      });
      body.appendChild(row);
    });
    document.body.setAttribute("data-cells", String(cells.length));
    var done = cells.filter(function (c) { return c.status !== "waiting" && c.status !== "running"; });
    document.body.setAttribute("data-cells-done", String(done.length));
  }

  function redraw() {
    pending = false;
    if (!meta) return;
    drawWindows();
    if (meta.kind === "shootout") drawMatrix();
    var whole = rows.filter(function (r) { return r.duration_s >= meta.interval_s / 2; });
    var x = whole.map(function (r) { return r.start_s + r.duration_s / 2; });
    var rate = [x, whole.map(function (r) { return r.requests_per_sec; })];
    if (meta.target.length) rate.push(x.map(target));
    sloLines("rate").forEach(function (c) { rate.push(x.map(function () { return c.threshold; })); });
    charts.rate.setData(rate);
    var live = whole.filter(function (r) { return r.requests > 0; });
    var lx = live.map(function (r) { return r.start_s + r.duration_s / 2; });
    var lat = [lx, live.map(function (r) { return r.p50_us; }), live.map(function (r) { return r.p99_us; }),
      live.map(function (r) { return r.max_us; })];
    sloLines("latency").forEach(function (c) { lat.push(lx.map(function () { return c.threshold; })); });
    if (open()) {
      // A row's service time is the point of the same start; coarse rows have none.
      var by = {};
      service.forEach(function (p) { by[p.start_s.toFixed(6)] = p; });
      var at = live.map(function (r) { return by[r.start_s.toFixed(6)] || null; });
      lat.push(at.map(function (p) { return p ? p.p50_us : null; }));
      lat.push(at.map(function (p) { return p ? p.p99_us : null; }));
    }
    charts.lat.setData(lat);
    var err = [x].concat(KINDS.map(function (k) {
      return whole.map(function (r) { return r.errors_by_kind[k] / r.duration_s; });
    }));
    sloLines("errors").forEach(function (c) { err.push(x.map(function () { return c.threshold; })); });
    charts.err.setData(err);
    var gx = gauges.map(function (g) { return g.t_s; });
    charts.conn.setData([gx, gauges.map(function (g) { return g.connections_open; })]);
    charts.cpu.setData([gx, gauges.map(function (g) { return g.cpu_percent; }),
      gauges.map(function (g) { return g.spin_percent || 0; }),
      gx.map(function () { return meta.saturated_percent; })]);
    // Runs without the once-a-second sampler (a search's windows, a shootout's cells).
    $("c-conn").style.display = $("c-cpu").style.display = gauges.length ? "block" : "none";
    // The open model's spin is time to spare: saturation is judged on the CPU less it, as
    // the report judges it.
    var bound = gauges.some(function (g) {
      return g.cpu_percent - (g.spin_percent || 0) >= meta.saturated_percent;
    });
    $("warn").style.display = bound ? "block" : "none";
    meta.slo.forEach(function (c, i) {
      var el = $("slo-" + i);
      if (el) el.className = broken(c) ? "broken" : "";
    });
    var last = rows[rows.length - 1];
    var status = rows.length + " intervals" +
      (last ? ", " + (last.start_s + last.duration_s).toFixed(1) + " s into the run, last " +
        Math.round(last.requests_per_sec) + " req/s, p99 " + fmtUs(null, last.p99_us) +
        (last.client_delay_p99_us != null ? ", client delay p99 " + fmtUs(null, last.client_delay_p99_us) : "") : "");
    if (meta.kind === "find-max") status = "windows so far: " + windows.length + "; this one: " + status;
    if (meta.kind === "shootout") {
      status = cells.length + " cells";
      if (wantCell !== null) {
        status += meta.run === wantCell ? "; cell " + wantCell + ": " + rows.length + " intervals"
          : "; cell " + wantCell + " is not running (its result is in the matrix)";
      }
    }
    $("status").textContent = status;
    document.body.setAttribute("data-points", String($("runcharts").style.display === "none" ? 0 : whole.length));
    document.body.setAttribute("data-service-points", String(open() ? lat[lat.length - 1].filter(function (v) { return v != null; }).length : 0));
  }

  // At most two redraws a second: at --interval 10ms, a redraw per event would keep the
  // browser's CPU busy for nothing the eye can follow.
  function later() {
    if (!pending) { pending = true; setTimeout(redraw, 500); }
  }

  function trim(a) { if (a.length > MAX_POINTS) a.splice(0, a.length - MAX_POINTS); }

  function becomeReport(d) {
    var blob = new Blob([d.json], { type: "application/json" });
    var href = URL.createObjectURL(blob);
    document.open();
    document.write(d.html);
    document.close();
    var a = document.createElement("a");
    a.id = "foxbench-download";
    a.href = href;
    a.download = "result.json";
    a.textContent = "Download the result JSON";
    a.style.cssText = "position:fixed;top:8px;right:12px;background:#fff;padding:4px 8px;border:1px solid #ccc";
    document.body.appendChild(a);
  }

  function feed(name, f) {
    es.addEventListener(name, function (e) { f(JSON.parse(e.data)); later(); });
  }

  // For tests and the curious: what the page holds and draws.
  window.foxbench = {
    rows: function () { return rows; }, charts: charts,
    windows: function () { return windows; }, cells: function () { return cells; },
    service: function () { return service; },
    gauges: function () { return gauges; }
  };
  var es = new EventSource("events");
  // A new run (the next window, the next cell): its plan, then its rows from the start.
  feed("meta", function (m) { meta = m; rows = []; gauges = []; service = []; setup(); });
  feed("history", function (r) { rows = r; trim(rows); });
  feed("rows", function (r) { rows = rows.concat(r); trim(rows); });
  feed("interval", function (r) { rows.push(r); trim(rows); });
  feed("gauges", function (g) { gauges = gauges.concat(g); trim(gauges); });
  feed("service", function (s) { service = service.concat(s); trim(service); });
  feed("windows", function (w) { windows = windows.concat(w); trim(windows); });
  feed("cells", function (cs) {
    cs.forEach(function (c) {
      var k = c.target + "\u0000" + c.level;
      if (!(k in cellAt)) cells.push(c);
      else cells[cells.indexOf(cellAt[k])] = c;
      cellAt[k] = c;
    });
  });
  es.addEventListener("done", function (e) { es.close(); becomeReport(JSON.parse(e.data)); });
  es.onerror = function () {
    var s = $("status");
    if (s) s.textContent = "disconnected from foxbench (the run is over, or it was stopped)";
  };
})();
