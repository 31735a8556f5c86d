"""Untrusted text for widgets: made visible by the shared sanitiser
(:mod:`harness_tui.engine.untrusted`), and wrapped in a :class:`rich.text.Text`, which is never
parsed as markup, so ``[red]`` or ``[link=...]`` in data stays text.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from ..engine.untrusted import shorten, shown, visible

__all__ = ["inert", "shorten", "shown", "visible"]


def inert(text: str, style: str | Style = "", *, multiline: bool = False) -> Text:
    """Untrusted ``text`` made visible (:func:`visible`) as a Rich ``Text``: shown as written,
    never parsed as markup.

    Args:
        text: untrusted text.
        style: a Rich style for all of it (our own literal, never from the text).
        multiline: keep line breaks (see :func:`visible`).
    """
    return Text(visible(text, multiline=multiline), style=style)
