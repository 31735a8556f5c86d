"""ActingScreen: a screen whose keys and palette commands run the actions of a table by id.

One path for every way of asking: a key (its binding runs ``act(id)``), the command palette
(it calls :meth:`ActingScreen.act`) and a greyed key pressed anyway all read the action's
``why_not`` and say its reason instead of acting.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual import events
from textual.screen import Screen
from textual.widgets import Footer

from ..actions import Action

NARROW_FOOTER = 100
"""Below this many columns the footer is compact, without the palette's hint."""


def fit_footer(footer: Footer, width: int) -> None:
    """Under :data:`NARROW_FOOTER` columns the full footer would cut "f1 Help" and "Quit" (the
    app's keys come last): keys closer together, and the palette's hint left to the F1 list."""
    narrow = width < NARROW_FOOTER
    if footer.compact != narrow:
        footer.compact, footer.show_command_palette = narrow, not narrow
        footer.refresh(recompose=True)


class ActingScreen(Screen[None]):
    """Runs ``ACTIONS`` by id; subclasses say when each can act and what does the work."""

    ACTIONS: ClassVar[tuple[Action, ...]] = ()

    def why_not(self, action: Action) -> str | None:
        """Why ``action`` cannot act now, or None when it can."""
        return None

    def greyed(self, action: Action) -> bool:
        """An action that cannot act is greyed in the footer (True) or left out (False)."""
        return True

    def handler(self, action: Action) -> Callable[[], object]:
        """What does ``action``'s work: by default this screen's ``action_<action>``."""
        method: Callable[[], object] = getattr(self, f"action_{action.action}")
        return method

    def act(self, action_id: str) -> None:
        """Run the action ``action_id`` if it can act now, else say why not."""
        action = next(a for a in self.ACTIONS if a.id == action_id)
        reason = self.why_not(action)
        if reason is not None:
            self.notify(reason)
            return
        self.handler(action)()

    def action_act(self, action_id: str) -> None:
        self.act(action_id)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action != "act" or not parameters:
            return True
        found = next((a for a in self.ACTIONS if a.id == parameters[0]), None)
        if found is None or self.why_not(found) is None:
            return True
        return None if self.greyed(found) else False

    def on_key(self, event: events.Key) -> None:
        """A key whose action is greyed out arrives here: say why it does nothing."""
        active = self.active_bindings.get(event.key)
        if active is None or active.enabled or active.binding.id is None:
            return
        found = next((a for a in self.ACTIONS if a.id == active.binding.id), None)
        reason = None if found is None else self.why_not(found)
        if reason:
            self.notify(reason)
            event.stop()
