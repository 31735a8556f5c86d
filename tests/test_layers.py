"""The headless layers never import the UI toolkit (the import-linter contract checks the
static imports; this checks what actually gets loaded)."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEADLESS = [
    "harness_tui",
    "harness_tui.engine.orchestrator",
    "harness_tui.engine.harness",
]


@pytest.mark.parametrize("module", HEADLESS)
def test_headless_modules_do_not_load_textual(module: str) -> None:
    code = f"import sys, {module}; print('textual' in sys.modules, 'rich' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["False", "False"]


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
