#!/usr/bin/env python3
"""Prints a Markdown table of criterion results: per benchmark, the median
and the range (min .. max) of its per-iteration times over all samples.

criterion's own "time: [a b c]" line is a confidence interval of the mean,
not the spread of the samples; this table shows the spread, which is what a
noisy machine needs to be read with.

Usage: python3 benches/criterion_table.py [TARGET_DIR] [BASELINE]
       (defaults: target, new — the latest run; a name given to
       --save-baseline works too)
"""

import json
import os
import sys


def fmt(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def main():
    target = sys.argv[1] if len(sys.argv) > 1 else "target"
    baseline = sys.argv[2] if len(sys.argv) > 2 else "new"
    root = os.path.join(target, "criterion")
    rows = []
    for dirpath, _dirs, files in os.walk(root):
        if os.path.basename(dirpath) != baseline or "sample.json" not in files:
            continue
        with open(os.path.join(dirpath, "benchmark.json")) as f:
            bench = json.load(f)
        with open(os.path.join(dirpath, "sample.json")) as f:
            sample = json.load(f)
        per_iter = sorted(t / n for t, n in zip(sample["times"], sample["iters"]))
        k = len(per_iter)
        median = (
            per_iter[k // 2]
            if k % 2
            else (per_iter[k // 2 - 1] + per_iter[k // 2]) / 2
        )
        rows.append((bench["full_id"], median, per_iter[0], per_iter[-1], k, int(sum(sample["iters"]))))
    if not rows:
        sys.exit(f"no criterion results under {root} for baseline {baseline!r}")
    rows.sort()
    print("| benchmark | median | range (min .. max) | samples | iterations |")
    print("|---|---:|---:|---:|---:|")
    for name, med, lo, hi, k, iters in rows:
        print(f"| `{name}` | {fmt(med)} | {fmt(lo)} .. {fmt(hi)} | {k} | {iters} |")


if __name__ == "__main__":
    main()
