"""Layered DAG layout for a terminal grid (pure Python, no Textual).

Sugiyama-style, kept small: layers are the plan levels (longest path from a root), edges that
skip layers get dummy slots so every drawn edge joins adjacent layers, a few barycenter sweeps
reduce crossings, and edges are routed through lanes in the gaps between layers. The result is
indexed by row so a view can draw only the rows on screen: a 2,000-task workflow lays out once
and then scrolls at the cost of the visible region.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

__all__ = ["DagLayout", "Edge", "NodeBox", "layout_dag"]

NODE_WIDTH = 24
NODE_HEIGHT = 3
ROW_GAP = 1
GAP = 8  # columns between layers: 1 lead-in, lanes, 1 lead-out + arrow
LANES = GAP - 3
SWEEPS = 4
BUCKET = 32  # rows per bucket of the vertical-segment index

UP, DOWN, LEFT, RIGHT = 1, 2, 4, 8


@dataclass(frozen=True, slots=True)
class NodeBox:
    """Where a task is drawn: its box's top-left corner (cells)."""

    task: str
    layer: int
    order: int
    x: int
    y: int

    @property
    def mid_y(self) -> int:
        return self.y + NODE_HEIGHT // 2


@dataclass(frozen=True, slots=True)
class Edge:
    """A drawn segment of a dependency: ``source`` feeds ``target`` (both real task names)."""

    source: str
    target: str


Piece = tuple[str, int, int, int]
"""``("h", y, x0, x1)`` or ``("v", x, y0, y1)``: one straight run of an edge (inclusive)."""


