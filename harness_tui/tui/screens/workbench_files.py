"""The workbench's file actions: payload, export, open, reload and diff.

Each is an intent of the run controller: it waits for a drive in progress (asking first when it
would throw the run away) and, when it opens a modal, ends when the modal closes.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...files import atomic_write
from ...records.export import RunRecord
from ...records.reports.html import REPORT_SUFFIXES, render_report
from ...workflow.limits import current
from ...workflow.loader import diff_workflows
from ...workflow.payload import Payload
from ..modals.export import ExportModal
from ..modals.open_file import OpenFileModal
from ..modals.payload import PayloadModal
from ..sanitize import visible
from ..session import OpenError, Session, open_session
from .workbench_host import Workbench
from .workbench_run import RunActions

Opener = Callable[[str, Payload | None], Session]
"""Opens a file as a session with the app's settings (clock, run store, workers, executor)."""


def write_export(record: RunRecord, path: Path, source: str) -> tuple[str, bool]:
    """Write ``record`` to ``path``: the export, or a report for a name ending in .md or
    .html (``source``: the export's name, which the report cites). What to say, and whether
    it was written."""
    fmt = REPORT_SUFFIXES.get(path.suffix.lower())
    try:
        if fmt is None:
            record.write(path)
        else:
            atomic_write(path, render_report(record, fmt, source))
    except OSError as exc:
        return f"cannot write {path}: {exc.strerror}", False
    return f"{'exported' if fmt is None else f'wrote the {fmt} report'} {path}", True


class FileActions:
    """Actions that change what is open."""

    def __init__(self, screen: Workbench, runs: RunActions, opener: Opener | None = None) -> None:
        self.screen = screen
        self.runs = runs
        self.controller = screen.controller
        self.opener: Opener = opener or (lambda path, payload: open_session(path, payload))

    def handlers(self) -> dict[str, Callable[[], object]]:
        """What each of these actions' ids runs."""
        runs = self.runs
        return {
            "open-file": lambda: runs.replace_run("open another file", self._open_now),
            "reload-workflow": lambda: runs.replace_run("reload", self._reload_now),
            "export-run": self.export,
            "edit-payload": lambda: runs.replace_run("change the payload", self._edit_payload_now),
            "diff-workflow": self.diff,
        }

    # A run held at a failed attempt waits on the user: nothing changes under a dialog, so
    # what only reads the run acts at once instead of queueing behind the hold.

    def export(self) -> None:
        if self.controller.held is not None:
            self._export(then=lambda: None)
        else:
            self.runs.submit("export", lambda: self._export(then=self.controller.done))

    def diff(self) -> None:
        if self.controller.held is not None:
            self._diff_now()
        else:
            self.runs.submit("diff", self._diff_now)

    def _edit_payload_now(self) -> bool:
        session = self.controller.session
        if session is None:
            return False

        def apply(value: Any) -> None:
            if value is not PayloadModal.CANCELLED and self.controller.session is not None:
                self.controller.session.set_payload(value)
                self.screen.show_session()
                tasks = len(self.controller.session.run.plan)
                self.screen.notify(f"payload applied; replanned ({tasks} tasks)")
            self.controller.done()

        self.screen.app.push_screen(PayloadModal(session.payload), apply)
        return True

    def _export(self, then: Callable[[], None]) -> bool:
        """Ask where, then write; ``then`` runs once the dialog closes."""
        session = self.controller.session
        if session is None:
            return False
        web = self.screen.app.is_web  # served: the file goes to the browser, not the server
        default = Path(session.default_export_name())
        default = default if web else Path.cwd() / default

        def write(path: Path | None) -> None:
            if path is not None:
                record = session.export_record()
                source = session.default_export_name()
                if web:
                    said, ok = self._deliver(record, path.name, source)
                else:
                    said, ok = write_export(record, path, source)
                if ok:
                    self.screen.notify(said, title="Export")
                else:
                    self.screen.notify(said, severity="error")
            then()

        self.screen.app.push_screen(ExportModal(default), write)
        return True

    def _deliver(self, record: RunRecord, name: str, source: str) -> tuple[str, bool]:
        """A served workbench sends the export or report to the browser as a download, with
        the text that :meth:`RunRecord.write` or the report would write (logs left out when
        they would take the export over the reader's size limit). What to say, and whether
        it was sent."""
        fmt = REPORT_SUFFIXES.get(Path(name).suffix.lower())
        if fmt is None:
            text = record.within(current().export_bytes)[1]
        else:
            text = render_report(record, fmt, source)
        try:
            self.screen.app.deliver_binary(io.BytesIO(text.encode("utf-8")), save_filename=name)
        except OSError as exc:
            return f"cannot send {name}: {exc.strerror}", False
        what = "exported" if fmt is None else f"wrote the {fmt} report"
        return f"{what} {name} (a download)", True

    def _open_now(self) -> bool:
        def opened(path: Path | None) -> None:
            if path is not None:
                self.open_path(str(path))
            self.controller.done()

        self.screen.app.push_screen(OpenFileModal(), opened)
        return True

    def open_path(self, path: str, payload: Payload | None = None) -> None:
        """Open a file in place of the current session; errors are shown, never raised."""
        try:
            session = self.opener(path, payload)
        except OpenError as exc:
            if self.controller.session is None:
                self.screen.error = exc
                self.screen.show_errors(exc)
            else:
                self.screen.notify(
                    "\n".join(visible(line) for line in exc.lines[:8]),  # a problem a line
                    title=f"Cannot open {path}",
                    severity="error",
                    timeout=10,
                )
            return
        self.controller.replace(session)
        self.screen.error = None
        self.screen.panes.selected = None
        self.screen.show_session()

    def _reload_now(self) -> bool:
        session = self.controller.session
        if session is None:
            if self.screen.error is not None:
                self.open_path(self.screen.error.path)
            return False
        if session.replay:
            self.screen.notify("replay mode: the export cannot change", severity="warning")
            return False
        path = session.source_path or session.workflow.path
        try:
            fresh = self.opener(path, Payload(session.payload))
        except OpenError as exc:
            self.screen.notify(
                "\n".join(exc.lines[:8]), title=f"{path} has errors", severity="error", timeout=10
            )
            return False
        change = diff_workflows(session.workflow, session.payload, fresh.workflow, fresh.payload)
        fresh.breakpoints = {t for t in session.breakpoints if t in fresh.workflow.graph}
        fresh.break_on_failure = session.break_on_failure
        self.controller.replace(fresh)
        self.screen.show_session()
        summary = "plan unchanged" if change.identical else change.summary_line()
        self.screen.notify(summary, title=f"Reloaded {Path(path).name}")
        return False

    def _diff_now(self) -> bool:
        from .diff import open_diff_prompt

        open_diff_prompt(self.screen)
        return False
