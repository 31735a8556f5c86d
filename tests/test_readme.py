"""The README's Python examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_python_block_of_the_readme_runs() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    assert blocks
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})


def test_the_task_id_formula_is_exact() -> None:
    import hashlib
    import json

    from harness_tui.engine.canonical import task_id

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    (formula,) = re.findall(r"`(sha256\(f\"\{name\}.*?\[:16\])`", text)
    payload = {"z": [1, {"é": "ü"}], "a": 2.5, "m": None}
    scope = {"sha256": hashlib.sha256, "json": json, "name": "check_quota", "payload": payload}
    assert eval(formula, scope) == task_id("check_quota", payload)


def test_the_default_timeouts_are_the_ones_the_readme_states() -> None:
    from harness_tui import TaskNode
    from harness_tui.workflow.loader import parse_workflow

    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "a workflow file's task has no timeout unless it or `defaults:` sets one" in text
    assert "`TaskNode` defaults to 30 s" in text
    flow = parse_workflow("name: t\ntasks:\n  a: {run: builtin:echo}\n")
    assert flow.graph["a"].timeout_seconds is None
    assert TaskNode("a").timeout_seconds == 30.0
