"""Parallel execution against its ideal and against dask's threaded scheduler, in one run.

1. 200 independent tasks that each wait 20 ms, then a fan-in, with 8 workers: the ideal is
   200 x 20 ms / 8 = 0.5 s. Printed: our time / ideal (target <= 1.25) and our time / dask's
   threaded scheduler on the same graph with 8 workers (target <= 1.0); the same with
   ``async def`` tasks awaiting ``asyncio.sleep``.
2. 10,000 trivial tasks (wide) with 4 threads: per-task overhead against dask's threaded
   scheduler (target: no more than dask's), and our serial overhead against our 4-thread one.

Dask is optional (``pip install dask``); without it the dask columns are skipped.

Run: python benchmarks/bench_parallel.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable, Mapping
from typing import Any

from harness_tui.engine.graph import TaskGraph, TaskNode
from harness_tui.engine.orchestrator import TaskOrchestrator

WAIT = 0.02
WIDTH = 200
WORKERS = 8


def wait(inputs: Mapping[str, Any]) -> int:
    time.sleep(WAIT)
    return 1


async def async_wait(inputs: Mapping[str, Any]) -> int:
    await asyncio.sleep(WAIT)
    return 1


def trivial(inputs: Mapping[str, Any]) -> int:
    return 1


def count(inputs: Mapping[str, Any]) -> int:
    return len(inputs["context"]["results"])


def fan(width: int, fn: Callable[[Mapping[str, Any]], Any]) -> TaskGraph:
    names = [f"w{i:05d}" for i in range(width)]
    nodes = [TaskNode(name, fn, timeout_seconds=None) for name in names]
    nodes.append(TaskNode("fan_in", count, depends_on=tuple(names), timeout_seconds=None))
    return TaskGraph.from_nodes(nodes)


def ours(graph: TaskGraph, workers: int) -> float:
    started = time.perf_counter()
    run = TaskOrchestrator(graph, workers=workers).start({}).run_to_end()
    elapsed = time.perf_counter() - started
    assert run.status.value == "succeeded"
    return elapsed


def dask_time(width: int, fn: Callable[[Any], Any], workers: int) -> float | None:
    try:
        import dask
        from dask.threaded import get
    except ImportError:
        return None
    graph: dict[str, Any] = {f"w{i:05d}": (fn, None) for i in range(width)}
    graph["fan_in"] = (len, [f"w{i:05d}" for i in range(width)])
    started = time.perf_counter()
    with dask.config.set(num_workers=workers):
        get(graph, "fan_in", num_workers=workers)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    rounds = parser.parse_args().rounds
    waits = fan(WIDTH, wait)
    ideal = WIDTH * WAIT / WORKERS
    best = min(ours(waits, WORKERS) for _ in range(rounds))
    print(f"{WIDTH} x {WAIT * 1000:.0f} ms waits + fan-in, {WORKERS} workers: {best:.3f} s, "
          f"ideal {ideal:.3f} s, ratio {best / ideal:.2f} (target <= 1.25)")  # fmt: skip
    theirs = [dask_time(WIDTH, lambda _: time.sleep(WAIT), WORKERS) for _ in range(rounds)]
    if theirs[0] is not None:
        dask_best = min(t for t in theirs if t is not None)
        print(f"  dask threaded: {dask_best:.3f} s; ours / dask = {best / dask_best:.2f} "
              "(target <= 1.0)")  # fmt: skip
    coroutines = fan(WIDTH, async_wait)
    best_async = min(ours(coroutines, WORKERS) for _ in range(rounds))
    print(f"the same with async def and asyncio.sleep: {best_async:.3f} s, ratio "
          f"{best_async / ideal:.2f} (target <= 1.25)")  # fmt: skip
    trivials = fan(10_000, trivial)
    serial = min(ours(trivials, 1) for _ in range(rounds)) / 10_000 * 1e6
    threaded = min(ours(trivials, 4) for _ in range(rounds)) / 10_000 * 1e6
    print(f"10,000 trivial tasks: serial {serial:.1f} us/task, 4 threads {threaded:.1f} us/task "
          f"(threads / serial = {threaded / serial:.2f})")  # fmt: skip
    theirs = [dask_time(10_000, lambda _: 1, 4) for _ in range(rounds)]
    if theirs[0] is not None:
        dask_per_task = min(t for t in theirs if t is not None) / 10_000 * 1e6
        print(f"  dask threaded, 4 workers: {dask_per_task:.1f} us/task; ours / dask = "
              f"{threaded / dask_per_task:.2f} (target <= 1.0)")  # fmt: skip


if __name__ == "__main__":
    main()
