"""The export of a finished run, in process: ``RunRecord.from_run`` and ``write_within`` of a
generated workflow's run (100,000 tasks by default), against the engine's run of the same
loaded graph measured in the same process (the figure ``run --store --export`` adds to a run).

The collector is set as the CLI sets it. The run is made once; each round makes the record
and writes the file again. Printed: medians and spreads (min-max) of each part and of both,
and the ratio of both to the engine run. The first round (a fresh run's digests and the
lazy imports of writing) is shown apart, as a command pays it once.

Run: python benchmarks/bench_export.py [--tasks 100000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.records.export.record import RunRecord
from harness_tui.workflow.generate import generate_workflow
from harness_tui.workflow.loader import load_workflow


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} s [{min(values):.3f}-{max(values):.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    gc.set_threshold(50_000, 1_000, 1_000)  # as the CLI sets it
    with tempfile.TemporaryDirectory() as directory:
        source = Path(directory) / "big.yaml"
        source.write_text(generate_workflow(args.tasks), encoding="utf-8")
        workflow = load_workflow(source)
        start = time.perf_counter()
        run = TaskOrchestrator(workflow.graph, on_failure=workflow.on_failure).start(
            workflow.payload
        )
        run.run_to_end()
        engine = time.perf_counter() - start
        made: list[float] = []
        written: list[float] = []
        for _ in range(args.rounds + 1):
            target = Path(directory) / "run.json"
            target.unlink(missing_ok=True)  # a new file, as a command writes
            start = time.perf_counter()
            record = RunRecord.from_run(run, workflow, environment={})
            middle = time.perf_counter()
            record.write_within(target, 10**12)
            made.append(middle - start)
            written.append(time.perf_counter() - middle)
        size = target.stat().st_size
    both = [a + b for a, b in zip(made, written, strict=True)]
    print(f"tasks: {args.tasks}  export: {size / 2**20:.1f} MiB  engine run: {engine:.3f} s")
    print(f"first round      from_run {made[0]:.3f} s  write_within {written[0]:.3f} s")
    print(f"from_run         {_spread(made[1:])}")
    print(f"write_within     {_spread(written[1:])}")
    print(f"export           {_spread(both[1:])}")
    ratio = statistics.median(both[1:]) / engine
    print(f"export / engine run: {ratio:.2f}x (first round {both[0] / engine:.2f}x)")


if __name__ == "__main__":
    main()
