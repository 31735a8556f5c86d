"""The Textual app: wiring only. Screens own their handlers; the engine makes the decisions."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.notifications import SeverityLevel
from textual.screen import Screen

from ..engine.clock import Clock
from ..records.errors import RecordError
from ..records.store import RunStore
from .modals.help import HelpModal
from .screens.workbench import WorkbenchScreen
from .session import OpenError, Session, open_session

__all__ = ["HarnessApp", "create_app", "keymap_path"]

PALETTE = (
    ("run: Step", "Execute the next task of the plan", "step"),
    ("run: Continue", "Run to the next breakpoint or the end", "continue"),
    ("run: Pause", "Pause a continuing run after the current task", "pause"),
    ("run: Stop task", "Abandon a hanging attempt (recorded as cancelled)", "stop"),
    ("run: Restart", "Start the run over", "restart"),
    ("breakpoint: Toggle", "Set or clear a breakpoint on the selected task", "toggle_breakpoint"),
    ("breakpoint: Break on failure", "Pause whenever a task fails", "toggle_break_on_failure"),
    ("time: Back", "Show the state one event earlier", "back"),
    ("time: Forward", "Show the state one event later", "forward"),
    ("task: Find", "Jump to a task by name", "find"),
    ("file: Open", "Open a workflow or a run export", "open"),
    ("file: Reload", "Reload the workflow from disk and show the plan changes", "reload"),
    ("file: Export run", "Write the run to a JSON export", "export"),
    ("payload: Edit", "Edit the payload and replan", "edit_payload"),
    ("plan: Diff", "Compare this workflow's plan with another file or a git revision", "diff"),
)


def keymap_path() -> Path:
    """Where users remap keys by binding id: ``{"run-step": "j", "time-back": "h"}``."""
    from platformdirs import user_config_dir

    return Path(user_config_dir("harness-tui", appauthor=False)) / "keymap.json"


class HarnessApp(App[None]):
    """The harness-tui workbench."""

    TITLE = "harness-tui"
    CSS_PATH = ["app.tcss", "screens/workbench.tcss", "screens/diff.tcss"]
    BINDINGS = [
        Binding("f1", "help", "Help", id="help"),
        Binding("ctrl+q", "quit", "Quit", id="quit", priority=True),
    ]

    def __init__(
        self,
        session: Session | None,
        error: OpenError | None = None,
        clock: Clock | None = None,
        store: RunStore | None = None,
        store_problem: str | None = None,
    ) -> None:
        super().__init__()
        self.session = session
        self.open_error = error
        self.clock = clock
        self.store = store
        self.store_problem = store_problem

    def on_mount(self) -> None:
        self._load_keymap()
        self.push_screen(WorkbenchScreen(self.session, self.open_error))
        if self.store_problem:
            self.notify(self.store_problem, title="Run store", severity="warning")

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Notifications carry file paths, task names and error text: never parse markup."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    def _load_keymap(self) -> None:
        path = keymap_path()
        if not path.is_file():
            return
        try:
            mapping = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            self.notify(f"{path}: ignored ({exc})", severity="warning")
            return
        if isinstance(mapping, dict):
            self.set_keymap({str(k): str(v) for k, v in mapping.items()})

    def action_help(self) -> None:
        rows: list[tuple[str, str, str]] = []
        for source in (self.screen, self):
            for binding in source.BINDINGS:
                if isinstance(binding, Binding) and binding.id:
                    keys = ", ".join(
                        self.get_key_display(Binding(key.strip(), binding.action))
                        for key in binding.key.split(",")
                    )
                    rows.append((keys, binding.description, binding.id))
        self.push_screen(HelpModal(rows, str(keymap_path())))

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if isinstance(screen, WorkbenchScreen):
            for title, help_text, action in PALETTE:
                yield SystemCommand(title, help_text, getattr(screen, f"action_{action}"))


def create_app(
    path: str | None,
    *,
    payload: str | None = None,
    replay: bool = False,
    clock: Clock | None = None,
    store_path: str | None = None,
) -> HarnessApp:
    """The app as the CLI builds it (tests and screenshots use this very factory).

    Live runs are recorded in the run store at ``store_path`` when one is given.
    """
    store: RunStore | None = None
    problem: str | None = None
    if store_path is not None:
        try:
            store = RunStore(store_path)
        except RecordError as exc:
            problem = f"runs are not recorded: {exc}"

    def app(session: Session | None, error: OpenError | None = None) -> HarnessApp:
        return HarnessApp(session, error, clock=clock, store=store, store_problem=problem)

    if path is None:
        return app(None)
    try:
        session = open_session(path, payload, clock=clock, store=store)
    except OpenError as exc:
        return app(None, exc)
    if replay and not session.replay:
        return app(None, OpenError(path, [f"{path}: not a run export"]))
    return app(session)
