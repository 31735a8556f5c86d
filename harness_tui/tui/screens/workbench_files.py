"""The workbench's file actions: payload, export, open, reload and diff (a mixin of
:class:`~harness_tui.tui.screens.workbench.WorkbenchScreen`, kept apart to stay readable)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.screen import Screen

from ...records.export import atomic_write
from ...records.report_html import REPORT_SUFFIXES, render_report
from ...workflow.loader import diff_workflows
from ...workflow.payload import Payload
from ..intents import IntentQueue
from ..modals.export import ExportModal
from ..modals.open_file import OpenFileModal
from ..modals.payload import PayloadModal
from ..sanitize import visible
from ..session import OpenError, Session, open_session


class FileActions(Screen[None]):
    """Actions that change what is open. Expects the workbench's attributes and helpers."""

    session: Session | None
    error: OpenError | None
    selected: str | None
    _run_active: bool

    def _open(self, path: str, payload: Payload | None) -> Session:
        """Open a file with the app's clock, run store, workers and executor."""
        app: Any = self.app
        return open_session(
            path,
            payload,
            clock=app.clock,
            store=app.store,
            workers=app.run_workers,
            executor=app.run_executor,
        )

    if TYPE_CHECKING:
        _intents: IntentQueue

        def _show_session(self) -> None: ...
        def _show_errors(self, error: OpenError | None) -> None: ...
        def submit(self, name: str, start: Callable[[], bool]) -> None: ...
        def _replace_run(self, name: str, start: Callable[[], bool]) -> None: ...

    # Each action is an intent: it waits for a drive in progress (asking first when it would
    # throw the run away) and, when it opens a modal, ends when the modal closes.

    def action_edit_payload(self) -> None:
        if self.session is None or self.session.replay:
            self.notify("a replayed run keeps its recorded payload", severity="warning")
            return
        self._replace_run("change the payload", self._edit_payload_now)

    def _edit_payload_now(self) -> bool:
        if self.session is None:
            return False

        def apply(value: Any) -> None:
            if value is not PayloadModal.CANCELLED and self.session is not None:
                self.session.set_payload(value)
                self._show_session()
                self.notify(f"payload applied; replanned ({len(self.session.run.plan)} tasks)")
            self._intents.done()

        self.app.push_screen(PayloadModal(self.session.payload), apply)
        return True

    def action_export(self) -> None:
        if self.session is not None:
            self.submit("export", self._export_now)

    def _export_now(self) -> bool:
        if self.session is None:
            return False
        default = Path.cwd() / self.session.default_export_name()

        def write(path: Path | None) -> None:
            if path is not None and self.session is not None:
                record = self.session.export_record()
                fmt = REPORT_SUFFIXES.get(path.suffix.lower())
                try:
                    if fmt is None:
                        record.write(path)
                    else:
                        source = self.session.default_export_name()
                        atomic_write(path, render_report(record, fmt, source))
                except OSError as exc:
                    self.notify(f"cannot write {path}: {exc.strerror}", severity="error")
                else:
                    what = "exported" if fmt is None else f"wrote the {fmt} report"
                    self.notify(f"{what} {path}", title="Export")
            self._intents.done()

        self.app.push_screen(ExportModal(default), write)
        return True

    def action_open(self) -> None:
        self._replace_run("open another file", self._open_now)

    def _open_now(self) -> bool:
        def opened(path: Path | None) -> None:
            if path is not None:
                self.open_path(str(path))
            self._intents.done()

        self.app.push_screen(OpenFileModal(), opened)
        return True

    def open_path(self, path: str, payload: Payload | None = None) -> None:
        """Open a file in place of the current session; errors are shown, never raised."""
        try:
            session = self._open(path, payload)
        except OpenError as exc:
            if self.session is None:
                self.error = exc
                self._show_errors(exc)
            else:
                self.notify(
                    "\n".join(visible(line) for line in exc.lines[:8]),  # a problem a line
                    title=f"Cannot open {path}",
                    severity="error",
                    timeout=10,
                )
            return
        if self.session is not None:
            self.session.close()
        self.session, self.error, self.selected = session, None, None
        self._show_session()

    def action_reload(self) -> None:
        self._replace_run("reload", self._reload_now)

    def _reload_now(self) -> bool:
        self._reload()
        return False

    def _reload(self) -> None:
        session = self.session
        if session is None:
            if self.error is not None:
                self.open_path(self.error.path)
            return
        if session.replay:
            self.notify("replay mode: the export cannot change", severity="warning")
            return
        path = session.source_path or session.workflow.path
        try:
            fresh = self._open(path, Payload(session.payload))
        except OpenError as exc:
            self.notify(
                "\n".join(exc.lines[:8]), title=f"{path} has errors", severity="error", timeout=10
            )
            return
        change = diff_workflows(session.workflow, session.payload, fresh.workflow, fresh.payload)
        fresh.breakpoints = {t for t in session.breakpoints if t in fresh.workflow.graph}
        fresh.break_on_failure = session.break_on_failure
        session.close()
        self.session = fresh
        self._show_session()
        summary = "plan unchanged" if change.identical else change.summary_line()
        self.notify(summary, title=f"Reloaded {Path(path).name}")

    def action_diff(self) -> None:
        if self.session is not None:
            self.submit("diff", self._diff_now)

    def _diff_now(self) -> bool:
        from .diff import open_diff_prompt

        open_diff_prompt(self)
        return False
