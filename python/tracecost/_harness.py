"""The replay harness: load or import traces, replay one config call by
call, sweep a grid, total a fleet. Every figure comes from the same library
pipelines as the command line's, so they equal ``tracecost replay --format
json`` and ``tracecost sweep --format json`` to the last digit.
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Any,
    Dict,
    Iterable,
    List,
    Optional,
    Sequence,
    Union,
)

from . import _native
from ._exact import exact_sum

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow

Trace = _native.Trace
PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]

# What is taken for one path (bytes too, as ``os`` takes them: a name that
# is not UTF-8 goes through as the file system's own bytes).
_PATH_TYPES = (str, bytes, os.PathLike)


def _path(p: PathLike) -> str:
    """A path as the native side takes it: ``str``, the bytes of a name
    that is not UTF-8 carried as ``os.fsdecode`` carries them."""
    return os.fsdecode(p)
Traces = Union["_native.Trace", PathLike, Iterable[Union["_native.Trace", PathLike]]]
"""A trace, a path (trace file, Claude Code folder or transcript, log, or a
folder of them), or a list of either."""


# ------------------------------------------------------------------ loading


def load(
    paths: Union[PathLike, Sequence[PathLike]],
    *,
    from_: Optional[str] = None,
    skip_invalid: bool = False,
) -> List[Trace]:
    """Loads traces as the command line reads its inputs: canonical trace
    files, Claude Code folders and transcripts, the logs and exports
    ``tracecost import`` reads, and folders of them, told apart by content.
    A path is a ``str``, ``bytes`` or path-like object. ``from_`` (any
    name ``tracecost import --from`` takes: ``"claude-code"``, ``"codex"``,
    ``"otel"``, ``"langfuse"``, …) reads every input with one importer;
    ``skip_invalid`` passes over damaged files and lines (of a JSON Lines
    file of traces, only the damaged lines). The loader's warnings and what was skipped are
    issued as :class:`UserWarning`. Raises :class:`InputError` with the
    command line's message."""
    if isinstance(paths, _PATH_TYPES):
        paths = [paths]
    paths = [_path(p) for p in paths]
    if not paths:
        raise _native.InputError("no paths given")
    traces, warns, skipped = _native.load(paths, from_, skip_invalid)
    for w in warns:
        warnings.warn(f"tracecost: warning: {w}", stacklevel=2)
    for line in skipped:
        warnings.warn(f"tracecost: {line}", stacklevel=2)
    return list(traces)


def loads(text: str, *, name: str = "<string>") -> List[Trace]:
    """Traces from canonical trace JSON (``tracecost.trace/v1``) text;
    ``name`` stands for the file in messages."""
    traces, warns = _native.loads(text, name)
    for w in warns:
        warnings.warn(f"tracecost: warning: {w}", stacklevel=2)
    return list(traces)


def generate(
    name: str,
    *,
    calls: Optional[int] = None,
    seed: Optional[int] = None,
    sessions: Optional[int] = None,
    accounts: Optional[int] = None,
    days: Optional[int] = None,
) -> List[Trace]:
    """Runs a generator as ``tracecost gen`` does: ``"massage-gun"``,
    ``"session"`` (``calls``, ``seed``) or ``"fleet"`` (``sessions``,
    ``seed``, ``accounts``: the sessions spread evenly over that many
    accounts, ``acct-01``, …; ``days``: started within that many days
    rather than 14). A size outside the command line's range (``calls``,
    ``sessions`` and ``accounts`` 1 to 100,000, ``days`` 1 to 3,650)
    raises :class:`ValueError`."""
    return list(_native.generate(name, calls, seed, sessions, accounts, days))


def _traces(traces: Traces) -> List[Trace]:
    if isinstance(traces, (Trace, *_PATH_TYPES)):
        traces = [traces]
    out: List[Trace] = []
    paths: List[PathLike] = []

    def flush() -> None:
        if paths:
            out.extend(load(list(paths)))
            paths.clear()

    for t in traces:
        if isinstance(t, Trace):
            flush()
            out.append(t)
        elif isinstance(t, _PATH_TYPES):
            paths.append(t)
        else:
            raise TypeError(f"expected a Trace or a path, got {type(t).__name__}")
    flush()
    return out


