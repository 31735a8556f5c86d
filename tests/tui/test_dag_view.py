"""The DAG view: box mode picked for the width and toggled by key, the legend, the breakpoint
marker, and the view following the selected and the next task."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.geometry import Region

from harness_tui.layout import Mode, place_lazily
from harness_tui.tui.widgets import dag_view
from harness_tui.tui.widgets.dag_view import DagView
from harness_tui.workflow.generate import generate_workflow

from .conftest import ROOT, make_app, settle, workbench

DEMO = ROOT / "workflows/user_profile.yaml"


def on_screen(dag: DagView, task: str | None) -> bool:
    assert task is not None
    box = dag.layout_.boxes[task]
    width, height = dag.scrollable_content_region.size
    view = Region(
        int(dag.scroll_offset.x), int(dag.scroll_offset.y), width, height - dag.legend_rows
    )
    return view.contains_region(Region(box.x, box.y, box.width, box.height))


def row_text(dag: DagView, row: int) -> str:
    return dag.render_line(row - int(dag.scroll_offset.y)).text


async def test_full_boxes_where_they_fit_compact_where_not_and_z_toggles() -> None:
    async with make_app(DEMO).run_test(size=(120, 40)) as pilot:
        dag = pilot.app.screen.query_one(DagView)
        assert dag.mode is Mode.FULL
        assert dag.layout_.width <= dag.scrollable_content_region.width
        assert "compose_response" in row_text(dag, dag.layout_.boxes["compose_response"].mid_y)
    async with make_app(DEMO).run_test(size=(80, 24)) as pilot:
        dag = pilot.app.screen.query_one(DagView)
        assert dag.mode is Mode.COMPACT
        assert dag.layout_.width <= dag.scrollable_content_region.width
        await pilot.press("z")
        await pilot.pause()
        assert dag.mode is Mode.FULL
        await pilot.press("z")
        await pilot.pause()
        assert dag.mode is Mode.COMPACT


async def test_the_legend_names_the_glyphs_in_their_colours() -> None:
    async with make_app(DEMO).run_test(size=(120, 40)) as pilot:
        dag = pilot.app.screen.query_one(DagView)
        height = dag.scrollable_content_region.height
        legend = dag.render_line(height - 2).text + dag.render_line(height - 1).text
        for words in ("● breakpoint", "▶ next", "✔ succeeded", "✘ failed", "· pending"):
            assert words in legend
        line = dag.render_line(height - 2)
        failed = next(seg for seg in line if seg.text == "✘")
        succeeded = next(seg for seg in line if seg.text == "✔")
        assert failed.style != succeeded.style


async def test_the_breakpoint_dot_takes_its_own_cell_not_the_border_or_arrow() -> None:
    async with make_app(DEMO).run_test(size=(120, 40)) as pilot:
        screen = workbench(pilot.app)
        screen._select("compose_response")
        await pilot.press("b")
        await pilot.pause()
        dag = screen.query_one(DagView)
        box = dag.layout_.boxes["compose_response"]
        text = row_text(dag, box.mid_y)
        x = box.x - int(dag.scroll_offset.x)
        assert text[x - 1 : x + 2] == "▸│●"


async def test_the_view_follows_the_next_task_after_steps_and_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(generate_workflow(300, "layered"), encoding="utf-8")
    async with make_app(path).run_test(size=(80, 24)) as pilot:
        screen = workbench(pilot.app)
        dag = screen.query_one(DagView)
        session: Any = screen.session
        for _ in range(4):
            await pilot.press("n")
            await settle(pilot)
            assert on_screen(dag, session.run.next_step.task)
        screen._select(session.run.plan[-1].task)
        await pilot.pause()
        assert on_screen(dag, session.run.plan[-1].task)
        await pilot.press("r")
        await settle(pilot)
        assert on_screen(dag, session.run.next_step.task)


async def test_the_diff_screen_draws_the_new_version_and_z_toggles_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(ROOT)
    async with make_app("workflows/release_v2.yaml").run_test(size=(160, 40)) as pilot:
        await pilot.press("d")
        await pilot.pause()
        target: Any = pilot.app.screen.query_one("#diff-target")
        target.value = "workflows/release_v1.yaml"
        await pilot.press("enter")
        await pilot.pause()
        dag = pilot.app.screen.query_one(DagView)
        assert "security_scan" in dag.layout_.boxes and "notify" not in dag.layout_.boxes
        before = dag.mode
        await pilot.press("z")
        await pilot.pause()
        assert dag.mode is not before
        rows = range(dag.scrollable_content_region.height)
        legend = "".join(dag.render_line(y).text for y in rows)
        assert "added" in legend and "removed" in legend


@pytest.mark.parametrize("path", sorted((ROOT / "workflows").glob("*.yaml")), ids=lambda p: p.stem)
async def test_every_shipped_demo_fits_an_80_column_workbench(path: Path) -> None:
    async with make_app(path).run_test(size=(80, 24)) as pilot:
        dag = pilot.app.screen.query_one(DagView)
        assert dag.mode is Mode.COMPACT
        assert dag.layout_.width <= dag.scrollable_content_region.width


async def test_a_large_graph_is_placed_as_it_scrolls_and_far_layers_are_drawn(
    tmp_path: Path,
) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(generate_workflow(3000, "layered"), encoding="utf-8")
    async with make_app(path).run_test(size=(100, 30)) as pilot:
        screen = workbench(pilot.app)
        dag = screen.query_one(DagView)
        layout = dag.layout_
        assert len(layout.columns) == 60
        placed = {box.layer for box in layout.boxes.placed.values()}
        assert max(placed) < 10  # the first screen placed what it shows, not 60 layers
        last = screen.session.run.plan[-1].task  # type: ignore[union-attr]
        screen._select(last)
        await pilot.pause()
        box = layout.boxes[last]
        assert box.layer == 59 and on_screen(dag, last)
        assert last in row_text(dag, box.mid_y)


async def test_the_lit_lineage_follows_the_lines_after_the_layout_changes() -> None:
    async with make_app(DEMO).run_test(size=(120, 40)) as pilot:
        screen = workbench(pilot.app)
        screen._select("check_quota")
        await pilot.pause()
        dag = screen.query_one(DagView)
        for size in ((80, 24), (120, 40)):  # compact, then full boxes again
            await pilot.resize_terminal(*size)
            await pilot.pause()
            lit = dag.rich_style + dag.get_component_rich_style("dag-view--edge-lit")
            drawing = range(dag.scrollable_content_region.height - dag.legend_rows)
            lines = [dag.render_line(y) for y in drawing]
            lit_text = "".join(seg.text for line in lines for seg in line if seg.style == lit)
            assert lit_text.strip() and " " not in lit_text  # lit cells are line cells


async def test_the_drawing_is_placed_once_per_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    placed: list[Any] = []

    def counting(*args: Any) -> Any:
        placed.append(args[1:])
        return place_lazily(*args)

    monkeypatch.setattr(dag_view, "place_lazily", counting)
    async with make_app(DEMO).run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        # Never before the pane has a size, never twice for one (a scroll bar that comes or
        # goes changes the width, and the names' width with it).
        assert placed and all(mode is Mode.COMPACT for mode, _ in placed)
        assert len(set(placed)) == len(placed)
        opened = len(placed)
        await pilot.resize_terminal(80, 24)  # the same size again: nothing to place
        await pilot.pause()
        assert len(placed) == opened
