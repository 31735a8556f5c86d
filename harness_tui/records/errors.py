"""Errors of the records layer: one clear line each."""

from __future__ import annotations

__all__ = ["RecordError"]


class RecordError(ValueError):
    """A run export or the run store is unusable; the message says what is wrong."""
