"""Searching a task's log at the 1 MiB cap (about 100,000 short lines) in the logs view.

A real run: one task prints short lines until its log reaches the cap (1 MiB, then a mark).
The logs view is opened on it in a headless app (Textual's Pilot); measured: the first
search (the lower-cased copy of the shown lines is made then) and a search after it, each
for a line near the end of the log, from the view's first line. Target: within 100 ms.
Baseline measured in the same run: ``str.find`` of the same text in the raw log (the floor
of any search).

Run: python benchmarks/bench_log_search.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Mapping
from typing import Any

from textual.app import App

from harness_tui.engine.capture import DEFAULT_LOG_LIMIT
from harness_tui.engine.clock import FakeClock
from harness_tui.engine.graph import TaskGraph, TaskNode
from harness_tui.engine.orchestrator import Run, TaskOrchestrator
from harness_tui.tui.modals.logs import LogsModal, LogView


def chatter(inputs: Mapping[str, Any]) -> int:
    for number in range(120_000):  # past the cap: the log keeps its first 1 MiB
        print(f"{number:06d} ok")
    return 0


def chatty_run() -> Run:
    graph = TaskGraph.from_nodes([TaskNode("chatty", chatter)])
    return TaskOrchestrator(graph, clock=FakeClock()).start({}).run_to_end()


async def measure(run: Run, wanted: str) -> tuple[float, float, int]:
    app: App[None] = App()
    async with app.run_test(size=(120, 40)) as pilot:
        modal = LogsModal(run, "chatty")
        await app.push_screen(modal)
        view = modal.query_one(LogView)
        while len(view.lines) < 100_000:
            await pilot.pause(0.01)
        modal.wanted = wanted
        start = time.perf_counter()
        first = modal.find_match()
        took_first = time.perf_counter() - start
        modal.match = -1
        start = time.perf_counter()
        again = modal.find_match()
        took_again = time.perf_counter() - start
        assert first is not None and first == again, (first, again)
        return took_first, took_again, len(view.lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    run = chatty_run()
    log = run.log("chatty", 1)
    assert log is not None and log.truncated and len(log.text) >= DEFAULT_LOG_LIMIT - 100
    last = log.text.rstrip("\n").splitlines()[-3]  # a whole line just before the mark
    wanted = last.split()[0]
    firsts, agains, floors = [], [], []
    lines = 0
    for _ in range(args.repeats):
        first, again, lines = asyncio.run(measure(run, wanted))
        firsts.append(first)
        agains.append(again)
        start = time.perf_counter()
        log.text.lower().find(wanted)
        floors.append(time.perf_counter() - start)
    floor = statistics.median(floors)
    print(f"log: {len(log.text):,} characters, {lines:,} lines; searching {wanted!r}")
    for label, measured in (("first search", firsts), ("next search", agains)):
        median = statistics.median(measured)
        spread = max(measured) - min(measured)
        print(
            f"{label}: {median * 1000:.1f} ms (spread {spread * 1000:.1f} ms), "
            f"{median / floor:.0f}x a bare str.find ({floor * 1000:.2f} ms)"
        )
    worst = max(statistics.median(firsts), statistics.median(agains))
    print(f"target: within 100 ms: {'met' if worst <= 0.1 else 'MISSED'}")


if __name__ == "__main__":
    main()
