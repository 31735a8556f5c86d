"""Tasks for the Ctrl+C cases: each says in a marker file how far it got, so that the test
presses Ctrl+C at the step it means, never after a sleep."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Mapping
from typing import Any


def _mark(inputs: Mapping[str, Any], text: str) -> None:
    with open(inputs["params"]["marker"], "a", encoding="ascii") as out:
        out.write(text)


def _marked(inputs: Mapping[str, Any]) -> str:
    try:
        with open(inputs["params"]["marker"], encoding="ascii") as marker:
            return marker.read()
    except OSError:
        return ""


def ok(inputs: Mapping[str, Any]) -> str:
    return "ok"


def busy(inputs: Mapping[str, Any]) -> str:
    """Start a process and leave it (its pid in ``pids``), mark ``A``, work for 30 s."""
    child = subprocess.Popen(["sleep", "60"])
    with open(inputs["params"]["pids"], "a", encoding="ascii") as out:
        out.write(f"{child.pid}\n")
    _mark(inputs, "A")
    time.sleep(30)
    return "not stopped"


def stubborn_cleanup(inputs: Mapping[str, Any]) -> str:
    """Mark ``B``; then swallow every interruption for 30 s, marking ``C`` at each. Run again
    after that (a resumed run), it cleans up at once."""
    if "C" in _marked(inputs):
        return "cleaned later"
    _mark(inputs, "B")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            time.sleep(0.05)
        except BaseException:
            _mark(inputs, "C")
    return "cleaned"
