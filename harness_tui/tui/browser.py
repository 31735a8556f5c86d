"""The run browser's model: which runs are listed, which are marked, and what each key may do.

No Textual here (the screen in ``screens/run_browser.py`` renders it; tests drive it without an
app). It reads the store a page at a time (``RunStore.browse``),
so a store of 10,000 runs opens as fast as a small one, and says for every action whether it
can act now (:class:`BrowserState`, read by the actions' ``why_not``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path

from ..records.export import RunRecord
from ..records.runs.live import LiveRun
from ..records.runs.settings import DEFAULT_SETTINGS, RunSettings
from ..records.store import RunStore, StoreError
from ..records.store.queries import STATUSES, RunQuery, RunRow, Sort
from ..records.store.statuses import FINISHED, RESUMABLE

__all__ = ["PAGE_ROWS", "BrowserState", "OpenMode", "RunBrowser", "open_mode"]

PAGE_ROWS = 60
"""Rows read at a time (a tall terminal's screenful): the list reads the next page when the
cursor reaches its last row."""


class OpenMode(StrEnum):
    """How Enter opens a run."""

    REPLAY = "replay"  # finished: stepped through from its record, no code runs
    RESUME = "resume"  # interrupted or abandoned: goes on where it stopped (asked first)
    RUNNING = "running"  # a live process holds it: not opened here


def open_mode(row: RunRow) -> OpenMode:
    """How ``row`` opens: a finished run replays, an unfinished one resumes."""
    if row.status in FINISHED:
        return OpenMode.REPLAY
    if row.status in RESUMABLE:
        return OpenMode.RESUME
    return OpenMode.RUNNING


@dataclass(frozen=True, slots=True)
class BrowserState:
    """What the browser's actions depend on."""

    store: bool  # a store is open (there is something to list)
    selected: RunRow | None  # the run under the cursor
    marked: int  # runs marked for a comparison


class RunBrowser:
    """The runs of one store as the browser lists them: a query, the rows read so far, marks.

    Args:
        store: the store, or None when there is none at ``where`` yet (browsing never
            creates one).
        where: the store's path, to say which store is shown.
    """

    def __init__(
        self,
        store: RunStore | None,
        where: Path,
        settings: RunSettings = DEFAULT_SETTINGS,
        page_rows: int = PAGE_ROWS,
    ) -> None:
        self.store = store
        self.where = where
        self.settings = settings  # how a resumed run goes on
        self.query = RunQuery(limit=page_rows)
        self.rows: list[RunRow] = []
        self.total = 0
        self.marks: list[str] = []  # at most two run ids, oldest mark first

    # -- reading ----------------------------------------------------------------------------

    def reload(self) -> None:
        """Read the first page of the query again (after a change, or coming back)."""
        self.rows, self.total = self._page(0)

    def more(self) -> bool:
        """Read the next page, if any; True when rows were added."""
        if len(self.rows) >= self.total:
            return False
        rows, self.total = self._page(len(self.rows))
        self.rows.extend(rows)
        return bool(rows)

    def _page(self, offset: int) -> tuple[list[RunRow], int]:
        if self.store is None:
            return [], 0
        return self.store.browse(replace(self.query, offset=offset))

    # -- the query --------------------------------------------------------------------------

    @property
    def status_filter(self) -> str | None:
        """The one status shown, or None for every run."""
        return next(iter(self.query.statuses)) if self.query.statuses else None

    def cycle_status(self) -> str | None:
        """Show the next status only (every run, then each status in turn); the one now."""
        order: list[str | None] = [None, *STATUSES]
        chosen = order[(order.index(self.status_filter) + 1) % len(order)]
        self.query = replace(
            self.query, statuses=frozenset() if chosen is None else frozenset({chosen})
        )
        self.reload()
        return chosen

    def filter_text(self, text: str) -> None:
        """Only runs whose id, workflow or run digest contains ``text`` ("" shows all)."""
        self.query = replace(self.query, text=text.strip())
        self.reload()

    def cycle_sort(self) -> Sort:
        """Order by the next column (started, workflow, status, duration)."""
        order = list(Sort)
        chosen = order[(order.index(self.query.sort) + 1) % len(order)]
        # Newest and longest first; names and statuses A to Z.
        descending = chosen in (Sort.STARTED, Sort.DURATION)
        self.query = replace(self.query, sort=chosen, descending=descending)
        self.reload()
        return chosen

    def flip_order(self) -> bool:
        """Reverse the order; True when it is now descending."""
        self.query = replace(self.query, descending=not self.query.descending)
        self.reload()
        return self.query.descending

    def describe(self) -> str:
        """The query in words, for the title: ``failed · "etl" · by duration, longest first``."""
        parts = [self.status_filter or "all statuses"]
        if self.query.text:
            parts.append(f'"{self.query.text}"')
        way = {
            Sort.STARTED: ("newest first", "oldest first"),
            Sort.WORKFLOW: ("Z to A", "A to Z"),
            Sort.STATUS: ("Z to A", "A to Z"),
            Sort.DURATION: ("longest first", "shortest first"),
        }[self.query.sort][0 if self.query.descending else 1]
        parts.append(f"by {self.query.sort.value}, {way}")
        return " · ".join(parts)

    # -- marks and state --------------------------------------------------------------------

    def toggle_mark(self, run_id: str) -> bool:
        """Mark a run for a comparison, or unmark it; a third mark replaces the oldest. True
        when it is marked now."""
        if run_id in self.marks:
            self.marks.remove(run_id)
            return False
        self.marks = [*self.marks[-1:], run_id]
        return True

    def state(self, index: int | None) -> BrowserState:
        selected = self.rows[index] if index is not None and 0 <= index < len(self.rows) else None
        return BrowserState(self.store is not None, selected, len(self.marks))

    # -- acting on runs ---------------------------------------------------------------------

    def export(self, run_id: str) -> RunRecord:
        """A run as an export (no code runs).

        Raises:
            RecordError: the store cannot read it (a :class:`StoreError`), or it is damaged.
        """
        if self.store is None:
            raise StoreError(f"{self.where}: no run store there")
        return self.store.export(run_id)

    def resume(self, run_id: str) -> LiveRun:
        """Take an interrupted or abandoned run back, to go on where it stopped.

        Raises:
            StoreError: unknown, or taken meanwhile.
            ResumeError: its stored events do not fit its workflow.
        """
        if self.store is None:
            raise StoreError(f"{self.where}: no run store there")
        return LiveRun.resume(run_id, replace(self.settings, store=self.store))

    def delete(self, run_id: str) -> None:
        """Delete a run (refused while a live lease holds it) and read the page again.

        Raises:
            StoreError: see :meth:`~harness_tui.records.store.run_store.RunStore.delete`.
        """
        if self.store is None:
            raise StoreError(f"{self.where}: no run store there")
        self.store.delete(run_id)
        if run_id in self.marks:
            self.marks.remove(run_id)
        self.reload()
