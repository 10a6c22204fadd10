"""The compaction engine for a Python agent: ledger, rewriter, recall tool,
cache-marker composition.

Messages, tools and system blocks are Anthropic Messages API shapes, given
as dicts (or as JSON text, kept byte for byte). A dict is turned into JSON
once, compactly and in its own key order, so the same dict always gives the
same bytes; the engine then keeps those bytes, and what it sends back (a
stub, a message left alone) is the same text at every call.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _native

JsonLike = Union[str, Mapping[str, Any]]
"""A JSON object as a dict, or as its JSON text (kept byte for byte)."""

RECALL_TOOL_NAME: str = _native.RECALL_TOOL_NAME
"""The name of the recall tool (``recall_tool_result``)."""

DEFAULT_SIZE_THRESHOLD: int = _native.DEFAULT_LEDGER_THRESHOLD
"""Results longer than this many characters are compacted by default."""

DEFAULT_KEEP_LAST: int = _native.DEFAULT_LEDGER_KEEP_LAST
"""The most recent results never compacted by default."""


def _json(value: JsonLike) -> str:
    """JSON text of a dict (compact, key order kept, non-ASCII as is), or
    the text itself."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _jsons(values: Sequence[JsonLike]) -> List[str]:
    if isinstance(values, (str, bytes, Mapping)):
        raise TypeError("expected a list of objects, not a single one")
    return [_json(v) for v in values]


def _system(system: Union[str, Sequence[JsonLike], None]) -> List[str]:
    if system is None:
        return []
    if isinstance(system, str):
        # A string system prompt is one text block on the wire.
        return [_json({"type": "text", "text": system})] if system else []
    return _jsons(system)


class Ledger:
    """Where compacted tool results live, so the model can recall them.

    ``record`` is idempotent on the result (call id, tool name and
    content): recording it again returns the same handle and stores
    nothing. The same call id with other content (another conversation
    reusing the id) is a record of its own with its own mem_id, and
    ``get_by_call_id`` then raises :class:`LedgerError` naming the mem_ids
    rather than return one of them. Use
    :class:`InMemoryLedger` or :class:`DurableLedger`.
    """

    _native: Any

    def record(
        self,
        tool_call_id: str,
        tool_name: str,
        tool_args: JsonLike,
        content: str,
    ) -> Dict[str, Any]:
        """Stores ``content`` (the tool result's text) and returns its handle:
        ``mem_id``, ``tool_name``, ``tool_call_id``, ``size_chars``,
        ``summary_oneliner`` and, when known, ``schema_hint`` and
        ``head_preview``."""
        return json.loads(
            self._native.record(tool_call_id, tool_name, _json(tool_args), content)
        )

    def get(self, mem_id: str) -> Optional[Dict[str, Any]]:
        """The record of ``mem_id``: ``{"handle", "tool_args", "payload"}``
        (``tool_args`` as JSON text, ``payload`` byte-exact), or ``None``."""
        return _recorded(self._native.get(mem_id))

    def get_by_call_id(self, tool_call_id: str) -> Optional[Dict[str, Any]]:
        """The record made for a tool call id, or ``None``."""
        return _recorded(self._native.get_by_call_id(tool_call_id))

    def recall(self, tool_input: JsonLike) -> str:
        """Runs one ``recall_tool_result`` call: ``tool_input`` is the input
        the model sent (dict or JSON text). Returns the text to give back as
        the tool result. Never raises: bad arguments and unknown ids come
        back as an explanatory line the model can act on."""
        return self._native.execute(_json(tool_input))

    def fetch(
        self,
        mem_id: str,
        *,
        format: Optional[str] = None,
        query: Optional[str] = None,
        offset: Optional[int] = None,
        max_chars: Optional[int] = None,
        json_path: Optional[str] = None,
    ) -> str:
        """What the recall tool answers for ``mem_id`` with these arguments
        (``format`` ``"full"`` or ``"summary"``)."""
        return self._native.fetch(mem_id, format, query, offset, max_chars, json_path)


def _recorded(r: Optional[Tuple[str, str, str]]) -> Optional[Dict[str, Any]]:
    if r is None:
        return None
    handle, args, payload = r
    return {"handle": json.loads(handle), "tool_args": args, "payload": payload}


