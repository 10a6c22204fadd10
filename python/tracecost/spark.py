"""Fleet sweeps on Apache Spark.

A fleet's figure for a config is the sum of its sessions' figures, and the
sessions of one account are the unit to keep together (they may share the
provider's prompt cache). So a sweep is a map over accounts and a
group-by-sum over configs:

1. :func:`sessions` loads the inputs on the executors into one row per
   session: its account (:func:`tracecost.account_of`), its place in the
   input order and its canonical trace JSON. A JSON Lines file of traces
   (a trace per line, as ``tracecost gen fleet -o fleet.jsonl`` writes) is
   split by lines over many tasks; any other path is one task;
2. the rows are partitioned by account, sorted by account and input order
   within each partition, and each partition is swept with ``mapInArrow``
   an account at a time (a worker holds one account), through the same
   library pipeline as ``tracecost sweep`` (:func:`replay_sessions`);
3. :func:`sweep` sums the per-session rows per config.

Dollars are summed exactly: each session's ``cost_usd`` (the f64 the
command line prints for it) is carried as integer pieces
(``tracecost._exact``), the pieces are summed as 64-bit integers, and the
total is rounded to an f64 once. The fleet total is therefore the exact sum
of the sessions' figures, correctly rounded: the same bits whatever the
order Spark sums in, and the same bits as :func:`tracecost.fleet_totals`
(``math.fsum``) over ``tracecost sweep``'s per-session figures. Token
counts are integers and sum exactly anyway.

Every executor needs the ``tracecost`` wheel and pyarrow installed (and
pandas >= 2.2, which pyspark's Arrow support imports); paths must be
readable from the executors. ``docs/spark.md`` sizes a cluster.

Example (``spark-submit``, the wheel installed on the workers)::

    spark-submit --master local[2] \\
        --conf spark.pyspark.python=/opt/venv/bin/python fleet.py

with ``fleet.py``::

    from pyspark.sql import SparkSession
    import tracecost, tracecost.spark
    spark = SparkSession.builder.getOrCreate()
    totals = tracecost.spark.sweep(
        spark, ["s3://bucket/traces/fleet.jsonl"],
        ["off+claude-code:ttl=5m", "ledger:t=8000,k=2+claude-code:ttl=5m"])
    totals.show(truncate=False)
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Sequence, Union

from . import _harness
from ._exact import LIMBS, from_limbs
from ._harness import Grid, GridLike, PathLike

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow
    from pyspark.sql import DataFrame, SparkSession

SESSION_SCHEMA = (
    "account string, session string, path_index long, trace_index long, "
    "status_quo string, trace string"
)
"""The rows of :func:`sessions`: one per session (trace)."""

_SWEEP_ROW_SCHEMA = (
    "account string, session string, path_index long, trace_index long, project string, "
    "rank long, config string, model string, calls long, cost_usd double, "
    "input_tokens long, cache_creation_input_tokens long, ephemeral_5m_input_tokens long, "
    "ephemeral_1h_input_tokens long, cache_read_input_tokens long, output_tokens long, "
    "savings_usd double, savings_pct double, risk_adjusted_cost_usd double, "
    "compacted_results long, recall_needs_low double, recall_needs double, recall_needs_high double, "
    "pareto boolean, no_effect boolean, baseline boolean, cheapest boolean, "
    "recommended boolean"
)

_SWEEP_ROW_COLUMNS = [part.strip().split(" ")[0] for part in _SWEEP_ROW_SCHEMA.split(",")]

# Each session's dollars as exact integer pieces (``tracecost._exact``).
_LIMB_COLUMNS = [f"_cost_limb{i}" for i in range(LIMBS)]
_SESSION_ROW_SCHEMA = _SWEEP_ROW_SCHEMA + "".join(f", {c} long" for c in _LIMB_COLUMNS)

TOTAL_COLUMNS = _harness.FLEET_COLUMNS
"""The columns of :func:`sweep`'s result."""


