"""RunBrowserScreen: every run in the store, filtered and sorted; open, compare, export, delete.

The screen renders a :class:`~harness_tui.tui.browser.RunBrowser` (the headless model: the
query, the rows read so far, the marks, what each action may do) and carries out the actions
of :data:`~harness_tui.tui.actions.BROWSER`. Opening a run hands a session to the app, which
shows it in a workbench on top of this screen (``g`` comes back).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import DataTable, Footer, Input, Static

from ...engine.errors import HarnessError
from ...records.export import RunRecord, export_name
from ...records.runs.live import LiveRun
from ...records.store.queries import RunRow
from ...records.store.statuses import StoredStatus
from ..actions import BROWSER, READ_ONLY, Action, routed_bindings
from ..browser import OpenMode, RunBrowser, open_mode
from ..modals.confirm import ConfirmModal
from ..modals.export import ExportModal
from ..modals.find_task import FindTaskModal
from ..sanitize import shown, visible
from ..widgets.status_styles import role_colour
from .acting import ActingScreen
from .diff import record_diff_screen
from .workbench_files import write_export

RUN_STATUS_ROLES: dict[str, str] = {
    StoredStatus.RUNNING: "accent",
    StoredStatus.INTERRUPTED: "warning",
    StoredStatus.ABANDONED: "secondary",
    StoredStatus.SUCCEEDED: "success",
    StoredStatus.FAILED: "error",
    StoredStatus.CANCELLED: "warning",
}
"""The theme variable each run status is drawn in."""

COLUMNS = ("", "started", "workflow", "status", "took", "done", "digest", "id")

NARROW = frozenset({"started"})
"""Left out when the columns do not fit: a run's id begins with its start (UTC), and the id
is what ``resume`` and ``rerun`` need, so it stays whole."""

MIN_WORKFLOW = 8
"""The least a workflow's name is given (cut with ``…`` past it) before a column goes."""


def layout(widths: dict[str, int], room: int) -> tuple[tuple[str, ...], int]:
    """The columns shown in ``room`` cells and the workflow column's width, given each
    column's widest cell (``widths``; a cell is padded one on each side): every column when
    they fit, else the workflow's name cut, else without :data:`NARROW`."""
    for columns in (COLUMNS, tuple(c for c in COLUMNS if c not in NARROW)):
        fixed = sum(widths[c] + 2 for c in columns if c != "workflow") + 2  # the name's padding
        width = min(widths["workflow"], room - fixed)
        if width >= MIN_WORKFLOW or width >= widths["workflow"]:
            return columns, width
    return columns, MIN_WORKFLOW


