"""Per-task cost of recording a run to SQLite, against the same run in memory only, in one
process (opening a new store and closing it included). The whole-process figure that users see,
``run --store`` against ``run --no-store`` (target: at most 15 µs per task and 1.25x), is
``bench_cli.py --only store``.

Run: python benchmarks/bench_store.py [--tasks 10000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import PAYLOAD, best_of

from harness_tui.engine.clock import FakeClock
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.records.store import RunStore
from harness_tui.workflow.generate import generate_workflow
from harness_tui.workflow.loader import parse_workflow


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=10_000)
    args = parser.parse_args()
    workflow = parse_workflow(generate_workflow(args.tasks, "layered"))
    folder = Path(tempfile.mkdtemp())

    def in_memory() -> Any:
        return TaskOrchestrator(workflow.graph, clock=FakeClock()).start(PAYLOAD).run_to_end()

    counter = {"n": 0}

    def recorded() -> None:
        counter["n"] += 1
        store = RunStore(folder / f"runs{counter['n']}.db")
        run = TaskOrchestrator(workflow.graph, clock=FakeClock()).start(PAYLOAD)
        run_id = store.record(run, workflow)
        run.run_to_end()
        store.finish(run, run_id)
        store.close()

    memory = best_of(3, in_memory)
    sqlite = best_of(3, recorded)
    n = args.tasks
    print(f"tasks: {n}")
    print(f"in memory:  {memory / n * 1e6:8.1f} µs/task")
    print(f"SQLite:     {sqlite / n * 1e6:8.1f} µs/task")
    print(
        f"extra:      {(sqlite - memory) / n * 1e6:8.1f} µs/task ({sqlite / memory:.1f}x in memory)"
    )


if __name__ == "__main__":
    main()
