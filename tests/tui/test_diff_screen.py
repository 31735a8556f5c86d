"""The diff screen of two runs of one plan: ``n``/``N`` go to the run differences, and the
title, the run column and ``f1 Help`` fit an 80-column terminal."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from textual.widgets import DataTable, Footer
from textual.widgets._footer import FooterKey

from harness_tui.cli import cli
from harness_tui.records.export import RunRecord
from harness_tui.tui.diff_app import DiffApp
from harness_tui.tui.modals.help import HelpModal
from harness_tui.tui.screens.diff import DiffScreen, DiffTitle, diff_title, record_diff_screen

WORKFLOW = """\
name: shop
tasks:
  fetch: {run: builtin:echo, with: {source: db}}
  gate: {run: builtin:select, with: {expr: '{ok: `true`}'}, depends_on: [fetch]}
  ship: {run: builtin:select, with: {expr: results.fetch}, depends_on: [gate]}
  audit: {run: builtin:echo, with: {who: me}}
"""
SUMMARY = "plans identical · runs: 3 tasks differ"


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[RunRecord, RunRecord]:
    """A run, and its fork with fetch's output set: the same plan, three tasks differ."""
    # A deep folder: the paths alone would fill an 80-column title.
    folder = tmp_path / "pipelines" / "nightly" / "customer-ledger" / "shop"
    folder.mkdir(parents=True)
    workflow, old, new = folder / "shop.yaml", folder / "old.json", folder / "new.json"
    workflow.write_text(WORKFLOW)
    runner = CliRunner()
    made = runner.invoke(cli, ["run", str(workflow), "--no-store", "-q", "--export", str(old)])
    assert made.exit_code == 0, made.output
    forked = runner.invoke(cli, ["rerun", str(old), "--set-output", 'fetch={"source": "api"}',
                                 "--no-store", "-q", "--export", str(new)])  # fmt: skip
    assert forked.exit_code == 0, forked.output
    return RunRecord.read(old), RunRecord.read(new)


async def test_n_and_shift_n_go_to_the_run_differences_when_the_plans_are_identical(
    two_runs: tuple[RunRecord, RunRecord],
) -> None:
    app = DiffApp(record_diff_screen(*two_runs))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DiffScreen) and screen.diff.identical
        assert screen.runs is not None and sorted(screen.runs) == ["fetch", "gate", "ship"]
        table = screen.query_one("#diff-rows", DataTable)
        order = [row.task for row in screen.diff.rows]
        seen = []
        for _ in range(4):
            await pilot.press("n")
            await pilot.pause()
            seen.append(order[table.cursor_row])
        # From the first row (fetch): the next differences, then round to the first again.
        assert seen == ["gate", "ship", "fetch", "gate"]
        await pilot.press("N", "N")
        await pilot.pause()
        assert order[table.cursor_row] == "ship"  # back past the first, round to the last
        assert not any(n.message == "no changes" for n in app._notifications)


def test_the_title_gives_up_the_paths_never_the_summary() -> None:
    deep = "pipelines/nightly/customer-ledger/shop/shop.yaml"
    full = diff_title(deep, deep, SUMMARY, 200).plain
    assert full == f" DIFF   {deep}  →  {deep}  {SUMMARY}"
    assert diff_title(deep, deep, SUMMARY, 78).plain == f" DIFF   shop.yaml  {SUMMARY}"
    assert diff_title("a/v1.yaml", deep, SUMMARY, 78).plain == (
        f" DIFF   v1.yaml  →  shop.yaml  {SUMMARY}"
    )
    assert diff_title(deep, deep, SUMMARY, 50).plain == f" DIFF   {SUMMARY}"
    cut = diff_title(deep, deep, SUMMARY, 20)
    assert cut.cell_len == 20 and cut.plain.endswith("…")


async def test_at_80x24_the_title_is_one_line_the_run_column_shows_and_f1_helps(
    two_runs: tuple[RunRecord, RunRecord],
) -> None:
    app = DiffApp(record_diff_screen(*two_runs))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        title = screen.query_one(DiffTitle)
        assert title.region.height == 1
        assert str(title.render()).endswith(SUMMARY)
        table = screen.query_one("#diff-rows", DataTable)
        assert list(table.columns)[-1] == "run"
        # Every column, the run's included, fits without scrolling sideways.
        assert table.virtual_size.width <= table.scrollable_content_region.width
        keys = screen.query_one(Footer).query(FooterKey)
        shown = {key.key for key in keys if key.region.right <= 80 and key.region.width}
        assert {"n", "f1", "ctrl+q"} <= shown, shown
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpModal)
        assert any(action.id == "diff-next" for _, action in app.screen.rows)
