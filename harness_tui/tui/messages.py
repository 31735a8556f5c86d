"""App-wide facts posted by the run worker (past tense) and intents (``...Requested``)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from ..engine.events import TraceEvent


@dataclass
class StepFinished(Message):
    """Events produced by one step, or by several steps coalesced while continuing."""

    events: list[TraceEvent]


@dataclass
class RunPaused(Message):
    """The run worker stopped before the end: ``breakpoint``, ``failure``, ``paused`` or
    ``step`` (a single step is done)."""

    reason: str
    task: str | None


@dataclass
class RunCompleted(Message):
    """The run reached its end (succeeded, failed or cancelled)."""

    status: str


@dataclass
class RunHeld(Message):
    """Break on failure holds the run at a failed attempt (before any retry or fallback)."""

    event: TraceEvent
