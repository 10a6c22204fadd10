"""Shared helpers: the repository, the command line to compare with."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, List

import pytest

REPO = Path(__file__).resolve().parents[2]
TRACES = sorted((REPO / "traces").glob("*.json"))
FIXTURES = REPO / "tests" / "fixtures"


def cli_path() -> Path:
    """The tracecost binary the figures are compared with: $TRACECOST_BIN,
    else the one a cargo build left in target/ (release, then debug)."""
    env = os.environ.get("TRACECOST_BIN")
    if env:
        return Path(env)
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    for profile in ("release", "debug"):
        p = target / profile / "tracecost"
        if p.is_file():
            return p
    raise RuntimeError("no tracecost binary: build it (cargo build) or set TRACECOST_BIN")


@pytest.fixture(scope="session")
def cli():
    """Runs the command line; returns (exit code, stdout, stderr)."""
    exe = cli_path()

    def run(*args: Any) -> "subprocess.CompletedProcess[str]":
        env = dict(os.environ, TRACECOST_NO_PROGRESS="1")
        return subprocess.run(
            [str(exe), *map(str, args)], capture_output=True, text=True, env=env, cwd=REPO
        )

    return run


@pytest.fixture(scope="session")
def cli_json(cli):
    """Runs the command line and parses its JSON output."""

    def run(*args: Any) -> Any:
        p = cli(*args)
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout)

    return run


# What the command line adds to a library error about its own flags (the
# library's message, which the package raises, knows nothing of them).
CLI_HINTS = (
    "; price the trace as a known model with --model NAME, or add the model with --pricing FILE",
)


def cli_error(proc: "subprocess.CompletedProcess[str]") -> str:
    """The one-line message of a failed command, without the program name
    and without the command line's hint about its flags."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines: List[str] = [l for l in proc.stderr.splitlines() if l.strip()]
    message = lines[-1].removeprefix("tracecost: ")
    for hint in CLI_HINTS:
        message = message.removesuffix(hint)
    return message
