"""The engine from Python: compaction round trips, byte-stable stubs, the
recall tool, cache markers, ledgers, errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import tracecost
from tracecost import (
    CacheComposition,
    Compactor,
    DurableLedger,
    InMemoryLedger,
    recall_tool_definition,
)

PAYLOAD = json.dumps(
    {"products": [{"name": f"gun {i}", "stats": {"current": i * 7}} for i in range(400)]}
)


def history(n_results: int = 3, size: int = 20_000):
    """A conversation with ``n_results`` large tool results."""
    msgs = [{"role": "user", "content": "look them up"}]
    for i in range(n_results):
        payload = PAYLOAD if i == 0 else ("row %d: " % i) + "x" * size
        msgs.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": f"toolu_{i}", "name": "fetch", "input": {"page": i}}
                ],
            }
        )
        msgs.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": payload}],
            }
        )
        msgs.append({"role": "assistant", "content": [{"type": "text", "text": f"read {i}"}]})
    msgs.append({"role": "user", "content": "and now?"})
    return msgs


def test_compact_and_recall_round_trip():
    msgs = history()
    before = json.dumps(msgs)
    c = Compactor(size_threshold=8000, keep_last=1)
    rw = c.rewrite(msgs)
    # The two oldest results are stale and large; the last one is kept.
    assert [h["tool_call_id"] for h in rw.compacted] == ["toolu_0", "toolu_1"]
    assert json.dumps(msgs) == before, "the history is never mutated"
    sent = rw.messages
    stub = sent[2]["content"][0]["content"]
    assert stub == tracecost.render_stub(rw.compacted[0])
    assert rw.compacted[0]["mem_id"] in stub
    assert sent[2]["content"][0]["tool_use_id"] == "toolu_0"
    # Unchanged messages go out as they came in.
    assert sent[0] == msgs[0] and sent[-1] == msgs[-1]
    mem_id = rw.compacted[0]["mem_id"]
    assert c.ledger.recall({"mem_id": mem_id, "format": "full"}) == PAYLOAD
    assert tracecost.recall(c.ledger, json.dumps({"mem_id": mem_id})) == PAYLOAD
    assert c.ledger.get(mem_id)["payload"] == PAYLOAD
    assert c.ledger.get_by_call_id("toolu_0")["handle"] == rw.compacted[0]
    assert len(c.ledger) == 2


def test_handles_are_pure_functions_of_their_inputs():
    h = tracecost.derive_handle("toolu_0", "fetch", PAYLOAD)
    rw = tracecost.rewrite(history(), size_threshold=8000, keep_last=1)
    assert rw.compacted[0] == h
    assert h["mem_id"].startswith("tm_") and len(h["mem_id"]) == 19
    assert h["size_chars"] == len(PAYLOAD)


def test_sizes_count_code_points():
    text = "é" * 5000 + "😀" * 5000  # 10,000 code points, 30,000 UTF-8 bytes
    msgs = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": text}]},
        # The model has read the result: it may be compacted.
        {"role": "assistant", "content": [{"type": "text", "text": "read it"}]},
        {"role": "user", "content": "next"},
    ]
    assert Compactor(10_000, 0).rewrite(msgs).compacted == []
    assert Compactor(9_999, 0).rewrite(msgs).compacted[0]["size_chars"] == 10_000


def test_stubs_are_byte_stable_across_calls_compactors_and_processes():
    msgs = history(4)
    a = Compactor(8000, 1)
    first = a.rewrite(msgs[:8]).messages_json
    later = a.rewrite(msgs).messages_json
    # toolu_0 was compacted at the first call; toolu_1 only at the later
    # one (a newer result arrived). Everything up to it is sent as the
    # same bytes at both calls, the stub included.
    assert "tm_" in first[2]
    assert later[:5] == first[:5]
    assert "tm_" not in first[5] and "tm_" in later[5]
    fresh = Compactor(8000, 1).rewrite(msgs).messages_json
    assert fresh == later
    code = (
        "import json, sys, tracecost\n"
        "msgs = json.loads(sys.stdin.read())\n"
        "print(json.dumps(tracecost.Compactor(8000, 1).rewrite(msgs).messages_json))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], input=json.dumps(msgs), capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == later


def test_json_text_is_kept_byte_for_byte():
    # Key order and spacing of a tool_use input survive as given.
    raw = '{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"n","input":{"b": 1, "a": [2,  3]}}]}'
    rw = Compactor().rewrite(['{"role":"user","content":"hi"}', raw])
    assert rw.messages_json[1] == raw


def test_recall_tool_answers():
    ledger = InMemoryLedger()
    h = ledger.record("toolu_9", "catalog", {"q": "guns"}, PAYLOAD)
    mem = h["mem_id"]
    assert ledger.recall({"mem_id": mem, "format": "summary"}) == tracecost.render_stub(h)
    window = ledger.recall({"mem_id": mem, "query": "gun 399"})
    assert "gun 399" in window
    part = ledger.recall({"mem_id": mem, "offset": 10, "max_chars": 20})
    assert PAYLOAD[10:30] in part
    assert ledger.recall({"mem_id": mem, "json_path": "products.3.stats.current"}) == "21"
    assert ledger.fetch(mem, json_path="products.3.name") == '"gun 3"'
    assert ledger.recall({"mem_id": "tm_nope"}) == "[tool_memory not found: tm_nope]"
    bad = ledger.recall({"mem_id": mem, "colour": "red"})
    assert bad.startswith("[recall_tool_result: invalid arguments:")
    assert ledger.recall("not json").startswith("[recall_tool_result: invalid arguments:")
    # Idempotent on the result: the same content again is the same record.
    assert ledger.record("toolu_9", "catalog", {"q": "guns"}, PAYLOAD) == h
    # The same call id with other content (another conversation reusing
    # the id) is a record of its own, and a lookup by the id refuses to
    # guess between them.
    other = ledger.record("toolu_9", "catalog", "{}", "other")
    assert other["mem_id"] != mem
    assert ledger.get(other["mem_id"])["payload"] == "other"
    assert ledger.get(mem)["payload"] == PAYLOAD
    with pytest.raises(tracecost.LedgerError):
        ledger.get_by_call_id("toolu_9")
    tool = recall_tool_definition()
    assert tool["name"] == tracecost.RECALL_TOOL_NAME == "recall_tool_result"
    assert tool["input_schema"]["required"] == ["mem_id"]


def test_durable_ledger_is_shared_through_its_directory(tmp_path):
    a = DurableLedger(tmp_path / "ledger")
    c = Compactor(8000, 1, ledger=a)
    rw = c.rewrite(history())
    b = DurableLedger(tmp_path / "ledger")
    mem = rw.compacted[1]["mem_id"]
    assert b.get(mem)["payload"] == a.get(mem)["payload"]
    assert b.recall({"mem_id": mem}).startswith("row 1: ")
    assert [h["mem_id"] for h in b.handles()] == [h["mem_id"] for h in rw.compacted]
    assert b.path == str(tmp_path / "ledger")


def test_cache_composition_places_markers():
    tools = [
        {"name": "fetch", "description": "d", "input_schema": {"type": "object"}},
        recall_tool_definition(),
    ]
    c = Compactor(8000, 1)
    req = c.request(history(), tools=tools, system="You are helpful.", cache=CacheComposition())
    at = [(m["at"], m["index"]) for m in req.markers]
    assert at[0] == ("tool", 1) and at[1] == ("system", 0) and at[2][0] == "message"
    body = req.body
    assert body["tools"][1]["cache_control"] == {"type": "ephemeral"}
    assert body["system"] == [
        {"type": "text", "text": "You are helpful.", "cache_control": {"type": "ephemeral"}}
    ]
    assert [h["tool_call_id"] for h in req.compacted] == ["toolu_0", "toolu_1"]
    assert req.json == c.request(history(), tools=tools, system="You are helpful.",
                                 cache=CacheComposition()).json
    hour = CacheComposition(manifest=None, prompt_region=False, ttl="1h").request(history())
    assert len(hour.markers) == 1 and hour.markers[0]["ttl"] == "1h"
    assert '"cache_control":{"type":"ephemeral","ttl":"1h"}' in hour.json
    assert "tools" not in hour.body and "system" not in hour.body


def test_markers_for_a_provider_without_cache_control_are_refused():
    with pytest.raises(tracecost.ConfigError, match="provider openai does not accept"):
        CacheComposition(provider="openai")
    CacheComposition(history=False, manifest=None, prompt_region=False, provider="openai")
    with pytest.raises(tracecost.ConfigError, match="ttl"):
        CacheComposition(ttl="2h")


def test_bad_messages_are_input_errors():
    with pytest.raises(tracecost.InputError, match=r"messages\[1\]"):
        Compactor().rewrite([{"role": "user", "content": "hi"}, {"role": "robot", "content": "x"}])
    with pytest.raises(tracecost.InputError):
        Compactor().rewrite(["{not json"])
    with pytest.raises(TypeError):
        Compactor().rewrite({"role": "user", "content": "hi"})
    assert issubclass(tracecost.ConfigError, tracecost.InputError)
    assert issubclass(tracecost.InputError, tracecost.TracecostError)
    assert issubclass(tracecost.LedgerError, tracecost.TracecostError)


def test_a_ledger_that_cannot_be_stored_is_a_ledger_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(tracecost.LedgerError):
        DurableLedger(blocker / "ledger")
