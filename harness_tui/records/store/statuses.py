"""The statuses a stored run can be read as (docs/formats.md, "Run store")."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["FINISHED", "RESUMABLE", "StoredStatus"]


class StoredStatus(StrEnum):
    """A stored run's status: the engine's run statuses once it ended, and while it has not,
    who (if anyone) is running it. Listed in the order a filter offers them."""

    RUNNING = "running"
    """A live process holds the run's lease."""
    INTERRUPTED = "interrupted"
    """Stored ``running``, but the lease is gone: the process died. Resumable."""
    ABANDONED = "abandoned"
    """Left unfinished in the workbench. Resumable."""
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


RESUMABLE = frozenset({StoredStatus.INTERRUPTED, StoredStatus.ABANDONED})
"""Runs left unfinished, which ``resume`` takes."""
FINISHED = frozenset({StoredStatus.SUCCEEDED, StoredStatus.FAILED, StoredStatus.CANCELLED})
"""Runs whose end is recorded."""
