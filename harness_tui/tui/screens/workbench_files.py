"""The workbench's file actions: payload, export, open, reload and diff (a mixin of
:class:`~harness_tui.tui.screens.workbench.WorkbenchScreen`, kept apart to stay readable)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.screen import Screen

from ...workflow.payload import Payload
from ..modals.export import ExportModal
from ..modals.open_file import OpenFileModal
from ..modals.payload import PayloadModal
from ..session import OpenError, Session, open_session


class FileActions(Screen[None]):
    """Actions that change what is open. Expects the workbench's attributes and helpers."""

    session: Session | None
    error: OpenError | None
    selected: str | None
    _run_active: bool

    def _open(self, path: str, payload: Payload | None) -> Session:
        """Open a file with the app's clock and run store."""
        app: Any = self.app
        return open_session(path, payload, clock=app.clock, store=app.store)

    if TYPE_CHECKING:

        def _show_session(self) -> None: ...
        def _show_errors(self, error: OpenError | None) -> None: ...

    def _busy(self) -> bool:
        """True (and says so) while a run is executing: what is open cannot change now."""
        if self._run_active:
            self.notify("the run is executing: pause it first (p)", severity="warning")
        return self._run_active

    def action_edit_payload(self) -> None:
        if self._busy():
            return
        if self.session is None or self.session.replay:
            self.notify("a replayed run keeps its recorded payload", severity="warning")
            return

        def apply(value: Any) -> None:
            if value is PayloadModal.CANCELLED or self.session is None:
                return
            self.session.set_payload(value)
            self._show_session()
            self.notify(f"payload applied; replanned ({len(self.session.run.plan)} tasks)")

        self.app.push_screen(PayloadModal(self.session.payload), apply)

    def action_export(self) -> None:
        if self.session is None or self._busy():
            return
        default = Path.cwd() / self.session.default_export_name()

        def write(path: Path | None) -> None:
            if path is None or self.session is None:
                return
            try:
                self.session.export_record().write(path)
            except OSError as exc:
                self.notify(f"cannot write {path}: {exc.strerror}", severity="error")
                return
            self.notify(f"exported {path}", title="Export")

        self.app.push_screen(ExportModal(default), write)

    def action_open(self) -> None:
        def opened(path: Path | None) -> None:
            if path is not None:
                self.open_path(str(path))

        self.app.push_screen(OpenFileModal(), opened)

    def open_path(self, path: str, payload: Payload | None = None) -> None:
        """Open a file in place of the current session; errors are shown, never raised."""
        if self._busy():
            return
        try:
            session = self._open(path, payload)
        except OpenError as exc:
            if self.session is None:
                self.error = exc
                self._show_errors(exc)
            else:
                self.notify(
                    "\n".join(exc.lines[:8]),
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
        if self._busy():
            return
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
        from ...engine.diff import plan_diff

        change = plan_diff(
            session.workflow.graph, session.payload, fresh.workflow.graph, fresh.payload
        )
        fresh.breakpoints = {t for t in session.breakpoints if t in fresh.workflow.graph}
        fresh.break_on_failure = session.break_on_failure
        session.close()
        self.session = fresh
        self._show_session()
        summary = "plan unchanged" if change.identical else change.summary_line()
        self.notify(summary, title=f"Reloaded {Path(path).name}")

    def action_diff(self) -> None:
        if self.session is None or self._busy():
            return
        from .diff import open_diff_prompt

        open_diff_prompt(self)
