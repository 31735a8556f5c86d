"""DiffScreen: two plans side by side, aligned, coloured by kind; the new DAG with changes
marked; the inspector shows the field-level changes of the selected task."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path, PurePath
from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import DataTable, Footer, Input, Label

from ...engine.diff import MARKERS, DiffKind, PlanDiff
from ...engine.scheduler import PlanStep
from ...layout import route_dag
from ...records.export import RunRecord
from ...records.runs.divergence import TaskDivergence, compare_records, count_tasks
from ...workflow.errors import WorkflowError
from ...workflow.loader import Workflow, diff_workflows
from ...workflow.sources import load_source
from ..actions import DIFF, routed_bindings
from ..looks import KIND_LOOKS
from ..sanitize import shown
from ..widgets.dag_view import DagView
from ..widgets.inspector import Inspector
from ..widgets.status_styles import role_colour
from .acting import ActingScreen, fit_footer
from .workbench_host import Workbench


class DiffScreen(ActingScreen):
    """Read-only comparison of two versions; ``n``/``N`` walk the changes."""

    ACTIONS = DIFF
    BINDINGS = routed_bindings(ACTIONS)

    def __init__(
        self,
        old: Workflow,
        old_payload: Any,
        new: Workflow,
        new_payload: Any,
        runs: Sequence[TaskDivergence] | None = None,
    ) -> None:
        """Compare two versions; ``runs`` (two exports compared) adds how each task's part of
        the two traces differs, shown beside its plan change."""
        super().__init__()
        self.old, self.new = old, new
        self.old_payload, self.new_payload = old_payload, new_payload
        self.diff: PlanDiff = diff_workflows(old, old_payload, new, new_payload)
        self.runs = None if runs is None else {d.task: d for d in runs}

    def compose(self) -> ComposeResult:
        yield DiffTitle(str(self.old.path), str(self.new.path), self._summary(), id="diff-title")
        with Vertical(id="diff-panes"):
            with Horizontal(id="diff-top"):
                yield DataTable(id="diff-rows", cursor_type="row", zebra_stripes=True)
            with Horizontal(id="diff-bottom"):
                yield DagView(id="diff-dag")
                yield Inspector(id="diff-inspector")
        yield Footer()

    def _summary(self) -> str:
        summary = self.diff.summary_line() if not self.diff.identical else "plans identical"
        if self.runs is not None:
            count = len(self.runs)
            summary += f" · runs: {count_tasks(count)}" if count else " · runs agree task by task"
        return summary

    def on_resize(self, event: events.Resize) -> None:
        fit_footer(self.query_one(Footer), event.size.width)

    def on_mount(self) -> None:
        variables = self.app.get_css_variables()
        table = self.query_one("#diff-rows", DataTable)
        table.border_title = "old plan │ new plan"
        for key, label in (
            ("m", " "),
            ("old", "old"),  # the paths are in the title: a long one would widen the column
            ("m2", " "),
            ("new", "new"),
            *((("run", "run"),) if self.runs is not None else ()),
        ):
            table.add_column(Text(shown(label)), key=key)
        for i, row in enumerate(self.diff.rows):
            look = KIND_LOOKS.get(row.kind)
            # The kind's colour only: its extra style (bold, strike) is for the DAG's boxes.
            style = role_colour(variables, look.role) if look else ""
            marker = Text(MARKERS[row.kind], style=f"bold {style}".strip())
            cells = [marker, Text(_cell(row.old), style=style), marker,
                     Text(_cell(row.new), style=style)]  # fmt: skip
            if self.runs is not None:
                run = self.runs.get(row.task)
                cells.append(Text(run.kind if run else "", style=style))
            table.add_row(*cells, key=str(i))
        plan = self.diff
        new_steps = [row.new for row in plan.rows if row.new is not None]
        depends = {name: node.depends_on for name, node in self.new.graph.nodes.items()}
        dependents = {name: list(self.new.graph.dependents(name)) for name in self.new.graph.nodes}
        dag = self.query_one(DagView)
        dag.border_title = "new version"
        dag.marks = {change.task: change.kind for change in plan.changes()}
        routing = (
            route_dag([s.task for s in new_steps], {s.task: s.level for s in new_steps}, depends)
            if new_steps
            else None
        )
        dag.show(routing, depends, dependents)
        self.query_one(Inspector).border_title = "changes"
        stops = self._stops()
        if stops:
            self._show_change(self.diff.rows[stops[0]].task)
        table.focus()

    def _stops(self) -> list[int]:
        """The rows ``n`` and ``N`` go to: a task the plans change, or one whose run differs
        (two runs of one plan differ in their runs only)."""
        runs = self.runs or {}
        return [i for i, row in enumerate(self.diff.rows)
                if row.kind is not DiffKind.UNCHANGED or row.task in runs]  # fmt: skip

    def _row_of(self, task: str) -> int:
        for i, row in enumerate(self.diff.rows):
            if row.task == task:
                return i
        return 0

    def _show_change(self, task: str) -> None:
        change = self.diff.tasks[task]
        sections: list[tuple[str, Any]] = [("task", change.to_json())]
        if change.fields:
            sections.append(("fields", change.fields))
        # What changed for every task is shown with each: it is often why the ids changed.
        if self.diff.settings:
            sections.append(("workflow changes", self.diff.settings))
        if self.diff.payload:
            sections.append(("payload changes", self.diff.payload))
        run = self.runs.get(task) if self.runs is not None else None
        if run is not None:
            sections.insert(1, ("run", {"difference": run.describe(), **run.to_json()}))
        self.query_one(Inspector).show(f"{task} · {change.kind}", sections, open_all=True)
        # A removed task is not in the new version's drawing: select nothing there.
        self.query_one(DagView).select(task if task in self.new.graph else None, notify=False)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self._show_change(self.diff.rows[int(event.row_key.value)].task)

    def on_dag_view_task_selected(self, message: DagView.TaskSelected) -> None:
        self.query_one("#diff-rows", DataTable).move_cursor(row=self._row_of(message.task))

    def _jump(self, step: int) -> None:
        table = self.query_one("#diff-rows", DataTable)
        stops = self._stops()
        if not stops:
            self.notify("no changes", title="Diff")
            return
        at = table.cursor_row
        ahead = [i for i in stops if (i - at) * step > 0]
        nearest = min(ahead, key=lambda i: abs(i - at)) if ahead else None
        table.move_cursor(row=nearest if nearest is not None else stops[0 if step > 0 else -1])

    def action_next_change(self) -> None:
        self._jump(1)

    def action_previous_change(self) -> None:
        self._jump(-1)

    def action_toggle_compact(self) -> None:
        mode = self.query_one(DagView).toggle_mode()
        self.notify(f"DAG boxes: {mode}")

    def action_close(self) -> None:
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()
        else:
            self.app.exit()


class DiffTitle(Widget):
    """``DIFF  old → new  summary`` on one line: the summary always shows; the paths shrink
    to their file names (one, when both are the same file), then go, before it is cut."""

    DEFAULT_CSS = """
    DiffTitle { height: 1; background: $panel; padding: 0 1; }
    """

    def __init__(self, old: str, new: str, summary: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.old, self.new, self.summary = old, new, summary

    def render(self) -> Text:
        return diff_title(self.old, self.new, self.summary, self.content_size.width)


def diff_title(old: str, new: str, summary: str, width: int) -> Text:
    """The diff screen's title in ``width`` cells (see :class:`DiffTitle`)."""
    old_name, new_name = PurePath(old).name, PurePath(new).name
    for paths in (
        f"{old}  →  {new}",
        f"{old_name}  →  {new_name}" if old != new else old_name,
        "",
    ):
        text = Text()
        text.append(" DIFF ", style="bold reverse")
        text.append(f"  {shown(paths)}  " if paths else "  ")
        text.append(summary, style="bold")
        if text.cell_len <= width:
            return text
    text.truncate(max(width, 1), overflow="ellipsis")
    return text


