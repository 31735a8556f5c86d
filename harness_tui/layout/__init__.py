"""Layered DAG layout for a character grid: pure Python, no UI toolkit.

The terminal workbench draws it and a report that is not a terminal can too. Sugiyama-style,
in phases, each in its own module:

1. layering (:mod:`.layering`): layers are the plan levels; an edge that skips layers gets a
   dummy slot in each, so every drawn hop joins adjacent layers;
2. ordering (:mod:`.layering`): barycenter sweeps reduce crossings;
3. lane assignment (:mod:`.routing`): hops that truly share an end share a lane, others get
   lanes of their own, so no line suggests an edge that does not exist;
4. geometry (:mod:`.geometry`): boxes, lanes and edge runs in cells, for a mode (full or
   compact boxes) and a longest name;
5. drawing (:mod:`.drawing`): box-drawing characters, one row at a time or the whole picture.

Phases 1-3 do not depend on the mode: :func:`route_dag` runs them once (a gap's lanes are
counted then, its hops routed when it is drawn), :func:`place` lays the result out (cheaply)
in a mode. The result is indexed by row, so a view draws only the rows on screen; and
:func:`place_lazily` places only the layers and gaps drawn, so a 100,000-task workflow in
2,000 layers lays out the three or so on screen and scrolls at the cost of what comes into view.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .drawing import box_text, cut, label, line_chars, line_masks, text_grid
from .geometry import (
    FULL_NAME_WIDTH,
    MIN_NAME_WIDTH,
    fit_name_width,
    highlight,
    layout_height,
    layout_width,
    place,
    place_lazily,
)
from .layering import crossings, layer, order
from .model import (
    ARROW,
    BOX,
    BUCKET,
    DOWN,
    LEFT,
    RIGHT,
    UP,
    Boxes,
    DagLayout,
    Edge,
    Mode,
    NodeBox,
    Piece,
)
from .routing import Routing, route

__all__ = [
    "ARROW",
    "BOX",
    "BUCKET",
    "DOWN",
    "FULL_NAME_WIDTH",
    "LEFT",
    "MIN_NAME_WIDTH",
    "RIGHT",
    "UP",
    "Boxes",
    "DagLayout",
    "Edge",
    "Mode",
    "NodeBox",
    "Piece",
    "Routing",
    "box_text",
    "crossings",
    "cut",
    "fit_name_width",
    "highlight",
    "label",
    "layout_dag",
    "layout_height",
    "layout_width",
    "line_chars",
    "line_masks",
    "place",
    "place_lazily",
    "route_dag",
    "text_grid",
]


def route_dag(
    order_: Sequence[str], levels: Mapping[str, int], depends_on: Mapping[str, Sequence[str]]
) -> Routing:
    """Phases 1-3 for tasks given in plan order with their levels and dependencies.

    Deterministic: the same inputs always give the same routing (the initial order is the plan
    order and ties in the sweeps keep it).
    """
    layered = layer(order_, levels, depends_on)
    return route(layered, order(layered))


def layout_dag(
    order_: Sequence[str],
    levels: Mapping[str, int],
    depends_on: Mapping[str, Sequence[str]],
    mode: Mode = Mode.FULL,
    name_width: int = FULL_NAME_WIDTH,
) -> DagLayout:
    """All five phases: the drawing of a plan in ``mode``."""
    if not order_:
        return DagLayout(mode=mode, name_width=name_width)
    return place(route_dag(order_, levels, depends_on), mode, name_width)
