"""Shared helpers for the benchmarks: synthetic graphs and a best-of timer."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any

from harness_tui.engine.graph import TaskGraph, TaskNode

# About 100 bytes of canonical JSON, as the issue asks.
PAYLOAD = {
    "run": "benchmark",
    "user": {"id": "u001", "tier": "gold"},
    "flags": ["a", "b", "c"],
    "seed": 12345,
    "note": "xxxxxxxxxxxxxx",
}


def shape_deps(n: int, shape: str) -> list[tuple[str, tuple[str, ...]]]:
    """Task names and dependencies for a wide (root, n-2 siblings, sink) or chain DAG."""
    names = [f"t{i:06d}" for i in range(n)]
    if shape == "chain":
        return [(names[0], ())] + [(names[i], (names[i - 1],)) for i in range(1, n)]
    if shape == "wide":
        middle = names[1:-1]
        return [(names[0], ()), *((m, (names[0],)) for m in middle), (names[-1], tuple(middle))]
    raise ValueError(shape)


def make_graph(n: int, shape: str, fn: Callable[..., Any] | None = None, **node: Any) -> TaskGraph:
    """A validated graph of ``n`` trivial tasks, declared in reverse order on purpose."""
    specs = shape_deps(n, shape)
    return TaskGraph.from_nodes(TaskNode(name, fn, deps, **node) for name, deps in reversed(specs))


def best_of(repeats: int, fn: Callable[[], Any]) -> float:
    """The best wall time of ``repeats`` calls, with the collector paused (less noise)."""
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - start)
        finally:
            gc.enable()
    return best
