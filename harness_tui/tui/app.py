"""The Textual app: wiring only. Screens own their handlers; the engine makes the decisions."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path

from rich.segment import Segment
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.color import Color
from textual.filter import LineFilter
from textual.notifications import Notification, Notify, SeverityLevel
from textual.screen import ModalScreen, Screen
from textual.theme import Theme

from ..records.errors import RecordError
from ..records.export import RunRecord
from ..records.runs.settings import DEFAULT_SETTINGS, RunSettings
from ..records.store import RunStore
from ..workflow.limits import LINE_CHARS
from ..workflow.payload import Payload
from .actions import GLOBAL, Action, bindings
from .browser import RunBrowser
from .glyphs import to_ascii
from .keymap import conflicts
from .modals.confirm import ConfirmModal
from .modals.help import HelpModal
from .preferences import Preferences
from .sanitize import shorten, shown, visible
from .screens.acting import ActingScreen
from .screens.run_browser import Opened, RunBrowserScreen
from .screens.workbench import LEAVE_SECONDS, WorkbenchScreen
from .session import OpenError, Session, open_session
from .stores import browsed_store, recording_store

__all__ = ["HarnessApp", "create_app"]

MIN_AFTER_DIALOG = 3.0
"""Seconds a notification a dialog hid is shown at least once the dialog closes."""


class AsciiGlyphs(LineFilter):
    """Draws every glyph of every line (ours, Textual's borders and scrollbars) as its ASCII
    stand-in, for terminals and fonts without them (``glyphs = "ascii"``)."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        return [
            segment
            if segment.text.isascii()
            else Segment(to_ascii(segment.text), segment.style, segment.control)
            for segment in segments
        ]