def sessions(
    spark: "SparkSession",
    paths: Union[PathLike, Sequence[PathLike]],
    *,
    from_: Optional[str] = None,
    skip_invalid: bool = False,
) -> "DataFrame":
    """One row per session of the inputs (:data:`SESSION_SCHEMA`), loaded on
    the executors, each path read as :func:`tracecost.load` reads it. A
    JSON Lines file of traces (``.jsonl`` / ``.ndjson``, a trace document
    per line) is read with ``textFile`` and split by lines over as many
    tasks as Spark's default parallelism (or the file's blocks); any other
    path is one task (so a folder is one task: pass files to spread the
    loading). ``path_index`` and ``trace_index`` give the command line's
    order: paths as given, traces as in each path."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    indexed = [(i, os.fsdecode(p)) for i, p in enumerate(paths)]
    if not indexed:
        from ._native import InputError

        raise InputError("no paths given")
    sc = spark.sparkContext

    def load(item: Any) -> Iterator[tuple]:
        import tracecost

        i, path = item
        for j, t in enumerate(tracecost.load(path, from_=from_, skip_invalid=skip_invalid)):
            yield (tracecost.account_of(t), t.name, i, j, t.status_quo, t.to_json())

    whole, by_lines = [], []
    for item in indexed:
        lines = from_ is None and _trace_lines(sc, item[1])
        (by_lines if lines else whole).append(item)
    parts = []
    if whole:
        parts.append(sc.parallelize(whole, len(whole)).flatMap(load))
    for i, path in by_lines:
        lines = sc.textFile(path, minPartitions=max(2, sc.defaultParallelism))
        parts.append(lines.zipWithIndex().flatMap(_load_line(i, path, skip_invalid)))
    rdd = parts[0] if len(parts) == 1 else sc.union(parts)
    return spark.createDataFrame(rdd, SESSION_SCHEMA)


_TRACE_FORMAT = "tracecost.trace/v1"

# A line's traces are numbered after it: line k's j-th trace is
# k * _PER_LINE + j, so the order is the file's.
_PER_LINE = 1 << 20


def _trace_lines(sc: Any, path: str) -> bool:
    """Whether ``path`` is a JSON Lines file of traces: named ``.jsonl`` or
    ``.ndjson``, its first line a trace document on its own."""
    import json

    if not path.lower().endswith((".jsonl", ".ndjson")):
        return False
    try:
        first = sc.textFile(path).first()
    except Exception:
        return False
    try:
        doc = json.loads(first.lstrip("\ufeff"))
    except ValueError:
        return False
    return isinstance(doc, dict) and doc.get("format") == _TRACE_FORMAT


def _load_line(i: int, path: str, skip_invalid: bool) -> Any:
    """The flatMap of a JSON Lines file's (line, index) pairs: each line's
    traces as rows, an error naming the file and the line."""

    def load(item: Any) -> Iterator[tuple]:
        import tracecost

        text, k = item
        if k == 0:
            text = text.lstrip("\ufeff")
        if not text.strip():
            return
        name = f"{path}:{k + 1}"
        try:
            traces = tracecost.loads(text, name=name)
        except Exception as e:
            if skip_invalid:
                # Said as the command line says it (on the executor's
                # stderr): the file, the line and why.
                sys.stderr.write(
                    f"tracecost: skipped damaged input: {_at_line(name, str(e))} (line skipped)\n"
                )
                return
            raise
        for j, t in enumerate(traces):
            yield (tracecost.account_of(t), t.name, i, k * _PER_LINE + j, t.status_quo,
                   t.to_json())

    return load


def _at_line(name: str, message: str) -> str:
    """A line's error as the command line gives it: ``FILE:LINE:COLUMN: …``
    rather than the ``FILE:LINE:1:COLUMN: …`` of the line read alone."""
    alone = f"{name}:1:"
    return name + ":" + message[len(alone):] if message.startswith(alone) else message


def _reads_status_quos(grid: GridLike, baseline: Optional[str]) -> bool:
    """Whether :func:`_configs` collects the sessions' status quos (a
    :class:`Grid` without caches and no baseline): a pass over the sessions
    before the sweep's own."""
    if grid is None:
        grid = Grid()
    return isinstance(grid, Grid) and baseline is None and grid.caches is None


