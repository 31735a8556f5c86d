"""The Textual app: wiring only. Screens own their handlers; the engine makes the decisions."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.notifications import SeverityLevel
from textual.screen import Screen

from ..engine.attempt import Executor
from ..engine.clock import Clock
from ..records.errors import RecordError
from ..records.store import RunStore
from ..workflow.payload import Payload
from .actions import GLOBAL, Action, bindings
from .modals.help import HelpModal
from .sanitize import shorten, shown, visible
from .screens.workbench import WorkbenchScreen
from .session import OpenError, Session, open_session

__all__ = ["HarnessApp", "create_app", "keymap_path"]

NOTIFY_LIMIT = 2_000
"""At most this many characters of a notification: a 1 MB error message stays a toast."""


def keymap_path() -> Path:
    """Where users remap keys by binding id: ``{"run-step": "j", "time-back": "h"}``."""
    from platformdirs import user_config_dir

    return Path(user_config_dir("harness-tui", appauthor=False)) / "keymap.json"


class HarnessApp(App[None]):
    """The harness-tui workbench."""

    TITLE = "harness-tui"
    CSS_PATH = ["app.tcss", "screens/workbench.tcss", "screens/diff.tcss"]
    BINDINGS = bindings(GLOBAL)

    def __init__(
        self,
        session: Session | None,
        error: OpenError | None = None,
        clock: Clock | None = None,
        store: RunStore | None = None,
        store_problem: str | None = None,
        workers: int = 1,
        executor: Executor | None = None,
    ) -> None:
        super().__init__()
        self.session = session
        self.open_error = error
        self.clock = clock
        self.store = store
        self.store_problem = store_problem
        # Every file opened here runs with these (``App.workers`` is Textual's own).
        self.run_workers = workers
        self.run_executor = executor

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
        """Notifications carry file paths, task names and error text: shown (shortened, made
        visible), never obeyed or parsed as markup."""
        message = visible(shorten(message, NOTIFY_LIMIT), multiline=True)
        super().notify(
            message, title=shown(title), severity=severity, timeout=timeout, markup=False
        )

    def _load_keymap(self) -> None:
        from .actions import binding_ids

        path = keymap_path()
        if not path.is_file():
            return
        try:
            mapping = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            self.notify(f"{path}: ignored ({exc})", severity="warning")
            return
        if not isinstance(mapping, dict):
            self.notify(f"{path}: ignored (not a JSON object of id: keys)", severity="warning")
            return
        unknown = sorted(set(map(str, mapping)) - binding_ids())
        if unknown:
            # A misspelt id would otherwise leave its key unchanged without a word.
            self.notify(
                f"{path}: unknown binding ids ignored: {', '.join(unknown)} (F1 lists the ids)",
                title="Keymap",
                severity="warning",
            )
        self.set_keymap({str(k): str(v) for k, v in mapping.items() if str(k) not in unknown})

    def action_help(self) -> None:
        """List the keys of this screen and of the app, as remapped by the keymap."""
        actions = (*getattr(self.screen, "ACTIONS", ()), *GLOBAL)
        rows = [(self._key_display(action), action) for action in actions]
        self.push_screen(HelpModal(rows, str(keymap_path())))

    def _key_display(self, action: Action) -> str:
        keys = self._keymap.get(action.id, action.keys)
        return ", ".join(
            self.get_key_display(Binding(key.strip(), action.action)) for key in keys.split(",")
        )

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        # Palette commands call the very actions the keys call.
        for action in getattr(screen, "ACTIONS", ()):
            if action.title:
                yield SystemCommand(
                    action.title, action.help, getattr(screen, f"action_{action.action}")
                )


def create_app(
    path: str | None,
    *,
    payload: Payload | None = None,
    replay: bool = False,
    clock: Clock | None = None,
    store_path: str | None = None,
    strict: bool = False,
    workers: int = 1,
    executor: Executor | None = None,
) -> HarnessApp:
    """The app as the CLI builds it (tests and screenshots use this very factory).

    Live runs are recorded in the run store at ``store_path`` when one is given. A file that
    cannot be opened is shown in the app, or with ``strict`` (the command line, where one
    clear line and exit 2 beat a full-screen error) raised as an :class:`OpenError`.
    """
    store: RunStore | None = None
    problem: str | None = None
    if store_path is not None:
        try:
            store = RunStore(store_path)
        except RecordError as exc:
            problem = f"runs are not recorded: {exc}"
        else:
            problem = store.damage  # recorded all the same, in what SQLite could recover

    def app(session: Session | None, error: OpenError | None = None) -> HarnessApp:
        return HarnessApp(
            session,
            error,
            clock=clock,
            store=store,
            store_problem=problem,
            workers=workers,
            executor=executor,
        )

    if path is None:
        return app(None)
    try:
        session = open_session(
            path, payload, clock=clock, store=store, workers=workers, executor=executor
        )
        if replay and not session.replay:
            raise OpenError(path, [f"{path}: not a run export"])
    except OpenError as exc:
        if strict:
            if store is not None:
                store.close()
            raise
        return app(None, exc)
    return app(session)
