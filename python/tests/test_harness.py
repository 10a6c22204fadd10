"""The harness from Python gives the command line's figures to the last
digit: replays, sweeps, every input format, errors."""

from __future__ import annotations

import json
import math
import threading
import warnings
import time

import pytest

import tracecost
from conftest import FIXTURES, REPO, TRACES, cli_error

CONFIGS = [
    None,
    "off+none",
    "ledger:t=8000,k=2+tail:ttl=5m",
    "ledger:t=2000,k=1+native:manifest=cached,ttl=1h",
    "clear-tool-uses:trigger=50000+system:ttl=5m",
    "langchain-clear+claude-code:ttl=5m",
]


def cli_replay(cli_json, path, config, *extra):
    # Each trace's own document (several traces otherwise print their total).
    args = ["replay", path, "--format", "json", "--per-trace", *extra]
    if config is not None:
        args += ["--config", config]
    doc = cli_json(*args)
    doc.pop("format")
    return doc.get("traces", [doc])


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_replay_equals_the_command_line(cli_json, path, config):
    expected = cli_replay(cli_json, path, config)
    got = tracecost.replay_outputs(path, config)
    # The whole document: every call, every total, every float bit.
    assert got == expected
    rows = tracecost.replay(path, config)
    calls = [c for o in expected for c in o["calls"]]
    assert len(rows) == len(calls)
    for r, c in zip(rows, calls):
        assert r["cost_usd"] == c["cost_usd"]
        assert r["input_tokens"] == c["input_tokens"]
        assert r["cache_read_input_tokens"] == c["cache_read_input_tokens"]
        assert r["compacted"] == c["compacted"]
    assert set(rows[0]) == set(tracecost.REPLAY_COLUMNS)


def test_replay_cost_options_equal_the_command_line(cli_json):
    path = TRACES[0]
    opts = ["--model", "claude-sonnet-4-5", "--tokenizer", "chars:4", "--calibrate", "off", "--batch"]
    expected = cli_replay(cli_json, path, "ledger:t=8000,k=2+tail:ttl=5m", *opts)
    got = tracecost.replay_outputs(
        path,
        "ledger:t=8000,k=2+tail:ttl=5m",
        model="claude-sonnet-4-5",
        tokenizer="chars:4",
        calibrate="off",
        batch=True,
    )
    assert got == expected


def sweep_rows_of(doc):
    out = []
    for s in doc["traces"]:
        for i, r in enumerate(s["rows"]):
            res = r["result"]
            t = res["totals"]
            out.append(
                {
                    "trace": s["trace"],
                    "rank": i + 1,
                    "config": res["config"],
                    "cost_usd": t["cost_usd"],
                    "input_tokens": t["input_tokens"],
                    "cache_creation_input_tokens": t["cache_creation_input_tokens"],
                    "cache_read_input_tokens": t["cache_read_input_tokens"],
                    "output_tokens": t["output_tokens"],
                    "calls": t["calls"],
                    "compacted_results": t["compacted_results"],
                    "savings_usd": r["savings_usd"],
                    "savings_pct": r["savings_pct"],
                    "risk_adjusted_cost_usd": r["risk_adjusted_cost_usd"],
                    "recall_needs_low": r["risk"]["needs"]["low"],
                    "recall_needs": r["risk"]["needs"]["mid"],
                    "recall_needs_high": r["risk"]["needs"]["high"],
                    "pareto": r["pareto"],
                    "no_effect": r["no_effect"],
                    "baseline": i == s["baseline"],
                    "cheapest": i == s["cheapest"],
                    "recommended": i == s["recommended"],
                }
            )
    return out


def project(rows):
    """The columns of the rows that the command line's JSON has too."""
    return [{k: r[k] for k in EXPECTED_KEYS} for r in rows]


EXPECTED_KEYS = (
    "trace", "rank", "config", "cost_usd", "input_tokens", "cache_creation_input_tokens",
    "cache_read_input_tokens", "output_tokens", "calls", "compacted_results", "savings_usd",
    "savings_pct", "risk_adjusted_cost_usd", "recall_needs_low", "recall_needs", "recall_needs_high",
    "pareto", "no_effect", "baseline", "cheapest", "recommended",
)


