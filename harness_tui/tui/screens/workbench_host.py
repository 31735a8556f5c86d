"""What the workbench's action groups may use of the screen that holds them: its public
members, declared once here (the groups never see the screen's class, nor its privates)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from textual.app import App
from textual.notifications import SeverityLevel

from ..controller import RunController
from ..session import OpenError, Session
from ..widgets.run_header import RunHeader
from ..widgets.run_panes import RunPanes

if TYPE_CHECKING:
    from .calls import AnswerEdit


class NoticeBoard(Protocol):
    """The app's notifications that end with their state (the workbench's app has them)."""

    def notice(
        self,
        key: str | None,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
    ) -> None: ...

    def forget(self, key: str) -> None: ...


class Workbench(Protocol):
    """The workbench screen, as its action groups see it."""

    controller: RunController
    error: OpenError | None

    @property
    def app(self) -> App[Any]: ...

    @property
    def session(self) -> Session | None: ...

    @property
    def selected(self) -> str | None: ...

    @property
    def panes(self) -> RunPanes: ...

    @property
    def header(self) -> RunHeader: ...

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None: ...

    def notice(
        self,
        key: str,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
    ) -> None: ...

    def forget(self, key: str) -> None: ...

    def show_session(self) -> None: ...

    def show_errors(self, error: OpenError | None) -> None: ...

    def repaint(self, tasks: set[str]) -> None: ...

    def refresh_bindings_if_changed(self) -> None: ...

    def travel(self, move: Callable[[Session], bool], nothing: str = "") -> None: ...

    def edit_answer(self, edit: AnswerEdit) -> None: ...
