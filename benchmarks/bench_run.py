"""Orchestrator overhead per task: trivial tasks, serial, with trace and digests.

Baseline measured in the same run: calling the same functions in plan order in a bare loop
(no trace, no isolation, no digests). Printed: µs per task, the ratio to the bare loop, and the
per-task cost at the largest size over the smallest (1.0 means linear; > 1.3 would be hidden
quadratic work).

Run: python benchmarks/bench_run.py [--sizes 10000,100000]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import PAYLOAD, best_of, make_graph

from harness_tui.engine.clock import FakeClock
from harness_tui.engine.orchestrator import TaskOrchestrator


def trivial(inputs: Any) -> int:
    return 1


def bare_loop(names: list[str]) -> None:
    results = {}
    for name in names:
        results[name] = trivial({"payload": PAYLOAD})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"{'timeout':8} {'tasks':>7} {'µs/task':>8} {'bare x':>7}")
    for timeout in (None, 30.0):
        per_task = {}
        for n in sizes:
            graph = make_graph(n, "chain", trivial, timeout_seconds=timeout)
            names = list(graph.nodes)

            def once() -> None:
                run = TaskOrchestrator(graph, clock=FakeClock()).start(PAYLOAD).run_to_end()
                run.digests()

            seconds = best_of(3, once)
            bare = best_of(3, lambda: bare_loop(names))
            per_task[n] = seconds / n * 1e6
            label = "none" if timeout is None else f"{timeout:g}s"
            print(f"{label:8} {n:>7} {per_task[n]:>8.2f} {seconds / bare:>7.1f}")
        if len(sizes) > 1:
            growth = per_task[sizes[-1]] / per_task[sizes[0]]
            print(f"         growth {sizes[-1]}/{sizes[0]}: {growth:.2f}x per task")


if __name__ == "__main__":
    main()
