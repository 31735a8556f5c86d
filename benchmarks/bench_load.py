"""Loading and planning a generated workflow, with the share spent reading YAML.

Baselines measured in the same run: plain ``yaml.load`` of the same text with the same libyaml
loader (what any YAML-based format pays at least), and libyaml's bare event stream (the floor
of the event-based reader). With ``--base TREE`` the same loads also run against another
source tree (e.g. ``git worktree add ../base main``), alternating, and the ratio is printed.

Run: python benchmarks/bench_load.py [--tasks 10000] [--base TREE] [--rounds 3]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_of

from harness_tui.engine.scheduler import DeterministicScheduler
from harness_tui.workflow.generate import generate_workflow
from harness_tui.workflow.loader import parse_workflow
from harness_tui.workflow.yamlpos import _Loader, compose

SHAPES = ("wide", "chain", "layered")
_CHILD = """
import sys, time, gc
from harness_tui.workflow.generate import generate_workflow
from harness_tui.workflow.loader import parse_workflow
text = generate_workflow(int(sys.argv[1]), sys.argv[2])
parse_workflow(text)
gc.disable()
times = []
for _ in range(int(sys.argv[3])):
    start = time.process_time()
    parse_workflow(text)
    times.append(time.process_time() - start)
print(min(times))
"""


def _events(text: str) -> None:
    loader = _Loader(text)
    try:
        while type(loader.get_event()) is not yaml.StreamEndEvent:
            pass
    finally:
        loader.dispose()


def _load_in(tree: Path, tasks: int, shape: str, repeats: int) -> float:
    """Best CPU seconds of ``parse_workflow`` in a child process importing ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(tasks), shape, str(repeats)],
        capture_output=True, text=True, env=env, cwd=tree, check=True,
    ).stdout  # fmt: skip
    return float(out.strip())


def compare(base: Path, tasks: int, rounds: int) -> None:
    """Alternate this tree and ``base``, ``rounds`` times per shape; print medians and ratio."""
    here = Path(__file__).resolve().parents[1]
    print(f"load (CPU s, best of 5 per process; median of {rounds} alternating rounds)")
    print(f"{'shape':8} {'tasks':>7} {'base':>8} {'this':>8} {'base/this':>10}")
    for shape in SHAPES:
        ours, theirs = [], []
        for _ in range(rounds):
            theirs.append(_load_in(base, tasks, shape, 5))
            ours.append(_load_in(here, tasks, shape, 5))
        a, b = statistics.median(theirs), statistics.median(ours)
        print(f"{shape:8} {tasks:>7} {a:>8.3f} {b:>8.3f} {a / b:>9.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--base", type=Path, help="another source tree to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"YAML loader: {_Loader.__name__}")
    print(
        f"{'shape':8} {'tasks':>7} {'load s':>8} {'load+plan s':>12} {'yaml share':>11} "
        f"{'x plain yaml':>13} {'x events':>9}"
    )
    for shape in SHAPES:
        text = generate_workflow(args.tasks, shape)

        def load_and_plan() -> None:
            workflow = parse_workflow(text)
            DeterministicScheduler(workflow.graph).plan(workflow.payload)

        load = best_of(3, lambda: parse_workflow(text))
        total = best_of(3, load_and_plan)
        reading = best_of(3, lambda: compose(text))
        plain = best_of(3, lambda: yaml.load(text, Loader=_Loader))
        events = best_of(3, lambda: _events(text))
        print(
            f"{shape:8} {args.tasks:>7} {load:>8.3f} {total:>12.3f} {reading / total:>10.0%} "
            f"{total / plain:>13.2f} {load / events:>9.2f}"
        )
    text = generate_workflow(args.tasks, "wide")
    start = time.perf_counter()
    workflow = parse_workflow(text)
    DeterministicScheduler(workflow.graph).plan(workflow.payload)
    print(
        f"single load+plan, collector on (default thresholds): {time.perf_counter() - start:.3f} s"
    )
    del workflow
    gc.collect()
    gc.set_threshold(50_000, 1_000, 1_000)  # what the harness-tui command sets
    start = time.perf_counter()
    workflow = parse_workflow(text)
    DeterministicScheduler(workflow.graph).plan(workflow.payload)
    print(f"single load+plan, collector as the CLI tunes it: {time.perf_counter() - start:.3f} s")
    print(
        "yaml share: reading YAML / load+plan; x plain yaml: load+plan / yaml.load; "
        "x events: load / libyaml's bare event stream"
    )
    if args.base:
        compare(args.base, args.tasks, args.rounds)


if __name__ == "__main__":
    main()
