"""Phase 3: lane assignment. Every hop between adjacent layers gets a vertical run (a lane)
that no unrelated line touches.

Rows are counted in half slots: a slot of layer ``L`` at position ``i`` sits on row
``2 * i + L % 2``, so adjacent layers are offset by half a slot and a gap's source rows and
target rows never coincide. Each row of a gap thus carries at most one horizontal line: the
out-line of the one source on it or the in-line of the one target on it.

A lane is a *net*: a vertical run shared by hops that truly share an end. A source's hops to
targets with no other input share one net per direction (a fork), a target's hops from sources
with no other output share one net per direction (a merge), and any other hop gets a net of its
own. A net ends on its members' rows; a line crossing it anywhere else crosses it (``┼``).
Nets that overlap (or touch) in rows get different columns: greedy interval colouring, which
uses as few columns as the most nets stacked over one row.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from itertools import pairwise

from .layering import Layered
from .model import Edge

__all__ = ["Gap", "Hop", "Routing", "half_row", "route"]


@dataclass(frozen=True, slots=True)
class Hop:
    """One edge's passage through one gap: from slot ``source`` to slot ``target``."""

    edge: Edge
    source: str
    target: str
    net: int


@dataclass(slots=True)
class Gap:
    """The lanes between layer ``index`` and the next.

    Attributes:
        hops: every hop crossing the gap.
        columns: per net, its lane (0 is leftmost).
        spans: per net, its rows ``(low, high)`` in half slots.
        lanes: how many lanes the gap needs.
    """

    index: int
    hops: list[Hop] = field(default_factory=list)
    columns: list[int] = field(default_factory=list)
    spans: list[tuple[int, int]] = field(default_factory=list)
    lanes: int = 0


@dataclass(slots=True)
class Routing:
    """The mode-independent part of a layout: layers, order and lanes."""

    layered: Layered
    position: dict[str, int]
    gaps: list[Gap]


def half_row(layer: int, position: int) -> int:
    """The row of a slot, in half slots (adjacent layers are offset by one)."""
    return 2 * position + layer % 2


def route(layered: Layered, position: Mapping[str, int]) -> Routing:
    """Group each gap's hops into nets and give every net a lane."""
    gaps = [Gap(index) for index in range(len(layered.slots) - 1)]
    for edge, chain in layered.chains:
        for a, b in pairwise(chain):
            gaps[layered.layer_of[a]].hops.append(Hop(edge, a, b, -1))

    def row(key: str) -> int:
        return half_row(layered.layer_of[key], position[key])

    for gap in gaps:
        _group(gap, row)
        _colour(gap)
    return Routing(layered, dict(position), gaps)


def _group(gap: Gap, row: Callable[[str], int]) -> None:
    """Give each hop of ``gap`` its net, and each net its span of rows."""
    outs = Counter(hop.source for hop in gap.hops)
    ins = Counter(hop.target for hop in gap.hops)
    nets: dict[tuple[str, str, str], int] = {}
    for i, hop in enumerate(gap.hops):
        ya, yb = row(hop.source), row(hop.target)
        if ins[hop.target] == 1:
            key = ("fork", hop.source, "down" if yb > ya else "up")
        elif outs[hop.source] == 1:
            key = ("merge", hop.target, "below" if ya > yb else "above")
        else:
            key = ("own", hop.source, hop.target)
        net = nets.setdefault(key, len(nets))
        if net == len(gap.spans):
            gap.spans.append((min(ya, yb), max(ya, yb)))
        else:
            low, high = gap.spans[net]
            gap.spans[net] = (min(low, ya, yb), max(high, ya, yb))
        gap.hops[i] = Hop(hop.edge, hop.source, hop.target, net)


def _colour(gap: Gap) -> None:
    """Interval colouring: nets in order of their top row take the leftmost free lane; a lane
    is free once its last net ended at least one row above (so runs never touch)."""
    gap.columns = [0] * len(gap.spans)
    busy: list[tuple[int, int]] = []  # (last row, lane)
    free: list[int] = []
    for net in sorted(range(len(gap.spans)), key=lambda n: (*gap.spans[n], n)):
        low, high = gap.spans[net]
        while busy and busy[0][0] < low:
            heapq.heappush(free, heapq.heappop(busy)[1])
        lane = heapq.heappop(free) if free else gap.lanes
        gap.lanes = max(gap.lanes, lane + 1)
        gap.columns[net] = lane
        heapq.heappush(busy, (high, lane))
