"""Parallel execution against dask's threaded scheduler on the same graphs, in one run.

1. Four DAG shapes with 8 workers, tasks that wait (``time.sleep``): 8 independent chains of
   10 x 50 ms; 5 layers of one 500 ms task and seven 20 ms tasks (each task depends on the
   previous layer's fast tasks); a random 200-task DAG (seeded) of 0-50 ms tasks; 100 x 50 ms
   independent tasks. Rounds interleave ours and dask's; printed: wall medians with their
   spread (min-max), the critical path, and ours / dask (targets: <= 1.15 on the three deep
   shapes, <= 1.05 on the wide one). The same for ``async def`` tasks on the wide shape.
2. 10,000 trivial tasks (wide) with 4 threads: per-task wall and CPU time against dask's
   threaded scheduler with 4 workers, and our serial cost (15 interleaved rounds).

3. ``--executor dask`` (needs ``harness-tui[dask]``): a LocalCluster of 2 worker processes
   (its start-up timed and printed apart). 16 CPU-bound tasks of about 0.25 s each: serial
   time / Dask time (target >= 1.6). A chain of 200 trivial tasks: our per-task time against
   a baseline that submits each task straight from a Dask client once its dependency's
   result arrived (target <= 1.2); the CPU tasks against the same baseline too. Times run
   from the first dispatch to the last retire.

Dask is optional (``pip install dask``); without it the dask columns are skipped.

Run: python benchmarks/bench_parallel.py [--rounds 5] [--only-dask | --only-threads] [--only SHAPE]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time
from collections.abc import Callable, Mapping
from typing import Any

from harness_tui.engine.graph import TaskGraph, TaskNode
from harness_tui.engine.orchestrator import TaskOrchestrator

WORKERS = 8

Shape = dict[str, tuple[float, tuple[str, ...]]]
"""A DAG as ``{name: (seconds, dependencies)}``, built once for both schedulers."""


def chains(count: int = 8, length: int = 10, seconds: float = 0.05) -> Shape:
    return {
        f"c{c}_{i:02d}": (seconds, (f"c{c}_{i - 1:02d}",) if i else ())
        for c in range(count)
        for i in range(length)
    }


def layers(count: int = 5, fast: int = 7, slow: float = 0.5, quick: float = 0.02) -> Shape:
    shape: Shape = {}
    previous: tuple[str, ...] = ()
    for layer in range(count):
        shape[f"l{layer}_slow"] = (slow, previous)
        names = tuple(f"l{layer}_fast{i}" for i in range(fast))
        for name in names:
            shape[name] = (quick, previous)
        previous = names
    return shape


def random_dag(count: int = 200, most: float = 0.05, seed: int = 31) -> Shape:
    rng = random.Random(seed)
    shape: Shape = {}
    for i in range(count):
        deps = sorted(rng.sample(range(i), min(i, rng.randint(0, 3))))
        shape[f"r{i:03d}"] = (rng.uniform(0, most), tuple(f"r{d:03d}" for d in deps))
    return shape


def wide(count: int = 100, seconds: float = 0.05) -> Shape:
    return {f"w{i:03d}": (seconds, ()) for i in range(count)}


SHAPES: dict[str, tuple[Callable[[], Shape], float]] = {
    "8 chains of 10 x 50 ms": (chains, 1.15),
    "5 layers of 1 x 500 ms + 7 x 20 ms": (layers, 1.15),
    "random 200-task DAG, 0-50 ms": (random_dag, 1.15),
    "wide 100 x 50 ms": (wide, 1.05),
}


def critical_path(shape: Shape) -> float:
    longest: dict[str, float] = {}
    for name, (seconds, deps) in shape.items():  # declared after their dependencies
        longest[name] = seconds + max((longest[d] for d in deps), default=0.0)
    return max(longest.values())


def wait(inputs: Mapping[str, Any]) -> int:
    time.sleep(inputs["params"]["seconds"])
    return 1


async def async_wait(inputs: Mapping[str, Any]) -> int:
    await asyncio.sleep(inputs["params"]["seconds"])
    return 1


def trivial(inputs: Mapping[str, Any]) -> int:
    return 1


def as_graph(shape: Shape, fn: Callable[[Mapping[str, Any]], Any] = wait) -> TaskGraph:
    return TaskGraph.from_nodes(
        TaskNode(name, fn, depends_on=deps, params={"seconds": seconds}, timeout_seconds=None)
        for name, (seconds, deps) in shape.items()
    )


def ours(graph: TaskGraph, workers: int) -> float:
    started = time.perf_counter()
    run = TaskOrchestrator(graph, workers=workers).start({}).run_to_end()
    elapsed = time.perf_counter() - started
    assert run.status.value == "succeeded"
    return elapsed


def _sleep_then(seconds: float, *deps: Any) -> int:
    time.sleep(seconds)
    return 1


def _one(*deps: Any) -> int:
    return 1


def dask_time(shape: Shape, workers: int, trivial_tasks: bool = False) -> float | None:
    """dask's threaded scheduler on the same DAG, or None without dask."""
    try:
        from dask.threaded import get
    except ImportError:
        return None
    graph: dict[str, Any] = {
        name: (_one, *deps) if trivial_tasks else (_sleep_then, seconds, *deps)
        for name, (seconds, deps) in shape.items()
    }
    started = time.perf_counter()
    get(graph, list(shape), num_workers=workers)
    return time.perf_counter() - started


