"""The run store: every run recorded as it happens, in SQLite.

``schema`` holds the tables and their migrations, ``leases`` who is running a run, ``writer``
the group commit that records a live run, ``rows`` the encoding of a batch of tasks,
``queries`` what the run browser asks for, ``wal`` the check of the write-ahead log, and
``run_store`` :class:`RunStore`, the one door to the file. Nothing outside this package knows
SQL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports

if TYPE_CHECKING:
    from ..errors import StoreError
    from .run_store import RunStore, StoredRun, default_store_path

_LAZY = {
    "RunStore": ".run_store",
    "StoredRun": ".run_store",
    "default_store_path": ".run_store",
    "StoreError": "..errors",
}

__all__ = ["RunStore", "StoreError", "StoredRun", "default_store_path"]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, [])
