"""Fleet sweeps on Spark in local mode equal ``tracecost sweep``, config by
config, to the last bit (see ``tracecost._exact`` for what is summed)."""

from __future__ import annotations

import json
import math
import os
import sys
import time

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

import tracecost  # noqa: E402
import tracecost.spark  # noqa: E402
from conftest import TRACES  # noqa: E402


@pytest.fixture(scope="module")
def spark():
    # The workers must run this interpreter: it has tracecost and pyarrow.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    # Local mode talks to itself only: on the loopback address.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("tracecost-test")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def cli_totals(doc, configs):
    """Per config of ``configs``: the sessions' figures of ``tracecost
    sweep --format json``, summed (dollars exactly, rounded once)."""
    per = {c: [] for c in configs}
    for s in doc["traces"]:
        for r in s["rows"]:
            c = r["result"]["config"]
            if c in per:
                per[c].append(r["result"]["totals"])
    out = {}
    for c, sessions in per.items():
        out[c] = {
            "cost_usd": math.fsum(s["cost_usd"] for s in sessions),
            "cost_usd_in_order": sum(s["cost_usd"] for s in sessions),
            "input_tokens": sum(s["input_tokens"] for s in sessions),
            "cache_creation_input_tokens": sum(s["cache_creation_input_tokens"] for s in sessions),
            "cache_read_input_tokens": sum(s["cache_read_input_tokens"] for s in sessions),
            "output_tokens": sum(s["output_tokens"] for s in sessions),
            "calls": sum(s["calls"] for s in sessions),
            "compacted_results": sum(s["compacted_results"] for s in sessions),
            "sessions": len(sessions),
        }
    return out


def assert_equal_totals(rows, expected):
    got = {r["config"]: r for r in rows}
    assert set(got) == set(expected)
    for c, e in expected.items():
        g = got[c]
        # Bit for bit: the exact sum of the same f64 figures, rounded once.
        assert g["cost_usd"] == e["cost_usd"], c
        # And the command line's own left-to-right sum differs by rounding
        # alone.
        assert g["cost_usd"] == pytest.approx(e["cost_usd_in_order"], rel=1e-12, abs=0)
        for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
                  "output_tokens", "calls", "compacted_results", "sessions"):
            assert g[k] == e[k], (c, k)


def test_bundled_traces(spark, cli_json):
    given = ["off+none", "ledger:t=8000,k=2+tail", "off+claude-code:ttl=5m",
             "clear-tool-uses+system:ttl=1h"]
    configs = [tracecost.canonical_config(c) for c in given]
    doc = cli_json("sweep", *TRACES, "--format", "json", "--per-trace", "--compaction",
                   "off,ledger,clear-tool-uses", "--threshold", "8000", "--keep-last", "2",
                   "--cache", "none,tail,claude-code,system:ttl=1h")
    df = tracecost.spark.sweep(spark, TRACES, given)
    assert df.columns == list(tracecost.spark.TOTAL_COLUMNS)
    rows = [r.asDict() for r in df.collect()]
    assert_equal_totals(rows, cli_totals(doc, configs))
    # The local fleet totals are the same bits.
    local = tracecost.fleet_totals(tracecost.sweep(TRACES, configs))
    assert local == rows
    per_session = tracecost.spark.replay_sessions(spark, TRACES, configs).collect()
    n_traces = len(tracecost.load(TRACES))
    assert len(per_session) == n_traces * len(configs)


def test_generated_fleet_of_200_sessions(spark, cli, cli_json, tmp_path):
    fleet = tmp_path / "fleet.json"
    assert cli("gen", "fleet", "--sessions", "200", "--seed", "7", "-o", fleet).returncode == 0
    grid_flags = ["--compaction", "off,ledger,clear-tool-uses", "--threshold", "8000,32000",
                  "--keep-last", "2"]
    t0 = time.perf_counter()
    out = cli("sweep", fleet, "--format", "json", "--per-trace", *grid_flags)
    cli_s = time.perf_counter() - t0
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert len(doc["traces"]) >= 200
    # No caches named: the grid also tries the sessions' status quo cache,
    # found on the cluster as the command line finds it.
    grid = tracecost.Grid(compactions=["off", "ledger", "clear-tool-uses"],
                          thresholds=[8000, 32000], keep_lasts=[2])
    t0 = time.perf_counter()
    rows = [r.asDict() for r in tracecost.spark.sweep(spark, [fleet], grid).collect()]
    spark_s = time.perf_counter() - t0
    configs = [r["config"] for r in rows]
    assert "off+claude-code:ttl=5m" in configs and len(configs) == 4 * 5
    assert_equal_totals(rows, cli_totals(doc, configs))
    assert all(r["sessions"] == len(doc["traces"]) for r in rows)
    print(f"\n{len(doc['traces'])} sessions x {len(configs)} configs: "
          f"tracecost sweep {cli_s:.1f} s, Spark local[2] {spark_s:.1f} s")


