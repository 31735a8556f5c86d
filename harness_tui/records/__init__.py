"""Runs at rest: export and import, the run store, live runs, replay and divergence.

Names are imported on first use (the store brings SQLite, exports bring pydantic). The
``replay`` function is ``harness_tui.replay``: here the name is its submodule's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .divergence import Divergence, TraceDiff, trace_diff
    from .errors import RecordError, StoreError
    from .export import RunRecord, atomic_write
    from .live import LiveRun, RunSummary
    from .replay import ReplayReport, replay_run
    from .store import RunStore, StoredRun, default_store_path

_LAZY = {
    "Divergence": ".divergence",
    "TraceDiff": ".divergence",
    "trace_diff": ".divergence",
    "RecordError": ".errors",
    "StoreError": ".errors",
    "RunRecord": ".export",
    "atomic_write": ".export",
    "LiveRun": ".live",
    "RunSummary": ".live",
    "ReplayReport": ".replay",
    "replay_run": ".replay",
    "RunStore": ".store",
    "StoredRun": ".store",
    "default_store_path": ".store",
}

__all__ = [
    "Divergence",
    "LiveRun",
    "RecordError",
    "ReplayReport",
    "RunRecord",
    "RunStore",
    "RunSummary",
    "StoreError",
    "StoredRun",
    "TraceDiff",
    "atomic_write",
    "default_store_path",
    "replay_run",
    "trace_diff",
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, [])
