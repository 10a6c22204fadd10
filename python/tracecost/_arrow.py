"""pyarrow schemas of the harness's rows (pyarrow is an optional import:
only this module needs it)."""

from __future__ import annotations

from typing import Any, Dict, List

try:
    import pyarrow as pa
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        "tracecost's tables need pyarrow: pip install pyarrow (or tracecost[arrow])"
    ) from e

_i = pa.int64()
_f = pa.float64()
_s = pa.string()
_b = pa.bool_()

REPLAY_SCHEMA = pa.schema(
    [
        ("trace", _s),
        ("config", _s),
        ("model", _s),
        ("index", _i),
        ("messages", _i),
        ("chars", _i),
        ("input_tokens", _i),
        ("cache_creation_input_tokens", _i),
        ("ephemeral_5m_input_tokens", _i),
        ("ephemeral_1h_input_tokens", _i),
        ("cache_read_input_tokens", _i),
        ("output_tokens", _i),
        ("cost_usd", _f),
        ("stable_prefix_tokens", _i),
        ("compacted", pa.list_(_s)),
        ("recorded_input_tokens", _i),
        ("recorded_cache_creation_input_tokens", _i),
        ("recorded_cache_read_input_tokens", _i),
        ("recorded_output_tokens", _i),
        ("recorded_cost_usd", _f),
    ]
)

SWEEP_SCHEMA = pa.schema(
    [
        ("trace", _s),
        ("project", _s),
        ("rank", _i),
        ("config", _s),
        ("model", _s),
        ("calls", _i),
        ("cost_usd", _f),
        ("input_tokens", _i),
        ("cache_creation_input_tokens", _i),
        ("ephemeral_5m_input_tokens", _i),
        ("ephemeral_1h_input_tokens", _i),
        ("cache_read_input_tokens", _i),
        ("output_tokens", _i),
        ("savings_usd", _f),
        ("savings_pct", _f),
        ("risk_adjusted_cost_usd", _f),
        ("compacted_results", _i),
        ("recall_needs_low", _f),
        ("recall_needs", _f),
        ("recall_needs_high", _f),
        ("pareto", _b),
        ("no_effect", _b),
        ("baseline", _b),
        ("cheapest", _b),
        ("recommended", _b),
        ("in_grid", _b),
    ]
)

FLEET_SCHEMA = pa.schema(
    [
        ("config", _s),
        ("cost_usd", _f),
        ("input_tokens", _i),
        ("cache_creation_input_tokens", _i),
        ("ephemeral_5m_input_tokens", _i),
        ("ephemeral_1h_input_tokens", _i),
        ("cache_read_input_tokens", _i),
        ("output_tokens", _i),
        ("compacted_results", _i),
        ("calls", _i),
        ("sessions", _i),
    ]
)


def table(rows: List[Dict[str, Any]], schema: "pa.Schema") -> "pa.Table":
    """Rows as a table of ``schema``, column by column."""
    return pa.Table.from_pydict(
        {name: [r[name] for r in rows] for name in schema.names}, schema=schema
    )