def test_a_json_lines_fleet_is_split_over_many_tasks(spark, cli, cli_json, tmp_path):
    # One file, a trace per line, a fleet of four accounts (`gen fleet
    # --accounts 4`): loaded by lines over several tasks, swept over
    # several tasks (an account whole in one), with the command line's
    # totals to the bit.
    fleet = tmp_path / "fleet.jsonl"
    gen = cli("gen", "fleet", "--sessions", "60", "--seed", "11", "--accounts", "4", "-o", fleet)
    assert gen.returncode == 0, gen.stderr
    lines = fleet.read_text().splitlines()
    grid_flags = ["--compaction", "off,ledger", "--threshold", "8000", "--keep-last", "2",
                  "--cache", "none,claude-code:ttl=5m"]
    doc = cli_json("sweep", fleet, "--format", "json", "--per-trace", *grid_flags)
    configs = [tracecost.canonical_config(c) for c in
               ["off+none", "off+claude-code:ttl=5m", "ledger:t=8000,k=2+none",
                "ledger:t=8000,k=2+claude-code:ttl=5m"]]
    accounts = ["acct-01", "acct-02", "acct-03", "acct-04"]
    loaded = tracecost.spark.sessions(spark, [fleet])
    assert loaded.rdd.getNumPartitions() > 1
    assert sorted(r[0] for r in loaded.select("account").distinct().collect()) == accounts
    # The sweep's tasks: the accounts each partition swept. More than one
    # partition carries accounts, and no account is in two.
    swept = tracecost.spark.replay_sessions(spark, [fleet], configs)
    per_task = swept.rdd.mapPartitions(lambda rows: [sorted({r["account"] for r in rows})])
    carrying = [a for a in per_task.collect() if a]
    assert len(carrying) > 1, carrying
    assert sorted(a for task in carrying for a in task) == accounts
    rows = [r.asDict() for r in tracecost.spark.sweep(spark, [fleet], configs).collect()]
    assert_equal_totals(rows, cli_totals(doc, configs))
    assert all(r["sessions"] == len(lines) for r in rows)
    # The same traces, in the same order, as the file read whole.
    got = sorted((r["trace_index"], r["session"]) for r in loaded.collect())
    assert [s for _, s in got] == [t.name for t in tracecost.load(fleet)]


def test_a_damaged_line_costs_its_own_trace_as_on_the_command_line(spark, cli, cli_json,
                                                                   tmp_path):
    # One line of a JSON Lines fleet cut in half: under skip_invalid Spark,
    # the local API and the command line all give the totals of the file
    # without that line, to the bit.
    fleet = tmp_path / "fleet.jsonl"
    assert cli("gen", "fleet", "--sessions", "30", "--seed", "3", "-o", fleet).returncode == 0
    lines = fleet.read_bytes().splitlines(keepends=True)
    k = 5
    damaged, clean = tmp_path / "damaged.jsonl", tmp_path / "clean.jsonl"
    damaged.write_bytes(b"".join(lines[:k] + [lines[k][: len(lines[k]) // 2] + b"\n"]
                                 + lines[k + 1:]))
    clean.write_bytes(b"".join(lines[:k] + lines[k + 1:]))
    grid_flags = ["--compaction", "off,ledger", "--threshold", "8000", "--keep-last", "2",
                  "--cache", "none,claude-code:ttl=5m"]
    configs = [tracecost.canonical_config(c) for c in
               ["off+none", "off+claude-code:ttl=5m", "ledger:t=8000,k=2+claude-code:ttl=5m"]]
    expected = cli_totals(cli_json("sweep", clean, "--format", "json", "--per-trace",
                                   *grid_flags), configs)
    skipped = cli("sweep", damaged, "--skip-invalid", "--format", "json", "--per-trace",
                  *grid_flags)
    assert skipped.returncode == 0, skipped.stderr
    assert f"damaged.jsonl:{k + 1}:" in skipped.stderr
    assert cli_totals(json.loads(skipped.stdout), configs) == expected
    rows = [r.asDict() for r in
            tracecost.spark.sweep(spark, [damaged], configs, skip_invalid=True).collect()]
    assert_equal_totals(rows, expected)
    with pytest.warns(UserWarning, match=f"damaged.jsonl:{k + 1}:"):
        local = tracecost.load(damaged, skip_invalid=True)
    assert tracecost.fleet_totals(tracecost.sweep(local, configs)) == rows
