"""JSON Lines of a run's events, as the seed article's structured logging asks (docs/formats.md,
"JSON Lines"): each line is the canonical event, byte for byte, plus a ``meta`` object."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from ...engine.events import Status, TraceEvent

__all__ = ["JsonLines"]


def _iso(wall: float | None) -> str | None:
    if wall is None:
        return None
    return (
        datetime.fromtimestamp(wall, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    )


class JsonLines:
    """Turns events into lines, remembering each attempt's ``running`` event (its wall time
    and input digest) for the event that ends it."""

    def __init__(self) -> None:
        self._opened: dict[str, TraceEvent] = {}

    def line(self, event: TraceEvent) -> str:
        """One line (no newline): the canonical event with ``meta`` added last."""
        if event.status is Status.RUNNING:
            self._opened[event.task] = opened = event
            ended = None
        else:
            opened = self._opened.pop(event.task, event)
            ended = event.wall
        error = event.error or {}
        meta: dict[str, Any] = {
            "task_name": event.task,
            "start_time": _iso(opened.wall),
            "end_time": _iso(ended),
            "input_digest": opened.input_digest,
            "output_digest": event.output_digest,
            "error_message": error.get("message"),
        }
        canonical = event.canonical_text()
        return canonical[:-1] + ',"meta":' + json.dumps(meta, ensure_ascii=False) + "}"
