"""Commands import only what they use (how long that takes is measured in
``benchmarks/bench_command_imports.py``, never asserted here)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import click
import pytest

from harness_tui.cli import cli
from harness_tui.cli.app import LAZY_COMMANDS

ROOT = Path(__file__).resolve().parents[2]

# What a command on a workflow file does not need: the UI, the store, pydantic (the models
# judge only files that are not plainly valid), Python-defined workflows, the other commands.
HEAVY = [
    "textual",
    "rich",
    "sqlite3",
    "dask",
    "distributed",
    "pydantic",
    "subprocess",
    "harness_tui.records",
    "harness_tui.tui",
    "harness_tui.engine.orchestrator",
    "harness_tui.workflow.model",
    "harness_tui.workflow.python_source",
    *sorted({f"harness_tui.cli.{module}" for module in LAZY_COMMANDS.values()}),
]


def imported_by(*args: str) -> list[str]:
    """The modules of :data:`HEAVY` that ``harness-tui ARGS`` imports, in a fresh process."""
    code = (
        "import sys, contextlib\nfrom harness_tui.cli import cli\n"
        "with contextlib.suppress(SystemExit):\n"
        f"    cli({list(args)!r}, standalone_mode=False)\n"
        f"print([m for m in {HEAVY!r} if m in sys.modules])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return list(ast.literal_eval(result.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "args",
    [
        ("validate", "workflows/user_profile.yaml"),
        ("plan", "workflows/user_profile.yaml", "--json"),
        ("generate", "--tasks", "4"),
    ],
    ids=["validate", "plan", "generate"],
)
def test_a_command_on_a_workflow_file_imports_nothing_heavy(args: tuple[str, ...]) -> None:
    assert imported_by(*args) == []


def test_a_command_imports_its_own_module_and_no_other() -> None:
    loaded = imported_by("verify", "no-such-workflow.yaml")
    assert [m for m in loaded if m.startswith("harness_tui.cli.")] == ["harness_tui.cli.check_cmds"]


def test_every_command_is_listed_where_it_is_loaded_from() -> None:
    ctx = click.Context(cli)
    for name in cli.list_commands(ctx):
        command = cli.get_command(ctx, name)
        assert command is not None and command.name == name
        assert command.callback is not None
        module = command.callback.__module__.rpartition(".")[2]
        assert module == LAZY_COMMANDS.get(name, "app"), name
    # Every command module is loaded now: none registered a command the table lacks.
    assert set(cli.commands) == set(cli.list_commands(ctx))


def test_a_run_that_writes_an_export_loads_no_schema_of_reading_one(tmp_path: Path) -> None:
    # The export's pydantic models judge an export being read; writing one needs none of
    # them, nor pydantic, nor what finds installed packages' versions until it writes.
    code = (
        "import sys, contextlib\nfrom harness_tui.cli import cli\n"
        "with contextlib.suppress(SystemExit):\n"
        f"    cli(['run', 'workflows/user_profile.yaml', '--store', {str(tmp_path / 'r.db')!r},"
        " '-q'], standalone_mode=False)\n"
        "print([m for m in ('pydantic', 'harness_tui.records.export.model',"
        " 'harness_tui.records.export.reading', 'importlib.metadata') if m in sys.modules])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert ast.literal_eval(result.stdout.strip().splitlines()[-1]) == []


def test_a_command_ends_with_what_was_registered_to_run_at_exit(tmp_path: Path) -> None:
    # The process ends without freeing its objects, but not before its exit handlers ran
    # and its output was written, piped or not.
    marker = tmp_path / "ran"
    code = (
        "import atexit, sys\n"
        "from harness_tui.cli import app\n"
        f"atexit.register(lambda: open({str(marker)!r}, 'w').write('yes'))\n"
        "atexit.register(lambda: print('from an exit handler'))\n"
        "print('before the end')\n"
        "app._exit(3)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 3
    assert done.stdout == "before the end\nfrom an exit handler\n"
    assert marker.read_text() == "yes"


def test_a_profiled_command_ends_as_python_does(tmp_path: Path) -> None:
    # The profiler writes what it saw once the program returns: that end is kept for it.
    script = tmp_path / "end.py"
    script.write_text("from harness_tui.cli import app\napp._exit(0)\n")
    profile = tmp_path / "end.prof"
    done = subprocess.run(
        [sys.executable, "-m", "cProfile", "-o", str(profile), str(script)], capture_output=True
    )
    assert done.returncode == 0 and profile.stat().st_size > 0