class HarnessApp(App[None]):
    """The harness-tui workbench."""

    TITLE = "harness-tui"
    CSS_PATH = [
        "app.tcss",
        "screens/workbench.tcss",
        "screens/diff.tcss",
        "screens/run_browser.tcss",
    ]
    BINDINGS = bindings(GLOBAL)

    def __init__(
        self,
        session: Session | None,
        error: OpenError | None = None,
        settings: RunSettings = DEFAULT_SETTINGS,
        store_problem: str | None = None,
        preferences: Preferences | None = None,
        store_path: Path | None = None,
        browse: bool = False,
        read_only: bool = False,
    ) -> None:
        """``settings``: how every file opened here runs. ``store_path``: where runs are
        recorded and browsed (``settings.store``, when open, is the store there; without one,
        it is made when a workflow is opened). ``browse``: start on the run browser."""
        super().__init__()
        self.read_only = read_only
        self.preferences = preferences or Preferences()
        self._ascii = AsciiGlyphs() if self.preferences.glyphs == "ascii" else None
        self.session = session
        self.open_error = error
        self.settings = settings
        self.store_problem = store_problem
        self.store_path = store_path
        self.browse = browse
        self._keyed: dict[str, Notification] = {}
        self._waiting: list[Notification] = []
        self._forgotten: set[str] = set()  # identities of keyed notifications still posted
        self.workbench: WorkbenchScreen | None = None
        """The workbench screen (kept after the app exits: its run may still have output)."""

    @property
    def store(self) -> RunStore | None:
        """The store runs are recorded in and browsed, once open."""
        return self.settings.store

    def get_line_filters(self) -> Sequence[LineFilter]:
        filters = super().get_line_filters()
        return filters if self._ascii is None else [*filters, self._ascii]

    def on_mount(self) -> None:
        self.screen_change_signal.subscribe(self, self._on_screen_changed)
        self._load_theme()
        self._load_keymap()
        if self.browse and self.session is None and self.open_error is None:
            self.push_screen(self._browser())
        else:
            self.push_screen(self._workbench(self.session, self.open_error))
        if self.store_problem:
            self.notify(self.store_problem, title="Run store", severity="warning")

    def _open(self, path: str, payload: Payload | None) -> Session:
        """Open a file with this app's run settings (its store made now if needed)."""
        self._recording_store()
        return open_session(path, payload, self.settings)

    def _recording_store(self) -> RunStore | None:
        """The store live runs are recorded in, made now if browsing found none yet."""
        if self.store is None and self.store_path is not None and self.store_problem is None:
            try:
                self.settings = replace(self.settings, store=RunStore(self.store_path))
            except RecordError as exc:
                self.store_problem = f"runs are not recorded: {exc}"
                self.notify(self.store_problem, title="Run store", severity="warning")
        return self.store

    # -- the run browser --------------------------------------------------------------------

    def _workbench(
        self, session: Session | None, error: OpenError | None = None
    ) -> WorkbenchScreen:
        # The latest one made: its run's stray output is stored when the app ends.
        self.workbench = WorkbenchScreen(session, error, self._open, self.read_only)
        return self.workbench

    def _browser(self) -> RunBrowserScreen:
        where = self.store_path or (self.store.path if self.store is not None else Path())
        browser = RunBrowser(self.store, where, self.settings)
        return RunBrowserScreen(browser, self._show_opened, self.read_only)

    def _show_opened(self, opened: Opened, task: str | None) -> None:
        """A workbench over the browser on what it opened: a record replayed (re-run from
        ``task`` when given), a resumed run, or nothing (the open dialog)."""
        if opened is None:
            self.push_screen(self._workbench(None))
            return
        if isinstance(opened, RunRecord):
            session = Session(
                opened.workflow, opened.payload, record=opened, settings=self.settings
            )
        else:
            session = Session(
                opened.workflow, opened.run.payload, settings=self.settings, resumed=opened
            )
        screen = self._workbench(session)
        self.push_screen(screen)
        if task is not None:

            def rerun() -> None:
                screen.panes.select(task)
                screen.act("rerun-from-task")

            self.call_after_refresh(rerun)

    def action_show_runs(self) -> None:
        """Back to the run browser under this screen, or the browser of the app's store in
        place of this screen (its run left behind, resumable), asked first while a run is
        executing."""
        stack = self.screen_stack
        below = next((s for s in reversed(stack) if isinstance(s, RunBrowserScreen)), None)
        if self.screen is below or isinstance(self.screen, ModalScreen):
            return
        if below is None and self.store is None and self.store_path is None:
            self.notify("runs are not recorded here (--no-store): there is no run list")
            return

        def go(yes: bool | None = True) -> None:
            if not yes:
                return
            if below is None:
                if isinstance(self.screen, WorkbenchScreen):
                    # Left now, not when the screen is gone: the list then reads it abandoned.
                    self.screen.controller.leave(wait=LEAVE_SECONDS)
                self.switch_screen(self._browser())
                return
            while self.screen is not below:
                self.pop_screen()

        if any(isinstance(s, WorkbenchScreen) and s.controller.driving for s in stack):
            question = "A run is executing. Leave it (resumable) and go to the runs?"
            self.push_screen(ConfirmModal(question, "Leave it"), go)
        else:
            go()

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
        self.notice(None, message, title=title, severity=severity, timeout=timeout)

    def notice(
        self,
        key: str | None,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
    ) -> None:
        """Notify; one with a ``key`` replaces the last of that key and goes with
        :meth:`forget` (its state is gone). While a dialog is open, a notification waits
        until it closes: a toast never covers the dialog."""
        if key is not None:
            self.forget(key)
        notification = Notification(
            visible(shorten(message, LINE_CHARS), multiline=True),
            shown(title),
            severity,
            self.NOTIFICATION_TIMEOUT if timeout is None else timeout,
            markup=False,
        )
        if key is not None:
            self._keyed[key] = notification
        self.post_message(Notify(notification))

    def _on_notify(self, event: Notify) -> None:
        # Decided when the message arrives, not when it was sent: a dialog may have opened
        # in between. Otherwise Textual's own handler (the base class's) shows it.
        if event.notification.identity in self._forgotten:  # forgotten while on its way
            self._forgotten.discard(event.notification.identity)
            event.prevent_default()
        elif isinstance(self._top(), ModalScreen):
            event.prevent_default()
            self._waiting.append(event.notification)

    def _unnotify(self, notification: Notification, refresh: bool = True) -> None:
        """Textual's own, then the screen on top painted again: a toast that expired on a
        screen come back to (the run browser after a run) was otherwise left drawn over it
        in a real terminal until what was under it changed (tests/tui/test_browser_tmux.py)."""
        super()._unnotify(notification, refresh)
        if self.screen_stack:
            self.screen_stack[-1].refresh()

    def forget(self, key: str) -> None:
        """Take away the notification of ``key`` (shown or waiting), if any."""
        notification = self._keyed.pop(key, None)
        if notification is None:
            return
        if notification in self._waiting:
            self._waiting.remove(notification)
        elif notification in self._notifications:
            del self._notifications[notification]
            self._refresh_notifications()
        else:  # posted, not yet shown (a dialog's closing posts what waited): never shown
            self._forgotten.add(notification.identity)

    def _top(self) -> Screen[object] | None:
        return self.screen_stack[-1] if self.screen_stack else None

    def _on_screen_changed(self, screen: Screen[object]) -> None:
        """A dialog opened: the toasts would cover it, so they wait until it closes. It
        closed: what waited is shown now, each for the time it had left (at least a few
        seconds), and what was said meanwhile for its full time."""
        if isinstance(screen, ModalScreen):
            shown_now = [n for n in self._notifications if n not in self._waiting]
            self._waiting.extend(
                self._renewed(n, max(n.time_left, MIN_AFTER_DIALOG)) for n in shown_now
            )
            self.clear_notifications()  # refreshes the toasts of the top screen only
            for below in self.screen_stack[:-1]:
                for rack in below.query("ToastRack"):
                    rack.display = False  # shown again, emptied, when its screen is on top
            return
        waiting, self._waiting = self._waiting, []
        for notification in waiting:
            self.post_message(Notify(self._renewed(notification, notification.timeout)))

    def _renewed(self, old: Notification, timeout: float) -> Notification:
        """``old`` again, its time counted from now (its key, if any, follows it)."""
        fresh = Notification(old.message, old.title, old.severity, timeout, markup=False)
        for key, keyed in self._keyed.items():
            if keyed is old:
                self._keyed[key] = fresh
        return fresh

    async def action_quit(self) -> None:
        """Quit; the workbench first leaves a run going on, saying what it waits for."""
        workbench = next((s for s in self.screen_stack if isinstance(s, WorkbenchScreen)), None)
        if workbench is None:
            self.exit()
        else:
            workbench.quit()

    def _load_theme(self) -> None:
        """The theme ``config.toml`` names, else the one last picked; a theme picked in the
        palette from now on is remembered in the state file."""
        wanted = self.preferences.theme or self.preferences.remembered_theme()
        if wanted is not None and wanted in self.available_themes:
            self.theme = wanted
        elif self.preferences.theme is not None:
            known = ", ".join(sorted(self.available_themes))
            self.notify(f"unknown theme {wanted!r} ignored (known: {known})", severity="warning")
        self.theme_changed_signal.subscribe(self, self._remember_theme)

    def _remember_theme(self, theme: Theme) -> None:
        problem = self.preferences.remember_theme(theme.name)
        if problem is not None:
            self.notify(problem, title="Theme", severity="warning")

    def _load_keymap(self) -> None:
        from .actions import binding_ids

        path = self.preferences.keymap_path
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
        known = {str(k): str(v) for k, v in mapping.items() if str(k) not in unknown}
        clashes = conflicts(known)
        if clashes:
            # Textual keeps one binding per key: the other action would lose its key unsaid.
            said = "; ".join(f"{name} ignored ({why})" for name, why in clashes.items())
            self.notify(f"{path}: {said}", title="Keymap", severity="warning")
        self.set_keymap({k: v for k, v in known.items() if k not in clashes})

    def action_help(self) -> None:
        """List the keys of this screen and of the app, as remapped by the keymap."""
        actions = (*getattr(self.screen, "ACTIONS", ()), *GLOBAL)
        rows = [(self._key_display(action), action) for action in actions]
        self.push_screen(HelpModal(rows, str(self.preferences.keymap_path)))

    def _key_display(self, action: Action) -> str:
        keys = self._keymap.get(action.id, action.keys)
        return ", ".join(
            self.get_key_display(Binding(key.strip(), action.action)) for key in keys.split(",")
        )

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if not isinstance(screen, ActingScreen):
            return
        # Palette commands run the very actions the keys run, and say why one cannot act now.
        for action in screen.ACTIONS:
            if action.title:
                reason = screen.why_not(action)
                yield SystemCommand(
                    action.title,
                    action.help if reason is None else f"{action.help} (not now: {reason})",
                    partial(screen.act, action.id),
                )


