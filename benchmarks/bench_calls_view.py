"""The calls view on an attempt of 1,000 recorded calls, against one of 10.

An export is made whose task recorded N streamed chat answers (about 2 kB of server-sent
events each, as an OpenAI-style server sends them). Measured headless (Textual's Pilot), in
the same process, interleaved: selecting the task (the inspector lists its calls), pressing
``C`` until the view shows the first exchange, and moving the cursor down one call (the next
exchange read and drawn). Beside them, what reading every exchange up front would cost (the
view reads only the one under the cursor, and draws only the rows on screen). Target: 1,000
calls open within 1.5x the time of 10.

Run: python benchmarks/bench_calls_view.py [--calls 1000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness_tui.engine.clock import FakeClock
from harness_tui.engine.exchanges import Exchange
from harness_tui.engine.recorded_calls import CallSession
from harness_tui.records.export import RunRecord
from harness_tui.records.runs.live import LiveRun
from harness_tui.records.runs.settings import RunSettings
from harness_tui.tui.app import create_app
from harness_tui.tui.call_text import exchange_text
from harness_tui.tui.modals.logs import LogsModal
from harness_tui.tui.screens.calls import CallsModal
from harness_tui.workflow.loader import parse_workflow

WORKFLOW = """\
name: chatty
tasks:
  ask: {run: builtin:echo}
"""

URL = "http://127.0.0.1:8000/v1/chat/completions"


def exchange(seq: int) -> Exchange:
    """One streamed chat answer of 40 chunks."""
    request = {"model": "m", "stream": True,
               "messages": [{"role": "user", "content": f"question {seq}"}]}  # fmt: skip
    events = [{"choices": [{"index": 0, "delta": {"content": f"w{i} "}}]} for i in range(40)]
    chunks = (*(f"data: {json.dumps(e)}\n\n".encode() for e in events), b"data: [DONE]\n\n")
    headers = (("content-type", "text/event-stream"),)
    return Exchange(seq, "http", "POST", URL, (("content-type", "application/json"),),
                    json.dumps(request).encode(), 200, headers, chunks, duration=0.02)  # fmt: skip


def make_export(path: Path, calls: int) -> None:
    workflow = parse_workflow(WORKFLOW)
    settings = RunSettings(clock=FakeClock())
    live = LiveRun.start(workflow, workflow.payload, settings, calls=CallSession())
    live.drive()
    live.run.load_recordings({("ask", 1): [exchange(i) for i in range(calls)]})
    live.export().write(path)


async def measure(path: Path) -> tuple[float, float, float, float]:
    """Seconds to inspect the task, to open its calls, to move to the next call, and to open
    its log view (a modal of fixed cost, for scale)."""
    app = create_app(str(path), replay=True, settings=RunSettings(clock=FakeClock()))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("c")
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen: Any = app.screen
        start = time.perf_counter()
        screen.panes.select("ask")
        await pilot.pause()
        inspect = time.perf_counter() - start
        start = time.perf_counter()
        await pilot.press("C")
        while not (isinstance(app.screen, CallsModal) and app.screen.shown is not None):
            await pilot.pause(0.001)
        await pilot.pause()
        opened = time.perf_counter() - start
        start = time.perf_counter()
        await pilot.press("down")
        await pilot.pause()
        moved = time.perf_counter() - start
        await pilot.press("escape")
        await pilot.pause()
        start = time.perf_counter()
        await pilot.press("l")
        while not isinstance(app.screen, LogsModal):
            await pilot.pause(0.001)
        await pilot.pause()
        logs = time.perf_counter() - start
        await app.action_quit()
    return inspect, opened, moved, logs


def read_all(path: Path) -> float:
    """Reading every exchange of the attempt up front (what the view does not do)."""
    exchanges = RunRecord.read(path).recordings[("ask", 1)]
    start = time.perf_counter()
    for one in exchanges:
        exchange_text(one)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        small, large = Path(folder) / "small.json", Path(folder) / "large.json"
        make_export(small, 10)
        make_export(large, args.calls)
        measured: dict[Path, list[tuple[float, ...]]] = {small: [], large: []}
        for _ in range(args.repeats):  # interleaved: a busy machine slows both alike
            for path in (small, large):
                measured[path].append(asyncio.run(measure(path)))
        eager = statistics.median(read_all(large) for _ in range(args.repeats))
    names = ("select the task (inspector)", "open the calls view", "next call",
             "open the log view (for scale)")  # fmt: skip
    for index, name in enumerate(names):
        base = statistics.median(m[index] for m in measured[small])
        big = [m[index] for m in measured[large]]
        spread = max(big) - min(big)
        print(
            f"{name}: 10 calls {base * 1000:.1f} ms, {args.calls} calls "
            f"{statistics.median(big) * 1000:.1f} ms (spread {spread * 1000:.1f} ms): "
            f"ratio {statistics.median(big) / base:.2f}x"
        )
    opened = statistics.median(m[1] for m in measured[large])
    print(f"reading all {args.calls} exchanges up front would add {eager * 1000:.1f} ms "
          f"to the view's {opened * 1000:.1f} ms opening")  # fmt: skip
    ratio = opened / statistics.median(m[1] for m in measured[small])
    print(f"target: open within 1.5x of 10 calls: {'met' if ratio <= 1.5 else 'MISSED'}")
    sys.exit(0)


if __name__ == "__main__":
    main()