def _configs(spark_sessions: "DataFrame", grid: GridLike, baseline: Optional[str]) -> List[str]:
    """The grid's configs, canonical, as the command line expands them for
    the whole fleet (a :class:`Grid` without caches also tries each
    session's status quo cache, so those are collected first)."""
    from ._native import canonical_config

    if grid is None:
        grid = Grid()
    if isinstance(grid, str):
        grid = [grid]
    if not isinstance(grid, Grid):
        out: List[str] = []
        for c in grid:
            c = canonical_config(c)
            if c not in out:
                out.append(c)
        return out
    if baseline is not None:
        quos = [baseline]
    elif _reads_status_quos(grid, baseline):
        quos = sorted(r[0] for r in spark_sessions.select("status_quo").distinct().collect())
    else:
        quos = []
    return grid.configs(quos)


def _sweep_partition(configs: List[str], options: Dict[str, Any]) -> Any:
    """The mapInArrow function: sweeps a partition's sessions account by
    account. The partition's rows come sorted by account, then input order
    (:func:`_session_rows` sorts them), so one account's sessions are held
    at a time: a worker's memory is its largest account's, not its
    partition's."""

    def run(batches: Iterator["pyarrow.RecordBatch"]) -> Iterator["pyarrow.RecordBatch"]:
        import pyarrow as pa

        schema = _arrow_schema(pa)
        account: Optional[str] = None
        members: List[Dict[str, Any]] = []
        for b in batches:
            for r in b.to_pylist():
                if members and r["account"] != account:
                    yield _sweep_account(account, members, configs, options, schema)
                    members = []
                account = r["account"]
                members.append(r)
        if members:
            yield _sweep_account(account, members, configs, options, schema)

    return run


def _sweep_account(
    account: Optional[str],
    members: List[Dict[str, Any]],
    configs: List[str],
    options: Dict[str, Any],
    schema: "pyarrow.Schema",
) -> "pyarrow.RecordBatch":
    """One account's sessions swept together (they share its simulated
    prompt cache), in input order: a row per session and config."""
    import pyarrow as pa

    import tracecost
    from tracecost._exact import to_limbs as limbs

    members = sorted(members, key=lambda r: (r["path_index"], r["trace_index"]))
    traces = []
    for m in members:
        # The JSON is let go as its trace is made.
        (t,) = tracecost.loads(m.pop("trace"), name=m["session"])
        traces.append(t)
    swept = tracecost.sweep(traces, configs, **options)
    out: List[Dict[str, Any]] = []
    # Rows come trace by trace, each trace's ranked from 1.
    k = -1
    for r in swept:
        if r["rank"] == 1:
            k += 1
        if not r["in_grid"]:
            continue
        m = members[k]
        row = {
            "account": account,
            "session": m["session"],
            "path_index": m["path_index"],
            "trace_index": m["trace_index"],
        }
        for col in _SWEEP_ROW_COLUMNS[4:]:
            row[col] = r[col]
        for i, v in enumerate(limbs(r["cost_usd"])):
            row[f"_cost_limb{i}"] = v
        out.append(row)
    return pa.RecordBatch.from_pylist(out, schema=schema)


def _arrow_schema(pa: Any) -> "pyarrow.Schema":
    types = {"string": pa.string(), "long": pa.int64(), "double": pa.float64(), "boolean": pa.bool_()}
    fields = []
    for part in _SESSION_ROW_SCHEMA.split(","):
        name, typ = part.strip().split(" ")
        fields.append((name, types[typ]))
    return pa.schema(fields)


def _session_rows(
    spark: "SparkSession",
    inputs: Union["DataFrame", PathLike, Sequence[PathLike]],
    grid: GridLike,
    baseline: Optional[str],
    recall_cost: Optional[float],
    pricing: Optional[PathLike],
    tokenizer: str,
    calibrate: str,
    batch: bool,
    from_: Optional[str],
    skip_invalid: bool,
    partitions: Optional[int],
) -> "DataFrame":
    from pyspark.sql import DataFrame

    if isinstance(inputs, DataFrame):
        df = inputs
    else:
        df = sessions(spark, inputs, from_=from_, skip_invalid=skip_invalid)
    if _reads_status_quos(grid, baseline):
        # Loaded once, read twice: for the status quos, then swept. (A
        # grid of configs is swept as it is loaded, nothing kept.)
        df = df.persist()
    configs = _configs(df, grid, baseline)
    options = {
        "baseline": baseline,
        "recall_cost": recall_cost,
        "pricing": os.fsdecode(pricing) if pricing is not None else None,
        "tokenizer": tokenizer,
        "calibrate": calibrate,
        "batch": batch,
    }
    parted = df.repartition(partitions, "account") if partitions else df.repartition("account")
    # An account's sessions one after the other, in input order: each
    # partition is swept an account at a time (_sweep_partition).
    parted = parted.sortWithinPartitions("account", "path_index", "trace_index")
    return parted.mapInArrow(_sweep_partition(configs, options), _SESSION_ROW_SCHEMA)