def test_sweep_of_the_default_grid_equals_the_command_line(cli_json):
    expected = sweep_rows_of(cli_json("sweep", *TRACES, "--format", "json", "--per-trace"))
    got = tracecost.sweep(TRACES)
    assert project(got) == expected
    assert set(got[0]) == set(tracecost.SWEEP_COLUMNS)


def test_sweep_of_a_grid_equals_the_command_line(cli_json):
    expected = sweep_rows_of(
        cli_json(
            "sweep", *TRACES, "--format", "json", "--per-trace",
            "--compaction", "off,ledger,clear-tool-uses:trigger=50000",
            "--threshold", "2000,32000", "--keep-last", "0,2",
            "--cache", "none,tail", "--ttl", "1h",
            "--model", "claude-sonnet-4-5,claude-opus-4-1",
            "--baseline", "off+tail:ttl=5m", "--recall-cost", "0.05",
        )
    )
    grid = tracecost.Grid(
        compactions=["off", "ledger", "clear-tool-uses:trigger=50000"],
        thresholds=[2000, 32000],
        keep_lasts=[0, 2],
        caches=["none", "tail"],
        ttl="1h",
        models=["claude-sonnet-4-5", "claude-opus-4-1"],
    )
    got = tracecost.sweep(TRACES, grid, baseline="off+tail:ttl=5m", recall_cost=0.05)
    assert project(got) == expected


def test_a_grid_and_its_config_list_sweep_the_same(cli_json):
    traces = tracecost.load(TRACES)
    grid = tracecost.Grid(compactions=["off", "ledger"], thresholds=[8000], keep_lasts=[2])
    configs = grid.configs(traces)
    # No caches named: each trace's status quo cache is tried too.
    assert "off+claude-code:ttl=5m" in configs
    assert tracecost.sweep(traces, grid) == tracecost.sweep(traces, configs)


def test_a_sweep_prices_the_rest_and_names_an_unknown_model(cli, cli_json, tmp_path):
    # A trace of a model the table does not know (a local model's id) beside
    # priced ones: the sweep leaves it out with a warning naming the model,
    # as `tracecost sweep` does on stderr, instead of failing.
    doc = json.loads((REPO / "traces" / "massage-gun.json").read_text())
    doc["name"] = "local-model"
    doc["model"] = "qwen3-coder:30b"
    local = tmp_path / "local-model.json"
    local.write_text(json.dumps(doc))
    paths = [*TRACES, local]
    grid = tracecost.Grid(
        compactions=["off", "ledger"], thresholds=[8000], keep_lasts=[2], caches=["none", "tail"]
    )
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        got = tracecost.sweep(paths, grid)
    lines = [str(w.message) for w in said if issubclass(w.category, UserWarning)]
    assert any("`qwen3-coder:30b`" in m and "no price" in m for m in lines), lines
    assert "local-model" not in {r["trace"] for r in got}
    assert project(got) == project(tracecost.sweep(TRACES, grid))
    proc = cli("sweep", *paths, "--format", "json", "--per-trace", "--compaction", "off,ledger",
               "--threshold", "8000", "--keep-last", "2", "--cache", "none,tail")
    assert proc.returncode == 0, proc.stderr
    assert project(got) == sweep_rows_of(json.loads(proc.stdout))
    assert "`qwen3-coder:30b`" in proc.stderr
    # A model named prices every trace as that model: nothing is left out.
    named = tracecost.sweep(paths, tracecost.Grid(compactions=["off"], models=["claude-sonnet-4-5"]))
    assert "local-model" in {r["trace"] for r in named}


