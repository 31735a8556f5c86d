"""Read a drawn DAG back into edges, the way a person follows the lines.

From each box's out-line: go right; where the line forks up or down (any junction but ``┼``),
follow that lane; a lane goes straight through ``┼`` and, wherever a line leaves it to the
right, that line leads on to an arrow head (lines joining it from the left are other edges
merging). A line that passes a layer without an arrow (a long edge) forks again after it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness_tui.layout import ARROW, BOX, DOWN, LEFT, RIGHT, UP, DagLayout, Edge, text_grid

CROSS = UP | DOWN | LEFT | RIGHT
MASK = {char: mask for mask, char in BOX.items() if char not in "─│"}
MASK.update({"─": LEFT | RIGHT, "│": UP | DOWN})


class Unreadable(AssertionError):
    """The drawing has a line that leads nowhere sensible."""


@dataclass
class Reader:
    layout: DagLayout
    grid: list[str]
    seen: set[tuple[int, int]] = field(default_factory=set)
    edges: set[Edge] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.grid = [line.ljust(self.layout.width + 1) for line in self.grid]
        self.arrow_columns = {x0 - 1 for x0, _ in self.layout.columns}

    def mask(self, x: int, y: int) -> int:
        if self.layout.box_at(x, y) is not None:
            raise Unreadable(f"a line runs into a box at {x},{y}")
        self.seen.add((x, y))
        return MASK.get(self.grid[y][x], 0)

    def read(self) -> set[Edge]:
        for box in self.layout.boxes.values():
            self.fork(box.task, box.right, box.mid_y)
        return self.edges

    def fork(self, source: str, x: int, y: int) -> None:
        while True:
            mask = self.mask(x, y)
            if mask != CROSS:
                for side, step in ((UP, -1), (DOWN, 1)):
                    if mask & side:
                        self.lane(source, x, y, step)
            if not mask & RIGHT:
                return
            x += 1

    def lane(self, source: str, x: int, y: int, step: int) -> None:
        into, onward = (DOWN, UP) if step < 0 else (UP, DOWN)
        while True:
            y += step
            mask = self.mask(x, y)
            if not mask & into:
                raise Unreadable(f"a lane breaks off at {x},{y}")
            if mask != CROSS and mask & RIGHT:
                self.merge(source, x + 1, y)
            if not mask & onward:
                return

    def merge(self, source: str, x: int, y: int) -> None:
        while True:
            char = self.grid[y][x]
            if char == ARROW:
                self.seen.add((x, y))
                target = self.layout.box_at(x + 1, y)
                if target is None:
                    raise Unreadable(f"an arrow points at nothing at {x},{y}")
                self.edges.add(Edge(source, target.task))
                return
            if x in self.arrow_columns:  # a long edge passing a layer
                self.fork(source, x, y)
                return
            mask = self.mask(x, y)
            if not mask & LEFT or not mask & RIGHT:
                raise Unreadable(f"a line into a task breaks off at {x},{y}")
            x += 1

    def stray_cells(self) -> list[tuple[int, int]]:
        """Line cells no reading reached (a line that belongs to no edge)."""
        return [
            (x, y)
            for y, line in enumerate(self.grid)
            for x, char in enumerate(line)
            if char != " " and self.layout.box_at(x, y) is None and (x, y) not in self.seen
        ]


def read_edges(layout: DagLayout) -> set[Edge]:
    """The edges a reader finds in ``layout``'s drawing; raises if a line is stray."""
    reader = Reader(layout, text_grid(layout))
    edges = reader.read()
    stray = reader.stray_cells()
    if stray:
        raise Unreadable(f"{len(stray)} line cells belong to no edge, e.g. {stray[:3]}")
    return edges