def account_of(trace: Trace) -> str:
    """The account a session belongs to: the unit a fleet is split by, since
    sessions of one account share the provider's prompt cache and are
    replayed against one cache (``--cache-scope account``). The trace's
    ``account``; traces that name none form one default account, as in the
    command-line tool."""
    return trace.account or ""


def canonical_config(config: str) -> str:
    """The canonical string of a config (``ledger:t=8000,k=2+tail:ttl=5m``);
    raises :class:`ConfigError` when it does not parse."""
    return _native.canonical_config(config)


# ------------------------------------------------------------------- replay

REPLAY_COLUMNS = (
    "trace",
    "config",
    "model",
    "index",
    "messages",
    "chars",
    "input_tokens",
    "cache_creation_input_tokens",
    "ephemeral_5m_input_tokens",
    "ephemeral_1h_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
    "cost_usd",
    "stable_prefix_tokens",
    "compacted",
    "recorded_input_tokens",
    "recorded_cache_creation_input_tokens",
    "recorded_cache_read_input_tokens",
    "recorded_output_tokens",
    "recorded_cost_usd",
)


def _writes(usage: Dict[str, Any]) -> tuple:
    split = usage.get("cache_creation")
    if split is None:
        # No breakdown: every write is a 5-minute write.
        return usage["cache_creation_input_tokens"], 0
    return split["ephemeral_5m_input_tokens"], split["ephemeral_1h_input_tokens"]


def _replay_outputs(
    traces: Traces,
    config: Optional[str],
    model: Optional[str],
    pricing: Optional[PathLike],
    tokenizer: str,
    calibrate: str,
    batch: bool,
) -> List[Dict[str, Any]]:
    out = _native.replay(
        _traces(traces),
        config,
        model,
        _path(pricing) if pricing is not None else None,
        tokenizer,
        calibrate,
        batch,
    )
    return json.loads(out)


def replay_outputs(
    traces: Traces,
    config: Optional[str] = None,
    *,
    model: Optional[str] = None,
    pricing: Optional[PathLike] = None,
    tokenizer: str = "o200k_base",
    calibrate: str = "auto",
    batch: bool = False,
) -> List[Dict[str, Any]]:
    """Each trace's replay as ``tracecost replay --format json`` gives it
    (``trace``, ``config``, ``model``, ``calls``, ``totals``, ``savings``,
    ``calibration``, ``fidelity``, ...), one dict per trace."""
    return _replay_outputs(traces, config, model, pricing, tokenizer, calibrate, batch)


def replay(
    traces: Traces,
    config: Optional[str] = None,
    *,
    model: Optional[str] = None,
    pricing: Optional[PathLike] = None,
    tokenizer: str = "o200k_base",
    calibrate: str = "auto",
    batch: bool = False,
) -> List[Dict[str, Any]]:
    """Replays each trace under ``config`` (a config string; by default no
    compaction and the trace's recorded markers, if any, as ``tracecost
    replay`` does): one row per call, with ``trace``, ``config``, the
    usage by billing class, ``cost_usd``, the compacted tool_use ids and,
    where the trace recorded usage, the recorded figures. ``model`` prices
    every call with one model; ``pricing``, ``tokenizer``, ``calibrate``
    and ``batch`` are the command line's cost options. The GIL is released
    while it runs."""
    rows: List[Dict[str, Any]] = []
    for o in _replay_outputs(traces, config, model, pricing, tokenizer, calibrate, batch):
        for c in o["calls"]:
            w5, w1 = _writes(c)
            rec = c.get("recorded")
            rows.append(
                {
                    "trace": o["trace"],
                    "config": o["config"],
                    "model": o["model"],
                    "index": c["index"],
                    "messages": c["messages"],
                    "chars": c["chars"],
                    "input_tokens": c["input_tokens"],
                    "cache_creation_input_tokens": c["cache_creation_input_tokens"],
                    "ephemeral_5m_input_tokens": w5,
                    "ephemeral_1h_input_tokens": w1,
                    "cache_read_input_tokens": c["cache_read_input_tokens"],
                    "output_tokens": c["output_tokens"],
                    "cost_usd": c["cost_usd"],
                    "stable_prefix_tokens": c["stable_prefix_tokens"],
                    "compacted": c["compacted"],
                    "recorded_input_tokens": rec["input_tokens"] if rec else None,
                    "recorded_cache_creation_input_tokens": (
                        rec["cache_creation_input_tokens"] if rec else None
                    ),
                    "recorded_cache_read_input_tokens": (
                        rec["cache_read_input_tokens"] if rec else None
                    ),
                    "recorded_output_tokens": rec["output_tokens"] if rec else None,
                    "recorded_cost_usd": c.get("recorded_cost_usd"),
                }
            )
    return rows