def spread(times: list[float]) -> str:
    return f"{statistics.median(times):.3f} s ({min(times):.3f}-{max(times):.3f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only-dask", action="store_true", help="Only part 3.")
    parser.add_argument("--only", help="Only the shapes whose name contains this.")
    parser.add_argument("--cpu-rounds", type=int, default=15, help="Rounds of part 2.")
    parser.add_argument("--only-threads", action="store_true", help="Only parts 1 and 2.")
    args = parser.parse_args()
    if not args.only_dask:
        threads(args.rounds, args.only, args.cpu_rounds)
    if args.only is None and not args.only_threads:
        on_dask(args.rounds)


def threads(rounds: int, only: str | None, cpu_rounds: int) -> None:
    print(f"{WORKERS} workers, medians of {rounds} (min-max), rounds interleaved with dask's")
    for title, (make, target) in SHAPES.items():
        if only is not None and only not in title:
            continue
        shape = make()
        graph = as_graph(shape)
        mine: list[float] = []
        theirs: list[float] = []
        for _ in range(rounds):
            mine.append(ours(graph, WORKERS))
            dask = dask_time(shape, WORKERS)
            if dask is not None:
                theirs.append(dask)
        line = f"{title}: ours {spread(mine)}, critical path {critical_path(shape):.3f} s"
        if theirs:
            ratio = statistics.median(mine) / statistics.median(theirs)
            line += f"; dask {spread(theirs)}; ours / dask {ratio:.2f} (target <= {target})"
        print(line)
    if only is not None:
        return
    shape = wide()
    coroutines = as_graph(shape, async_wait)
    mine = [ours(coroutines, WORKERS) for _ in range(rounds)]
    print(f"wide 100 x 50 ms, async def and asyncio.sleep: ours {spread(mine)}")
    trivial_tasks(cpu_rounds)


def trivial_tasks(rounds: int) -> None:
    """10,000 trivial tasks: wall and CPU time (the whole process's: every thread) per task,
    serial, 4 threads and dask threaded with 4 workers, interleaved rounds."""
    shape: Shape = {f"t{i:05d}": (0.0, ()) for i in range(10_000)}
    graph = as_graph(shape, trivial)
    times: dict[str, tuple[list[float], list[float]]] = {
        "serial": ([], []), "4 threads": ([], []), "dask threaded 4": ([], []),
    }  # fmt: skip

    def one(name: str) -> float | None:
        if name == "serial":
            return ours(graph, 1)
        if name == "4 threads":
            return ours(graph, 4)
        return dask_time(shape, 4, trivial_tasks=True)

    for _ in range(rounds):
        for name in times:
            cpu = time.process_time()
            wall = one(name)
            if wall is None:
                continue
            times[name][0].append(wall / 10_000 * 1e6)
            times[name][1].append((time.process_time() - cpu) / 10_000 * 1e6)
    print(f"10,000 trivial tasks, medians of {rounds} interleaved rounds (min-max):")
    for name, (walls, cpus) in times.items():
        if walls:
            print(f"  {name:16} wall {per_task(walls)}, CPU {per_task(cpus)}")
    threads, dask = times["4 threads"], times["dask threaded 4"]
    if dask[0]:
        print(f"  4 threads / dask threaded 4: wall {ratio(threads[0], dask[0]):.2f}, CPU "
              f"{ratio(threads[1], dask[1]):.2f} (target <= 1.1)")  # fmt: skip


def ratio(ours: list[float], theirs: list[float]) -> float:
    return statistics.median(ours) / statistics.median(theirs)


def per_task(micros: list[float]) -> str:
    return f"{statistics.median(micros):.1f} us/task ({min(micros):.1f}-{max(micros):.1f})"


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
