"""A stored run's trace digest is taken over its events' canonical texts as the store holds
them, not encoded again (records/store/rows.py, engine RunState.adopt_trace_hash): it is the
digest of its events, finished, stopped part way or resumed."""

from __future__ import annotations

from pathlib import Path

from harness_tui.engine.clock import FakeClock
from harness_tui.engine.driver import StopReason
from harness_tui.engine.state import trace_digest
from harness_tui.records.runs.live import LiveRun
from harness_tui.records.runs.settings import RunSettings
from harness_tui.records.store import RunStore
from harness_tui.workflow.loader import load_workflow

ROOT = Path(__file__).resolve().parents[2]


def _stored(tmp_path: Path, steps: int | None) -> tuple[RunStore, str, str]:
    """agent_triage recorded in a new store (``steps``: stopped after that many), its run id
    and its digest as the live run computed it."""
    store = RunStore(tmp_path / "runs.sqlite3")
    workflow = load_workflow(ROOT / "workflows/agent_triage.yaml")  # retries, fallbacks
    settings = RunSettings(store=store, clock=FakeClock(tick=0.01))
    live = LiveRun.start(workflow, workflow.payload, settings)
    if steps is None:
        assert live.drive().reason is StopReason.FINISHED
    else:
        for _ in range(steps):
            live.drive(single=True)
        live.abandon()  # left behind: resumable
    live.flush()
    assert live.run_id is not None
    return store, live.run_id, live.run.digest


def test_a_finished_runs_trace_digest_is_its_events(tmp_path: Path) -> None:
    store, run_id, digest = _stored(tmp_path, None)
    record = store.export(run_id)
    assert record.digests["trace"] == trace_digest(record.events)
    assert record.digests["run"] == digest


def test_a_run_stopped_part_way_then_resumed_has_the_digest_of_its_events(
    tmp_path: Path,
) -> None:
    store, run_id, _ = _stored(tmp_path, 4)
    record = store.export(run_id)
    assert record.digests["trace"] == trace_digest(record.events)
    live = LiveRun.resume(run_id, RunSettings(store=store, clock=FakeClock(tick=0.01)))
    assert live.drive().reason is StopReason.FINISHED
    events = live.run.events
    assert live.run.context.state.trace_digest() == trace_digest(events)
    assert store.export(run_id).digests["run"] == live.run.digest
