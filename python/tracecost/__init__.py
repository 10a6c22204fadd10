"""tracecost for Python: the tool-result ledger for agents, and the replay
harness that measures what each compaction and prompt-cache policy costs.

The engine (for an agent in production)::

    from tracecost import Compactor, CacheComposition, recall_tool_definition
    compactor = Compactor(size_threshold=8000, keep_last=2)
    req = compactor.request(history, tools=tools + [recall_tool_definition()],
                            system=system, cache=CacheComposition())
    client.messages.create(model=..., max_tokens=..., **req.body)
    # when the model calls recall_tool_result with `tool_input`:
    text = compactor.ledger.recall(tool_input)

The harness (same figures as the command line)::

    import tracecost
    rows = tracecost.replay("traces/massage-gun.json", "ledger:t=8000,k=2+tail:ttl=5m")
    rows = tracecost.sweep(tracecost.load("traces"), tracecost.Grid(caches=["tail"]))
    totals = tracecost.fleet_totals(rows)

Fleet sweeps on Spark: :mod:`tracecost.spark`.
"""

from ._native import (
    VERSION as __version__,
    ConfigError,
    InputError,
    LedgerError,
    STUB_FORMAT,
    Trace,
    TracecostError,
)
from ._engine import (
    DEFAULT_KEEP_LAST,
    DEFAULT_SIZE_THRESHOLD,
    RECALL_TOOL_NAME,
    CacheComposition,
    Compactor,
    DurableLedger,
    InMemoryLedger,
    Ledger,
    Request,
    Rewrite,
    derive_handle,
    recall,
    recall_tool_definition,
    render_stub,
    rewrite,
)
from ._harness import (
    FLEET_COLUMNS,
    REPLAY_COLUMNS,
    SWEEP_COLUMNS,
    Grid,
    account_of,
    canonical_config,
    fleet_table,
    fleet_totals,
    generate,
    load,
    loads,
    replay,
    replay_outputs,
    replay_table,
    sweep,
    sweep_table,
)

__all__ = [
    "__version__",
    # errors
    "TracecostError",
    "InputError",
    "ConfigError",
    "LedgerError",
    # engine
    "Compactor",
    "Ledger",
    "InMemoryLedger",
    "DurableLedger",
    "Rewrite",
    "Request",
    "CacheComposition",
    "rewrite",
    "recall",
    "recall_tool_definition",
    "render_stub",
    "derive_handle",
    "RECALL_TOOL_NAME",
    "STUB_FORMAT",
    "DEFAULT_SIZE_THRESHOLD",
    "DEFAULT_KEEP_LAST",
    # harness
    "Trace",
    "load",
    "loads",
    "generate",
    "account_of",
    "canonical_config",
    "replay",
    "replay_outputs",
    "replay_table",
    "Grid",
    "sweep",
    "sweep_table",
    "fleet_totals",
    "fleet_table",
    "REPLAY_COLUMNS",
    "SWEEP_COLUMNS",
    "FLEET_COLUMNS",
]