def record_diff_screen(old: RunRecord, new: RunRecord) -> DiffScreen:
    """Two run exports: their workflows' plans, and how each task's run differs.

    Raises:
        HarnessError: an export's embedded workflow cannot be read.
    """
    runs = compare_records(old, new).tasks
    return DiffScreen(old.workflow, old.payload, new.workflow, new.payload, runs)


def _cell(step: PlanStep | None) -> str:
    if step is None:
        return ""
    return f"{step.index:>3} {shown(step.task)}  {step.task_id[:8]}  L{step.level}"


class DiffTargetModal(ModalScreen[str | None]):
    """Ask what to compare with: another file, ``path@REV`` or ``@REV`` (this file in git),
    saying which side each version will be."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="modal-cancel")]

    def __init__(self, default: str, sides: str) -> None:
        super().__init__()
        self.default = default
        self.sides = sides

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(
                Text(f"Compare with: a file, path@REV, or @REV for this file in git\n{self.sides}"),
                classes="dialog-title",
            )
            yield Input(self.default, id="diff-target")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


def open_diff_prompt(screen: Workbench) -> None:
    """From the workbench: ask for the other version, then show the diff.

    Live: the other version (default ``@HEAD``) is the old side, the open file the new one.
    Replay: the recorded workflow is the old side, the other (default: the file it was
    recorded from, as it is now) the new one.
    """
    session = screen.session
    if session is None:
        return
    recorded = session.replay
    if recorded:
        on_disk = Path(session.workflow.path)
        default = str(on_disk) if on_disk.is_file() else ""
        sides = "old: the workflow this run was recorded with · new: what you type"
    else:
        default = "@HEAD"
        sides = "old: what you type · new: this file, as open now"

    def compare(spec: str | None) -> None:
        if not spec:
            return
        try:
            other = load_source(spec, relative_to=session.source_path or session.workflow.path)
        except WorkflowError as exc:
            screen.notify(
                "\n".join(str(p) for p in exc.problems[:6]),
                title="Cannot compare",
                severity="error",
            )
            return
        # The other version plans with its own default payload, the open one with the current.
        if recorded:
            diff = DiffScreen(session.workflow, session.payload, other, other.payload)
        else:
            diff = DiffScreen(other, other.payload, session.workflow, session.payload)
        screen.app.push_screen(diff)

    screen.app.push_screen(DiffTargetModal(default, sides), compare)