def cut(text: str, width: int) -> str:
    """``text`` in ``width`` cells: cut with ``…`` when longer."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


Opened = RunRecord | LiveRun | None
"""What the browser hands the app to show in a workbench: a finished run's record (replayed),
a resumed run, or nothing (the workbench's open dialog)."""


def duration_text(seconds: float | None) -> str:
    """``< 1 s``, ``12 s``, ``1 min 30 s``, ``3 h 5 min``; ``-`` when unknown. Whole seconds:
    the store's times are to the second, a decimal would be made up."""
    if seconds is None:
        return "-"
    if seconds < 1:
        return "< 1 s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    whole = int(seconds)
    if whole < 3600:
        return f"{whole // 60} min {whole % 60} s"
    return f"{whole // 3600} h {whole % 3600 // 60} min"


class RunBrowserScreen(ActingScreen):
    """The list of runs: the first screen of ``harness-tui`` without a file."""

    ACTIONS = BROWSER
    BINDINGS = routed_bindings(BROWSER)
    AUTO_FOCUS = "#browser-runs"

    def __init__(
        self,
        browser: RunBrowser,
        show: Callable[[Opened, str | None], object],
        read_only: bool = False,
    ) -> None:
        """``show(opened, task)`` opens a workbench on what was opened; with ``task``, a
        replayed run is re-run from that task (asked first, as in the workbench).
        ``read_only`` refuses what runs code: re-running, resuming, opening a file."""
        super().__init__()
        self.browser = browser
        self.show = show
        self.read_only = read_only

    def compose(self) -> ComposeResult:
        yield Static(id="browser-title")
        yield Input(placeholder="part of an id, a workflow or a digest", id="browser-filter")
        yield DataTable(id="browser-runs", cursor_type="row", zebra_stripes=True)
        yield Static(id="browser-empty")
        yield Footer()

    def on_mount(self) -> None:
        self.shown: tuple[tuple[str, int], ...] = ()  # the columns drawn, with their widths
        self.query_one("#browser-filter").display = False
        self.reload()

    def on_resize(self) -> None:
        if self.is_mounted and self.shown:
            self._redraw(self.selected.id if self.selected else None)
            self._show_title()

    def on_screen_resume(self) -> None:
        # Back from a run: its status, and perhaps the store itself, changed.
        if self.is_mounted and self.table.columns:
            self.reload()

    def _layout(self) -> tuple[tuple[str, int], ...]:
        """The columns that fit the screen now, with their widths, for the rows read so far
        (widths given, not measured by the table: it measures after drawing, and a redraw
        at another size would show the rows at the old widths until each was drawn again)."""
        texts = [self._texts(row) for row in self.browser.rows]
        widths = {c: max([len(c), *(len(t[i]) for t in texts)]) for i, c in enumerate(COLUMNS)}
        columns, widths["workflow"] = layout(widths, self.size.width - 2)  # the scrollbar's 2
        return tuple((column, widths[column]) for column in columns)

    def _redraw(self, keep: str | None, force: bool = False) -> None:
        """Draw the rows read so far again, in the columns that fit, when they changed (or
        ``force``); the cursor on the run ``keep`` when it is listed."""
        shown = self._layout()
        if shown == self.shown and not force:
            return
        table = self.table
        if shown == self.shown:  # the same columns: new columns would take a frame more
            table.clear()
        else:
            self.shown = shown
            table.clear(columns=True)
            for column, width in shown:
                table.add_column(column, width=width, key=column or "mark")
        self._add_rows(self.browser.rows)
        index = next((i for i, row in enumerate(self.browser.rows) if row.id == keep), 0)
        if table.row_count:
            table.move_cursor(row=index)

    @property
    def table(self) -> DataTable[Text | str]:
        return self.query_one("#browser-runs", DataTable)

    @property
    def selected(self) -> RunRow | None:
        return self.browser.state(self._cursor()).selected

    def _cursor(self) -> int | None:
        table = self.table
        return table.cursor_row if table.row_count else None

    # -- the action table -------------------------------------------------------------------

    def why_not(self, action: Action) -> str | None:
        state = self.browser.state(self._cursor())
        if self.read_only:
            resumes = state.selected is not None and open_mode(state.selected) is OpenMode.RESUME
            if action.runs_code or (action.id == "runs-open" and resumes):
                return READ_ONLY
        return action.why_not(state)

    # -- rendering --------------------------------------------------------------------------

    def reload(self, keep: str | None = None) -> None:
        """Read the first page again and redraw; the cursor stays on ``keep`` (or the run it
        was on) when that run is still listed."""
        keep = keep or (self.selected.id if self.selected else None)
        try:
            self.browser.reload()
        except HarnessError as exc:
            self.notify(str(exc), title="Run store", severity="error")
        self._redraw(keep, force=True)
        self._show_title()
        self.refresh_bindings()

    def _texts(self, row: RunRow) -> tuple[str, ...]:
        """A row's cells as text, one per column of :data:`COLUMNS` (the name whole)."""
        return (
            "●" if row.id in self.browser.marks else " ",
            row.started_at.replace("T", " ")[:16],
            visible(row.workflow),
            row.status,
            duration_text(row.duration),
            f"{row.tasks_done}/{row.tasks_total}",
            (row.run_digest or "")[:8],
            row.id,
        )

    def _add_rows(self, rows: list[RunRow]) -> None:
        variables = self.app.get_css_variables()
        name_width = dict(self.shown)["workflow"]
        drawn = [COLUMNS.index(column) for column, _ in self.shown]
        for row in rows:
            texts = self._texts(row)
            role = role_colour(variables, RUN_STATUS_ROLES[row.status])
            cells: list[str | Text] = [*texts]
            cells[2] = Text(cut(texts[2], name_width))
            cells[3] = Text(row.status, style=role)
            self.table.add_row(*(cells[i] for i in drawn), key=row.id)

    def _show_title(self) -> None:
        browser = self.browser
        title = Text()
        title.append(" RUNS ", style="bold reverse")
        title.append(f"  {len(browser.rows)} of {browser.total}", style="bold")
        title.append(f" · {browser.describe()}")
        if browser.marks:
            title.append(f" · {len(browser.marks)} marked", style="bold")
        # Last, as far as they fit: how to open a run, then the store's path (its end, the
        # file's name, kept when it is cut); never a hint cut in the middle.
        room = self.size.width - 2 - title.cell_len  # the title's padding
        hint, where = " · enter opens a run", shown(str(browser.where))
        if room >= len(hint):
            title.append(hint, style="dim")
            room -= len(hint) + 3
            if room >= 12:
                title.append(
                    " · " + (where if len(where) <= room else "…" + where[-room + 1 :]), style="dim"
                )
        self.query_one("#browser-title", Static).update(title)
        empty = self.query_one("#browser-empty", Static)
        if browser.store is None:
            empty.update(
                f"No runs recorded yet in {shown(str(browser.where))}.\n\n"
                "o opens a workflow: its runs are recorded there as they happen."
            )
        else:
            empty.update("No run matches: f changes the status shown, / the text.")
        empty.display = not browser.rows
        self.table.display = bool(browser.rows)
        if browser.rows and self.focused is None:
            self.set_focus(self.table)  # hidden while nothing matched, it lost the focus

    def _redraw_mark(self, row: RunRow) -> None:
        self.table.update_cell(row.id, "mark", "●" if row.id in self.browser.marks else " ")

    # -- events -----------------------------------------------------------------------------

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        # The next page is read when the cursor reaches the last row read so far.
        if event.cursor_row >= self.table.row_count - 1:
            before = len(self.browser.rows)
            if self.browser.more():
                if self._layout() == self.shown:
                    self._add_rows(self.browser.rows[before:])
                else:  # a longer name, or a wider cell: the columns change
                    self._redraw(self.selected.id if self.selected else None)
                self._show_title()
        self.refresh_bindings()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.act("runs-open")  # Enter on the table

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.input.display = False
        self.browser.filter_text(event.value)
        self.reload()
        self.table.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        # Filters as the user types: one page is read, whatever the store's size.
        self.browser.filter_text(event.value)
        self.reload()

    # -- actions ----------------------------------------------------------------------------

    def action_open_run(self) -> None:
        row = self.selected
        if row is None:
            return
        if open_mode(row) is OpenMode.REPLAY:
            record = self._export(row)
            if record is not None:
                self.show(record, None)
            return

        def answered(yes: bool | None) -> None:
            if not yes:
                return
            try:
                live = self.browser.resume(row.id)
            except HarnessError as exc:
                self.notify(str(exc), title="Cannot resume", severity="error")
                self.reload()
                return
            self.show(live, None)

        # One short line (the dialog does not wrap at 80 columns); the rest runs now's code.
        question = f"Resume {row.id} ({row.tasks_done}/{row.tasks_total} done)?"
        self.app.push_screen(ConfirmModal(question, "Resume"), answered)

    def _export(self, row: RunRow) -> RunRecord | None:
        try:
            return self.browser.export(row.id)
        except HarnessError as exc:
            self.notify(str(exc), title=f"Cannot read run {row.id}", severity="error")
            return None

    def action_mark(self) -> None:
        row = self.selected
        if row is None:
            return
        before = set(self.browser.marks)
        self.browser.toggle_mark(row.id)
        for other in self.browser.rows:
            if other.id in before ^ set(self.browser.marks):
                self._redraw_mark(other)
        self._show_title()
        self.refresh_bindings()
        if self.table.cursor_row < self.table.row_count - 1:
            self.table.move_cursor(row=self.table.cursor_row + 1)

    def action_compare(self) -> None:
        first, second = self.browser.marks
        records = []
        for run_id in (first, second):
            try:
                records.append(self.browser.export(run_id))
            except HarnessError as exc:
                self.notify(str(exc), title=f"Cannot read run {run_id}", severity="error")
                return
        try:
            screen = record_diff_screen(records[0], records[1])
        except HarnessError as exc:
            self.notify(str(exc), title="Cannot compare", severity="error")
            return
        self.app.push_screen(screen)

    def action_status(self) -> None:
        chosen = self.browser.cycle_status()
        self.reload()
        self.notify(f"showing {chosen or 'every status'}", title="Runs")

    def action_filter(self) -> None:
        field = self.query_one("#browser-filter", Input)
        field.display = True
        self.set_focus(field)  # at once: the next key typed (or pasted) goes to the field

    def action_sort(self) -> None:
        self.browser.cycle_sort()
        self.reload()

    def action_reverse(self) -> None:
        self.browser.flip_order()
        self.reload()

    def action_refresh(self) -> None:
        self.reload()

    def action_rerun(self) -> None:
        row = self.selected
        if row is None:
            return
        record = self._export(row)
        if record is None:
            return

        def chosen(task: str | None) -> None:
            if task is not None:
                self.show(record, task)

        self.app.push_screen(FindTaskModal(record.plan.names), chosen)

    def action_export(self) -> None:
        row = self.selected
        if row is None:
            return
        record = self._export(row)
        if record is None:
            return
        name = export_name(record.workflow.name, record.digests.get("run", row.id))

        def write(path: Path | None) -> None:
            if path is not None:
                said, ok = write_export(record, path, name)
                if ok:
                    self.notify(said, title="Export")
                else:
                    self.notify(said, severity="error")

        self.app.push_screen(ExportModal(Path.cwd() / name), write)

    def action_delete(self) -> None:
        row = self.selected
        if row is None:
            return

        def answered(yes: bool | None) -> None:
            if not yes:
                return
            try:
                self.browser.delete(row.id)
            except HarnessError as exc:
                self.notify(str(exc), title="Not deleted", severity="error")
            else:
                self.notify(f"deleted run {row.id}", title="Runs")
            self.reload()

        question = f"Delete {row.id} ({row.status}) from the store?"
        self.app.push_screen(ConfirmModal(question, "Delete", default_yes=False), answered)

    def action_open_file(self) -> None:
        self.show(None, None)
