"""A run store holding one run of each status the run browser shows: succeeded, failed,
interrupted (its lease held by a process that is gone) and abandoned. Real runs, recorded by
the real store; only the interrupted run's lease is pointed at a dead process."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from harness_tui.engine.clock import FakeClock
from harness_tui.records.runs.live import LiveRun
from harness_tui.records.runs.settings import RunSettings
from harness_tui.records.store import RunStore
from harness_tui.workflow.loader import parse_workflow

NEWEST_FIRST = ["abandoned", "interrupted", "failed", "succeeded"]
"""The statuses of :func:`mixed_store`'s runs, newest first (the run browser's order)."""

GREET = """\
name: greet
payload: {who: world}
tasks:
  hello: {run: builtin:echo, with: {say: hello}}
  world: {run: builtin:echo, depends_on: [hello]}
  bye: {run: builtin:echo, depends_on: [world]}
"""

FLAKY = """\
name: flaky
payload: {n: 1}
tasks:
  fetch: {run: builtin:echo}
  score: {run: builtin:fail, depends_on: [fetch], max_retries: 2, with: {times: 9}}
"""

STARTS = {
    "succeeded": "2026-01-01T10:00:00Z",
    "failed": "2026-01-01T11:00:00Z",
    "interrupted": "2026-01-01T12:00:00Z",
    "abandoned": "2026-01-01T13:00:00Z",
}
"""When each run started (distinct, so that the newest-first order is known)."""


def mixed_store(path: Path) -> dict[str, str]:
    """Record the four runs in a new store at ``path``; their ids by status."""
    greet, flaky = parse_workflow(GREET), parse_workflow(FLAKY)
    ids: dict[str, str] = {}
    with RunStore(path) as store:
        for status, workflow, steps in (
            ("succeeded", greet, None),
            ("failed", flaky, None),
            ("interrupted", greet, 1),
            ("abandoned", greet, 2),
        ):
            live = LiveRun.start(
                workflow, workflow.payload, RunSettings(store=store, clock=FakeClock())
            )
            if steps is None:
                live.drive()
            for _ in range(steps or 0):
                live.drive(single=True)
            if status == "abandoned":
                live.abandon()
            else:
                live.flush()
            assert live.run_id is not None
            ids[status] = live.run_id
    with sqlite3.connect(path) as db:
        for status, run_id in ids.items():
            start = STARTS[status]
            # Each ended 90 s after it started (the abandoned run was left then).
            end = start.replace(":00:00Z", ":01:30Z")
            db.execute(
                "UPDATE runs SET started_at = ?, updated_at = ? WHERE id = ?", (start, end, run_id)
            )
        host = db.execute(
            "SELECT lease_owner FROM runs WHERE id = ?", (ids["interrupted"],)
        ).fetchone()[0]
        # A pid above the kernel's pid_max on this host: a process that cannot be alive.
        db.execute(
            "UPDATE runs SET status = 'running', lease_owner = ? WHERE id = ?",
            (f"{host.split(':')[0]}:99999999", ids["interrupted"]),
        )
    db.close()
    return ids
