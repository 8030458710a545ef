// The live page: uPlot charts fed by the run's Server-Sent Events. Points are kept in
// arrays of the page; the server's series is bounded, and so are these (MAX_POINTS).
(function () {
  "use strict";
  var MAX_POINTS = 20000;
  var KINDS = ["connect", "write", "read", "parse", "timeout", "tls"];
  var meta = null, rows = [], gauges = [], charts = {}, pending = false;
  var W = function () { return Math.max(400, Math.min(1100, window.innerWidth - 40)); };

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

  function broken(c) {
    var holds = function (v) {
      return c.op === "<" ? v < c.threshold : c.op === "<=" ? v <= c.threshold
        : c.op === ">" ? v > c.threshold : v >= c.threshold;
    };
    if (c.chart === "latency") {
      var key = c.percentile === 50 ? "p50_us" : c.percentile === 99 ? "p99_us"
        : c.percentile === 100 ? "max_us" : null;
      if (!key) return false;
      return rows.some(function (r) { return r.requests > 0 && !holds(r[key]); });
    }
    var req = 0, err = 0, dur = 0;
    rows.forEach(function (r) { req += r.requests; err += r.errors; dur += r.duration_s; });
    if (!rows.length) return false;
    if (c.chart === "rate") return !holds(req / Math.max(1e-9, dur));
    return !holds(100 * err / Math.max(1, req + err));
  }

  function make(id, series, scales, yAxis) {
    var el = document.getElementById(id);
    var opts = {
      width: W(), height: 220, scales: scales || { x: { time: false } },
      axes: [{ label: "seconds into the run" }, yAxis || { size: 60 }],
      series: [{ label: "t (s)" }].concat(series),
      legend: { live: true }
    };
    return new uPlot(opts, [[]].concat(series.map(function () { return []; })), el);
  }

  function colour(i) { return ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"][i % 7]; }

  // A clause's line: green while it holds, red once broken (uPlot calls it on each draw).
  function sloStroke(c) {
    return function () { return broken(c) ? "#d62728" : "#2ca02c"; };
  }

  function setup() {
    document.getElementById("url").textContent = meta.url;
    var rate = [{ label: "req/s", stroke: colour(0), width: 2 }];
    if (meta.target.length) rate.push({ label: "target", stroke: "#888", dash: [6, 4] });
    sloLines("rate").forEach(function (c) { rate.push({ label: c.text, stroke: sloStroke(c), dash: [2, 2] }); });
    charts.rate = make("c-rate", rate);
    var lat = [
      { label: "p50", stroke: colour(0), value: fmtUs },
      { label: "p99", stroke: colour(1), width: 2, value: fmtUs },
      { label: "max", stroke: colour(4), value: fmtUs }
    ];
    sloLines("latency").forEach(function (c) { lat.push({ label: c.text, stroke: sloStroke(c), dash: [2, 2], value: fmtUs }); });
    charts.lat = make("c-lat", lat, { x: { time: false }, y: { distr: 3, log: 10 } }, {
      size: 80,
      values: function (u, vals) { return vals.map(function (v) { return fmtUs(null, v); }); }
    });
    var err = KINDS.map(function (k, i) { return { label: k, stroke: colour(i + 1) }; });
    sloLines("errors").forEach(function (c) { err.push({ label: c.text + " (% of requests)", stroke: sloStroke(c), dash: [2, 2] }); });
    charts.err = make("c-err", err);
    charts.conn = make("c-conn", [{ label: "connections", stroke: colour(2) }]);
    charts.cpu = make("c-cpu", [
      { label: "client CPU %", stroke: colour(3), width: 2 },
      { label: "client-bound above", stroke: "#d62728", dash: [4, 4] }
    ], { x: { time: false }, y: { range: [0, 105] } });
    var slo = document.getElementById("slo");
    meta.slo.forEach(function (c, i) {
      var s = document.createElement("span");
      s.id = "slo-" + i;
      s.textContent = "--slo " + c.text;
      slo.appendChild(s);
    });
  }

  function fmtUs(u, v) {
    if (v == null) return "-";
    return v >= 1e6 ? (v / 1e6).toFixed(2) + " s" : v >= 1e3 ? (v / 1e3).toFixed(2) + " ms" : v.toFixed(1) + " µs";
  }

  function redraw() {
    pending = false;
    if (!meta) return;
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
    charts.lat.setData(lat);
    var err = [x].concat(KINDS.map(function (k) {
      return whole.map(function (r) { return r.errors_by_kind[k] / r.duration_s; });
    }));
    sloLines("errors").forEach(function (c) { err.push(x.map(function () { return c.threshold; })); });
    charts.err.setData(err);
    var gx = gauges.map(function (g) { return g.t_s; });
    charts.conn.setData([gx, gauges.map(function (g) { return g.connections_open; })]);
    charts.cpu.setData([gx, gauges.map(function (g) { return g.cpu_percent; }),
      gx.map(function () { return meta.saturated_percent; })]);
    var bound = gauges.some(function (g) { return g.cpu_percent >= meta.saturated_percent; });
    document.getElementById("warn").style.display = bound ? "block" : "none";
    meta.slo.forEach(function (c, i) {
      document.getElementById("slo-" + i).className = broken(c) ? "broken" : "";
    });
    var last = rows[rows.length - 1];
    document.getElementById("status").textContent = rows.length + " intervals" +
      (last ? ", " + (last.start_s + last.duration_s).toFixed(1) + " s into the run, last " +
        Math.round(last.requests_per_sec) + " req/s, p99 " + fmtUs(null, last.p99_us) : "");
    document.body.setAttribute("data-points", String(whole.length));
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

  // For tests and the curious: what the page holds and draws.
  window.foxbench = { rows: function () { return rows; }, charts: charts };
  var es = new EventSource("events");
  es.addEventListener("meta", function (e) { meta = JSON.parse(e.data); setup(); later(); });
  es.addEventListener("history", function (e) { rows = JSON.parse(e.data); trim(rows); later(); });
  es.addEventListener("rows", function (e) { rows = rows.concat(JSON.parse(e.data)); trim(rows); later(); });
  es.addEventListener("interval", function (e) { rows.push(JSON.parse(e.data)); trim(rows); later(); });
  es.addEventListener("gauges", function (e) {
    gauges = gauges.concat(JSON.parse(e.data)); trim(gauges); later();
  });
  es.addEventListener("done", function (e) { es.close(); becomeReport(JSON.parse(e.data)); });
  es.onerror = function () {
    var s = document.getElementById("status");
    if (s) s.textContent = "disconnected from foxbench (the run is over, or it was stopped)";
  };
})();
