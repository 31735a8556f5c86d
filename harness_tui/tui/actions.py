"""Every user action named once: keys, stable id, palette title, help text, and when it can
act (an action registry).

Screens build their ``BINDINGS`` from these tables, the command palette lists them as
``area: Verb``, F1 lists them with their ids, and ``scripts/make_key_tables.py`` writes the
key tables of ``docs/reference.md`` from them. Ids never change: users remap keys by id in
``keymap.json``. Each action's ``why_not`` reads the controller's :class:`WorkbenchState`: the
footer greys out what it refuses, a key pressed anyway says its reason, and the palette shows it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from textual.binding import Binding, BindingType
from textual.keys import format_key

from .browser import BrowserState, OpenMode, open_mode
from .controller import WorkbenchState

__all__ = [
    "BROWSER",
    "DIFF",
    "GLOBAL",
    "INSPECTOR",
    "NOTHING_OPEN",
    "READ_ONLY",
    "WORKBENCH",
    "Action",
    "binding_ids",
    "bindings",
    "markdown_table",
    "routed_bindings",
]

NOTHING_OPEN = "nothing is open: o opens a workflow or an export"
READ_ONLY = "read-only: this workbench runs and imports no code"


def always(state: object) -> str | None:
    """Acts in every state."""
    return None


def when_open(state: WorkbenchState) -> str | None:
    """Acts on whatever is open."""
    return None if state.open else NOTHING_OPEN


def when_runnable(state: WorkbenchState) -> str | None:
    return when_open(state) or ("the run is finished: r starts it over" if state.finished else None)


def when_unfinished(state: WorkbenchState) -> str | None:
    return when_open(state) or ("nothing is running" if state.finished else None)


def when_driving(state: WorkbenchState) -> str | None:
    return when_open(state) or (
        "nothing is running" if state.finished or not state.driving else None
    )


def when_recorded(state: WorkbenchState) -> str | None:
    return when_open(state) or (None if state.recorded else "nothing to export yet: step first (n)")


def when_not_at_start(state: WorkbenchState) -> str | None:
    return when_open(state) or ("already at the start of the trace" if state.at_start else None)


def when_back_in_time(state: WorkbenchState) -> str | None:
    return when_open(state) or ("already at the live end of the trace" if state.live_end else None)


def when_live(state: WorkbenchState) -> str | None:
    return when_open(state) or (
        "a replayed run keeps its recorded payload" if state.replay else None
    )


@dataclass(frozen=True, slots=True)
class Action:
    """One thing a user can do, and everything that names it.

    Attributes:
        id: the stable kebab-case binding id (what ``keymap.json`` remaps).
        keys: the default keys, comma separated, in Textual's key names.
        action: the ``action_<action>`` method that does it, where its owner runs actions by
            method (the app, a widget, the diff screen); the workbench maps ids to handlers.
        label: the short footer and F1 label.
        title: the command palette title, ``area: Verb`` ("" keeps it out of the palette).
        help: one sentence on what it does (palette, F1, docs/reference.md).
        show: shown in the footer.
        priority: checked before the focused widget's bindings.
        why_not: why it cannot act in a state, or None when it can: the state of the screen
            whose table holds it (a :class:`WorkbenchState`, a :class:`BrowserState`). When
            nothing is open, an action that cannot act is greyed in the footer if shown
            there, else hidden.
        runs_code: it may run or import task code (opening a workflow to step, re-running,
            loading a Python harness): a read-only workbench refuses it.
    """

    id: str
    keys: str
    action: str
    label: str
    title: str
    help: str
    show: bool = False
    priority: bool = False
    why_not: Callable[[Any], str | None] = always
    runs_code: bool = False

    def binding(self, routed: bool = False) -> Binding:
        """The Textual binding for this action: its ``action_<action>`` method, or (``routed``)
        the screen's ``act`` with this action's id."""
        return Binding(
            self.keys,
            f"act({self.id!r})" if routed else self.action,
            self.label,
            show=self.show,
            priority=self.priority,
            id=self.id,
        )


WORKBENCH: tuple[Action, ...] = (
    Action("run-step", "n,space", "step", "Step", "run: Step",
           "Execute the next task of the plan (pressed during a step, it queues)", show=True,
           why_not=when_runnable),
    Action("run-continue", "c", "continue", "Continue", "run: Continue",
           "Run to the next breakpoint or the end", show=True, why_not=when_runnable),
    Action("run-pause", "p", "pause", "Pause", "run: Pause",
           "Pause a continuing run after the current task", why_not=when_unfinished),
    Action("stop-task", "s", "stop", "Stop task", "run: Stop task",
           "Stop the run: the attempt in flight is abandoned and the rest cancelled "
           "(all_done cleanups still run)", why_not=when_driving),
    Action("run-restart", "r", "restart", "Restart", "run: Restart", "Start the run over",
           why_not=when_open),
    Action("toggle-breakpoint", "b", "toggle_breakpoint", "Breakpoint", "breakpoint: Toggle",
           "Set or clear a breakpoint on the selected task", show=True, why_not=when_open),
    Action("toggle-break-on-failure", "f", "toggle_break_on_failure", "Break on failure",
           "breakpoint: Break on failure", "Pause whenever a task fails", why_not=when_open),
    Action("time-back", "left_square_bracket", "back", "Back", "time: Back",
           "Show the state one trace event earlier", show=True, why_not=when_not_at_start),
    Action("time-forward", "right_square_bracket", "forward", "Forward", "time: Forward",
           "Show the state one trace event later", show=True, why_not=when_back_in_time),
    Action("time-task-back", "left_curly_bracket", "task_back", "Task back",
           "time: Back one task", "Show the state at the end of the previous task",
           why_not=when_open),
    Action("time-task-forward", "right_curly_bracket", "task_forward", "Task forward",
           "time: Forward one task", "Show the state at the end of the next task",
           why_not=when_open),
    Action("time-failure-back", "less_than_sign", "failure_back", "Previous failure",
           "time: Previous failure", "Show the state at the previous failed attempt",
           why_not=when_open),
    Action("time-failure-forward", "greater_than_sign", "failure_forward", "Next failure",
           "time: Next failure", "Show the state at the next failed attempt", why_not=when_open),
    Action("time-start", "home", "time_start", "Start", "time: Start",
           "Show the state before the first event (in a list: its first row)", why_not=when_open),
    Action("time-end", "end", "time_end", "Now", "time: Now",
           "Show the latest state and follow the run (in a list: its last row)",
           why_not=when_open),
    Action("rerun-from-task", "F", "rerun_from", "Rerun from", "run: Rerun from task",
           "Re-run from the selected task with the current code; other tasks keep what they "
           "did. From an export that recorded calls, they are answered from the recording "
           "(offline) unless you pick fill or live", why_not=when_open, runs_code=True),
    Action("edit-output", "E", "edit_output", "Edit output", "task: Edit output and rerun",
           "Give the selected task another output and re-run only what follows from it (the "
           "others keep what they did), then compare the two runs; on a failed task: mark it "
           "done and continue", why_not=when_open, runs_code=True),
    Action("edit-params", "W", "edit_params", "Edit parameters",
           "task: Edit parameters and rerun",
           "Give the selected task other with: parameters and re-run it and what follows (the "
           "others keep what they did), then compare the two runs", why_not=when_open,
           runs_code=True),
    Action("dag-compact", "z", "toggle_compact", "Compact", "view: Compact or full boxes",
           "Switch the DAG between one-line boxes and bordered boxes with whole names",
           why_not=when_open),
    Action("pane-maximize", "m", "maximize", "Maximise", "view: Maximise the pane",
           "Give the focused pane the whole screen; again to bring the others back",
           why_not=when_open),
    Action("filter-status", "v", "filter_status", "Filter", "view: Filter by status",
           "Show in the plan and the trace only the failed, running, pending, skipped or "
           "succeeded tasks, the next group at each press, then all", why_not=when_open),
    Action("filter-name", "V", "filter_name", "Filter by name", "view: Filter by name",
           "Show in the plan and the trace only the tasks whose name contains a text",
           why_not=when_open),
    Action("find-task", "slash", "find", "Find task", "task: Find",
           "Jump to a task by part of its name", why_not=when_open),
    Action("show-logs", "l", "show_logs", "Logs", "task: Show logs",
           "Show what the selected task printed or logged, per attempt, live while it runs",
           why_not=when_open),
    Action("show-calls", "C", "show_calls", "Calls", "task: Show recorded calls",
           "Show what the selected task's attempt asked models and APIs and what they "
           "answered: conversations, streamed answers assembled, errors", why_not=when_open),
    Action("show-timeline", "T", "show_timeline", "Timeline", "run: Show timeline",
           "Show what ran when: every attempt as a bar over wall time, per task and worker",
           why_not=when_open),
    Action("open-file", "o", "open", "Open", "file: Open", "Open a workflow or a run export",
           runs_code=True),
    Action("reload-workflow", "R", "reload", "Reload file", "file: Reload",
           "Reload the workflow from disk and show the plan changes", runs_code=True),
    Action("export-run", "e", "export", "Export", "file: Export run or report",
           "Write the run to a JSON export named by workflow and run digest; a name ending "
           "in .md or .html writes a report to read instead", show=True, why_not=when_recorded),
    Action("edit-payload", "y", "edit_payload", "Payload", "payload: Edit",
           "Edit the payload as JSON (validated) and replan", why_not=when_live),
    Action("diff-workflow", "d", "diff", "Diff", "plan: Diff",
           "Compare this workflow's plan with another file or a git revision (@HEAD)",
           why_not=when_open, runs_code=True),
)  # fmt: skip
"""The workbench screen's actions, in palette order (the footer keeps this order too)."""

