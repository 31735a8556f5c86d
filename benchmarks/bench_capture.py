"""What capturing descriptors 1 and 2 costs a run: trivial tasks in a chain, serial, with the
descriptor capture the commands use against the same run without it (same process, rounds
alternating). Printed: medians and spreads of each, and their ratio.

Run: python benchmarks/bench_capture.py [--tasks 5000] [--rounds 9]
"""

from __future__ import annotations

import argparse
import statistics
import time

from harness_tui.engine.capture import descriptors
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.workflow.generate import generate_workflow
from harness_tui.workflow.loader import parse_workflow


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    graph = parse_workflow(generate_workflow(args.tasks, "chain")).graph

    def once(captured: bool) -> float:
        orchestrator = TaskOrchestrator(graph)
        started = time.perf_counter()
        if captured:
            with descriptors():
                orchestrator.start({}).run_to_end()
        else:
            orchestrator.start({}).run_to_end()
        return time.perf_counter() - started

    times: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(args.rounds):
        for captured in (False, True):
            times[captured].append(once(captured))
    for captured, name in ((False, "without capture"), (True, "descriptors captured")):
        runs = times[captured]
        per_task = statistics.median(runs) / args.tasks * 1e6
        print(f"{name:>22}: {per_task:6.1f} us/task  (spread {min(runs):.3f}-{max(runs):.3f} s)")
    ratio = statistics.median(times[True]) / statistics.median(times[False])
    print(f"{'ratio':>22}: {ratio:.2f}")


if __name__ == "__main__":
    main()
