"""Alias and nesting bombs end in one line and exit 2 inside 2 GiB of address space and 10 s.

Each file is read by ``harness-tui validate`` in a child process whose address space is
capped (``ulimit -v``), so a reader that expanded the bomb would die of MemoryError or be
killed rather than take the machine with it; the timeout guards against a reader that spins.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

resource = pytest.importorskip("resource")

ADDRESS_SPACE = 2 * 1024**3
GUARD_SECONDS = 10


def _laughs(levels: int, width: int) -> str:
    lines = ["name: bomb", "payload:", f"  l0: &l0 [{', '.join(['lol'] * width)}]"]
    for level in range(1, levels):
        refs = ", ".join([f"*l{level - 1}"] * width)
        lines.append(f"  l{level}: &l{level} [{refs}]")
    lines += ["tasks:", "  a:", "    run: builtin:echo", f"    with: {{x: *l{levels - 1}}}"]
    return "\n".join(lines) + "\n"


BOMBS = {
    "billion-laughs": (_laughs(9, 9), "aliases expand to more than 100,000 values"),
    "wide-laughs": (_laughs(4, 400), "aliases expand to more than 100,000 values"),
    "doubling-mappings": (
        "name: bomb\nb0: &b0 {k: [1, 2, 3, 4, 5, 6, 7, 8]}\n"
        + "".join(f"b{i}: &b{i} {{x: *b{i - 1}, y: *b{i - 1}}}\n" for i in range(1, 40))
        + "tasks: {a: {run: builtin:echo}}\n",
        "aliases expand to more than 100,000 values",
    ),
    "flow-nesting": (
        "payload: " + "[" * 200_000 + "]" * 200_000 + "\n",
        "exceeded maximum nesting depth",
    ),
    "mapping-nesting": ("payload: " + "{a: " * 50_000 + "1" + "}" * 50_000 + "\n", "nested more"),
    "block-nesting": (
        "payload:\n" + "".join("  " * i + "- \n" for i in range(2_000)),
        "nested more than 100 levels deep",
    ),
}


def _run_capped(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))

    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "harness_tui", *args],
        capture_output=True,
        text=True,
        timeout=GUARD_SECONDS,
        preexec_fn=cap,
        check=False,
    )
    return result, time.perf_counter() - start


@pytest.mark.parametrize("name", BOMBS, ids=list(BOMBS))
def test_bomb_is_refused_within_memory_and_time(name: str, tmp_path: Path) -> None:
    text, message = BOMBS[name]
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    result, seconds = _run_capped("validate", str(path))
    assert result.returncode == 2, result.stderr[-2000:]
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"{path}:") and message in line
    assert seconds < GUARD_SECONDS


def test_bomb_inside_an_export_is_refused_within_memory(tmp_path: Path) -> None:
    from harness_tui.engine.canonical import digest_text
    from harness_tui.engine.orchestrator import TaskOrchestrator
    from harness_tui.records import export as export_module
    from harness_tui.workflow.loader import parse_workflow

    workflow = parse_workflow("name: w\ntasks: {a: {run: builtin:echo}}\n")
    run = TaskOrchestrator(workflow.graph).start({}).run_to_end()
    document = export_module.RunRecord.from_run(run, workflow).document
    source = _laughs(9, 9)
    document["workflow"].update(source=source, digest=digest_text(source))
    document["checksum"] = export_module._checksum(document)
    path = tmp_path / "bomb.json"
    path.write_text(json.dumps(document))
    result, seconds = _run_capped("replay", str(path))
    assert result.returncode == 2, result.stderr[-2000:]
    (line,) = result.stderr.splitlines()
    assert "aliases expand to more than 100,000 values" in line
    assert seconds < GUARD_SECONDS
