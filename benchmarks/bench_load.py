"""Loading and planning a generated workflow, with the share spent parsing YAML.

Baseline measured in the same run: plain ``yaml.load`` of the same text with the same loader
(the floor for any YAML-based format). Target: load + plan of 10,000 tasks under 1.5 s.

Run: python benchmarks/bench_load.py [--tasks 10000]
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=10_000)
    args = parser.parse_args()
    print(f"YAML loader: {_Loader.__name__}")
    print(f"{'shape':8} {'tasks':>7} {'load+plan s':>12} {'yaml share':>11} {'x plain yaml':>13}")
    for shape in ("wide", "chain", "layered"):
        text = generate_workflow(args.tasks, shape)

        def load_and_plan() -> None:
            workflow = parse_workflow(text)
            DeterministicScheduler(workflow.graph).plan(workflow.payload)

        total = best_of(3, load_and_plan)
        positions = best_of(3, lambda: compose(text))
        plain = best_of(3, lambda: yaml.load(text, Loader=_Loader))
        print(
            f"{shape:8} {args.tasks:>7} {total:>12.3f} {positions / total:>10.0%} "
            f"{total / plain:>13.2f}"
        )
    text = generate_workflow(args.tasks, "wide")
    start = time.perf_counter()
    workflow = parse_workflow(text)
    DeterministicScheduler(workflow.graph).plan(workflow.payload)
    print(f"single load+plan, collector on: {time.perf_counter() - start:.3f} s")
    print("yaml share: YAML parsing with positions / load+plan; x plain yaml: ours / yaml.load")


if __name__ == "__main__":
    main()
