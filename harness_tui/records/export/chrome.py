"""Timings in the Trace Event Format, which Perfetto and chrome://tracing open as a timeline."""

from __future__ import annotations

from typing import Any

from .record import RunRecord

__all__ = ["chrome_trace"]


def chrome_trace(record: RunRecord) -> dict[str, Any]:
    """One complete event ("ph": "X") per attempt, one row per worker that ran it (the run's
    own thread, or the threads of a parallel run), each row named."""
    events = record.events
    starts = [e.started_at for e in events if e.started_at is not None]
    origin = min(starts) if starts else 0.0
    out: list[dict[str, Any]] = [
        {"name": "process_name", "ph": "M", "pid": 1, "args": {"name": record.workflow.name}}
    ]
    for worker in sorted({e.worker for e in events}):
        name = f"worker {worker}" if worker else "run thread"
        out.append({"name": "thread_name", "ph": "M", "pid": 1, "tid": worker,
                    "args": {"name": name}})  # fmt: skip
    for event in events:
        if event.status.value == "running" or event.started_at is None or event.ended_at is None:
            continue
        out.append(
            {
                "name": event.task,
                "cat": event.status.value,
                "ph": "X",
                "pid": 1,
                "tid": event.worker,
                "ts": round((event.started_at - origin) * 1e6, 3),
                "dur": round(max(event.ended_at - event.started_at, 0.0) * 1e6, 3),
                "args": {
                    "task_id": event.task_id,
                    "attempt": event.attempt,
                    "status": event.status.value,
                    **({"error": event.error} if event.error else {}),
                },
            }
        )
    return {"traceEvents": out, "displayTimeUnit": "ms"}