class InMemoryLedger(Ledger):
    """A ledger for one process."""

    def __init__(self) -> None:
        self._native = _native.Ledger.in_memory()

    def __len__(self) -> int:
        return int(self._native.count())

    def __repr__(self) -> str:
        return f"InMemoryLedger({len(self)} results)"


class DurableLedger(Ledger):
    """A ledger in a directory, shared by processes: content-addressed
    payloads, an append-only index, atomic writes; a torn last index line is
    ignored and repaired on reopen."""

    def __init__(self, path: Union[str, "os.PathLike[str]"]) -> None:
        self._native = _native.Ledger.durable(os.fsdecode(path))

    @property
    def path(self) -> str:
        """The ledger's directory."""
        return os.fspath(self._native.path)

    def handles(self) -> List[Dict[str, Any]]:
        """Every handle recorded, in recording order."""
        return [json.loads(h) for h in self._native.handles()]

    def __repr__(self) -> str:
        return f"DurableLedger({self.path!r})"


class Rewrite:
    """The wire view of one call: the messages as sent, and the handles of
    the results compacted into stubs."""

    __slots__ = ("messages_json", "compacted")

    def __init__(self, messages_json: List[str], compacted: List[Dict[str, Any]]):
        self.messages_json: List[str] = messages_json
        """Each message as sent, as JSON text: the same bytes at every call
        for a message that did not change."""
        self.compacted: List[Dict[str, Any]] = compacted
        """Handles of the compacted results, in history order."""

    @property
    def messages(self) -> List[Dict[str, Any]]:
        """The messages as sent, as dicts."""
        return [json.loads(m) for m in self.messages_json]

    def __repr__(self) -> str:
        return f"Rewrite({len(self.messages_json)} messages, {len(self.compacted)} compacted)"


class Request:
    """One request's ``tools``, ``system`` and ``messages``, history
    rewritten and cache markers spliced in."""

    __slots__ = ("json", "compacted", "markers")

    def __init__(
        self, body_json: str, compacted: List[Dict[str, Any]], markers: List[Dict[str, Any]]
    ):
        self.json: str = body_json
        """The members as compact JSON text, deterministic byte for byte."""
        self.compacted: List[Dict[str, Any]] = compacted
        """Handles of the results compacted into stubs."""
        self.markers: List[Dict[str, Any]] = markers
        """The cache_control breakpoints placed: ``{"at": "tool" | "system" |
        "message", "index", "block", "ttl"}``."""

    @property
    def body(self) -> Dict[str, Any]:
        """Keyword arguments for ``client.messages.create(model=...,
        max_tokens=..., **request.body)``; empty ``tools`` and ``system``
        are left out."""
        body = json.loads(self.json)
        return {k: v for k, v in body.items() if v or k == "messages"}

    def __repr__(self) -> str:
        return f"Request({len(self.json)} chars, {len(self.markers)} markers)"


def _markers(ms: List[Tuple[str, int, Optional[int], str]]) -> List[Dict[str, Any]]:
    return [{"at": at, "index": i, "block": b, "ttl": ttl} for at, i, b, ttl in ms]


class CacheComposition:
    """Where the engine puts ``cache_control`` breakpoints: on the most
    recent completed plain-text message (``history``), on the last tool
    (``manifest="cached"``; ``"volatile"`` binds the tools unmarked,
    ``None`` leaves them alone), on the last system block
    (``prompt_region``). Markers for a provider other than ``anthropic``
    are refused here, before any request is made (:class:`ConfigError`)."""

    def __init__(
        self,
        *,
        history: bool = True,
        manifest: Optional[str] = "cached",
        prompt_region: bool = True,
        ttl: str = "5m",
        provider: str = "anthropic",
    ) -> None:
        self._native = _native.CacheComposition(history, manifest, prompt_region, ttl, provider)
        self.history = history
        self.manifest = manifest
        self.prompt_region = prompt_region

    @property
    def ttl(self) -> str:
        """``5m`` or ``1h``."""
        return str(self._native.ttl)

    @property
    def provider(self) -> str:
        """The provider the composition was checked for."""
        return str(self._native.provider)

    def request(
        self,
        messages: Sequence[JsonLike],
        *,
        tools: Sequence[JsonLike] = (),
        system: Union[str, Sequence[JsonLike], None] = None,
    ) -> Request:
        """The request for ``messages`` sent as they are, markers placed."""
        body, markers = self._native.request(_jsons(messages), _jsons(tools), _system(system))
        return Request(body, [], _markers(markers))

    def __repr__(self) -> str:
        return (
            f"CacheComposition(history={self.history}, manifest={self.manifest!r}, "
            f"prompt_region={self.prompt_region}, ttl={self.ttl!r}, provider={self.provider!r})"
        )


