"""The headless DAG layout: boxes, honest edges (read back from the drawing), modes, speed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness_tui.engine.graph import TaskGraph, TaskNode
from harness_tui.engine.scheduler import DeterministicScheduler
from harness_tui.layout import (
    DagLayout,
    Edge,
    Mode,
    box_text,
    crossings,
    cut,
    fit_name_width,
    label,
    layout_height,
    layout_width,
    line_chars,
    place,
    place_lazily,
    route_dag,
    text_grid,
)
from harness_tui.layout.geometry import SCROLL_NAME_WIDTH
from harness_tui.layout.layering import layer, order
from harness_tui.workflow.generate import generate_workflow
from harness_tui.workflow.loader import load_workflow, parse_workflow

from .reading import read_edges

ROOT = Path(__file__).resolve().parents[2]
Spec = Mapping[str, Sequence[str]]


def levels_of(spec: Spec) -> tuple[list[str], dict[str, int]]:
    graph = TaskGraph.from_nodes(TaskNode(n, None, tuple(d)) for n, d in spec.items())
    plan = DeterministicScheduler(graph).plan({})
    return list(plan.names), dict(zip(plan.names, plan.levels, strict=True))


def lay(spec: Spec, mode: Mode = Mode.FULL, name_width: int = 40) -> DagLayout:
    names, levels = levels_of(spec)
    return place(route_dag(names, levels, spec), mode, name_width)


def edges_of(spec: Spec) -> set[Edge]:
    return {Edge(dep, task) for task, deps in spec.items() for dep in deps}


RING = {
    "s0": [], "s1": [], "s2": [], "s3": [],
    "t0": ["s0", "s1"], "t1": ["s1", "s2"], "t2": ["s2", "s3"], "t3": ["s3", "s0"],
}  # fmt: skip

SHAPES: dict[str, Spec] = {
    "diamond": {"a": [], "b": ["a"], "c": ["a"], "d": ["b", "c"]},
    "long-edge": {"a": [], "b": ["a"], "c": ["b"], "d": ["a", "c"]},
    "fan-out": {"root": [], **{f"t{i}": ["root"] for i in range(12)}},
    "fan-in-and-out": {"a": [], "b": [], "x": ["a", "b"], "y": ["b"], "z": ["a", "x"]},
    "disconnected": {"a": [], "b": ["a"], "x": [], "y": ["x"]},
    "ring": RING,
}


@pytest.mark.parametrize("mode", list(Mode))
@pytest.mark.parametrize("shape", SHAPES)
def test_every_task_has_one_box_in_its_layer_and_boxes_never_overlap(
    shape: str, mode: Mode
) -> None:
    spec = SHAPES[shape]
    layout = lay(spec, mode)
    _, levels = levels_of(spec)
    assert set(layout.boxes) == set(spec)
    cells: set[tuple[int, int]] = set()
    for box in layout.boxes.values():
        assert box.layer == levels[box.task]
        assert box.x == layout.columns[box.layer][0]
        for dy in range(box.height):
            for dx in range(box.width):
                assert (box.x + dx, box.y + dy) not in cells
                cells.add((box.x + dx, box.y + dy))
    assert layout.width >= max(b.right for b in layout.boxes.values())
    routing = route_dag(*levels_of(spec), spec)
    assert (layout.width, layout.height) == (
        layout_width(routing, mode, 40),
        layout_height(routing, mode),
    )


@pytest.mark.parametrize("mode", list(Mode))
@pytest.mark.parametrize("shape", SHAPES)
def test_the_drawing_reads_back_as_exactly_the_graphs_edges(shape: str, mode: Mode) -> None:
    spec = SHAPES[shape]
    assert read_edges(lay(spec, mode)) == edges_of(spec)


def test_the_ring_draws_no_edge_that_does_not_exist() -> None:
    # The old layout shared lanes here and drew s2 -> t0 and s0 -> t2.
    for mode in Mode:
        found = read_edges(lay(RING, mode))
        assert Edge("s2", "t0") not in found and Edge("s0", "t2") not in found
        assert found == edges_of(RING)


@st.composite
def dags(draw: st.DrawFn) -> dict[str, list[str]]:
    size = draw(st.integers(1, 14))
    names = [f"n{i}" for i in range(size)]
    spec: dict[str, list[str]] = {}
    for i, name in enumerate(names):
        deps = draw(st.sets(st.sampled_from(names[:i]), max_size=4)) if i else set()
        spec[name] = sorted(deps)
    return spec


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dags(), st.sampled_from(list(Mode)), st.integers(4, 12))
def test_random_dags_read_back_exactly(spec: dict[str, list[str]], mode: Mode, names: int) -> None:
    layout = lay(spec, mode, names)
    assert read_edges(layout) == edges_of(spec)


def window(layout: DagLayout, row: int, x0: int, width: int) -> str:
    """Columns ``x0..x0 + width - 1`` of one row, boxes drawn (as a view draws them)."""
    chars = line_chars(layout, row, x0, width)
    for box in layout.rows.get(row, ()):
        text = box_text(box, row - box.y, label(box.task, " ", "·", layout.name_width, layout.mode),
                        layout.mode)  # fmt: skip
        for i, char in enumerate(text):
            if 0 <= box.x + i - x0 < width:
                chars[box.x + i - x0] = char
    return "".join(chars)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    dags(),
    st.sampled_from(list(Mode)),
    st.integers(4, 12),
    st.lists(st.tuples(st.integers(-3, 120), st.integers(1, 30)), min_size=1, max_size=6),
)
def test_a_lazy_layout_draws_the_eager_picture_whatever_it_is_asked_for_first(
    spec: dict[str, list[str]], mode: Mode, names: int, windows: list[tuple[int, int]]
) -> None:
    order_, levels = levels_of(spec)
    eager = place(route_dag(order_, levels, spec), mode, names)
    lazy = place_lazily(route_dag(order_, levels, spec), mode, names)
    assert (lazy.width, lazy.height, lazy.columns) == (eager.width, eager.height, eager.columns)
    for x0, width in windows:  # scrolled to, in any order: only what is drawn is placed
        for row in range(eager.height):
            assert window(lazy, row, x0, width) == window(eager, row, x0, width)
    assert lazy.boxes["n0"] == eager.boxes["n0"]
    assert text_grid(lazy) == text_grid(eager)
    assert dict(lazy.boxes) == dict(eager.boxes)
    assert {e: sorted(p) for e, p in lazy.pieces.items()} == {
        e: sorted(p) for e, p in eager.pieces.items()
    }


def test_a_lazy_layout_places_only_the_layers_it_draws() -> None:
    spec = layered_2000()
    layout = place_lazily(route_dag(*levels_of(spec), spec), Mode.COMPACT, 10)
    assert len(layout.columns) == 40 and not layout.boxes.placed
    window(layout, 0, 0, 80)
    shown = {box.layer for box in layout.boxes.placed.values()}
    assert shown and max(shown) < 8  # of 40
    far = layout.columns[-1][0]
    rows = [window(layout, row, far, 20) for row in range(layout.height)]
    last = layout.layers[-1][-1]
    assert any(last in row for row in rows)  # the far end is drawn when scrolled to
    assert len({box.layer for box in layout.boxes.placed.values()}) < 12


def layered_2000() -> dict[str, tuple[str, ...]]:
    workflow = parse_workflow(generate_workflow(2000, "layered"))
    return {n: node.depends_on for n, node in workflow.graph.nodes.items()}


def test_a_2000_task_layered_workflow_is_deterministic_and_reads_back_exactly() -> None:
    spec = layered_2000()
    one, two = lay(spec, Mode.COMPACT, 8), lay(spec, Mode.COMPACT, 8)
    assert one.boxes == two.boxes and text_grid(one) == text_grid(two)
    assert len(one.boxes) == 2000
    assert read_edges(one) == edges_of(spec)


def test_long_edges_are_routed_through_the_skipped_layer() -> None:
    layout = lay(SHAPES["long-edge"])
    pieces = layout.pieces[Edge("a", "d")]
    xs = [p[3] for p in pieces if p[0] == "h"]
    assert max(xs) > layout.boxes["c"].x  # it crosses the column of c, the skipped layer
    box = layout.box_at(layout.boxes["d"].x + 1, layout.boxes["d"].y + 1)
    assert box is not None and box.task == "d"


def test_barycenter_sweeps_remove_avoidable_crossings() -> None:
    # Declared so that plan order alone would cross: x1->y2, x2->y1.
    spec = {"x1": [], "x2": [], "y1": ["x2"], "y2": ["x1"], "z1": ["y1"], "z2": ["y2"]}
    layered = layer(*levels_of(spec), spec)
    order(layered)
    assert crossings(layered) == 0


DEMOS = sorted((ROOT / "workflows").glob("*.yaml"))


@pytest.mark.parametrize("path", DEMOS, ids=lambda p: p.stem)
def test_shipped_demos_fit_80_columns_in_compact_mode(path: Path) -> None:
    workflow = load_workflow(path)
    spec = {n: node.depends_on for n, node in workflow.graph.nodes.items()}
    routing = route_dag(*levels_of(spec), spec)
    names = fit_name_width(routing, Mode.COMPACT, 78)  # 80 columns less the pane's border
    assert names >= 5
    layout = place(routing, Mode.COMPACT, names)
    assert layout.width <= 78
    assert read_edges(layout) == edges_of(spec)


def test_the_4_task_demo_fits_a_120_column_workbench_in_full_mode() -> None:
    workflow = load_workflow(ROOT / "workflows/user_profile.yaml")
    spec = {n: node.depends_on for n, node in workflow.graph.nodes.items()}
    layout = lay(spec, Mode.FULL)
    assert layout.width <= 70  # the DAG pane's inside at 120 columns
    drawing = "\n".join(text_grid(layout))
    assert "compose_response" in drawing and "…" not in drawing


@pytest.mark.parametrize("mode", list(Mode))
def test_the_breakpoint_marker_has_its_own_cell_inside_the_box(mode: Mode) -> None:
    layout = lay({"build": [], "test": ["build"]}, mode)
    box = layout.boxes["test"]
    middle = box_text(box, box.height // 2, label("test", "●", "✔", 40, mode), mode)
    plain = box_text(box, box.height // 2, label("test", " ", "✔", 40, mode), mode)
    changed = [i for i, (a, b) in enumerate(zip(middle, plain, strict=True)) if a != b]
    assert changed == [1]
    assert plain[1] == " "
    assert layout.arrows[box.mid_y] == [box.x - 1]  # the arrow sits outside the box


@pytest.mark.parametrize(
    ("name", "width", "shown"),
    [("transform_p01", 8, "trans…01"), ("deploy_staging", 6, "depl…g"), ("lint", 5, "lint")],
)
def test_cut_names_keep_their_start_and_their_end(name: str, width: int, shown: str) -> None:
    assert cut(name, width) == shown
    assert len(cut(name, width)) <= width


def test_compact_names_fit_the_pane_or_stay_readable_when_the_view_scrolls_anyway() -> None:
    spec = SHAPES["diamond"]
    routing = route_dag(*levels_of(spec), spec)
    assert fit_name_width(routing, Mode.COMPACT, 200) == 1  # every name whole
    big = layered_2000()
    routing = route_dag(*levels_of(big), big)
    assert fit_name_width(routing, Mode.COMPACT, 70) == SCROLL_NAME_WIDTH
