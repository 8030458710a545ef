"""Decodes every hdr_base64 of a foxbench JSON file with HdrHistogram's Python package and
checks it against the figures foxbench wrote beside it (a distribution's summary, or an
interval's requests, p50, p99 and max). Prints one line per histogram and
exits 1 on the first disagreement.

HdrHistogram_py picks the value at percentile p by rounding p/100 * count to the nearest
rank, where HdrHistogram's Java and Rust take the ceiling; each percentile is therefore
asked at the exact rank the Rust side used: ceil(p/100 * count), at least 1.
"""
import json
import math
import sys

from hdrh.histogram import HdrHistogram


def histograms(node, path="$"):
    if isinstance(node, dict):
        if "hdr_base64" in node:
            yield path, node
        for k, v in node.items():
            yield from histograms(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from histograms(v, f"{path}[{i}]")


def fail(msg):
    print(msg)
    sys.exit(1)


doc = json.load(open(sys.argv[1]))
seen = 0
def at_rank(h, n, p):
    rank = max(1, math.ceil(p / 100.0 * n))
    return h.get_value_at_percentile(100.0 * rank / n) / 1000.0


intervals = 0
for path, d in histograms(doc):
    h = HdrHistogram.decode(d["hdr_base64"])
    n = h.get_total_count()
    if "count" not in d:
        # An interval of the series: its responses, p50, p99 and max.
        if n != d["requests"]:
            fail(f"{path}: count {n} != requests {d['requests']}")
        if n:
            for name, p in (("p50_us", 50.0), ("p99_us", 99.0)):
                if at_rank(h, n, p) != d[name]:
                    fail(f"{path}: {name} {at_rank(h, n, p)} != {d[name]}")
            if h.get_max_value() / 1000.0 != d["max_us"]:
                fail(f"{path}: max {h.get_max_value() / 1000.0} != {d['max_us']}")
        intervals += 1
        continue
    if n != d["count"]:
        fail(f"{path}: count {n} != {d['count']}")
    if n == 0:
        continue
    us = lambda ns: ns / 1000.0
    for name, got in (("min_us", us(h.get_min_value())), ("max_us", us(h.get_max_value()))):
        if got != d[name]:
            fail(f"{path}: {name} {got} != {d[name]}")
    if abs(us(h.get_mean_value()) - d["mean_us"]) > d["mean_us"] * 1e-3 + 1e-3:
        fail(f"{path}: mean {us(h.get_mean_value())} != {d['mean_us']}")
    for p in d["percentiles"]:
        rank = max(1, math.ceil(p["percentile"] / 100.0 * n))
        got = us(h.get_value_at_percentile(100.0 * rank / n))
        if got != p["value_us"]:
            fail(f"{path}: p{p['percentile']} {got} != {p['value_us']}")
    seen += 1
    print(f"{path}: {n} values, {len(d['percentiles'])} percentiles agree")
print(f"$.intervals: {intervals} interval histograms agree")
if seen == 0:
    fail("no non-empty hdr_base64 in the file")
