"""A run the store cannot record (a full disk) says so in one line, even with ``-q``, and exits
1; the fault is SQLite's own "database or disk is full", injected by capping the store's pages
just before the run's first write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness_tui.cli import cli
from harness_tui.records.store import RunStore

WORKFLOW = "name: w\ntasks:\n" + "".join(
    f"  t{i}: {{run: builtin:echo, with: {{text: '{'x' * 2000}'}}}}\n" for i in range(40)
)


@pytest.fixture
def full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    attach = RunStore.attach

    def attach_then_fill(self: RunStore, *args: object, **kwargs: object) -> None:
        pages = self._db.execute("PRAGMA page_count").fetchone()[0]
        self._db.execute(f"PRAGMA max_page_count = {pages}")  # no room for one more page
        attach(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(RunStore, "attach", attach_then_fill)


@pytest.mark.parametrize("quiet", [["-q"], []])
def test_a_run_that_cannot_be_recorded_says_so_and_exits_1(
    tmp_path: Path, full_disk: None, quiet: list[str]
) -> None:
    workflow = tmp_path / "w.yaml"
    workflow.write_text(WORKFLOW, encoding="utf-8")
    export = tmp_path / "run.json"
    result = CliRunner().invoke(
        cli,
        ["run", str(workflow), "--store", str(tmp_path / "s.sqlite3"), "--export", str(export),
         *quiet],
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    problems = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(problems) == 1
    assert problems[0].startswith("error: the run is no longer recorded: ")
    assert "database or disk is full" in problems[0]
    if quiet:  # the one line besides where the export went
        assert result.stderr.splitlines() == [*problems, f"exported: {export}"]
    # The run itself succeeded, and its export says so.
    assert json.loads(export.read_text(encoding="utf-8"))["status"] == "succeeded"


def test_without_a_store_nothing_is_missing(tmp_path: Path, full_disk: None) -> None:
    workflow = tmp_path / "w.yaml"
    workflow.write_text(WORKFLOW, encoding="utf-8")
    result = CliRunner().invoke(cli, ["run", str(workflow), "--no-store", "-q"])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
