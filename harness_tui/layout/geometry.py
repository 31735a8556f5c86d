"""Phase 4: geometry. Boxes get their cells for a mode, lanes their columns, edges their runs.

Cheap (linear in slots and hops), so a view can lay the same routing out again when the user
switches modes or the pane is resized; :func:`place_lazily` places only what is drawn, so a
view of a huge graph pays for the layers on screen (the columns and size are linear in layers).
"""

from __future__ import annotations

from collections.abc import Callable

from .model import BUCKET, DagLayout, Edge, Mode, NodeBox, Piece
from .routing import Gap, Routing, half_row

__all__ = [
    "FULL_NAME_WIDTH",
    "MIN_NAME_WIDTH",
    "fit_name_width",
    "highlight",
    "layout_height",
    "layout_width",
    "place",
    "place_lazily",
]

FULL_NAME_WIDTH = 40
"""Full mode shows names up to this long whole."""
MIN_NAME_WIDTH = 5
"""Compact mode cuts names to fit the pane, never shorter than this."""
SCROLL_NAME_WIDTH = 10
"""Compact mode's name width when the drawing cannot fit anyway (the view scrolls)."""


def box_width(mode: Mode, name_length: int) -> int:
    """Cells of a box whose (possibly cut) name is ``name_length`` long: see
    :func:`~harness_tui.layout.drawing.label` (plus two borders in full mode)."""
    return name_length + (5 if mode is Mode.FULL else 2)


def box_height(mode: Mode) -> int:
    """Rows of a box: a bordered box is three rows, a compact one one."""
    return 3 if mode is Mode.FULL else 1


def _layer_widths(routing: Routing, mode: Mode, name_width: int) -> list[int]:
    return [
        box_width(mode, min(longest, name_width)) if longest else 1 for longest in routing.longest
    ]


def layout_width(routing: Routing, mode: Mode, name_width: int) -> int:
    """The width of the drawing, without drawing it."""
    widths = _layer_widths(routing, mode, name_width)
    return sum(widths) + sum(lanes + 2 for lanes in routing.lanes)


def layout_height(routing: Routing, mode: Mode) -> int:
    """The height of the drawing, without drawing it."""
    scale, height = (2, 3) if mode is Mode.FULL else (1, 1)
    return max(
        (
            half_row(i, len(keys) - 1) * scale + height
            for i, keys in enumerate(routing.layered.slots)
        ),
        default=0,
    )


def fit_name_width(routing: Routing, mode: Mode, available: int) -> int:
    """The longest name width (at most :data:`FULL_NAME_WIDTH`) whose drawing fits
    ``available`` columns; if none of at least :data:`MIN_NAME_WIDTH` does, the view scrolls
    anyway and names get :data:`SCROLL_NAME_WIDTH`."""
    longest = max(routing.longest, default=0) or MIN_NAME_WIDTH
    for name_width in range(min(longest, FULL_NAME_WIDTH), min(longest, MIN_NAME_WIDTH) - 1, -1):
        if layout_width(routing, mode, name_width) <= available:
            return name_width
    return SCROLL_NAME_WIDTH


def place(routing: Routing, mode: Mode, name_width: int = FULL_NAME_WIDTH) -> DagLayout:
    """Lay ``routing`` out in ``mode``, cutting names longer than ``name_width``."""
    layout = place_lazily(routing, mode, name_width)
    layout.ensure(0, layout.width)
    return layout


def place_lazily(routing: Routing, mode: Mode, name_width: int = FULL_NAME_WIDTH) -> DagLayout:
    """Like :func:`place`, but the boxes and lines of a layer or gap are placed (and its
    lanes routed) only when something drawn there is asked for: :meth:`DagLayout.ensure`, a
    box looked up, :meth:`DagLayout.box_at`. The columns, size and layers are known at once
    (linear in layers), so a view of a huge graph pays only for what it shows."""
    layout = DagLayout(mode=mode, name_width=name_width)
    layered = routing.layered
    widths = _layer_widths(routing, mode, name_width)
    x = 0
    for index, width in enumerate(widths):
        layout.columns.append((x, x + width))
        x += width + (routing.lanes[index] + 2 if index < len(routing.lanes) else 0)
    layout.width = x
    layout.height = layout_height(routing, mode)
    layout.layers = [[k for k in keys if not layered.is_dummy(k)] for keys in layered.slots]
    placer = _Placer(routing, layout, widths)
    layout.fill = placer.fill
    layout.boxes.place = placer.place_task
    return layout