@dataclass(slots=True)
class DagLayout:
    """Boxes and edge segments, indexed for drawing one row at a time.

    Attributes:
        boxes: by task name.
        width: total width in cells.
        height: total height in cells.
        rows: node boxes by the rows they cover.
        horizontal: per row, runs ``(x0, x1)`` (inclusive).
        vertical: per bucket of rows, runs ``(x, y0, y1)``; overlapping runs in one lane are
            merged, so a fan-out of 2,000 hops is one trunk.
        arrows: per row, the columns of arrow heads (just left of a target box).
        pieces: each edge's runs, to light up the edges of a selected task's lineage.
        layers: real tasks per layer, top to bottom.
    """

    boxes: dict[str, NodeBox] = field(default_factory=dict)
    width: int = 0
    height: int = 0
    rows: dict[int, list[NodeBox]] = field(default_factory=lambda: defaultdict(list))
    horizontal: dict[int, list[tuple[int, int]]] = field(default_factory=lambda: defaultdict(list))
    vertical: dict[int, list[tuple[int, int, int]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    arrows: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    pieces: dict[Edge, list[Piece]] = field(default_factory=lambda: defaultdict(list))
    layers: list[list[str]] = field(default_factory=list)

    def vertical_at(self, y: int) -> Iterable[tuple[int, int, int]]:
        """Vertical runs that cover row ``y``."""
        for run in self.vertical.get(y // BUCKET, ()):
            if run[1] <= y <= run[2]:
                yield run

    def box_at(self, x: int, y: int) -> NodeBox | None:
        """The box under a cell, if any."""
        for box in self.rows.get(y, ()):
            if box.x <= x < box.x + NODE_WIDTH:
                return box
        return None


def layout_dag(
    order: Sequence[str], levels: Mapping[str, int], depends_on: Mapping[str, Sequence[str]]
) -> DagLayout:
    """Lay out tasks given in plan order with their levels and dependencies.

    Deterministic: the same inputs always give the same picture (initial order is plan order,
    ties in the sweeps keep it).
    """
    layout = DagLayout()
    if not order:
        return layout
    depth = max(levels[t] for t in order) + 1
    # Slots: real tasks, plus one dummy per skipped layer of each long edge.
    slots: list[list[tuple[str, Edge | None]]] = [[] for _ in range(depth)]
    for task in order:
        slots[levels[task]].append((task, None))
    # chains: for each (dep, task) edge, the list of slot keys from dep's layer to task's.
    up: dict[str, list[str]] = defaultdict(list)  # slot -> slots in the previous layer
    chains: list[tuple[Edge, list[str]]] = []
    for task in order:
        for dep in depends_on.get(task, ()):
            edge = Edge(dep, task)
            chain = [dep]
            for layer in range(levels[dep] + 1, levels[task]):
                dummy = f"\0{dep}\0{task}\0{layer}"
                slots[layer].append((dummy, edge))
                chain.append(dummy)
            chain.append(task)
            for a, b in pairwise(chain):
                up[b].append(a)
            chains.append((edge, chain))
    down: dict[str, list[str]] = defaultdict(list)
    for b, sources in up.items():
        for a in sources:
            down[a].append(b)
    keys = [[key for key, _ in layer] for layer in slots]
    dummies = {key: edge for layer in slots for key, edge in layer if edge is not None}
    _sweep(keys, up, down)
    position = {key: i for layer in keys for i, key in enumerate(layer)}
    for column, names in enumerate(keys):
        x = column * (NODE_WIDTH + GAP)
        for i, name in enumerate(names):
            y = i * (NODE_HEIGHT + ROW_GAP)
            if name in dummies:
                continue
            box = NodeBox(name, column, i, x, y)
            layout.boxes[name] = box
            for row in range(y, y + NODE_HEIGHT):
                layout.rows[row].append(box)
    layout.layers = [[k for k in layer if k not in dummies] for layer in keys]
    layout.width = depth * (NODE_WIDTH + GAP) - GAP
    layout.height = max(len(layer) for layer in keys) * (NODE_HEIGHT + ROW_GAP)

    _route(layout, chains, position, dummies, levels)
    return layout


def _route(
    layout: DagLayout,
    chains: list[tuple[Edge, list[str]]],
    position: Mapping[str, int],
    dummies: Mapping[str, Edge],
    levels: Mapping[str, int],
) -> None:
    """Draw every edge of ``chains`` into ``layout``: pieces, arrows and merged lanes."""

    def mid(key: str) -> int:
        return position[key] * (NODE_HEIGHT + ROW_GAP) + NODE_HEIGHT // 2

    def layer_of(key: str) -> int:
        return levels[key] if key not in dummies else int(key.rsplit("\0", 1)[1])

    # Route each hop between adjacent layers: out of the source, down or up a lane in the gap,
    # into the target (or straight through a dummy slot). Hops from one source share its lane,
    # so a fan-out draws as one trunk.
    lanes: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for edge, chain in chains:
        pieces = layout.pieces[edge]
        for a, b in pairwise(chain):
            layer = layer_of(a)
            gap_x = layer * (NODE_WIDTH + GAP) + NODE_WIDTH
            lane_x = gap_x + 1 + position[a] % LANES
            ya, yb = mid(a), mid(b)
            pieces.append(("h", ya, gap_x, lane_x))
            if b in dummies:
                pieces.append(("h", yb, lane_x, gap_x + GAP + NODE_WIDTH - 1))
            else:
                pieces.append(("h", yb, lane_x, gap_x + GAP - 2))
                layout.arrows[yb].append(gap_x + GAP - 1)
            if ya != yb:
                pieces.append(("v", lane_x, min(ya, yb), max(ya, yb)))
                lanes[lane_x].append((min(ya, yb), max(ya, yb)))
        for kind, where, start, end in pieces:
            if kind == "h":
                layout.horizontal[where].append((start, end))
    for lane_x, runs in lanes.items():
        for y0, y1 in _union(runs):
            for bucket in range(y0 // BUCKET, y1 // BUCKET + 1):
                layout.vertical[bucket].append((lane_x, y0, y1))


def _union(runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Merge overlapping inclusive intervals."""
    merged: list[tuple[int, int]] = []
    for y0, y1 in sorted(runs):
        if merged and y0 <= merged[-1][1]:
            if y1 > merged[-1][1]:
                merged[-1] = (merged[-1][0], y1)
        else:
            merged.append((y0, y1))
    return merged


def _sweep(
    keys: list[list[str]], up: Mapping[str, list[str]], down: Mapping[str, list[str]]
) -> None:
    """Barycenter ordering: alternate downward and upward passes, stable on ties."""
    for sweep in range(SWEEPS):
        downward = sweep % 2 == 0
        indices = range(1, len(keys)) if downward else range(len(keys) - 2, -1, -1)
        for index in indices:
            neighbours = keys[index - 1] if downward else keys[index + 1]
            keys[index] = _by_barycenter(keys[index], neighbours, up if downward else down)


def _by_barycenter(
    current: list[str], neighbours: list[str], links: Mapping[str, list[str]]
) -> list[str]:
    position = {key: i for i, key in enumerate(neighbours)}

    def barycenter(item: tuple[int, str]) -> tuple[float, int]:
        i, key = item
        linked = [position[k] for k in links.get(key, ()) if k in position]
        return (sum(linked) / len(linked) if linked else float(i), i)

    return [key for _, key in sorted(enumerate(current), key=barycenter)]


def crossings(layout: DagLayout, depends_on: Mapping[str, Sequence[str]]) -> int:
    """Count crossing pairs of hops between adjacent layers (for tests and tuning)."""
    order = {box.task: box.order for box in layout.boxes.values()}
    layer = {box.task: box.layer for box in layout.boxes.values()}
    by_gap: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for task, deps in depends_on.items():
        for dep in deps:
            if layer[task] == layer[dep] + 1:
                by_gap[layer[dep]].append((order[dep], order[task]))
    total = 0
    for hops in by_gap.values():
        for i, (a1, b1) in enumerate(hops):
            for a2, b2 in hops[i + 1 :]:
                if (a1 - a2) * (b1 - b2) < 0:
                    total += 1
    return total