def replay_table(traces: Traces, config: Optional[str] = None, **options: Any) -> "pyarrow.Table":
    """:func:`replay` as a ``pyarrow.Table`` (pyarrow must be installed)."""
    from ._arrow import REPLAY_SCHEMA, table

    return table(replay(traces, config, **options), REPLAY_SCHEMA)


# -------------------------------------------------------------------- sweep


@dataclass(frozen=True)
class Grid:
    """A sweep's grid as ``tracecost sweep`` states it. ``None`` takes the
    command line's default: every compaction policy, thresholds 2000, 8000
    and 32000, keep-last 1, 2 and 4, caches none, system, native and tail
    plus each trace's status quo cache, TTL 5m, each trace's own model."""

    compactions: Optional[Sequence[str]] = None
    """Compaction policies by name (``ledger`` expands over thresholds ×
    keep-last values) or full parts such as ``clear-tool-uses:trigger=50000``."""
    thresholds: Optional[Sequence[int]] = None
    """Ledger thresholds, in characters."""
    keep_lasts: Optional[Sequence[int]] = None
    """Ledger keep-last values."""
    caches: Optional[Sequence[str]] = None
    """Cache policies by name or full parts such as ``tail:ttl=1h``."""
    ttl: Optional[str] = None
    """TTL for the cache policies named without one (``5m``, ``1h`` or
    ``recorded``: each call's recorded one); ``None``: ``recorded`` when a
    status quo takes its TTL from the record, else ``5m``."""
    models: Sequence[str] = field(default_factory=tuple)
    """Models to price with; empty: each trace's own."""

    def _native_args(self) -> Dict[str, Any]:
        lst = lambda v: None if v is None else list(v)  # noqa: E731
        return {
            "compactions": lst(self.compactions),
            "thresholds": lst(self.thresholds),
            "keep_lasts": lst(self.keep_lasts),
            "caches": lst(self.caches),
            "ttl": self.ttl,
            "models": list(self.models),
        }

    def configs(self, status_quos: Iterable[Union[str, Trace]] = ()) -> List[str]:
        """The configs the grid gives (canonical strings, in grid order) for
        a fleet with these status quos (config strings, or traces whose
        status quo is taken): what every session of the fleet is swept
        with."""
        quos = [q.status_quo if isinstance(q, Trace) else q for q in status_quos]
        return list(_native.grid_configs(quos, **self._native_args()))


GridLike = Union[Grid, str, Sequence[str], None]
"""A :class:`Grid`, one config string, or a list of config strings."""


def _sweep_call(
    traces: List[Trace],
    grid: GridLike,
    baseline: Optional[str],
    recall_cost: Optional[float],
    pricing: Optional[PathLike],
    tokenizer: str,
    calibrate: str,
    batch: bool,
) -> List[Dict[str, Any]]:
    if grid is None:
        grid = Grid()
    if isinstance(grid, Grid):
        args = grid._native_args()
        configs = None
    else:
        args = {"models": []}
        configs = [grid] if isinstance(grid, str) else list(grid)
    out = _native.sweep(
        traces,
        configs,
        baseline=baseline,
        recall_cost=recall_cost,
        pricing=_path(pricing) if pricing is not None else None,
        tokenizer=tokenizer,
        calibrate=calibrate,
        batch=batch,
        **args,
    )
    return json.loads(out)


