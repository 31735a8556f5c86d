"""`harness-tui runs`: fits 80 columns on a terminal; tab-separated text when piped."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.cells import cell_len
from rich.console import Console

from harness_tui.cli import cli, records_cmds

ROOT = Path(__file__).resolve().parents[2]
LONG_NAME = "nightly_customer_ledger_reconciliation_with_a_name_longer_than_any_terminal"


@pytest.fixture
def store(tmp_path: Path) -> str:
    """A store holding a succeeded run, a failed one, and one of a very long workflow name."""
    long_workflow = tmp_path / "long.yaml"
    long_workflow.write_text(f"name: {LONG_NAME}\ntasks:\n  a:\n    run: builtin:echo\n")
    path = str(tmp_path / "runs.db")
    for workflow in (
        ROOT / "workflows/user_profile.yaml",
        ROOT / "tests/tui/data/flaky_pipeline.yaml",
        long_workflow,
    ):
        result = CliRunner().invoke(cli, ["run", str(workflow), "--store", path, "-q"])
        assert result.exit_code in (0, 1), result.output
    return path


def test_piped_runs_are_tab_separated_with_a_header(store: str) -> None:
    result = CliRunner().invoke(cli, ["runs", "--store", store])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "id\tworkflow\tpayload\tstatus\tstarted\tdone"
    rows = [line.split("\t") for line in lines[1:]]
    assert all(len(row) == 6 for row in rows)
    by_workflow = {row[1]: row for row in rows}
    assert sorted(by_workflow) == sorted([LONG_NAME, "flaky_pipeline", "user_profile"])
    assert all(re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{6}", row[0]) for row in rows), rows
    flaky = by_workflow["flaky_pipeline"]
    assert flaky[3] == "failed" and flaky[5] == "4/4" and len(flaky[2]) == 12
    assert "\x1b" not in result.stdout and "│" not in result.stdout


def test_on_an_80_column_terminal_runs_fit_and_keep_ids_and_statuses(
    store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    piped = CliRunner().invoke(cli, ["runs", "--store", store]).stdout.splitlines()[1:]
    expected = [line.split("\t") for line in piped]
    screen = io.StringIO()
    terminal = Console(file=screen, width=80, force_terminal=True, color_system=None)
    monkeypatch.setattr(records_cmds, "table_console", lambda: terminal)
    result = CliRunner().invoke(cli, ["runs", "--store", store])
    assert result.exit_code == 0
    lines = screen.getvalue().splitlines()
    assert max(cell_len(line) for line in lines) <= 80, lines
    # The title (the store's path) may wrap over several lines when the path is long.
    header = next(i for i, line in enumerate(lines) if line.split()[:1] == ["id"])
    assert lines[header].split() == ["id", "workflow", "payload", "status", "started", "done"]
    body = lines[header + 1 :]
    assert [line.split()[0] for line in body] == [row[0] for row in expected]
    assert [line.split()[3] for line in body] == [row[3] for row in expected]
    assert [line.split()[-1] for line in body] == [row[5] for row in expected]
    long_line = next(line for line in body if "nightly_custom" in line)
    assert "…" in long_line and LONG_NAME not in long_line


def test_run_cells_show_control_characters_instead_of_obeying_them() -> None:
    row = {
        "id": "20260101-000000-abcdef",
        "workflow": "evil\t\x1b[2Jname\n",
        "payload_digest": "0" * 64,
        "status": "failed",
        "started_at": "2026-01-01T00:00:00Z",
        "tasks_done": 1,
        "tasks_total": 2,
    }
    cells = records_cmds._run_cells(row, wide=True)
    assert cells[1] == "evil\\t\\x1b[2Jname\\n"
    assert records_cmds._run_cells(row, wide=False)[4] == "2026-01-01 00:00"


def test_an_empty_default_store_pipes_just_the_header(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness_tui.records import store as store_module

    monkeypatch.setattr(store_module, "default_store_path", lambda: tmp_path / "none.db")
    result = CliRunner().invoke(cli, ["runs"])
    assert result.exit_code == 0
    assert result.stdout == "id\tworkflow\tpayload\tstatus\tstarted\tdone\n"
