"""No input to the package can kill the interpreter: each binding given
out-of-range sizes (huge, negative, past 64 bits), in a fresh interpreter
with its address space bounded, raises a Python exception (sizes outside
the command line's ranges a ValueError) or answers; it never aborts or
grows without bound. Paths may be bytes, names need not be UTF-8, and
``from_`` takes every format ``tracecost import --from`` does."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import tracecost
from conftest import FIXTURES

# Far more than any case needs, far less than a runaway allocation asks.
ADDRESS_SPACE = 4 << 30

SMALL = FIXTURES / "traces" / "small.json"

# (code ending in an expression, the exception it must raise or None when
# an answer is fine too)
CASES = [
    ('tracecost.generate("fleet", sessions=10**9)', "ValueError"),
    ('tracecost.generate("fleet", sessions=100_001)', "ValueError"),
    ('tracecost.generate("fleet", sessions=0)', "ValueError"),
    ('tracecost.generate("fleet", sessions=-1)', "ValueError"),
    ('tracecost.generate("fleet", sessions=10**40)', "ValueError"),
    ('tracecost.generate("fleet", sessions=10**5000)', "ValueError"),
    ('tracecost.generate("fleet", sessions=2, accounts=10**9)', "ValueError"),
    ('tracecost.generate("fleet", sessions=2, accounts=-3)', "ValueError"),
    ('tracecost.generate("fleet", sessions=2, days=10**12)', "ValueError"),
    ('tracecost.generate("fleet", sessions=2, days=-1)', "ValueError"),
    ('tracecost.generate("fleet", sessions=2, seed=-1)', "ValueError"),
    ('tracecost.generate("fleet", sessions=2, seed=2**64)', "ValueError"),
    ('tracecost.generate("fleet", sessions=1.5)', "TypeError"),
    ('tracecost.generate("fleet", sessions=True)', "TypeError"),
    ('tracecost.generate("session", calls=10**9)', "ValueError"),
    ('tracecost.generate("session", calls=-1)', "ValueError"),
    ('tracecost.generate("session", calls=2**64)', "ValueError"),
    ('tracecost.generate("session-1000000000-s1")', "ConfigError"),
    ("tracecost.Compactor(size_threshold=-1)", "ValueError"),
    ("tracecost.Compactor(size_threshold=2**64)", "OverflowError"),
    ("tracecost.Compactor(keep_last=2**64)", "OverflowError"),
    ("tracecost.InMemoryLedger().fetch('tm_0', offset=2**64 - 1, max_chars=2**64 - 1)", None),
    ("tracecost.InMemoryLedger().fetch('tm_0', offset=-1)", "OverflowError"),
    ("tracecost.InMemoryLedger().fetch('tm_0', max_chars=2**64)", "OverflowError"),
    ("tracecost.load(b'/no/such/dir/\\xff.json')", "InputError"),
    ("tracecost.load('/no/such/file.json', from_='no-such-format')", "ConfigError"),
    ("tracecost.sweep(tracecost.load(SMALL), recall_cost=float('nan'))", "ValueError"),
    ("tracecost.sweep(tracecost.load(SMALL), recall_cost=1e308)", "ValueError"),
    ("tracecost.sweep(tracecost.load(SMALL), recall_cost=-1.0)", "ValueError"),
]


def run_bounded(code: str) -> "subprocess.CompletedProcess[str]":
    """Runs ``code`` in a fresh interpreter whose address space is bounded:
    what it raised (its class name) on the last line of stdout, or
    ``returned``."""
    script = textwrap.dedent(f"""
        import resource, sys, warnings
        resource.setrlimit(resource.RLIMIT_AS, ({ADDRESS_SPACE}, {ADDRESS_SPACE}))
        warnings.simplefilter("ignore")
        import tracecost
        SMALL = {str(SMALL)!r}
        try:
            {code}
        except BaseException as e:
            print(type(e).__name__, e, sep=": ")
        else:
            print("returned")
    """)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS is Linux's")
@pytest.mark.parametrize("code,raises", CASES, ids=[c for c, _ in CASES])
def test_out_of_range_input_raises_and_never_kills_the_interpreter(code, raises):
    p = run_bounded(code)
    # A negative code is a signal (SIGABRT on a failed allocation).
    assert p.returncode == 0, (p.returncode, p.stderr[-2000:])
    last = p.stdout.strip().splitlines()[-1]
    if raises is None:
        assert last == "returned" or ":" in last, last
    else:
        assert last.split(":")[0] == raises, last


def test_sizes_are_refused_with_the_command_lines_range(cli):
    with pytest.raises(ValueError, match=r"^sessions 1000000000: expected a number from 1 to 100000$"):
        tracecost.generate("fleet", sessions=10**9)
    with pytest.raises(ValueError, match=r"^calls 0: expected a number from 1 to 100000$"):
        tracecost.generate("session", calls=0)
    # The same range on the command line.
    p = cli("gen", "fleet", "--sessions", "1000000000")
    assert p.returncode == 2 and "from 1 to 100000" in p.stderr, p.stderr
    # Within the range, as ever.
    assert len(tracecost.generate("fleet", sessions=1, days=1)) >= 1


def test_a_path_may_be_bytes_and_a_name_need_not_be_utf8(tmp_path):
    want = [t.to_json() for t in tracecost.load(SMALL)]
    assert [t.to_json() for t in tracecost.load(os.fsencode(SMALL))] == want
    assert [t.to_json() for t in tracecost.load([os.fsencode(SMALL)])] == want
    odd = os.path.join(os.fsencode(tmp_path), b"tr\xffce.json")
    with open(odd, "wb") as f:
        f.write(SMALL.read_bytes())
    assert [t.to_json() for t in tracecost.load(odd)] == want
    assert [t.to_json() for t in tracecost.load(os.fsdecode(odd))] == want


def test_from_takes_every_format_of_the_command_line(cli):
    help_text = cli("import", "--help").stdout
    names = ["claude-code", "anthropic", "langchain", "openai", "codex", "openai-responses",
             "gemini", "bedrock", "otel", "langfuse", "openai-agents", "langsmith"]
    for name in names:
        assert name in help_text, name
        # The format is taken; the missing file is what is refused.
        with pytest.raises(tracecost.InputError) as e:
            tracecost.load("/no/such/file.json", from_=name)
        assert "from_" not in str(e.value), (name, str(e.value))
    with pytest.raises(tracecost.ConfigError, match="langsmith"):
        tracecost.load("/no/such/file.json", from_="no-such-format")