SWEEP_COLUMNS = (
    "trace",
    "project",
    "rank",
    "config",
    "model",
    "calls",
    "cost_usd",
    "input_tokens",
    "cache_creation_input_tokens",
    "ephemeral_5m_input_tokens",
    "ephemeral_1h_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
    "savings_usd",
    "savings_pct",
    "risk_adjusted_cost_usd",
    "compacted_results",
    "recall_needs_low",
    "recall_needs",
    "recall_needs_high",
    "pareto",
    "no_effect",
    "baseline",
    "cheapest",
    "recommended",
    "in_grid",
)


def sweep(
    traces: Traces,
    grid: GridLike = None,
    *,
    baseline: Optional[str] = None,
    recall_cost: Optional[float] = None,
    pricing: Optional[PathLike] = None,
    tokenizer: str = "o200k_base",
    calibrate: str = "auto",
    batch: bool = False,
) -> List[Dict[str, Any]]:
    """Sweeps ``grid`` (a :class:`Grid`, by default the command line's; or
    a list of config strings) over the traces: one row per (trace, config),
    traces in order and each trace's rows ranked by cost as ``tracecost
    sweep`` ranks them, with the figures it prints (cost, usage by billing
    class, savings against the baseline, recall risk, Pareto front, marks).
    A trace's status quo is swept too when the grid lacks it; its row has
    ``in_grid`` false. ``baseline`` replaces each trace's status quo as
    what savings are measured against. The GIL is released while it runs."""
    return _sweep_call(
        _traces(traces), grid, baseline, recall_cost, pricing, tokenizer, calibrate, batch
    )


def sweep_table(traces: Traces, grid: GridLike = None, **options: Any) -> "pyarrow.Table":
    """:func:`sweep` as a ``pyarrow.Table`` (pyarrow must be installed)."""
    from ._arrow import SWEEP_SCHEMA, table

    return table(sweep(traces, grid, **options), SWEEP_SCHEMA)


TOKEN_COLUMNS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "ephemeral_5m_input_tokens",
    "ephemeral_1h_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
)

FLEET_COLUMNS = ("config", "cost_usd") + TOKEN_COLUMNS + (
    "compacted_results",
    "calls",
    "sessions",
)


def fleet_totals(rows: Iterable[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Per config, the sum over sessions of :func:`sweep` rows (those with
    ``in_grid``): ``config``, ``cost_usd``, the token columns,
    ``compacted_results``, ``calls`` and ``sessions``; cheapest first, then
    by config string. Dollars are summed exactly and rounded once (see
    ``tracecost._exact``), so the total does not depend on the order of the
    sessions and equals the Spark sweep's bit for bit."""
    costs: Dict[str, List[float]] = {}
    sums: Dict[str, Dict[str, Any]] = {}
    for r in rows:
        if not r.get("in_grid", True):
            continue
        c = r["config"]
        s = sums.get(c)
        if s is None:
            s = sums[c] = {k: 0 for k in FLEET_COLUMNS if k not in ("config", "cost_usd")}
            costs[c] = []
        costs[c].append(r["cost_usd"])
        for k in TOKEN_COLUMNS + ("compacted_results", "calls"):
            s[k] += r[k]
        s["sessions"] += 1
    out = [
        {"config": c, "cost_usd": exact_sum(costs[c]), **{k: v for k, v in s.items()}}
        for c, s in sums.items()
    ]
    out.sort(key=lambda r: (r["cost_usd"], r["config"]))
    return [{k: r[k] for k in FLEET_COLUMNS} for r in out]


def fleet_table(rows: Iterable[Dict[str, Any]]) -> "pyarrow.Table":
    """:func:`fleet_totals` as a ``pyarrow.Table``."""
    from ._arrow import FLEET_SCHEMA, table

    return table(fleet_totals(rows), FLEET_SCHEMA)