DIFF: tuple[Action, ...] = (
    Action("diff-next", "n", "next_change", "Next change", "diff: Next change",
           "Go to the next task the plans change or whose run differs", show=True),
    Action("diff-previous", "N", "previous_change", "Previous change", "diff: Previous change",
           "Go to the previous task the plans change or whose run differs", show=True),
    Action("diff-compact", "z", "toggle_compact", "Compact", "view: Compact or full boxes",
           "Switch the DAG between one-line boxes and bordered boxes with whole names"),
    Action("diff-close", "escape,q", "close", "Back", "diff: Back",
           "Back to the workbench (from the command line: quit)", show=True),
)  # fmt: skip
"""The plan diff screen's actions."""

INSPECTOR: tuple[Action, ...] = (
    Action("show-traceback", "t", "show_traceback", "Traceback", "task: Show traceback",
           "Open the full error and traceback of the inspected failure (scroll, select, copy)",
           show=True),
)  # fmt: skip
"""The inspector's actions (enter on its error or traceback does the same)."""

NO_STORE = "no run store yet: o opens a workflow, and its runs are recorded"


def when_run(state: BrowserState) -> str | None:
    """Acts on the run under the cursor."""
    if not state.store:
        return NO_STORE
    return None if state.selected is not None else "no run here (f, / or s change the list)"


