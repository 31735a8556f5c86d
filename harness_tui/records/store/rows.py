"""One row of the store's ``batches`` table: the whole tasks a group commit writes at once.

A row per event cost more than the run it recorded (SQLite's per-row work, and a float's
decimal text costs more than the float), so a batch is one row of five columns besides its key:

- ``canonical``: the events' canonical JSON, one per line (canonical JSON never holds a raw
  newline), byte for byte what the run's digests were computed from;
- ``times``: ``started_at, ended_at, wall`` of each event as little-endian IEEE doubles (NaN
  where the event has none);
- ``workers``: a JSON array of each event's worker, or NULL when every one is 0;
- ``tracebacks``: a JSON object ``{"index in the batch": traceback}``, or NULL when none;
- ``outputs``: one line per committed output, ``TASK TEXT`` (a task name holds no space, the
  text is canonical JSON on one line; its digest is on the event that committed it).

Standard library only; :mod:`.store` does the SQL.
"""

from __future__ import annotations

import json
import math
import struct
from sys import intern
from typing import Any

from ...engine.events import TraceEvent, events_from_records

__all__ = ["encode_batch", "output_line", "read_batch"]

_NAN = math.nan


def output_line(task: str, text: str) -> str:
    """A committed output as the ``outputs`` column holds it."""
    return f"{task} {text}"


def encode_batch(
    events: list[TraceEvent], canonical: list[str], outputs: list[str]
) -> tuple[int, str, bytes, str | None, str | None, str]:
    """``(count, canonical, times, workers, tracebacks, outputs)`` of a batch's row."""
    count = len(events)
    times = struct.pack(
        f"<{3 * count}d",
        *[
            _NAN if value is None else value
            for event in events
            for value in (event.started_at, event.ended_at, event.wall)
        ],
    )
    workers = [event.worker for event in events]
    tracebacks = {str(i): e.traceback for i, e in enumerate(events) if e.traceback is not None}
    return (
        count,
        "\n".join(canonical),
        times,
        json.dumps(workers) if any(workers) else None,
        json.dumps(tracebacks) if tracebacks else None,
        "\n".join(outputs),
    )


def stored_event(canonical: dict[str, Any], timing: dict[str, Any]) -> TraceEvent:
    """A stored event, its task and task id interned (:func:`sys.intern`): a stored string
    is read as a new string each time, and a run names each task and task id twice (some 25
    MB at 100,000 tasks; a diff of two stored runs names them all four times)."""
    for key in ("task", "task_id"):
        value = canonical.get(key)
        if type(value) is str:
            canonical[key] = intern(value)
    return TraceEvent.from_dicts(canonical, timing)


def read_batch(
    row: tuple[Any, ...], events: list[TraceEvent], outputs: dict[str, str], hasher: Any
) -> None:
    """Add a stored batch's events and outputs to ``events`` and ``outputs``, and its events'
    canonical texts to the running trace ``hasher`` (see
    :meth:`~harness_tui.engine.state.RunState.adopt_trace_hash`).

    Raises:
        ValueError: the row does not hold what a batch holds (a damaged store).
    """
    seq, count, canonical, times_blob, workers_text, tracebacks_text, outputs_text = row
    where = f"the batch at event {seq}"
    if not isinstance(canonical, str) or not isinstance(times_blob, bytes):
        raise ValueError(f"{where} has no events or no times")
    lines = canonical.count("\n") + 1
    if not isinstance(count, int) or lines != count or len(times_blob) != 24 * count:
        raise ValueError(f"{where} does not hold {count} events")
    times = [None if math.isnan(t) else t for t in struct.unpack(f"<{3 * count}d", times_blob)]
    workers = _workers(None if workers_text is None else json.loads(workers_text), count, where)
    tracebacks = _tracebacks(
        None if tracebacks_text is None else json.loads(tracebacks_text), count, where
    )
    texts = canonical.replace("\n", ",")  # one per line: canonical JSON has no raw newline
    hasher.update(("," + texts if events else texts).encode())
    # Parsed in one call, not one a line (half the time at 100,000 tasks); a line that is
    # not JSON is found again alone, for the error that names it.
    try:
        parsed = json.loads(f"[{texts}]")
    except (ValueError, RecursionError):
        parsed = [json.loads(line) for line in canonical.split("\n")]
    if len(parsed) != count or not all(type(event) is dict for event in parsed):
        raise ValueError(f"{where} does not hold {count} events")
    timings = [
        {
            "started_at": times[3 * i],
            "ended_at": times[3 * i + 1],
            "wall": times[3 * i + 2],
            "worker": workers[i],
            "traceback": tracebacks.get(str(i)),
        }
        for i in range(count)
    ]
    events.extend(events_from_records(parsed, timings))
    if not isinstance(outputs_text, str):
        raise ValueError(f"{where} has no outputs")
    for line in outputs_text.split("\n") if outputs_text else ():
        task, text = line.split(" ", 1)
        if task in outputs:
            raise ValueError(f"{where} holds the output of {task} twice")
        outputs[task] = text


def _workers(value: Any, count: int, where: str) -> list[int]:
    """The batch's workers: ``count`` non-negative integers (all 0 when none were stored)."""
    if value is None:
        return [0] * count
    if (
        not isinstance(value, list)
        or len(value) != count
        or not all(type(w) is int and 0 <= w < 1 << 31 for w in value)
    ):
        raise ValueError(f"{where} has damaged workers")
    return value


def _tracebacks(value: Any, count: int, where: str) -> dict[str, str]:
    """The batch's tracebacks: text by event index in the batch (none when none stored)."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(text, str) and key.isdigit() and int(key) < count for key, text in value.items()
    ):
        raise ValueError(f"{where} has damaged tracebacks")
    return value
