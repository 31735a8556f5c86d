"""The headless layers never import the UI toolkit (the import-linter contract checks the
static imports; this checks what actually gets loaded)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

HEADLESS = [
    "harness_tui",
    "harness_tui.engine.orchestrator",
    "harness_tui.engine.harness",
    "harness_tui.engine.diff",
    "harness_tui.workflow.loader",
    "harness_tui.workflow.sources",
    "harness_tui.records.export",
    "harness_tui.records.store",
    "harness_tui.records.runs.replay",
    "harness_tui.layout",
]


@pytest.mark.parametrize("module", HEADLESS)
def test_headless_modules_do_not_load_textual(module: str) -> None:
    code = f"import sys, {module}; print('textual' in sys.modules, 'rich' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    textual_loaded, rich_loaded = result.stdout.split()
    assert textual_loaded == "False"
    if module.startswith(
        ("harness_tui.engine", "harness_tui.records", "harness_tui.workflow", "harness_tui.layout")
    ):
        assert rich_loaded == "False"


def test_the_cli_loads_textual_only_for_the_workbench() -> None:
    code = (
        "import sys, contextlib\nfrom harness_tui.cli import cli\n"
        "with contextlib.suppress(SystemExit):\n"
        "    cli(['validate', 'workflows/user_profile.yaml'], standalone_mode=False)\n"
        "print('textual' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert result.stdout.strip().endswith("False")


def test_engine_imports_only_the_standard_library() -> None:
    code = (
        "import sys; before = set(sys.modules); import harness_tui.engine.orchestrator, "
        "harness_tui.engine.harness; new = set(sys.modules) - before; "
        "third = sorted(m for m in new if m.split('.')[0] not in sys.stdlib_module_names "
        "and not m.startswith('harness_tui')); print(third)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_front_ends_never_read_a_runs_private_state() -> None:
    """The CLI and the workbench read runs through their public API and snapshots only."""
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in ("cli", "tui")
        for path in sorted((ROOT / "harness_tui" / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "run.state" in line or "run._" in line
    ]
    assert offenders == []


HEAVY = ("yaml", "pydantic", "sqlite3", "textual", "rich", "click", "jmespath")


@pytest.mark.parametrize("module", ["harness_tui", "harness_tui.engine"])
def test_the_faces_import_nothing_heavy_until_asked(module: str) -> None:
    code = (
        f"import sys, {module}\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
        "import harness_tui\n"
        "harness_tui.load_workflow, harness_tui.RunStore, harness_tui.replay\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    before, after = result.stdout.splitlines()
    assert before == "[]"
    assert "'sqlite3'" in after and "'yaml'" in after and "'textual'" not in after


def test_every_exported_name_resolves() -> None:
    import harness_tui
    import harness_tui.engine
    import harness_tui.records
    import harness_tui.records.export
    import harness_tui.records.store
    import harness_tui.workflow

    faces = (
        harness_tui,
        harness_tui.engine,
        harness_tui.records,
        harness_tui.records.export,
        harness_tui.records.store,
        harness_tui.workflow,
    )
    for package in faces:
        missing = [name for name in package.__all__ if getattr(package, name, None) is None]
        assert missing == [], package.__name__
        assert set(package.__all__) <= set(dir(package))
    with pytest.raises(AttributeError):
        _ = harness_tui.no_such_name  # type: ignore[attr-defined]


def test_no_function_is_over_60_lines() -> None:
    import ast

    long = []
    for path in sorted((ROOT / "harness_tui").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                size = node.end_lineno - node.lineno + 1
                if size > 60:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({size})")
    assert long == []