def test_fleet_totals_sum_sessions_exactly(cli_json):
    doc = cli_json("sweep", *TRACES, "--format", "json", "--per-trace", "--compaction", "off,ledger",
                   "--threshold", "8000", "--keep-last", "2", "--cache", "none,tail")
    per_config = {}
    for s in doc["traces"]:
        for r in s["rows"]:
            per_config.setdefault(r["result"]["config"], []).append(r["result"]["totals"])
    grid = tracecost.Grid(compactions=["off", "ledger"], thresholds=[8000], keep_lasts=[2],
                          caches=["none", "tail"])
    totals = tracecost.fleet_totals(tracecost.sweep(TRACES, grid))
    # The status quo (off+claude-code) is swept beside the grid for its
    # savings, but is no config of the grid: it has no fleet total.
    configs = grid.configs()
    assert len(configs) == 4
    assert {t["config"] for t in totals} == set(configs)
    for t in totals:
        sessions = per_config[t["config"]]
        assert t["cost_usd"] == math.fsum(s["cost_usd"] for s in sessions)
        assert t["input_tokens"] == sum(s["input_tokens"] for s in sessions)
        assert t["cache_read_input_tokens"] == sum(s["cache_read_input_tokens"] for s in sessions)
        assert t["sessions"] == len(sessions)
    assert [t["cost_usd"] for t in totals] == sorted(t["cost_usd"] for t in totals)


IMPORTS = [
    ("import/anthropic_plain.jsonl", None),
    ("import/claude_trace.jsonl", None),
    ("import/lc_final.json", None),
    ("import/lc_per_call.json", None),
    ("import/lc_states.jsonl", None),
    ("import/oa_list.json", None),
    ("import/oa_pairs.jsonl", None),
    ("import/oa_request.json", None),
    ("claude-code/projects", None),
    ("traces/small.json", None),
    ("import/oa_pairs.jsonl", "openai"),
    ("claude-code/projects", "skip"),
]


@pytest.mark.parametrize("rel,from_", IMPORTS, ids=[f"{r}-{f}" for r, f in IMPORTS])
def test_every_input_format_loads_as_the_command_line_reads_it(cli, cli_json, rel, from_):
    path = FIXTURES / rel
    extra = ["--from", from_] if from_ and from_ != "skip" else []
    skip = from_ == "skip"
    if skip:
        extra = ["--skip-invalid"]
    proc = cli("replay", path, "--format", "json", *extra)
    load = lambda: tracecost.load(path, from_=None if skip else from_, skip_invalid=skip)  # noqa: E731
    if proc.returncode != 0:
        # Damaged input, or a trace the default config cannot replay: the
        # same error.
        with pytest.raises(tracecost.TracecostError) as e:
            tracecost.replay_outputs(load())
        assert str(e.value) == cli_error(proc)
        return
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        traces = load()
    expected = cli_replay(cli_json, path, None, *extra)
    # Loading reads every trace; a trace with no priced call (a model the
    # table does not know) is left out of the replay, with a warning, as
    # the command line leaves it out with a line on stderr.
    names = [o["trace"] for o in expected]
    assert [t.name for t in traces if t.name in names] == names
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        assert tracecost.replay_outputs(traces) == expected
    if len(names) < len(traces):
        assert any("has no price" in str(w.message) for w in said)


def test_traces_round_trip_through_their_json():
    for t in tracecost.load(TRACES):
        (back,) = tracecost.loads(t.to_json())
        assert back.to_json() == t.to_json()
        assert tracecost.replay_outputs(back) == tracecost.replay_outputs(t)


def test_trace_properties():
    (t,) = tracecost.load(REPO / "traces" / "massage-gun.json")
    assert t.name == "massage-gun" and t.calls == 6 and t.provider == "anthropic"
    assert t.status_quo == "off+none"
    # No account named: the default account, as on the command line.
    assert t.account is None and tracecost.account_of(t) == ""
    fleet = tracecost.generate("fleet", sessions=3, seed=7)
    assert {tracecost.account_of(f) for f in fleet} == {"generated-team"}
    assert all(f.account == "generated-team" for f in fleet)
    spread = tracecost.generate("fleet", sessions=6, seed=7, accounts=3)
    assert {tracecost.account_of(f) for f in spread} == {"acct-01", "acct-02", "acct-03"}
    # `days`: 14 is the default, byte for byte; more days, other start times.
    def as_json(traces):
        return [t.to_json() for t in traces]

    assert as_json(tracecost.generate("fleet", sessions=3, seed=7, days=14)) == as_json(fleet)
    longer = tracecost.generate("fleet", sessions=3, seed=7, days=140)
    assert as_json(longer) != as_json(fleet)
    assert "fleet_over_days(3, 7, 1, 140)" in longer[0].description
    # Outside the command line's range: a ValueError.
    with pytest.raises(ValueError, match="days 0: expected a number from 1 to 3650"):
        tracecost.generate("fleet", sessions=3, days=0)
    assert {f.status_quo for f in fleet} == {"off+claude-code:ttl=5m"}