def when_openable(state: BrowserState) -> str | None:
    if reason := when_run(state):
        return reason
    assert state.selected is not None
    if open_mode(state.selected) is OpenMode.RUNNING:
        return "a live process runs it: wait for it to end, or resume --force on the command line"
    return None


def when_deletable(state: BrowserState) -> str | None:
    if reason := when_run(state):
        return reason
    assert state.selected is not None
    return "a live process holds its lease" if state.selected.lease_live else None


def when_two_marked(state: BrowserState) -> str | None:
    if not state.store:
        return NO_STORE
    return None if state.marked == 2 else f"mark two runs first (m): {state.marked} marked"


def when_store(state: BrowserState) -> str | None:
    return None if state.store else NO_STORE


BROWSER: tuple[Action, ...] = (
    Action("runs-open", "enter", "open_run", "Open", "runs: Open",
           "Open the run: replay a finished run, resume an interrupted or abandoned one "
           "(asked first)", show=True, why_not=when_openable),
    Action("runs-mark", "m", "mark", "Mark", "runs: Mark for comparison",
           "Mark or unmark the run; two marked runs can be compared", show=True,
           why_not=when_run),
    Action("runs-compare", "c", "compare", "Compare", "runs: Compare the marked runs",
           "Compare the two marked runs: their plans and where their traces differ",
           show=True, why_not=when_two_marked),
    Action("runs-status", "f", "status", "Status", "runs: Filter by status",
           "Show the runs of one status only, the next status at each press, then all",
           show=True, why_not=when_store),
    Action("runs-filter", "slash", "filter", "Filter", "runs: Filter by text",
           "Show only the runs whose id, workflow or run digest contains a text", show=True,
           why_not=when_store),
    Action("runs-sort", "s", "sort", "Sort", "runs: Sort by the next column",
           "Order by start, workflow, status or duration", why_not=when_store),
    Action("runs-reverse", "S", "reverse", "Reverse", "runs: Reverse the order",
           "Reverse the order of the list", why_not=when_store),
    Action("runs-rerun", "F", "rerun", "Rerun from", "runs: Rerun from task",
           "Open the run and re-run it from a task you pick, with the current code",
           why_not=when_run, runs_code=True),
    Action("runs-export", "e", "export", "Export", "runs: Export run or report",
           "Write the run to a JSON export; a name ending in .md or .html writes a report",
           show=True, why_not=when_run),
    Action("runs-delete", "x,delete", "delete", "Delete", "runs: Delete",
           "Delete the run from the store (asked first; never a run a live process holds)",
           why_not=when_deletable),
    Action("runs-refresh", "R", "refresh", "Refresh", "runs: Refresh",
           "Read the list again from the store", why_not=when_store),
    Action("runs-open-file", "o", "open_file", "Open file", "file: Open",
           "Open a workflow or a run export in the workbench", runs_code=True),
)  # fmt: skip
"""The run browser's actions."""