def create_app(
    path: str | None,
    *,
    payload: Payload | None = None,
    replay: bool = False,
    settings: RunSettings = DEFAULT_SETTINGS,
    store_path: str | None = None,
    strict: bool = False,
    preferences: Preferences | None = None,
    browse: bool = False,
    read_only: bool = False,
) -> HarnessApp:
    """The app as the CLI builds it (tests and screenshots use this very factory).

    Live runs are recorded in the run store at ``store_path`` when one is given. A file that
    cannot be opened is shown in the app, or with ``strict`` (the command line, where one
    clear line and exit 2 beat a full-screen error) raised as an :class:`OpenError`.
    Without ``path``, ``browse`` starts on the run browser of that store; browsing never
    creates a store (it is made when a workflow is opened and run). ``read_only`` refuses
    every action that runs or imports code (``serve --replay``).
    Live runs run with ``settings`` (its store is the one at ``store_path``).
    """
    browsing = browse and path is None and store_path is not None
    opener = browsed_store if browsing else recording_store
    store, problem = (None, None) if store_path is None else opener(Path(store_path))

    app = HarnessApp(
        None,
        settings=replace(settings, store=store),
        store_problem=problem,
        preferences=preferences,
        store_path=None if store_path is None else Path(store_path),
        browse=browsing,
        read_only=read_only,
    )
    if path is None:
        return app
    try:
        session = app._open(path, payload)  # with the app's run settings
        if replay and not session.replay:
            raise OpenError(path, [f"{path}: not a run export"])
    except OpenError as exc:
        if strict:
            if store is not None:
                store.close()
            raise
        app.open_error = exc
    else:
        app.session = session
    return app
