"""Parallel execution against its ideal and against dask's threaded scheduler, in one run.

1. 200 independent tasks that each wait 20 ms, then a fan-in, with 8 workers: the ideal is
   200 x 20 ms / 8 = 0.5 s. Printed: our time / ideal (target <= 1.25) and our time / dask's
   threaded scheduler on the same graph with 8 workers (target <= 1.0); the same with
   ``async def`` tasks awaiting ``asyncio.sleep``.
2. 10,000 trivial tasks (wide) with 4 threads: per-task overhead against dask's threaded
   scheduler (target: no more than dask's), and our serial overhead against our 4-thread one.

3. ``--executor dask`` (needs ``harness-tui[dask]``): a LocalCluster of 2 worker processes
   (its start-up timed and printed apart). 16 CPU-bound tasks of about 0.25 s each: serial
   time / Dask time (target >= 1.6). A chain of 200 trivial tasks: our per-task time against
   a baseline that submits each task straight from a Dask client once its dependency's
   result arrived (target <= 1.2); the CPU tasks against the same baseline too. Times run
   from the first dispatch to the last retire.

Dask is optional (``pip install dask``); without it the dask columns are skipped.

Run: python benchmarks/bench_parallel.py [--rounds 3] [--only-dask]
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
    parser.add_argument("--only-dask", action="store_true", help="Only part 3.")
    args = parser.parse_args()
    if not args.only_dask:
        threads(args.rounds)
    on_dask(args.rounds)


def threads(rounds: int) -> None:
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


CPU_TASKS = 16
CPU_SECONDS = 0.25
CHAIN = 200


def calibrate() -> int:
    """Rounds of :func:`cpu_tasks.burn` that take about :data:`CPU_SECONDS` here."""
    from cpu_tasks import burn

    n = 200_000
    started = time.perf_counter()
    burn(n)
    return int(n * CPU_SECONDS / (time.perf_counter() - started))


def cpu_graph(n: int) -> TaskGraph:
    from cpu_tasks import spin

    return TaskGraph.from_nodes(
        TaskNode(f"c{i:02d}", spin, params={"n": n}, timeout_seconds=None) for i in range(CPU_TASKS)
    )


def chain_graph() -> TaskGraph:
    from cpu_tasks import trivial

    return TaskGraph.from_nodes(
        TaskNode(f"k{i:03d}", trivial, depends_on=(f"k{i - 1:03d}",) if i else (),
                 timeout_seconds=None)
        for i in range(CHAIN)
    )  # fmt: skip


def on_cluster(graph: TaskGraph, cluster: Any, workers: int) -> float:
    from harness_tui.executors.dask import DaskExecutor

    orchestrator = TaskOrchestrator(graph, executor=DaskExecutor(cluster), workers=workers)
    run = orchestrator.start({})
    started = time.perf_counter()
    run.run_to_end()
    elapsed = time.perf_counter() - started
    assert run.status.value == "succeeded"
    return elapsed


def direct(
    client: Any, graph: TaskGraph, fn: Callable[..., Any], args: Callable[[str], tuple[Any, ...]]
) -> float:
    """The baseline: each task submitted from the client once its dependencies' results
    arrived there."""
    from distributed import as_completed

    nodes = graph.nodes
    waiting = {name: len(node.depends_on) for name, node in nodes.items()}
    results: dict[str, Any] = {}
    started = time.perf_counter()
    pending = as_completed()
    names: dict[str, str] = {}

    def submit(name: str) -> None:
        deps = [results[d] for d in nodes[name].depends_on]
        future = client.submit(fn, *args(name), *deps, pure=False, retries=0)
        names[future.key] = name
        pending.add(future)

    for name, count in waiting.items():
        if not count:
            submit(name)
    for future in pending:
        name = names[future.key]
        results[name] = future.result()
        for dependent in graph.dependents(name):
            waiting[dependent] -= 1
            if not waiting[dependent]:
                submit(dependent)
    assert len(results) == len(nodes)
    return time.perf_counter() - started


def cores_free(n: int) -> float:
    """How parallel this machine is now: two processes burning at once against one after
    the other (2.0 on two idle cores; other load on a shared machine lowers it)."""
    import multiprocessing

    from cpu_tasks import burn

    with multiprocessing.get_context("spawn").Pool(2) as pool:
        pool.map(burn, [1000, 1000])  # started
        started = time.perf_counter()
        pool.map(burn, [n], chunksize=1)
        one = time.perf_counter() - started
        started = time.perf_counter()
        pool.map(burn, [n, n], chunksize=1)
        return 2 * one / (time.perf_counter() - started)


def on_dask(rounds: int) -> None:
    try:
        from harness_tui.executors.dask import DaskCluster
    except ImportError:
        print("dask distributed not installed: part 3 skipped")
        return
    from cpu_tasks import burn, trivial_direct

    started = time.perf_counter()
    cluster = DaskCluster(workers=2)
    print(f"LocalCluster, 2 worker processes: started in {time.perf_counter() - started:.2f} s "
          "(not in the times below)")  # fmt: skip
    try:
        n = calibrate()
        print(f"this machine now: 2 processes run {cores_free(n):.2f}x as fast as 1 "
              "(the ceiling of the speed-up below)")  # fmt: skip
        cpu, chain = cpu_graph(n), chain_graph()
        on_cluster(cpu, cluster, 2), on_cluster(chain, cluster, 2)  # warm the workers up
        serial = min(ours(cpu, 1) for _ in range(rounds))
        dask = min(on_cluster(cpu, cluster, 2) for _ in range(rounds))
        base = min(direct(cluster.client, cpu, burn, lambda _: (n,)) for _ in range(rounds))
        print(f"{CPU_TASKS} CPU tasks of ~{CPU_SECONDS} s: serial {serial:.2f} s, Dask "
              f"{dask:.2f} s: speed-up {serial / dask:.2f} (target >= 1.6); direct Dask "
              f"client {base:.2f} s, ours / direct = {dask / base:.2f}")  # fmt: skip
        ours_chain = min(on_cluster(chain, cluster, 1) for _ in range(rounds)) / CHAIN * 1e3
        base_chain = min(direct(cluster.client, chain, trivial_direct, lambda _: ())
                         for _ in range(rounds)) / CHAIN * 1e3  # fmt: skip
        print(f"chain of {CHAIN} trivial tasks: ours {ours_chain:.2f} ms/task, direct Dask "
              f"client {base_chain:.2f} ms/task: ratio {ours_chain / base_chain:.2f} "
              "(target <= 1.2)")  # fmt: skip
    finally:
        cluster.close()


if __name__ == "__main__":
    main()
