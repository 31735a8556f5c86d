"""`validate --imports` imports every reference (running module code, so only on request)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from harness_tui.cli import cli

WORKFLOW = """\
name: refs
tasks:
  a: {run: seams_good:ok}
  b: {run: seams_good:nope, fallback: seams_raises:x}
  c: {run: seams_missing:f}
  d: {run: builtin:echo}
"""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "seams_good.py").write_text("def ok(inputs):\n    return 1\n")
    (tmp_path / "seams_raises.py").write_text("raise SystemExit('boom at import')\n")
    (tmp_path / "flow.yaml").write_text(WORKFLOW)
    monkeypatch.chdir("/")  # the references are found in the workflow's folder, from anywhere
    for name in ("seams_good", "seams_raises"):
        monkeypatch.delitem(__import__("sys").modules, name, raising=False)
    return tmp_path


def test_validate_alone_imports_nothing(folder: Path) -> None:
    result = CliRunner().invoke(cli, ["validate", str(folder / "flow.yaml")])
    assert result.exit_code == 0 and result.stdout.startswith("ok: ")


def test_validate_imports_names_each_reference_that_does_not_import(folder: Path) -> None:
    path = folder / "flow.yaml"
    result = CliRunner().invoke(cli, ["validate", "--imports", str(path)])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"{path}:4:12: task 'b': cannot import 'seams_good:nope': 'seams_good' has no "
        "attribute 'nope'",
        f"{path}:4:39: task 'b': cannot import 'seams_raises:x': SystemExit: boom at import",
        f"{path}:5:12: task 'c': cannot import 'seams_missing' for 'seams_missing:f': No "
        "module named 'seams_missing'",
    ]
    (folder / "flow.yaml").write_text(
        WORKFLOW.replace("nope", "ok")
        .replace("seams_missing:f", "builtin:echo")
        .replace(", fallback: seams_raises:x", "")
    )
    again = CliRunner().invoke(cli, ["validate", "--imports", str(path)])
    assert again.exit_code == 0, again.output
