"""Events rebuilt a field at a time (``events_from_records``) are those ``from_dicts`` rebuilds
one at a time, for every field an event has."""

from __future__ import annotations

from pathlib import Path

from harness_tui.engine.clock import FakeClock
from harness_tui.engine.events import Status, TraceEvent, events_from_records
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.workflow.loader import load_workflow

ROOT = Path(__file__).resolve().parents[2]


def test_events_from_records_are_from_dicts_of_each() -> None:
    workflow = load_workflow(ROOT / "workflows/agent_triage.yaml")  # errors, fallbacks
    run = (
        TaskOrchestrator(workflow.graph, clock=FakeClock(tick=0.01), on_failure=workflow.on_failure)
        .start(workflow.payload)
        .run_to_end()
    )
    odd = TraceEvent(
        7, "t", "id", Status.FAILED, 2, {"type": "E", "message": "m"}, "in", None, 1.5, 2.5,
        "Traceback", 9.5, 3,
    )  # fmt: skip
    events = [*run.events, odd]
    canonicals = [event.canonical() for event in events]
    timings = [event.timing() for event in events]
    timings[0] = None  # an event without a timing record
    expected = [TraceEvent.from_dicts(c, t) for c, t in zip(canonicals, timings, strict=True)]
    made = events_from_records(canonicals, timings)
    assert made == expected
    assert made[-1] == odd and made[1:-1] == list(run.events[1:])
    assert all(type(event) is TraceEvent for event in made)
    assert events_from_records([], []) == []


def test_equal_task_names_read_twice_are_one_string() -> None:
    records = [
        {"seq": n, "task": "".join(["ta", "sk"]), "task_id": "".join(["i", "d"]),
         "status": "running", "attempt": 1}
        for n in range(2)
    ]  # fmt: skip
    assert records[0]["task"] is not records[1]["task"]
    first, second = events_from_records(records, [None, None])
    assert first.task is second.task and first.task_id is second.task_id