class Compactor:
    """The engine's rewriter: keeps the lossless history untouched and, at
    each call, sends stale large tool results as small deterministic stubs.

    A result is compacted when its text is longer than ``size_threshold``
    characters (Unicode code points) and it is older than the last
    ``keep_last`` tool results. A result compacted once is sent as the same
    stub bytes at every later call, so cached prefixes stay valid. Payloads
    go into ``ledger`` (a new :class:`InMemoryLedger` by default) before a
    stub goes out; the model reads them back with the recall tool
    (:func:`recall_tool_definition`, :meth:`Ledger.recall`).
    """

    def __init__(
        self,
        size_threshold: int = DEFAULT_SIZE_THRESHOLD,
        keep_last: int = DEFAULT_KEEP_LAST,
        ledger: Optional[Ledger] = None,
    ) -> None:
        if size_threshold < 0 or keep_last < 0:
            raise ValueError("size_threshold and keep_last must be non-negative")
        self.ledger: Ledger = ledger if ledger is not None else InMemoryLedger()
        self._native = _native.Compactor(self.ledger._native, size_threshold, keep_last)

    @property
    def size_threshold(self) -> int:
        """Compact only results longer than this many characters."""
        return int(self._native.policy()[0])

    @property
    def keep_last(self) -> int:
        """Never compact the most recent this many results."""
        return int(self._native.policy()[1])

    def rewrite(self, messages: Sequence[JsonLike]) -> Rewrite:
        """The wire view of the lossless history ``messages``."""
        sent, compacted = self._native.rewrite(_jsons(messages))
        return Rewrite(sent, [json.loads(h) for h in compacted])

    def request(
        self,
        messages: Sequence[JsonLike],
        *,
        tools: Sequence[JsonLike] = (),
        system: Union[str, Sequence[JsonLike], None] = None,
        cache: Optional[CacheComposition] = None,
    ) -> Request:
        """The request for one call: ``messages`` rewritten, ``tools`` and
        ``system`` as given (add :func:`recall_tool_definition` to the
        tools), and ``cache``'s markers, if any."""
        body, compacted, markers = self._native.request(
            _jsons(messages),
            _jsons(tools),
            _system(system),
            cache._native if cache is not None else None,
        )
        return Request(body, [json.loads(h) for h in compacted], _markers(markers))

    def __repr__(self) -> str:
        return (
            f"Compactor(size_threshold={self.size_threshold}, keep_last={self.keep_last}, "
            f"ledger={self.ledger!r})"
        )


def rewrite(
    messages: Sequence[JsonLike],
    *,
    size_threshold: int = DEFAULT_SIZE_THRESHOLD,
    keep_last: int = DEFAULT_KEEP_LAST,
    ledger: Optional[Ledger] = None,
) -> Rewrite:
    """One-shot :meth:`Compactor.rewrite`, for callers that keep no state
    between calls: the same bytes as a long-lived compactor."""
    return Compactor(size_threshold, keep_last, ledger).rewrite(messages)


def recall_tool_definition() -> Dict[str, Any]:
    """The ``recall_tool_result`` tool definition to offer the model."""
    return json.loads(_native.recall_tool_json())


def recall(ledger: Ledger, tool_input: JsonLike) -> str:
    """Executes a ``recall_tool_result`` call against ``ledger`` (see
    :meth:`Ledger.recall`)."""
    return ledger.recall(tool_input)


def render_stub(handle: Mapping[str, Any]) -> str:
    """The stub text sent in place of a result: a pure function of its
    handle."""
    return _native.stub(_json(handle))


def derive_handle(tool_call_id: str, tool_name: str, content: str) -> Dict[str, Any]:
    """The handle a result would get, without recording it: a pure function
    of the call id, tool name and content."""
    return json.loads(_native.derive_handle(tool_call_id, tool_name, content))
