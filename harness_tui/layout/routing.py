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
from collections.abc import Mapping
from dataclasses import dataclass, field

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
    """The mode-independent part of a layout: layers, order, and each gap's lanes.

    Every gap's lane count is known (the drawing's columns depend on all of them); a gap's
    hops, nets and lanes are routed when it is asked for (:meth:`gap`), so that a view routes
    only the gaps it shows.

    Attributes:
        layered: the layers and hops.
        position: each slot's position in its layer.
        lanes: per gap, how many lanes it needs.
        longest: per layer, its longest task name (0 for a layer of dummies only).
    """

    layered: Layered
    position: dict[str, int]
    lanes: list[int]
    longest: list[int]
    _gaps: dict[int, Gap] = field(default_factory=dict)

    def gap(self, index: int) -> Gap:
        """The hops and lanes between layer ``index`` and the next (routed once)."""
        gap = self._gaps.get(index)
        if gap is None:
            gap = self._gaps[index] = _route_gap(self.layered, self.position, index)
        return gap

    @property
    def gaps(self) -> list[Gap]:
        """Every gap, routed."""
        return [self.gap(index) for index in range(len(self.lanes))]


def half_row(layer: int, position: int) -> int:
    """The row of a slot, in half slots (adjacent layers are offset by one)."""
    return 2 * position + layer % 2


def route(layered: Layered, position: Mapping[str, int]) -> Routing:
    """Count every gap's lanes (hops are grouped into nets and nets coloured, as
    :meth:`Routing.gap` does when the gap is drawn)."""
    position = dict(position)
    lanes = []
    for index, hops in enumerate(layered.hops):
        _, spans = _group(hops, _rows(layered, position, index))
        lanes.append(_colour(spans)[1])
    longest = [
        max((len(key) for key in keys if not layered.is_dummy(key)), default=0)
        for keys in layered.slots
    ]
    return Routing(layered, position, lanes, longest)


def _rows(layered: Layered, position: Mapping[str, int], index: int) -> dict[str, int]:
    """The rows (half slots) of the slots on both sides of gap ``index``."""
    rows = {}
    for side in (index, index + 1):
        odd = side % 2
        for key in layered.slots[side]:
            rows[key] = 2 * position[key] + odd
    return rows


def _route_gap(layered: Layered, position: Mapping[str, int], index: int) -> Gap:
    hops = layered.hops[index]
    nets, spans = _group(hops, _rows(layered, position, index))
    columns, lanes = _colour(spans)
    gap = Gap(index, columns=columns, spans=spans, lanes=lanes)
    gap.hops = [
        Hop(layered.edge_of(a, b), a, b, net) for (a, b), net in zip(hops, nets, strict=True)
    ]
    return gap


def _group(
    hops: list[tuple[str, str]], row: Mapping[str, int]
) -> tuple[list[int], list[tuple[int, int]]]:
    """Each hop's net, and each net's span of rows."""
    outs = Counter(a for a, _ in hops)
    ins = Counter(b for _, b in hops)
    keys: dict[tuple[str, str, str], int] = {}
    nets = []
    spans: list[tuple[int, int]] = []
    for a, b in hops:
        ya, yb = row[a], row[b]
        if ins[b] == 1:
            key = ("fork", a, "down" if yb > ya else "up")
        elif outs[a] == 1:
            key = ("merge", b, "below" if ya > yb else "above")
        else:
            key = ("own", a, b)
        net = keys.setdefault(key, len(keys))
        low, high = (ya, yb) if ya < yb else (yb, ya)
        if net == len(spans):
            spans.append((low, high))
        else:
            was_low, was_high = spans[net]
            spans[net] = (min(was_low, low), max(was_high, high))
        nets.append(net)
    return nets, spans


def _colour(spans: list[tuple[int, int]]) -> tuple[list[int], int]:
    """Interval colouring: nets in order of their top row take the leftmost free lane; a lane
    is free once its last net ended at least one row above (so runs never touch). Returns
    each net's lane and the number of lanes."""
    columns = [0] * len(spans)
    lanes = 0
    busy: list[tuple[int, int]] = []  # (last row, lane)
    free: list[int] = []
    for net in sorted(range(len(spans)), key=lambda n: (*spans[n], n)):
        low, high = spans[net]
        while busy and busy[0][0] < low:
            heapq.heappush(free, heapq.heappop(busy)[1])
        lane = heapq.heappop(free) if free else lanes
        lanes = max(lanes, lane + 1)
        columns[net] = lane
        heapq.heappush(busy, (high, lane))
    return columns, lanes
