"""The run browser's first screen on a store of 10,000 runs, against one of 10 runs.

A store is made with real runs (recorded by the real store: a succeeded, a failed and an
abandoned run), then copied row for row (runs and their batches) under new ids and start
times until it holds N runs. Measured, headless (Textual's Pilot), in the same process:
the time from creating the app to the browser's table holding its first page, for 10 and
for 10,000 runs; and the store's first-page query alone. Target: 10,000 runs within 1.5x
the time of 10.

Run: python benchmarks/bench_run_browser.py [--runs 10000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from harness_tui.engine.clock import FakeClock
from harness_tui.records.runs.live import LiveRun
from harness_tui.records.runs.settings import RunSettings
from harness_tui.records.store import RunStore
from harness_tui.records.store.queries import RunQuery
from harness_tui.tui.app import create_app
from harness_tui.tui.screens.run_browser import RunBrowserScreen
from harness_tui.workflow.loader import parse_workflow

WORKFLOW = """\
name: nightly_etl
payload: {day: 1}
tasks:
  extract: {run: builtin:echo}
  transform: {run: builtin:echo, depends_on: [extract]}
  score: {run: builtin:fail, depends_on: [transform], max_retries: 1, with: {times: TIMES}}
  load: {run: builtin:echo, depends_on: [score]}
"""


def make_store(path: Path, runs: int) -> None:
    """A store of ``runs`` runs: three recorded for real, then copied."""
    with RunStore(path) as store:
        for times, steps in ((1, None), (5, None), (1, 2)):
            workflow = parse_workflow(WORKFLOW.replace("TIMES", str(times)))
            live = LiveRun.start(
                workflow, workflow.payload, RunSettings(store=store, clock=FakeClock())
            )
            if steps is None:
                live.drive()
            else:
                for _ in range(steps):
                    live.drive(single=True)
                live.abandon()
    db = sqlite3.connect(path, isolation_level=None)
    try:
        columns = [row[1] for row in db.execute("PRAGMA table_info(runs)")]
        batch_columns = [row[1] for row in db.execute("PRAGMA table_info(batches)")]
        templates = db.execute("SELECT * FROM runs").fetchall()
        batches = {
            t[0]: db.execute("SELECT * FROM batches WHERE run_id = ?", (t[0],)).fetchall()
            for t in templates
        }
        db.execute("BEGIN")
        db.execute("DELETE FROM batches")
        db.execute("DELETE FROM runs")
        run_marks = ", ".join("?" * len(columns))
        batch_marks = ", ".join("?" * len(batch_columns))
        for n in range(runs):
            template = list(templates[n % len(templates)])
            old = template[0]
            day, minute = divmod(n, 24 * 60)
            date = f"2026-{1 + day // 28 % 12:02d}-{1 + day % 28:02d}"
            stamp = f"{date}T{minute // 60:02d}:{minute % 60:02d}:00Z"
            template[0] = f"run-{n:06d}"
            template[columns.index("started_at")] = stamp
            template[columns.index("updated_at")] = stamp
            db.execute(f"INSERT INTO runs VALUES ({run_marks})", template)
            for batch in batches[old]:
                db.execute(f"INSERT INTO batches VALUES ({batch_marks})", (template[0], *batch[1:]))
        db.execute("COMMIT")
    finally:
        db.close()


async def first_screen(path: Path) -> float:
    """Seconds from creating the app to the browser showing its first page."""
    start = time.perf_counter()
    app = create_app(
        None, store_path=str(path), browse=True, settings=RunSettings(clock=FakeClock())
    )
    async with app.run_test(size=(120, 40)) as pilot:
        while not (isinstance(app.screen, RunBrowserScreen) and app.screen.table.row_count):
            await pilot.pause(0.001)
        took = time.perf_counter() - start
        await app.action_quit()
    if app.store is not None:
        app.store.close()
    return took


def first_page(path: Path) -> float:
    with RunStore(path, create=False) as store:
        start = time.perf_counter()
        store.browse(RunQuery())
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        small, large = Path(folder) / "small.sqlite3", Path(folder) / "large.sqlite3"
        make_store(small, 10)
        made = time.perf_counter()
        make_store(large, args.runs)
        print(f"made a store of {args.runs} runs in {time.perf_counter() - made:.1f} s")
        timings: dict[Path, list[float]] = {small: [], large: []}
        queries: dict[Path, list[float]] = {small: [], large: []}
        for _ in range(args.repeats):  # interleaved: a busy machine slows both alike
            for path in (small, large):
                timings[path].append(asyncio.run(first_screen(path)))
                queries[path].append(first_page(path))
    for label, measured in (("first screen", timings), ("first-page query", queries)):
        base, big = statistics.median(measured[small]), statistics.median(measured[large])
        spread = max(measured[large]) - min(measured[large])
        print(
            f"{label}: 10 runs {base * 1000:.1f} ms, {args.runs} runs {big * 1000:.1f} ms "
            f"(spread {spread * 1000:.1f} ms): ratio {big / base:.2f}x"
        )
    ratio = statistics.median(timings[large]) / statistics.median(timings[small])
    print(f"target: first screen within 1.5x of 10 runs: {'met' if ratio <= 1.5 else 'MISSED'}")
    sys.exit(0)


if __name__ == "__main__":
    main()
