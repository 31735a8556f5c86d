"""Every user action named once: keys, stable id, palette title, help text (an action registry).

Screens build their ``BINDINGS`` from these tables, the command palette lists them as
``area: Verb``, F1 lists them with their ids, and ``scripts/make_key_tables.py`` writes the
key tables of ``docs/reference.md`` from them. Ids never change: users remap keys by id in
``keymap.json``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from textual.binding import Binding, BindingType
from textual.keys import format_key

__all__ = [
    "DIFF",
    "GLOBAL",
    "INSPECTOR",
    "WORKBENCH",
    "Action",
    "binding_ids",
    "bindings",
    "markdown_table",
]


@dataclass(frozen=True, slots=True)
class Action:
    """One thing a user can do, and everything that names it.

    Attributes:
        id: the stable kebab-case binding id (what ``keymap.json`` remaps).
        keys: the default keys, comma separated, in Textual's key names.
        action: the action run (the screen's or app's ``action_<name>`` method).
        label: the short footer and F1 label.
        title: the command palette title, ``area: Verb`` ("" keeps it out of the palette).
        help: one sentence on what it does (palette, F1, docs/reference.md).
        show: shown in the footer.
        priority: checked before the focused widget's bindings.
    """

    id: str
    keys: str
    action: str
    label: str
    title: str
    help: str
    show: bool = False
    priority: bool = False

    def binding(self) -> Binding:
        """The Textual binding for this action."""
        return Binding(
            self.keys,
            self.action,
            self.label,
            show=self.show,
            priority=self.priority,
            id=self.id,
        )


WORKBENCH: tuple[Action, ...] = (
    Action("run-step", "n,space", "step", "Step", "run: Step",
           "Execute the next task of the plan (pressed during a step, it queues)", show=True),
    Action("run-continue", "c", "continue", "Continue", "run: Continue",
           "Run to the next breakpoint or the end", show=True),
    Action("run-pause", "p", "pause", "Pause", "run: Pause",
           "Pause a continuing run after the current task"),
    Action("stop-task", "s", "stop", "Stop task", "run: Stop task",
           "Abandon a hanging attempt (recorded as cancelled)"),
    Action("run-restart", "r", "restart", "Restart", "run: Restart", "Start the run over"),
    Action("toggle-breakpoint", "b", "toggle_breakpoint", "Breakpoint", "breakpoint: Toggle",
           "Set or clear a breakpoint on the selected task", show=True),
    Action("toggle-break-on-failure", "f", "toggle_break_on_failure", "Break on failure",
           "breakpoint: Break on failure", "Pause whenever a task fails"),
    Action("time-back", "left_square_bracket", "back", "Back", "time: Back",
           "Show the state one trace event earlier", show=True),
    Action("time-forward", "right_square_bracket", "forward", "Forward", "time: Forward",
           "Show the state one trace event later", show=True),
    Action("time-task-back", "left_curly_bracket", "task_back", "Task back",
           "time: Back one task", "Show the state at the end of the previous task"),
    Action("time-task-forward", "right_curly_bracket", "task_forward", "Task forward",
           "time: Forward one task", "Show the state at the end of the next task"),
    Action("time-failure-back", "less_than_sign", "failure_back", "Previous failure",
           "time: Previous failure", "Show the state at the previous failed attempt"),
    Action("time-failure-forward", "greater_than_sign", "failure_forward", "Next failure",
           "time: Next failure", "Show the state at the next failed attempt"),
    Action("time-start", "home", "time_start", "Start", "time: Start",
           "Show the state before the first event (in a list: its first row)"),
    Action("time-end", "end", "time_end", "Now", "time: Now",
           "Show the latest state and follow the run (in a list: its last row)"),
    Action("rerun-from-task", "F", "rerun_from", "Rerun from", "run: Rerun from task",
           "Re-run from the selected task with the current code; other tasks keep what they "
           "did"),
    Action("dag-compact", "z", "toggle_compact", "Compact", "view: Compact or full boxes",
           "Switch the DAG between one-line boxes and bordered boxes with whole names"),
    Action("find-task", "slash", "find", "Find task", "task: Find",
           "Jump to a task by part of its name"),
    Action("show-logs", "l", "show_logs", "Logs", "task: Show logs",
           "Show what the selected task printed or logged, per attempt, live while it runs"),
    Action("show-timeline", "T", "show_timeline", "Timeline", "run: Show timeline",
           "Show what ran when: every attempt as a bar over wall time, per task and worker"),
    Action("open-file", "o", "open", "Open", "file: Open", "Open a workflow or a run export"),
    Action("reload-workflow", "R", "reload", "Reload file", "file: Reload",
           "Reload the workflow from disk and show the plan changes"),
    Action("export-run", "e", "export", "Export", "file: Export run or report",
           "Write the run to a JSON export named by workflow and run digest; a name ending "
           "in .md or .html writes a report to read instead", show=True),
    Action("edit-payload", "y", "edit_payload", "Payload", "payload: Edit",
           "Edit the payload as JSON (validated) and replan"),
    Action("diff-workflow", "d", "diff", "Diff", "plan: Diff",
           "Compare this workflow's plan with another file or a git revision (@HEAD)"),
)  # fmt: skip
"""The workbench screen's actions, in palette order (the footer keeps this order too)."""

DIFF: tuple[Action, ...] = (
    Action("diff-next", "n", "next_change", "Next change", "diff: Next change",
           "Go to the next changed task", show=True),
    Action("diff-previous", "N", "previous_change", "Previous change", "diff: Previous change",
           "Go to the previous changed task", show=True),
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

GLOBAL: tuple[Action, ...] = (
    Action("help", "f1", "help", "Help", "", "Show every key with its id", show=True),
    Action("quit", "ctrl+q", "quit", "Quit", "", "Quit", show=True, priority=True),
)
"""The app's own actions, on every screen (Textual's palette already offers them)."""


def bindings(actions: Iterable[Action]) -> list[BindingType]:
    """``BINDINGS`` for a screen or app, in table order."""
    return [action.binding() for action in actions]


def binding_ids() -> set[str]:
    """Every binding id a keymap can name: the tables' ids and those of every loaded widget,
    screen and modal class (Textual remaps any binding that has an id, wherever declared)."""
    from textual.dom import DOMNode

    ids = {action.id for action in (*WORKBENCH, *DIFF, *GLOBAL, *INSPECTOR)}
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
