#!/usr/bin/env python3
"""Measures a fleet sweep on Spark in local mode against `tracecost sweep`
(docs/spark.md has the figures and the commands).

Two steps, each timed on its own:

  python3 benches/spark_local.py cli FLEET --grid small --out cli.json
      runs `tracecost sweep FLEET <grid> --format json --per-trace` (the
      binary in $TRACECOST_BIN) into a temporary file, with its wall time,
      CPU time and peak RSS (as /usr/bin/time -v reads them), then sums each
      config's per-trace figures as python/tests/test_spark.py does (dollars
      with math.fsum), reading the output a trace at a time. With
      --totals-only: without --per-trace (whose output, every call of every
      config, is too big to write at the default grid of a large fleet),
      the fleet's totals as the command line prints them (dollars summed
      left to right, so the Spark step compares them to 1e-12).

  python3 benches/spark_local.py spark FLEET --grid small --expected cli.json --out spark.json
      runs tracecost.spark.sweep in local[2] (the Python running this
      script must have tracecost, pyspark, pyarrow and pandas) and reports
      its wall time, the tasks of each stage (Spark's REST API), what each
      sweep task swept (accounts, rows, the worker's peak RSS), the peak RSS
      and CPU time of the driver's process tree (the JVM, the Python
      workers), and whether every total equals the command line's to the
      bit.

--grid small is 6 configs (off, ledger:t=8000,k=2 and clear-tool-uses, each
with no cache and with Claude Code's); --grid default is the command line's
default grid (a Grid() with every session's status quo).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

SMALL = ["off+none", "off+claude-code:ttl=5m", "ledger:t=8000,k=2+none",
         "ledger:t=8000,k=2+claude-code:ttl=5m", "clear-tool-uses+none",
         "clear-tool-uses+claude-code:ttl=5m"]
SMALL_FLAGS = ["--compaction", "off,ledger,clear-tool-uses", "--threshold", "8000",
               "--keep-last", "2", "--cache", "none,claude-code:ttl=5m"]
SUMMED = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
          "output_tokens", "calls", "compacted_results")


def cli(args: argparse.Namespace) -> None:
    exe = os.environ.get("TRACECOST_BIN", "tracecost")
    flags = SMALL_FLAGS if args.grid == "small" else []
    if not args.totals_only:
        flags = [*flags, "--per-trace"]
    env = dict(os.environ, TRACECOST_NO_PROGRESS="1")
    with tempfile.TemporaryFile(mode="w+", dir=os.path.dirname(os.path.abspath(args.out))) as out:
        t0 = time.perf_counter()
        p = subprocess.Popen([exe, "sweep", args.fleet, *flags, "--format", "json"],
                             stdout=out, env=env)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        if status != 0:
            sys.exit(f"tracecost sweep failed: status {status}")
        out.seek(0)
        if args.totals_only:
            fleet = json.load(out)["fleet"]
            traces = fleet["traces"]
            totals = {c["config"]: {k: c[k] for k in ("cost_usd", *SUMMED[:4], "compacted_results")}
                      for c in fleet["configs"]}
        else:
            traces, totals = per_trace_totals(out)
    result = {"fleet": args.fleet, "grid": args.grid, "totals_only": args.totals_only,
              "wall_s": round(wall, 1),
              "user_s": round(usage.ru_utime, 1), "sys_s": round(usage.ru_stime, 1),
              "peak_rss_mb": usage.ru_maxrss // 1024, "traces": traces, "totals": totals}
    json.dump(result, open(args.out, "w"), indent=1)
    print(json.dumps({k: v for k, v in result.items() if k != "totals"}, indent=1))


def per_trace_totals(lines) -> tuple:
    """Each config's per-trace figures summed, from the pretty-printed JSON
    of `sweep --per-trace`, a trace (an element of "traces") at a time."""
    per: dict = {}
    traces, inside, buf = 0, False, []
    for line in lines:
        if not inside:
            if line == "    {\n":
                inside, buf = True, [line]
            continue
        buf.append(line)
        if line in ("    }\n", "    },\n"):
            inside = False
            doc = json.loads("".join(buf).rstrip().rstrip(","))
            traces += 1
            for r in doc["rows"]:
                t = r["result"]["totals"]
                per.setdefault(r["result"]["config"], []).append(t)
    totals = {}
    for c, ss in per.items():
        totals[c] = {"cost_usd": math.fsum(s["cost_usd"] for s in ss),
                     **{k: sum(s[k] for s in ss) for k in SUMMED}, "sessions": len(ss)}
    return traces, totals


class Sampler:
    """Peak RSS and CPU time of this process's tree, every 0.25 s: the
    driver (this process), the JVM it starts and the Python workers."""

    def __init__(self) -> None:
        self.page = os.sysconf("SC_PAGE_SIZE")
        self.tick = os.sysconf("SC_CLK_TCK")
        self.peaks = {"driver": 0, "jvm": 0, "worker_max": 0, "workers_sum": 0, "tree_sum": 0}
        self.cpu: dict = {}  # pid -> (kind, utime + stime in ticks), the last seen
        self.stop = threading.Event()
        threading.Thread(target=self.run, daemon=True).start()

    def tree(self) -> list:
        kids: dict = {}
        for p in os.listdir("/proc"):
            if p.isdigit():
                try:
                    with open(f"/proc/{p}/stat") as f:
                        ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                    kids.setdefault(ppid, []).append(int(p))
                except OSError:
                    pass
        out, todo = [], [os.getpid()]
        while todo:
            p = todo.pop()
            out.append(p)
            todo.extend(kids.get(p, []))
        return out

    def run(self) -> None:
        me = os.getpid()
        while not self.stop.wait(0.25):
            workers = total = 0
            for p in self.tree():
                try:
                    with open(f"/proc/{p}/statm") as f:
                        rss = int(f.read().split()[1]) * self.page
                    with open(f"/proc/{p}/cmdline", "rb") as f:
                        cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
                    with open(f"/proc/{p}/stat") as f:
                        st = f.read().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                kind = ("driver" if p == me else "jvm" if "java" in cmd.split(" ")[0]
                        else "python workers" if "python" in cmd else "other")
                # Its own user and system time (not its reaped children's,
                # which are counted as they ran).
                self.cpu[p] = (kind, int(st[11]) + int(st[12]))
                total += rss
                if kind == "driver":
                    self.peaks["driver"] = max(self.peaks["driver"], rss)
                elif kind == "jvm":
                    self.peaks["jvm"] = max(self.peaks["jvm"], rss)
                elif kind == "python workers":
                    self.peaks["worker_max"] = max(self.peaks["worker_max"], rss)
                    workers += rss
            self.peaks["workers_sum"] = max(self.peaks["workers_sum"], workers)
            self.peaks["tree_sum"] = max(self.peaks["tree_sum"], total)

    def finish(self) -> tuple:
        self.stop.set()
        time.sleep(0.5)
        cpu: dict = {}
        for kind, ticks in self.cpu.values():
            cpu[kind] = round(cpu.get(kind, 0) + ticks / self.tick, 1)
        return {k: v >> 20 for k, v in self.peaks.items()}, cpu


def spark(args: argparse.Namespace) -> None:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    tasks_dir = tempfile.mkdtemp(prefix="spark-tasks-")
    sampler = Sampler()

    from pyspark.sql import SparkSession

    import tracecost
    import tracecost.spark

    session = (SparkSession.builder.master("local[2]").appName("tracecost-bench")
               .config("spark.ui.enabled", "true").config("spark.ui.port", str(args.ui_port))
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.memory", args.driver_memory)
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    sc = session.sparkContext

    # What each sweep task swept, written by the task itself.
    inner = tracecost.spark._sweep_partition

    def instrumented(configs, options):
        run = inner(configs, options)

        def wrapped(batches):
            import resource

            from pyspark import TaskContext

            t0 = time.time()
            accounts, rows = set(), 0
            for b in run(batches):
                accounts.update(b.column("account").to_pylist())
                rows += b.num_rows
                yield b
            ctx = TaskContext.get()
            rec = {"stage": ctx.stageId(), "partition": ctx.partitionId(),
                   "accounts": sorted(accounts), "rows": rows,
                   "seconds": round(time.time() - t0, 1),
                   "worker_peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}
            name = f"{ctx.stageId()}-{ctx.partitionId()}-{ctx.attemptNumber()}.json"
            with open(os.path.join(tasks_dir, name), "w") as f:
                json.dump(rec, f)

        return wrapped

    tracecost.spark._sweep_partition = instrumented
    grid = SMALL if args.grid == "small" else tracecost.Grid()

    t0 = time.perf_counter()
    rows = [r.asDict() for r in tracecost.spark.sweep(session, [args.fleet], grid).collect()]
    wall = time.perf_counter() - t0

    base = f"http://127.0.0.1:{args.ui_port}/api/v1/applications/{sc.applicationId}"
    keep = ("stageId", "status", "numTasks", "executorRunTime", "inputBytes", "shuffleReadBytes",
            "shuffleWriteBytes", "memoryBytesSpilled", "diskBytesSpilled", "name",
            "submissionTime", "completionTime")
    stages = [{k: s.get(k) for k in keep} for s in
              json.load(urllib.request.urlopen(f"{base}/stages")) if s["status"] != "SKIPPED"]
    tasks = [json.load(open(os.path.join(tasks_dir, f))) for f in sorted(os.listdir(tasks_dir))]
    peaks, cpu = sampler.finish()

    check: dict = {}
    if args.expected:
        cli_run = json.load(open(args.expected))
        expected = cli_run["totals"]
        got = {r["config"]: r for r in rows}
        check["same_configs"] = set(got) == set(expected)
        # Per-trace figures: every total to the bit. The printed fleet
        # totals: dollars summed left to right, so within rounding.
        exact = not cli_run.get("totals_only")
        check["dollars"] = "to the bit" if exact else "to 1e-12 relative"
        check["mismatches"] = [
            (c, k, got[c][k], v) for c, e in expected.items() if c in got
            for k, v in e.items()
            if got[c][k] != v and (exact or k != "cost_usd"
                                   or not math.isclose(got[c][k], v, rel_tol=1e-12, abs_tol=0))]
    result = {"fleet": args.fleet, "grid": args.grid, "configs": len(rows),
              "wall_s": round(wall, 1), "driver_memory": args.driver_memory,
              "peak_rss_mb": peaks, "cpu_s": cpu, "check": check,
              "stages": sorted(stages, key=lambda s: s["stageId"]), "sweep_tasks": tasks,
              "rows": rows}
    json.dump(result, open(args.out, "w"), indent=1)
    print(json.dumps({k: result[k] for k in ("configs", "wall_s", "peak_rss_mb", "cpu_s", "check")},
                     indent=1))
    for s in result["stages"]:
        print({k: s[k] for k in ("stageId", "numTasks", "executorRunTime", "inputBytes",
                                 "shuffleReadBytes", "shuffleWriteBytes", "submissionTime",
                                 "completionTime")})
    for t in tasks:
        print(t)
    session.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="step", required=True)
    for name in ("cli", "spark"):
        p = sub.add_parser(name)
        p.add_argument("fleet")
        p.add_argument("--grid", choices=("small", "default"), default="small")
        p.add_argument("--out", required=True)
        if name == "cli":
            p.add_argument("--totals-only", action="store_true")
        if name == "spark":
            p.add_argument("--expected", help="the cli step's output, to compare with")
            p.add_argument("--driver-memory", default="4g")
            p.add_argument("--ui-port", type=int, default=4077)
    args = ap.parse_args()
    (cli if args.step == "cli" else spark)(args)


if __name__ == "__main__":
    main()
