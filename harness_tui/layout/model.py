"""The values a DAG layout is made of: boxes, edges, line pieces and the drawing modes."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from operator import itemgetter

__all__ = [
    "ARROW",
    "BOX",
    "BUCKET",
    "DOWN",
    "LEFT",
    "RIGHT",
    "UP",
    "Boxes",
    "DagLayout",
    "Edge",
    "Mode",
    "NodeBox",
    "Piece",
]

UP, DOWN, LEFT, RIGHT = 1, 2, 4, 8
"""The sides a line cell connects to (a cell's mask is their union)."""

BOX = {
    UP | DOWN: "│", LEFT | RIGHT: "─", RIGHT | DOWN: "┌", LEFT | DOWN: "┐", RIGHT | UP: "└",
    LEFT | UP: "┘", LEFT | RIGHT | DOWN: "┬", LEFT | RIGHT | UP: "┴", UP | DOWN | RIGHT: "├",
    UP | DOWN | LEFT: "┤", UP | DOWN | LEFT | RIGHT: "┼", LEFT: "─", RIGHT: "─", UP: "│", DOWN: "│",
}  # fmt: skip
"""Mask -> box-drawing character. ``┼`` is only ever a crossing: no edge turns there."""

ARROW = "▸"
"""The head of an edge, just left of its target's box."""

BUCKET = 32
"""Rows per bucket of the vertical-run index."""


class Mode(StrEnum):
    """How boxes are drawn: ``full`` (bordered, whole names) or ``compact`` (one line)."""

    FULL = "full"
    COMPACT = "compact"


@dataclass(frozen=True, slots=True)
class Edge:
    """A dependency: ``source`` feeds ``target`` (both real task names)."""

    source: str
    target: str


@dataclass(frozen=True, slots=True)
class NodeBox:
    """Where a task is drawn: its box's top-left corner and size (cells)."""

    task: str
    layer: int
    order: int
    x: int
    y: int
    width: int
    height: int

    @property
    def mid_y(self) -> int:
        """The row of the box's ports (its in-arrow and its out-line)."""
        return self.y + self.height // 2

    @property
    def right(self) -> int:
        """The first column right of the box (where its out-line starts)."""
        return self.x + self.width


Piece = tuple[str, int, int, int]
"""``("h", y, x0, x1)`` or ``("v", x, y0, y1)``: one straight run of an edge (inclusive)."""


class Boxes(Mapping[str, NodeBox]):
    """A layout's boxes by task name.

    A lazily placed layout (:func:`harness_tui.layout.place_lazily`) places a task's layer
    when the task is looked up, and every layer when the boxes are listed, so that it reads
    exactly like an eagerly placed one.

    Attributes:
        placed: the boxes placed so far.
        place: places the layer of a task (of every task for None); None once all are.
    """

    __slots__ = ("place", "placed")

    def __init__(self) -> None:
        self.placed: dict[str, NodeBox] = {}
        self.place: Callable[[str | None], None] | None = None

    def __getitem__(self, task: str) -> NodeBox:
        box = self.placed.get(task)
        if box is None and self.place is not None:
            self.place(task)
            box = self.placed.get(task)
        if box is None:
            raise KeyError(task)
        return box

    def __iter__(self) -> Iterator[str]:
        if self.place is not None:
            self.place(None)
        return iter(self.placed)

    def __len__(self) -> int:
        if self.place is not None:
            self.place(None)
        return len(self.placed)


@dataclass(slots=True)
class DagLayout:
    """Boxes and line runs, indexed for drawing one row at a time.

    Attributes:
        mode: how the boxes are drawn.
        name_width: the longest name shown whole (longer ones end in ``…``).
        boxes: by task name.
        width: total width in cells.
        height: total height in cells.
        rows: boxes by the rows they cover.
        horizontal: per row, runs ``(x0, x1)`` (inclusive).
        vertical: per bucket of rows, runs ``(x, y0, y1)``.
        arrows: per row, the columns of arrow heads (just left of a target box).
        pieces: each edge's runs, to light up the edges of a selected task's lineage.
        gap_pieces: per gap (between layer ``i`` and the next), its edges' runs.
        layers: real tasks per layer, top to bottom.
        columns: per layer, the ``(x0, x1)`` (exclusive end) its boxes are drawn in.
        fill: for a lazily placed layout, places what is drawn in columns ``x0..x1``
            (inclusive) if it is not yet: see :meth:`ensure`.
    """

    mode: Mode = Mode.FULL
    name_width: int = 0
    boxes: Boxes = field(default_factory=Boxes)
    width: int = 0
    height: int = 0
    rows: dict[int, list[NodeBox]] = field(default_factory=lambda: defaultdict(list))
    horizontal: dict[int, list[tuple[int, int]]] = field(default_factory=lambda: defaultdict(list))
    vertical: dict[int, list[tuple[int, int, int]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    arrows: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    pieces: dict[Edge, list[Piece]] = field(default_factory=lambda: defaultdict(list))
    gap_pieces: dict[int, list[tuple[Edge, Piece]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    layers: list[list[str]] = field(default_factory=list)
    columns: list[tuple[int, int]] = field(default_factory=list)
    fill: Callable[[int, int], None] | None = None

    def ensure(self, x0: int, x1: int) -> None:
        """Make sure everything drawn in columns ``x0..x1`` (inclusive) is placed: the row
        indexes (:attr:`rows`, :attr:`horizontal`, :attr:`vertical`, :attr:`arrows`) are
        then complete there. A no-op for an eagerly placed layout."""
        if self.fill is not None:
            self.fill(x0, x1)

    def gaps_in(self, x0: int, x1: int) -> range:
        """The gaps whose lines may touch columns ``x0..x1`` (inclusive): gap ``i`` runs
        from the column left of layer ``i`` to the arrow left of layer ``i + 1``."""
        columns = self.columns
        first = bisect_left(columns, x0 + 1, key=itemgetter(0)) - 1
        last = bisect_right(columns, x1 + 1, key=itemgetter(0)) - 1
        return range(max(first, 0), min(last, len(columns) - 2) + 1)

    def layers_in(self, x0: int, x1: int) -> range:
        """The layers whose boxes may touch columns ``x0..x1`` (inclusive)."""
        columns = self.columns
        first = bisect_right(columns, x0, key=itemgetter(1))
        last = bisect_right(columns, x1, key=itemgetter(0)) - 1
        return range(first, last + 1)

    def vertical_at(self, y: int) -> Iterable[tuple[int, int, int]]:
        """Vertical runs that cover row ``y``."""
        for run in self.vertical.get(y // BUCKET, ()):
            if run[1] <= y <= run[2]:
                yield run

    def box_at(self, x: int, y: int) -> NodeBox | None:
        """The box under a cell, if any."""
        self.ensure(x, x)
        for box in self.rows.get(y, ()):
            if box.x <= x < box.right:
                return box
        return None
