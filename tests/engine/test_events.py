"""Trace events rebuilt from their recorded form (an export's trace and timings)."""

from __future__ import annotations

import pytest

from harness_tui.engine.events import Status, TraceEvent


def _every_field_set(status: Status) -> TraceEvent:
    return TraceEvent(
        seq=7,
        task="fetch",
        task_id="0123456789abcdef",
        status=status,
        attempt=2,
        error={"type": "ValueError", "message": "no"},
        input_digest="i" * 64,
        output_digest="o" * 64,
        started_at=1.5,
        ended_at=2.5,
        traceback="Traceback ...",
        wall=1700000000.25,
        worker=3,
    )


@pytest.mark.parametrize("status", list(Status))
def test_an_event_is_rebuilt_field_for_field_from_its_canonical_and_timing_parts(
    status: Status,
) -> None:
    event = _every_field_set(status)
    rebuilt = TraceEvent.from_dicts(event.canonical(), event.timing())
    assert rebuilt == event
    assert rebuilt._asdict() == event._asdict()
    assert rebuilt.status is status


def test_missing_optional_parts_take_the_defaults() -> None:
    canonical = {"seq": 0, "task": "a", "task_id": "x", "status": "skipped", "attempt": 0}
    assert TraceEvent.from_dicts(canonical) == TraceEvent(0, "a", "x", Status.SKIPPED, 0)


def test_an_unknown_status_is_refused_as_the_enum_refuses_it() -> None:
    canonical = {"seq": 0, "task": "a", "task_id": "x", "status": "exploded", "attempt": 1}
    with pytest.raises(ValueError, match="exploded"):
        TraceEvent.from_dicts(canonical)
