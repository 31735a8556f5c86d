"""Which run store the app records live runs in, and which one the run browser shows.

No Textual here. Recording makes the store when it is missing; browsing never does.
"""

from __future__ import annotations

from pathlib import Path

from ..records.errors import RecordError
from ..records.store import RunStore

__all__ = ["browsed_store", "recording_store"]


def recording_store(path: Path) -> tuple[RunStore | None, str | None]:
    """The store live runs are recorded in (made if missing), or why runs are not recorded;
    with the damage found on opening, if any (recorded all the same, in what SQLite could
    recover)."""
    try:
        store = RunStore(path)
    except RecordError as exc:
        return None, f"runs are not recorded: {exc}"
    return store, store.damage


def browsed_store(path: Path) -> tuple[RunStore | None, str | None]:
    """The store the browser shows, never created: None while there is none at ``path``.
    Opened for writing (resume and delete write), else read-only (a store on a read-only
    mount still lists its runs)."""
    if not path.exists():
        return None, None
    try:
        store = RunStore(path, create=False, write=True)
    except RecordError:
        try:
            store = RunStore(path, create=False, write=False)
        except RecordError as exc:
            return None, f"cannot read the run store: {exc}"
    return store, store.damage
