"""Runs at rest, by concept: ``store/`` (the SQLite run store), ``export/`` (the export
format), ``runs/`` (the run service: live runs, forks, replay, divergence) and ``reports/``.

Names are imported on first use (the store brings SQLite, exports bring pydantic). The
``replay`` function is ``harness_tui.replay``: here the name is its submodule's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .errors import RecordError, StoreError
    from .export import RunRecord
    from .runs.divergence import Divergence, TraceDiff, trace_diff
    from .runs.live import LiveRun, RunSummary
    from .runs.replay import ReplayReport, replay_run
    from .store import RunStore, StoredRun, default_store_path

_LAZY = {
    "Divergence": ".runs.divergence",
    "TraceDiff": ".runs.divergence",
    "trace_diff": ".runs.divergence",
    "RecordError": ".errors",
    "StoreError": ".errors",
    "RunRecord": ".export.record",
    "LiveRun": ".runs.live",
    "RunSummary": ".runs.live",
    "ReplayReport": ".runs.replay",
    "replay_run": ".runs.replay",
    "RunStore": ".store.run_store",
    "StoredRun": ".store.run_store",
    "default_store_path": ".store.run_store",
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
    "default_store_path",
    "replay_run",
    "trace_diff",
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, [])
