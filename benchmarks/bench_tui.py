"""The workbench, headless, on a 2,000-task workflow.

Measures: time to the first complete screen (load, plan, layout, tables filled), the median
latency of one step (key press to the trace row on screen), and continuing through all tasks
with the trace live. Baseline measured in the same run: the same app on a 4-task workflow
(the floor of starting Textual and our screen at all).

Targets here: first screen <= 1.5 s, one step <= 50 ms, continue through 2,000 <= 3 s.
With ``--print-lines N`` every task prints N lines per attempt (captured as its log, issue 12):
one step must still be <= 50 ms at 1,000 lines.

Peak RSS (``ru_maxrss``) is printed after the first screen and at the end; with
``--tasks 100000`` the targets are a first screen <= 15 s and one step <= 50 ms.

Run: python benchmarks/bench_tui.py [--tasks 2000] [--print-lines 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness_tui.engine.clock import FakeClock
from harness_tui.records.runs.settings import RunSettings
from harness_tui.tui.app import create_app
from harness_tui.tui.widgets.trace_panel import TracePanel
from harness_tui.workflow.generate import generate_workflow

SIZE = (160, 50)

CHATTER = """\
def lines(inputs):
    for number in range(inputs["params"]["lines"]):
        print(f"line {number} of a chatty task, about as long as a log line tends to be")
    return inputs["params"]["index"]
"""


def printing(workflow: str, folder: Path, lines: int) -> str:
    """``workflow`` with every task replaced by one that prints ``lines`` lines."""
    (folder / "chatter.py").write_text(CHATTER)
    return workflow.replace("run: builtin:echo", "run: chatter:lines").replace(
        "with: {index:", f"with: {{lines: {lines}, index:"
    )


async def first_screen(path: str, rows: int) -> tuple[float, Any]:
    start = time.perf_counter()
    app = create_app(path, settings=RunSettings(clock=FakeClock()))
    context = app.run_test(size=SIZE)
    pilot = await context.__aenter__()
    while app.screen.query("PlanTable").first().row_count < rows:  # type: ignore[attr-defined]
        await pilot.pause()
    await pilot.pause()
    return time.perf_counter() - start, (app, pilot, context)


async def step_latencies(app: Any, pilot: Any, steps: int) -> list[float]:
    """Seconds from the step action until its events are handled on screen (rows added, the
    tables, DAG and header refreshed), polling every millisecond; the paint follows on
    Textual's next refresh tick."""
    screen = app.screen
    session = screen.session
    latencies = []
    for _ in range(steps):
        target = session.delivered + 2
        start = time.perf_counter()
        screen.act("run-step")
        while session.delivered < target or screen.controller.driving:
            await asyncio.sleep(0.001)
        latencies.append(time.perf_counter() - start)
        await settle(pilot)
    return latencies


async def settle(pilot: Any) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--print-lines", type=int, default=0, help="Lines each task prints.")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    big = folder / "big.yaml"
    big_text = generate_workflow(args.tasks, "layered")
    small = folder / "small.yaml"
    small_text = generate_workflow(4, "chain")
    if args.print_lines:
        big_text = printing(big_text, folder, args.print_lines)
        small_text = printing(small_text, folder, args.print_lines)
        print(f"every task prints {args.print_lines} lines per attempt")
    big.write_text(big_text)
    small.write_text(small_text)

    floor, (app, pilot, context) = await first_screen(str(small), 4)
    small_steps = await step_latencies(app, pilot, 3)
    await context.__aexit__(None, None, None)
    seconds, (app, pilot, context) = await first_screen(str(big), args.tasks)
    print(
        f"first complete screen, {args.tasks} tasks: {seconds:.3f} s "
        f"({seconds / floor:.1f}x the 4-task floor of {floor:.3f} s)"
    )

    print(f"peak RSS after the first screen: {peak_rss_mib():.0f} MiB")
    trace = app.screen.query_one(TracePanel)
    latencies = await step_latencies(app, pilot, args.steps)
    median = statistics.median(latencies)
    floor_step = statistics.median(small_steps)
    print(
        f"one step: median {median * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms over "
        f"{args.steps} steps ({median / floor_step:.2f}x the 4-task step of "
        f"{floor_step * 1000:.1f} ms)"
    )

    start = time.perf_counter()
    await pilot.press("c")
    session = app.screen.session
    while not session.run.finished or session.delivered < len(session.run.events):
        await pilot.pause(0.01)
    await settle(pilot)
    continued = time.perf_counter() - start
    remaining = args.tasks - args.steps
    print(
        f"continue through {remaining} tasks with the trace live: {continued:.3f} s "
        f"({continued / remaining * 1e6:.0f} µs per task, {trace.row_count} trace rows)"
    )
    print(f"peak RSS: {peak_rss_mib():.0f} MiB")
    await context.__aexit__(None, None, None)


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":
    asyncio.run(main())