GLOBAL: tuple[Action, ...] = (
    Action("help", "f1", "help", "Help", "", "Show every key with its id", show=True),
    Action(
        "show-runs",
        "g",
        "show_runs",
        "Runs",
        "runs: Show the run browser",
        "Go to the list of runs in the store (from the workbench: leaves the run there, resumable)",
    ),
    Action("quit", "ctrl+q", "quit", "Quit", "", "Quit", show=True, priority=True),
)
"""The app's own actions, on every screen (Textual's palette already offers them)."""


def bindings(actions: Iterable[Action]) -> list[BindingType]:
    """``BINDINGS`` for a widget or app, in table order: each runs its ``action_<action>``."""
    return [action.binding() for action in actions]


def routed_bindings(actions: Iterable[Action]) -> list[BindingType]:
    """``BINDINGS`` for an :class:`~harness_tui.tui.screens.acting.ActingScreen`, in table
    order: each runs the screen's ``act`` with its id, which asks ``why_not`` first."""
    return [action.binding(routed=True) for action in actions]


def binding_ids() -> set[str]:
    """Every binding id a keymap can name: the tables' ids and those of every loaded widget,
    screen and modal class (Textual remaps any binding that has an id, wherever declared)."""
    from textual.dom import DOMNode

    ids = {action.id for action in (*WORKBENCH, *DIFF, *GLOBAL, *INSPECTOR, *BROWSER)}
    seen: set[type] = set()
    pending: list[type] = [DOMNode]
    while pending:
        cls = pending.pop()
        if cls in seen:
            continue
        seen.add(cls)
        pending.extend(cls.__subclasses__())
        for binding in cls.__dict__.get("BINDINGS", ()):
            if isinstance(binding, Binding) and binding.id:
                ids.add(binding.id)
    return ids


def markdown_table(actions: Sequence[Action]) -> str:
    """A Markdown table of ``actions``: keys, id, palette title and what each does."""
    lines = ["| key | id | palette | what it does |", "|---|---|---|---|"]
    for action in actions:
        keys = ", ".join(f"`{format_key(key.strip())}`" for key in action.keys.split(","))
        title = f"`{action.title}`" if action.title else ""
        lines.append(f"| {keys} | `{action.id}` | {title} | {action.help} |")
    return "\n".join(lines) + "\n"