class _Placer:
    """Places a lazily placed layout's layers and gaps as they are asked for."""

    def __init__(self, routing: Routing, layout: DagLayout, widths: list[int]) -> None:
        self.routing = routing
        self.layout = layout
        self.widths = widths
        self.height = box_height(layout.mode)
        self.scale = 2 if layout.mode is Mode.FULL else 1  # screen rows per half slot
        self.layers_done: set[int] = set()
        self.gaps_done: set[int] = set()

    def row(self, key: str) -> int:
        """The row of a slot's ports."""
        layered = self.routing.layered
        row = half_row(layered.layer_of[key], self.routing.position[key])
        return row * self.scale + self.height // 2

    def fill(self, x0: int, x1: int) -> None:
        layout = self.layout
        for index in layout.layers_in(x0, x1):
            self.place_layer(index)
        for index in layout.gaps_in(x0, x1):
            self.place_gap(index)
        if len(self.layers_done) == len(layout.columns) and len(self.gaps_done) == len(
            self.routing.lanes
        ):
            layout.fill = layout.boxes.place = None  # all placed

    def place_task(self, task: str | None) -> None:
        if task is None:
            self.fill(0, self.layout.width)
        elif task in self.routing.layered.layer_of:
            self.place_layer(self.routing.layered.layer_of[task])

    def place_layer(self, index: int) -> None:
        if index in self.layers_done:
            return
        self.layers_done.add(index)
        layout, height = self.layout, self.height
        mode, name_width = layout.mode, layout.name_width
        position = self.routing.position
        for key in layout.layers[index]:
            y = self.row(key) - height // 2
            own = (
                self.widths[index]
                if mode is Mode.FULL
                else box_width(mode, min(len(key), name_width))
            )
            box = NodeBox(key, index, position[key], layout.columns[index][0], y, own, height)
            layout.boxes.placed[key] = box
            for row in range(y, y + height):
                layout.rows[row].append(box)

    def place_gap(self, index: int) -> None:
        if index in self.gaps_done:
            return
        self.gaps_done.add(index)
        self.place_layer(index)
        self.place_layer(index + 1)
        _draw_gap(self.layout, self.routing.gap(index), self.row, self.scale, self.height // 2)


def highlight(layout: DagLayout, keep: Callable[[Edge], bool]) -> DagLayout:
    """The runs of the edges of ``layout`` that ``keep`` picks (a selected task's lineage),
    indexed like ``layout``'s and gathered gap by gap as they are drawn (:meth:`ensure`)."""
    lit = DagLayout(layout.mode, layout.name_width, width=layout.width, height=layout.height)
    lit.columns = layout.columns
    done: set[int] = set()

    def fill(x0: int, x1: int) -> None:
        layout.ensure(x0, x1)
        for index in layout.gaps_in(x0, x1):
            if index in done:
                continue
            done.add(index)
            for edge, (kind, where, start, end) in layout.gap_pieces.get(index, ()):
                if not keep(edge):
                    continue
                if kind == "h":
                    lit.horizontal[where].append((start, end))
                else:
                    for bucket in range(start // BUCKET, end // BUCKET + 1):
                        lit.vertical[bucket].append((where, start, end))

    lit.fill = fill
    return lit


def _draw_gap(
    layout: DagLayout, gap: Gap, row: Callable[[str], int], scale: int, port: int
) -> None:
    """Runs, arrows and edge pieces for one gap."""
    start = layout.columns[gap.index][1]  # the lead-out column
    arrow = layout.columns[gap.index + 1][0] - 1
    lanes = [start + 1 + column for column in gap.columns]
    passing = layout.columns[gap.index][0] - 1  # where a long edge's line enters the layer
    boxes = layout.boxes.placed
    begins: dict[str, int] = {}
    outs: dict[str, int] = {}
    ins: dict[str, int] = {}
    rows: dict[str, int] = {}
    drawn = layout.gap_pieces[gap.index]
    for hop in gap.hops:
        x = lanes[hop.net]
        outs[hop.source] = max(outs.get(hop.source, -1), x)
        ins[hop.target] = min(ins.get(hop.target, layout.width), x)
        if hop.source not in begins:
            box = boxes.get(hop.source)
            begins[hop.source] = box.right if box is not None else passing
            rows[hop.source] = row(hop.source)
        if hop.target not in rows:
            rows[hop.target] = row(hop.target)
        ya, yb = rows[hop.source], rows[hop.target]
        pieces: tuple[Piece, ...] = (
            ("h", ya, begins[hop.source], x),
            ("v", x, min(ya, yb), max(ya, yb)),
            ("h", yb, x, arrow),
        )
        layout.pieces[hop.edge].extend(pieces)
        drawn.extend((hop.edge, piece) for piece in pieces)
    for key, end in outs.items():
        layout.horizontal[rows[key]].append((begins[key], end))
    for key, first in ins.items():
        layout.horizontal[rows[key]].append((first, arrow))
        if key in boxes:
            layout.arrows[rows[key]].append(arrow)
    for net, (low, high) in enumerate(gap.spans):
        y0, y1 = low * scale + port, high * scale + port
        for bucket in range(y0 // BUCKET, y1 // BUCKET + 1):
            layout.vertical[bucket].append((lanes[net], y0, y1))
