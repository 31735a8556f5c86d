"""Phase 4: geometry. Boxes get their cells for a mode, lanes their columns, edges their runs.

Cheap (linear in slots and hops), so a view can lay the same routing out again when the user
switches modes or the pane is resized.
"""

from __future__ import annotations

from .model import BUCKET, DagLayout, Mode, NodeBox
from .routing import Gap, Routing, half_row

__all__ = [
    "FULL_NAME_WIDTH",
    "MIN_NAME_WIDTH",
    "fit_name_width",
    "layout_height",
    "layout_width",
    "place",
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
    layered = routing.layered
    return [
        max(
            (box_width(mode, min(len(k), name_width)) for k in keys if not layered.is_dummy(k)),
            default=1,
        )
        for keys in layered.slots
    ]


def layout_width(routing: Routing, mode: Mode, name_width: int) -> int:
    """The width of the drawing, without drawing it."""
    widths = _layer_widths(routing, mode, name_width)
    return sum(widths) + sum(gap.lanes + 2 for gap in routing.gaps)


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
    longest = max((len(k) for k in routing.position), default=MIN_NAME_WIDTH)
    for name_width in range(min(longest, FULL_NAME_WIDTH), min(longest, MIN_NAME_WIDTH) - 1, -1):
        if layout_width(routing, mode, name_width) <= available:
            return name_width
    return SCROLL_NAME_WIDTH


def place(routing: Routing, mode: Mode, name_width: int = FULL_NAME_WIDTH) -> DagLayout:
    """Lay ``routing`` out in ``mode``, cutting names longer than ``name_width``."""
    layout = DagLayout(mode=mode, name_width=name_width)
    layered = routing.layered
    widths = _layer_widths(routing, mode, name_width)
    x = 0
    for index, width in enumerate(widths):
        layout.columns.append((x, x + width))
        x += width + (routing.gaps[index].lanes + 2 if index < len(routing.gaps) else 0)
    layout.width = x
    height = box_height(mode)
    scale = 2 if mode is Mode.FULL else 1  # screen rows per half slot
    rows = {
        key: half_row(layered.layer_of[key], position) * scale + height // 2
        for key, position in routing.position.items()
    }
    for index, keys in enumerate(layered.slots):
        real = [k for k in keys if not layered.is_dummy(k)]
        layout.layers.append(real)
        for key in real:
            y = rows[key] - height // 2
            own = widths[index] if mode is Mode.FULL else box_width(mode, min(len(key), name_width))
            box = NodeBox(
                key, index, routing.position[key], layout.columns[index][0], y, own, height
            )
            layout.boxes[key] = box
            for row in range(y, y + height):
                layout.rows[row].append(box)
        if keys:
            layout.height = max(layout.height, rows[keys[-1]] - height // 2 + height)
    for gap in routing.gaps:
        _draw_gap(layout, gap, rows, scale, height // 2)
    return layout


def _draw_gap(layout: DagLayout, gap: Gap, rows: dict[str, int], scale: int, port: int) -> None:
    """Runs, arrows and edge pieces for one gap."""
    start = layout.columns[gap.index][1]  # the lead-out column
    arrow = layout.columns[gap.index + 1][0] - 1
    lanes = [start + 1 + column for column in gap.columns]
    passing = layout.columns[gap.index][0] - 1  # where a long edge's line enters the layer
    begins: dict[str, int] = {}
    outs: dict[str, int] = {}
    ins: dict[str, int] = {}
    for hop in gap.hops:
        x = lanes[hop.net]
        outs[hop.source] = max(outs.get(hop.source, -1), x)
        ins[hop.target] = min(ins.get(hop.target, layout.width), x)
        if hop.source not in begins:
            box = layout.boxes.get(hop.source)
            begins[hop.source] = box.right if box is not None else passing
        ya, yb = rows[hop.source], rows[hop.target]
        layout.pieces[hop.edge].extend(
            (
                ("h", ya, begins[hop.source], x),
                ("v", x, min(ya, yb), max(ya, yb)),
                ("h", yb, x, arrow),
            )
        )
    for key, end in outs.items():
        layout.horizontal[rows[key]].append((begins[key], end))
    for key, first in ins.items():
        layout.horizontal[rows[key]].append((first, arrow))
        if key in layout.boxes:
            layout.arrows[rows[key]].append(arrow)
    for net, (low, high) in enumerate(gap.spans):
        y0, y1 = low * scale + port, high * scale + port
        for bucket in range(y0 // BUCKET, y1 // BUCKET + 1):
            layout.vertical[bucket].append((lanes[net], y0, y1))
