"""Alias and nesting bombs end in one line and exit 2 inside 2 GiB of address space and 10 s;
byte bombs (one long string aliased thousands of times: few values, gigabytes as JSON) inside
300 MiB and 1 s of CPU, whichever command reads them.

Each file is read by ``harness-tui`` in a child process whose address space is capped
(``ulimit -v``), so a reader that expanded the bomb would die of MemoryError or be killed
rather than take the machine with it; the timeout guards against a reader that spins.
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


def _run_capped(
    *args: str, memory: int = ADDRESS_SPACE, cpu_seconds: int | None = None, cwd: Path | None = None
) -> tuple[subprocess.CompletedProcess[str], float]:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        if cpu_seconds is not None:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))

    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "harness_tui", *args],
        capture_output=True,
        text=True,
        timeout=GUARD_SECONDS,
        preexec_fn=cap,
        check=False,
        cwd=cwd,
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
    from harness_tui.records.export.record import RunRecord
    from harness_tui.records.export.writing import checksum
    from harness_tui.workflow.loader import parse_workflow

    workflow = parse_workflow("name: w\ntasks: {a: {run: builtin:echo}}\n")
    run = TaskOrchestrator(workflow.graph).start({}).run_to_end()
    document = RunRecord.from_run(run, workflow).document
    source = _laughs(9, 9)
    document["workflow"].update(source=source, digest=digest_text(source))
    document["checksum"] = checksum(document)
    path = tmp_path / "bomb.json"
    path.write_text(json.dumps(document))
    result, seconds = _run_capped("replay", str(path))
    assert result.returncode == 2, result.stderr[-2000:]
    (line,) = result.stderr.splitlines()
    assert "aliases expand to more than 100,000 values" in line
    assert seconds < GUARD_SECONDS


LONG = "x" * 1_000_000  # within string_chars: one value is fine, five thousand copies are not
ALIASES = 5_000
BYTES_MESSAGE = "aliases expand to more than 16,777,216 bytes (an alias bomb?)"
SMALL_MEMORY = 300 * 1024**2


def _byte_bombs() -> dict[str, str]:
    many = ", ".join(["*s"] * ALIASES)
    keys = ", ".join(["{*s : 1}"] * ALIASES)
    pairs = ", ".join(["*p"] * ALIASES)
    task = "tasks:\n  a: {run: builtin:echo}\n"
    described = "".join(
        f"  t{i}: {{run: builtin:echo, description: *s}}\n" for i in range(1, ALIASES)
    )
    return {
        "payload": f'name: b\npayload:\n  s: &s "{LONG}"\n  l: [{many}]\n{task}',
        "with": (
            f"name: b\ntasks:\n  a:\n    run: builtin:echo\n"
            f'    with: {{s: &s "{LONG}", l: [{many}]}}\n'
        ),
        "keys": f'name: b\npayload:\n  s: &s "{LONG}"\n  l: [{keys}]\n{task}',
        "nested": f'name: b\npayload:\n  s: &s "{LONG}"\n  p: &p [*s, *s]\n  l: [{pairs}]\n{task}',
        "descriptions": (
            f'name: b\ntasks:\n  t0: {{run: builtin:echo, description: &s "{LONG}"}}\n{described}'
        ),
    }


BYTE_BOMBS = _byte_bombs()


def _assert_one_line(result: subprocess.CompletedProcess[str], message: str) -> None:
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert message in line


@pytest.mark.parametrize("shape", BYTE_BOMBS)
@pytest.mark.parametrize("command", ["validate", "plan"])
def test_a_byte_bomb_ends_in_one_line_within_300_mib_and_1_s(
    shape: str, command: str, tmp_path: Path
) -> None:
    path = tmp_path / f"{shape}.yaml"
    path.write_text(BYTE_BOMBS[shape])
    result, _ = _run_capped(command, str(path), memory=SMALL_MEMORY, cpu_seconds=1)
    _assert_one_line(result, BYTES_MESSAGE)
    assert result.stderr.startswith(f"{path}:")


@pytest.fixture(scope="module")
def bomb_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An export whose embedded workflow is the payload byte bomb (digest and checksum
    made to match), beside the small workflow it claims to be and a sound export of it."""
    from harness_tui.engine.canonical import digest_text
    from harness_tui.engine.orchestrator import TaskOrchestrator
    from harness_tui.records.export.record import RunRecord
    from harness_tui.records.export.writing import checksum
    from harness_tui.workflow.loader import parse_workflow

    folder = tmp_path_factory.mktemp("bomb-export")
    small = "name: w\ntasks: {a: {run: builtin:echo}}\n"
    (folder / "w.yaml").write_text(small)
    workflow = parse_workflow(small)
    run = TaskOrchestrator(workflow.graph).start({}).run_to_end()
    record = RunRecord.from_run(run, workflow)
    (folder / "sound.json").write_text(record.to_text())
    document = record.document
    source = BYTE_BOMBS["payload"]
    document["workflow"].update(source=source, digest=digest_text(source))
    document["checksum"] = checksum(document)
    (folder / "bomb.json").write_text(json.dumps(document))
    return folder


EXPORT_COMMANDS = {
    "replay": ["replay", "bomb.json"],
    "show": ["show", "bomb.json"],
    "diff": ["diff", "bomb.json", "sound.json"],
    "report": ["report", "bomb.json"],
    "verify": ["verify", "w.yaml", "--against", "bomb.json"],
}


@pytest.mark.parametrize("command", EXPORT_COMMANDS)
def test_a_byte_bomb_inside_an_export_ends_in_one_line_within_300_mib_and_1_s(
    command: str, bomb_export: Path
) -> None:
    args = EXPORT_COMMANDS[command]
    result, _ = _run_capped(*args, memory=SMALL_MEMORY, cpu_seconds=1, cwd=bomb_export)
    _assert_one_line(result, BYTES_MESSAGE)
    assert "embedded workflow is invalid" in result.stderr
