"""How the workbench looks and answers keys for this user: theme, glyphs, keymap, and the
state file where it remembers the theme picked in the command palette.

Built once by the command line from the user's settings (``config.toml``, see
``docs/install.md``) and passed to the app as one value. The state file is the workbench's
own: the user's ``config.toml`` is never written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..files import atomic_write, read_capped

__all__ = ["Preferences", "default_keymap_path"]

STATE_BYTES = 64 * 1024
"""A state file larger than this is not ours: it is ignored, not parsed."""


def default_keymap_path() -> Path:
    """``keymap.json`` in the user config folder, beside ``config.toml``."""
    from platformdirs import user_config_dir

    return Path(user_config_dir("harness-tui", appauthor=False)) / "keymap.json"


@dataclass(frozen=True, slots=True)
class Preferences:
    """What the user chose for the workbench.

    Attributes:
        theme: the theme ``config.toml`` names; it wins over the remembered one.
        glyphs: ``"unicode"``, or ``"ascii"`` for terminals and fonts without the glyphs.
        keymap: the keymap file (None: :func:`default_keymap_path`).
        state: where the picked theme is remembered (None: nowhere, as in tests).
    """

    theme: str | None = None
    glyphs: str = "unicode"
    keymap: Path | None = None
    state: Path | None = None

    @property
    def keymap_path(self) -> Path:
        """The keymap file in force."""
        return self.keymap if self.keymap is not None else default_keymap_path()

    def remembered_theme(self) -> str | None:
        """The theme last picked in the palette, if the state file holds one."""
        if self.state is None:
            return None
        try:
            data = read_capped(self.state, STATE_BYTES)
            state = json.loads(data) if data is not None else None
        except (OSError, ValueError):
            return None  # no state yet, or not ours: nothing is remembered
        theme = state.get("theme") if isinstance(state, dict) else None
        return theme if isinstance(theme, str) else None

    def remember_theme(self, theme: str) -> str | None:
        """Keep ``theme`` in the state file (written whole or not at all); the problem, in
        one line, when it cannot be written."""
        if self.state is None:
            return None
        try:
            self.state.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self.state, json.dumps({"theme": theme}, indent=2) + "\n")
        except OSError as exc:
            return f"{self.state}: the theme is not remembered ({exc.strerror or exc})"
        return None
