"""What a task's timeout costs a serial run: CPU time per task with no timeout and with the
default 30 s timeout, in this tree and (optionally) in a base tree, interleaved round by round
so that drift on a shared machine hits every side alike.

CPU time (``time.process_time``), not wall time: the figure is what the harness itself spends,
which other processes on the machine cannot inflate. Printed per side: the median and the
spread (min-max) in µs per task over the rounds, and the ratios that matter: 30 s over none in
each tree, and each tree's figures over the base's.

Run: python benchmarks/bench_timeouts.py [--base TREE] [--rounds 15] [--tasks 10000]
     (TREE: e.g. a ``git worktree add ../base <commit>`` of the commit before a change)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Run in a child whose PYTHONPATH is the tree measured: prints {"none": µs, "30s": µs}.
CHILD = """
import gc, json, sys, time
from harness_tui.engine.clock import SystemClock
from harness_tui.engine.graph import TaskGraph, TaskNode
from harness_tui.engine.orchestrator import TaskOrchestrator

def trivial(inputs):
    return 1

n = int(sys.argv[1])
out = {}
for label, timeout in (("none", None), ("30s", 30.0)):
    graph = TaskGraph.from_nodes(
        TaskNode(f"t{i:06d}", trivial, (f"t{i - 1:06d}",) if i else (), timeout_seconds=timeout)
        for i in range(n)
    )
    best = float("inf")
    for _ in range(3):
        gc.collect()
        gc.disable()
        started = time.process_time()
        TaskOrchestrator(graph, clock=SystemClock()).start({}).run_to_end().digests()
        best = min(best, time.process_time() - started)
        gc.enable()
    out[label] = best / n * 1e6
print(json.dumps(out))
"""


def measure(tree: Path, tasks: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    result = subprocess.run(
        [sys.executable, "-c", CHILD, str(tasks)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,
        check=True,
    )
    figures: dict[str, float] = json.loads(result.stdout)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", type=Path, help="a tree to compare with")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--tasks", type=int, default=10000)
    args = parser.parse_args()
    trees = {"new": HERE.parent}
    if args.base is not None:
        trees = {"base": args.base.resolve(), **trees}
    samples: dict[tuple[str, str], list[float]] = {}
    for round_number in range(args.rounds):
        order = list(trees.items())
        if round_number % 2:
            order.reverse()
        for side, tree in order:
            for label, value in measure(tree, args.tasks).items():
                samples.setdefault((side, label), []).append(value)
        print(f"round {round_number + 1}/{args.rounds} done", file=sys.stderr)
    medians = {key: statistics.median(values) for key, values in samples.items()}
    print(f"CPU µs per task, {args.tasks} trivial tasks in a chain, serial, system clock")
    print(f"{'side':6} {'timeout':8} {'median':>8} {'min':>8} {'max':>8}")
    for (side, label), values in samples.items():
        row = f"{side:6} {label:8} {medians[side, label]:8.2f} {min(values):8.2f}"
        print(f"{row} {max(values):8.2f}")
    for side in trees:
        ratio = medians[side, "30s"] / medians[side, "none"]
        print(f"{side}: 30 s timeout / no timeout = {ratio:.2f}x")
    if "base" in trees:
        for label in ("none", "30s"):
            ratio = medians["new", label] / medians["base", label]
            print(f"new / base, {label}: {ratio:.2f}x")


if __name__ == "__main__":
    main()
