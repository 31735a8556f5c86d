"""Phases 1 and 2: layers with dummy slots for long edges, then barycenter ordering."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .model import Edge

__all__ = ["Layered", "crossings", "layer", "order"]

SWEEPS = 4


@dataclass(slots=True)
class Layered:
    """Slots per layer (real tasks and dummies) and every edge as hops between adjacent layers.

    Attributes:
        slots: per layer, slot keys top to bottom (a dummy key starts with ``"\\0"``).
        layer_of: slot key -> its layer.
        hops: per gap (layer ``i`` to ``i + 1``), its hops ``(slot, slot)``, in the order of
            the edges (targets in plan order, each target's dependencies in their order).
        up: slot -> the slots it is fed from (previous layer).
        down: slot -> the slots it feeds (next layer).
    """

    slots: list[list[str]]
    layer_of: dict[str, int] = field(default_factory=dict)
    hops: list[list[tuple[str, str]]] = field(default_factory=list)
    up: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    down: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def is_dummy(self, key: str) -> bool:
        """Whether ``key`` is a long edge passing a layer (not a task)."""
        return key.startswith("\0")

    def edge_of(self, source: str, target: str) -> Edge:
        """The edge a hop from slot ``source`` to slot ``target`` belongs to."""
        if source.startswith("\0"):
            source = source.split("\0")[1]
        if target.startswith("\0"):
            target = target.split("\0")[2]
        return Edge(source, target)


def layer(
    order: Sequence[str], levels: Mapping[str, int], depends_on: Mapping[str, Sequence[str]]
) -> Layered:
    """Put each task in its level's layer (in plan order) and give each layer a long edge
    skips one dummy slot, so that every drawn hop joins adjacent layers."""
    depth = max(levels[t] for t in order) + 1
    layered = Layered([[] for _ in range(depth)])
    slots, layer_of, up, down = layered.slots, layered.layer_of, layered.up, layered.down
    hops: list[list[tuple[str, str]]] = [[] for _ in range(depth - 1)]
    layered.hops = hops
    for task in order:
        slots[levels[task]].append(task)
        layer_of[task] = levels[task]
    for task in order:
        level = levels[task]
        for dep in depends_on.get(task, ()):
            source = dep
            for index in range(levels[dep] + 1, level):
                dummy = f"\0{dep}\0{task}\0{index}"
                slots[index].append(dummy)
                layer_of[dummy] = index
                up[dummy].append(source)
                down[source].append(dummy)
                hops[index - 1].append((source, dummy))
                source = dummy
            up[task].append(source)
            down[source].append(task)
            hops[level - 1].append((source, task))
    return layered


def order(layered: Layered) -> dict[str, int]:
    """Barycenter ordering: alternate downward and upward passes, stable on ties (so the
    initial plan order decides them). Returns each slot's position in its layer."""
    keys = layered.slots
    for sweep in range(SWEEPS):
        downward = sweep % 2 == 0
        indices = range(1, len(keys)) if downward else range(len(keys) - 2, -1, -1)
        for index in indices:
            neighbours = keys[index - 1] if downward else keys[index + 1]
            links = layered.up if downward else layered.down
            keys[index] = _by_barycenter(keys[index], neighbours, links)
    return {key: i for slots in keys for i, key in enumerate(slots)}


def _by_barycenter(
    current: list[str], neighbours: list[str], links: Mapping[str, list[str]]
) -> list[str]:
    position = {key: i for i, key in enumerate(neighbours)}

    def barycenter(item: tuple[int, str]) -> tuple[float, int]:
        i, key = item
        linked = [position[k] for k in links.get(key, ()) if k in position]
        return (sum(linked) / len(linked) if linked else float(i), i)

    return [key for _, key in sorted(enumerate(current), key=barycenter)]


def crossings(layered: Layered) -> int:
    """Count crossing pairs of hops between adjacent layers (for tests and tuning)."""
    position = {key: i for slots in layered.slots for i, key in enumerate(slots)}
    by_gap: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for a, targets in layered.down.items():
        for b in targets:
            by_gap[layered.layer_of[a]].append((position[a], position[b]))
    total = 0
    for hops in by_gap.values():
        for i, (a1, b1) in enumerate(hops):
            for a2, b2 in hops[i + 1 :]:
                if (a1 - a2) * (b1 - b2) < 0:
                    total += 1
    return total
