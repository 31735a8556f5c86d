"""Errors of the records layer: one clear line each."""

from __future__ import annotations

from ..engine.errors import HarnessError

__all__ = ["RecordError", "StoreError"]


class RecordError(HarnessError, ValueError):
    """A run export or the run store is unusable; the message says what is wrong."""


class StoreError(RecordError):
    """The run store cannot be opened, read or written (every ``sqlite3`` error becomes one),
    or a stored run cannot be used as asked (unknown, still running elsewhere)."""
