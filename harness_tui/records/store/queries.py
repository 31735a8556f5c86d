"""Browsing a run store: which runs, in which order, one page at a time.

A :class:`RunQuery` says what the run browser wants (statuses, a piece of text, a sort, a
page); :class:`RunRow` is one run as a list shows it. The SQL lives in
:meth:`~.store.RunStore.browse`, which reads only the page asked for, so a store of 10,000
runs opens as fast as one of ten (the index of schema 7 keeps the default order cheap).

Statuses are those people read (:func:`~.store.effective_status`): a run stored ``running``
whose lease is gone is ``interrupted``. Only the few runs stored ``running`` need their lease
looked at; every other status is a plain column.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from enum import StrEnum

from .statuses import StoredStatus

__all__ = ["STATUSES", "RunQuery", "RunRow", "Sort"]

STATUSES = tuple(StoredStatus)
"""Every status a stored run can be read as, in the order a filter offers them."""


class Sort(StrEnum):
    """What a run list is ordered by (newest, longest, or A to Z first by default)."""

    STARTED = "started"
    WORKFLOW = "workflow"
    STATUS = "status"
    DURATION = "duration"


@dataclass(frozen=True, slots=True)
class RunQuery:
    """Which runs to list.

    Attributes:
        statuses: only runs read as one of these (empty: every run).
        text: only runs whose id, workflow name, workflow path or run digest contains it
            (ASCII letters in any case).
        sort: the order; ``descending`` newest (or longest, or Z) first.
        offset: rows to skip; ``limit`` rows to return at most.
    """

    statuses: frozenset[str] = field(default_factory=frozenset)
    text: str = ""
    sort: Sort = Sort.STARTED
    descending: bool = True
    offset: int = 0
    limit: int = 200


@dataclass(frozen=True, slots=True)
class RunRow:
    """One stored run as a list shows it.

    ``duration`` is seconds from start to end for a run that ended (finished or abandoned),
    else None; ``lease_live`` says a live process holds the run now (it cannot be deleted or
    resumed).
    """

    id: str
    workflow: str
    path: str
    payload_digest: str
    status: str
    started_at: str
    ended_at: str
    tasks_done: int
    tasks_total: int
    run_digest: str | None
    lease_live: bool

    @property
    def duration(self) -> float | None:
        if self.status in (StoredStatus.RUNNING, StoredStatus.INTERRUPTED):
            return None
        started, ended = _epoch(self.started_at), _epoch(self.ended_at)
        if started is None or ended is None:
            return None
        return max(ended - started, 0.0)


def _epoch(iso: str) -> float | None:
    """``2026-11-29T10:15:00Z`` (the store's timestamps) as epoch seconds, or None."""
    try:
        return float(
            time.mktime(time.strptime(iso, "%Y-%m-%dT%H:%M:%SZ")) - time.mktime(time.gmtime(0))
        )
    except (ValueError, OverflowError):
        return None


def like_pattern(text: str) -> str:
    """``text`` as a LIKE pattern matching it anywhere (its ``%``, ``_`` and ``\\`` taken
    literally, with ``\\`` as the escape)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def browse_filter(
    query: RunQuery, live: set[str], dead: set[str]
) -> tuple[str, tuple[object, ...]]:
    """The WHERE clause (with its parameters) of :meth:`RunStore.browse`: ``live`` and
    ``dead`` are the ids of the runs stored ``running`` whose lease holds, or is gone."""
    clauses: list[str] = []
    params: list[object] = []
    if query.statuses:
        plain = sorted(query.statuses - {StoredStatus.RUNNING})  # never a row stored running
        ids = sorted(
            (live if StoredStatus.RUNNING in query.statuses else set())
            | (dead if StoredStatus.INTERRUPTED in query.statuses else set())
        )
        marks = ", ".join("?" * len(plain))
        # One parameter for any number of ids (a store may hold many dead leases).
        clauses.append(f"(status IN ({marks}) OR id IN (SELECT value FROM json_each(?)))")
        params.extend([*plain, json.dumps(ids)])
    if query.text:
        pattern = like_pattern(query.text)
        columns = ("id", "workflow_name", "workflow_path", "run_digest")
        clauses.append("(" + " OR ".join(f"{c} LIKE ? ESCAPE '\\'" for c in columns) + ")")
        params.extend([pattern] * len(columns))
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), tuple(params)


_DURATION = (
    f"CASE WHEN status IN ('{StoredStatus.RUNNING}', '{StoredStatus.INTERRUPTED}') THEN NULL "
    "ELSE julianday(updated_at) - julianday(started_at) END"
)


def browse_order(query: RunQuery) -> str:
    """The ORDER BY of :meth:`RunStore.browse`: the sort's column, then newest first."""
    way = "DESC" if query.descending else "ASC"
    first = {
        Sort.STARTED: None,
        Sort.WORKFLOW: f"workflow_name {way}",
        Sort.STATUS: f"status {way}",
        Sort.DURATION: f"{_DURATION} {way} NULLS LAST",
    }[query.sort]
    newest = f"started_at {way}, id {way}" if first is None else "started_at DESC, id DESC"
    return newest if first is None else f"{first}, {newest}"