def replay_sessions(
    spark: "SparkSession",
    inputs: Union["DataFrame", PathLike, Sequence[PathLike]],
    grid: GridLike = None,
    *,
    baseline: Optional[str] = None,
    recall_cost: Optional[float] = None,
    pricing: Optional[PathLike] = None,
    tokenizer: str = "o200k_base",
    calibrate: str = "auto",
    batch: bool = False,
    from_: Optional[str] = None,
    skip_invalid: bool = False,
    partitions: Optional[int] = None,
) -> "DataFrame":
    """Per session and config of ``grid``, the figures of
    :func:`tracecost.sweep` (cost, usage by billing class, savings against
    the session's status quo, recall risk, marks), with ``account``,
    ``session``, ``path_index`` and ``trace_index``. ``inputs`` are paths
    (loaded by :func:`sessions`) or a DataFrame of :data:`SESSION_SCHEMA`.
    ``grid`` is a :class:`tracecost.Grid` (expanded for the whole fleet, as
    the command line does), a config string or a list of them.
    ``partitions``: the sweep's tasks, accounts hashed into them (default:
    ``spark.sql.shuffle.partitions``, which adaptive execution may merge);
    an account is never split between two."""
    rows = _session_rows(
        spark, inputs, grid, baseline, recall_cost, pricing, tokenizer, calibrate, batch,
        from_, skip_invalid, partitions,
    )
    return rows.drop(*_LIMB_COLUMNS)


def sweep(
    spark: "SparkSession",
    inputs: Union["DataFrame", PathLike, Sequence[PathLike]],
    grid: GridLike = None,
    *,
    baseline: Optional[str] = None,
    recall_cost: Optional[float] = None,
    pricing: Optional[PathLike] = None,
    tokenizer: str = "o200k_base",
    calibrate: str = "auto",
    batch: bool = False,
    from_: Optional[str] = None,
    skip_invalid: bool = False,
    partitions: Optional[int] = None,
) -> "DataFrame":
    """The fleet's totals per config of ``grid`` (:data:`TOTAL_COLUMNS`):
    ``config`` (canonical string), ``cost_usd`` (exact sum, rounded once),
    the token columns by billing class, ``compacted_results``, ``calls``
    and ``sessions``; cheapest first. Arguments as for
    :func:`replay_sessions`."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import DoubleType

    rows = _session_rows(
        spark, inputs, grid, baseline, recall_cost, pricing, tokenizer, calibrate, batch,
        from_, skip_invalid, partitions,
    )
    summed = [
        "input_tokens",
        "cache_creation_input_tokens",
        "ephemeral_5m_input_tokens",
        "ephemeral_1h_input_tokens",
        "cache_read_input_tokens",
        "output_tokens",
        "compacted_results",
        "calls",
    ]
    agg = rows.groupBy("config").agg(
        *[F.sum(c).alias(c) for c in _LIMB_COLUMNS + summed],
        F.count(F.lit(1)).alias("sessions"),
    )
    # One row per config: the limbs' sums back to one correctly rounded f64.
    dollars = F.udf(lambda *sums: from_limbs(sums), DoubleType())
    return agg.select(
        "config",
        dollars(*[F.col(c) for c in _LIMB_COLUMNS]).alias("cost_usd"),
        *[F.col(c).cast("long").alias(c) for c in summed[:6]],
        *[F.col(c).cast("long").alias(c) for c in summed[6:]],
        F.col("sessions").cast("long").alias("sessions"),
    ).orderBy("cost_usd", "config")


__all__ = ["sessions", "replay_sessions", "sweep", "SESSION_SCHEMA", "TOTAL_COLUMNS"]
