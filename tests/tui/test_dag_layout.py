from __future__ import annotations

from collections.abc import Sequence

import pytest

from harness_tui.engine.graph import TaskGraph, TaskNode
from harness_tui.engine.scheduler import DeterministicScheduler
from harness_tui.tui.dag_layout import GAP, NODE_HEIGHT, NODE_WIDTH, crossings, layout_dag
from harness_tui.workflow.generate import generate_workflow
from harness_tui.workflow.loader import parse_workflow


def lay(spec: dict[str, Sequence[str]]):  # type: ignore[no-untyped-def]
    graph = TaskGraph.from_nodes(TaskNode(n, None, tuple(d)) for n, d in spec.items())
    plan = DeterministicScheduler(graph).plan({})
    levels = dict(zip(plan.names, plan.levels, strict=True))
    return layout_dag(plan.names, levels, spec), levels


SHAPES = {
    "diamond": {"a": [], "b": ["a"], "c": ["a"], "d": ["b", "c"]},
    "long-edge": {"a": [], "b": ["a"], "c": ["b"], "d": ["a", "c"]},
    "fan-out": {"root": [], **{f"t{i}": ["root"] for i in range(12)}},
    "disconnected": {"a": [], "b": ["a"], "x": [], "y": ["x"]},
}


@pytest.mark.parametrize("shape", SHAPES)
def test_every_task_has_one_box_in_its_level_column_and_boxes_never_overlap(shape: str) -> None:
    spec = SHAPES[shape]
    layout, levels = lay(spec)
    assert set(layout.boxes) == set(spec)
    cells: set[tuple[int, int]] = set()
    for box in layout.boxes.values():
        assert box.layer == levels[box.task]
        assert box.x == box.layer * (NODE_WIDTH + GAP)
        for dy in range(NODE_HEIGHT):
            for dx in range(NODE_WIDTH):
                cell = (box.x + dx, box.y + dy)
                assert cell not in cells
                cells.add(cell)
    assert layout.width >= max(b.x for b in layout.boxes.values()) + NODE_WIDTH


def test_long_edges_are_routed_through_the_skipped_layer() -> None:
    layout, _ = lay(SHAPES["long-edge"])
    from harness_tui.tui.dag_layout import Edge

    pieces = layout.pieces[Edge("a", "d")]
    xs = [p[2] for p in pieces if p[0] == "h"] + [p[3] for p in pieces if p[0] == "h"]
    assert max(xs) > layout.boxes["c"].x  # it crosses the column of c, the skipped layer
    assert layout.box_at(layout.boxes["d"].x + 1, layout.boxes["d"].y + 1).task == "d"  # type: ignore[union-attr]


def test_barycenter_sweeps_remove_avoidable_crossings() -> None:
    # Declared so that plan order alone would cross: x1->y2, x2->y1.
    spec = {"x1": [], "x2": [], "y1": ["x2"], "y2": ["x1"], "z1": ["y1"], "z2": ["y2"]}
    layout, _ = lay(spec)
    assert crossings(layout, spec) == 0


def test_layout_is_deterministic_and_handles_2000_tasks() -> None:
    workflow = parse_workflow(generate_workflow(2000, "layered"))
    plan = DeterministicScheduler(workflow.graph).plan(workflow.payload)
    depends = {n: node.depends_on for n, node in workflow.graph.nodes.items()}
    levels = dict(zip(plan.names, plan.levels, strict=True))
    one = layout_dag(plan.names, levels, depends)
    two = layout_dag(plan.names, levels, depends)
    assert one.boxes == two.boxes
    assert len(one.boxes) == 2000
    # Fan-outs share a trunk: far fewer vertical runs than hops.
    runs = {run for bucket in one.vertical.values() for run in bucket}
    assert len(runs) < sum(len(d) for d in depends.values())