def test_errors_carry_the_command_lines_messages(cli, tmp_path):
    missing = tmp_path / "missing.json"
    with pytest.raises(tracecost.InputError) as e:
        tracecost.load(missing)
    assert str(e.value) == cli_error(cli("replay", missing))
    with pytest.raises(tracecost.ConfigError) as e:
        tracecost.replay(TRACES[0], "bogus+none")
    assert str(e.value) == cli_error(cli("replay", TRACES[0], "--config", "bogus+none"))
    # A config that cannot apply to a trace.
    with pytest.raises(tracecost.ConfigError) as e:
        tracecost.replay(REPO / "traces" / "massage-gun.json", "off+recorded")
    assert str(e.value) == cli_error(
        cli("replay", REPO / "traces" / "massage-gun.json", "--config", "off+recorded")
    )
    with pytest.raises(tracecost.ConfigError) as e:
        tracecost.sweep(TRACES, tracecost.Grid(thresholds=[100], compactions=["off"]))
    assert str(e.value) == cli_error(
        cli("sweep", *TRACES, "--threshold", "100", "--compaction", "off")
    )
    bad = FIXTURES / "bad" / "trace"
    for f in sorted(bad.iterdir())[:5]:
        proc = cli("replay", f)
        if proc.returncode != 2:
            continue
        with pytest.raises(tracecost.InputError) as e:
            tracecost.replay(f)
        assert str(e.value) == cli_error(proc)
    with pytest.raises(tracecost.ConfigError, match="model"):
        tracecost.replay(TRACES[0], model="no-such-model")
    with pytest.raises(tracecost.ConfigError, match="calibrate"):
        tracecost.replay(TRACES[0], calibrate="sometimes")


def test_tables(cli_json):
    pa = pytest.importorskip("pyarrow")
    t = tracecost.replay_table(TRACES[0], "ledger:t=8000,k=2+tail:ttl=5m")
    assert isinstance(t, pa.Table)
    assert t.column_names == list(tracecost.REPLAY_COLUMNS)
    rows = tracecost.replay(TRACES[0], "ledger:t=8000,k=2+tail:ttl=5m")
    assert t.to_pylist() == rows
    s = tracecost.sweep_table(TRACES, ["off+none", "ledger:t=8000,k=2+tail:ttl=5m"])
    assert s.column_names == list(tracecost.SWEEP_COLUMNS)
    f = tracecost.fleet_table(s.to_pylist())
    assert f.column_names == list(tracecost.FLEET_COLUMNS)
    assert f.num_rows == 2


def test_replays_release_the_gil():
    traces = tracecost.generate("fleet", sessions=20, seed=3)
    done = threading.Event()
    ticks = 0

    def work():
        tracecost.sweep(traces, tracecost.Grid(compactions=["off", "ledger"]))
        done.set()

    th = threading.Thread(target=work)
    start = time.perf_counter()
    th.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    th.join()
    elapsed = time.perf_counter() - start
    # Holding the GIL for the whole sweep would leave this thread a tick or two.
    assert elapsed < 0.05 or ticks > 10, (elapsed, ticks)


def test_an_openai_fleet_grid_tries_openai_policies_only():
    # The status quo of an OpenAI trace is OpenAI's automatic cache: the
    # default grid then tries what OpenAI runs, not Anthropic's markers.
    configs = tracecost.Grid().configs(["off+openai-auto"])
    assert "ledger:t=2000,k=1+openai-auto" in configs
    assert all(c.endswith("+openai-auto") or c.endswith("+none") for c in configs)
    assert not any(c.startswith("clear-tool-uses") for c in configs)
    # A Claude Code status quo keeps the Anthropic grid.
    assert "off+tail:ttl=recorded" in tracecost.Grid().configs(["recorded+claude-code:ttl=recorded"])
