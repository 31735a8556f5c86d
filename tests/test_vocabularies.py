"""The vocabularies harness-tui speaks are spelled once, in their enum modules: a stored run's
status, a task not started yet, an attempt's outcome, and the cap on one shown line. An AST
scan finds none of their literals anywhere else in the package (docstrings aside), so a new
site has to use the name and cannot drift from it (issue 30)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "harness_tui"

VOCABULARIES = {
    # literal: the one module that may spell it
    "interrupted": "records/store/statuses.py",
    "abandoned": "records/store/statuses.py",
    "pending": "engine/events.py",
    "ok": "engine/outcome.py",
    "timeout": "engine/outcome.py",
    2000: "workflow/limits.py",
}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            found.add(id(node.value))  # attribute docstrings
    return found


NOT_SCANNED = ("interception/",)
"""Patches of HTTP clients, whose literals are those clients' parameter names (``timeout``)."""


def _slots(tree: ast.AST) -> set[int]:
    """Constants naming attributes (``__slots__``), not values."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__slots__" for t in node.targets
        ):
            found.update(id(c) for c in ast.walk(node.value) if isinstance(c, ast.Constant))
    return found


def spelled_outside(package: Path) -> list[str]:
    """``file:line: literal`` for each literal of a vocabulary outside its home."""
    found = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package).as_posix()
        if relative.startswith(NOT_SCANNED):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _docstrings(tree) | _slots(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Constant) or id(node) in skip:
                continue
            value = node.value
            if type(value) not in (str, int) or value not in VOCABULARIES:
                continue
            if VOCABULARIES[value] != relative:
                found.append(f"{relative}:{node.lineno}: {value!r}")
    return found


def test_each_vocabulary_is_spelled_only_in_its_home() -> None:
    assert spelled_outside(PACKAGE) == []


def test_the_scan_finds_a_literal_spelled_elsewhere(tmp_path: Path) -> None:
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "events.py").write_text('PENDING = "pending"\n')
    (tmp_path / "elsewhere.py").write_text(
        '"""A docstring may say pending."""\nif status == "abandoned":\n    shown = 2000\n'
    )
    assert spelled_outside(tmp_path) == ["elsewhere.py:2: 'abandoned'", "elsewhere.py:3: 2000"]
