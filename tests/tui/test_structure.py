"""The workbench stays composed: a screen small enough to read in one sitting, and no class
that declares what another owns."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from harness_tui.tui.screens.workbench import WorkbenchScreen

TUI = Path(__file__).resolve().parents[2] / "harness_tui" / "tui"
METHOD_KINDS = (property, staticmethod, classmethod)
IMPORTS = (ast.Import, ast.ImportFrom)


def project_methods(cls: type) -> set[str]:
    """Names of the functions and properties the project's classes in ``cls``'s MRO define."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if not klass.__module__.startswith("harness_tui."):
            continue
        for name, value in vars(klass).items():
            if inspect.isfunction(value) or isinstance(
                value, property | staticmethod | classmethod
            ):
                names.add(name)
    return names


def test_the_workbench_screen_has_at_most_30_methods_counting_its_project_bases() -> None:
    methods = project_methods(WorkbenchScreen)
    assert "act" in methods and "show_session" in methods  # the count sees the bases too
    assert len(methods) <= 30, sorted(methods)


def test_type_checking_blocks_only_import() -> None:
    """A class that needs another's attributes under ``TYPE_CHECKING`` is a mixin in disguise:
    such blocks may import names for annotations, nothing else."""
    offenders = []
    for path in sorted(TUI.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.If) or not ast.unparse(node.test).endswith("TYPE_CHECKING"):
                continue
            if not all(isinstance(s, IMPORTS) for s in node.body):
                offenders.append(f"{path.relative_to(TUI)}:{node.lineno}")
    assert offenders == []
