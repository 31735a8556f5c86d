"""The command line: the only place that prints and picks exit codes.

Exit codes: 0 success, 1 a failed run (or, with ``--exit-code``, a difference), 2 invalid input,
130 a run stopped by Ctrl+C.
Each command's module (``check_cmds``, ``records_cmds``, ``tui_cmds``, ...) is imported only
when that command runs (see :data:`.app.LAZY_COMMANDS`), and heavy imports (rich, textual, the
records layer) are deferred into the commands that need them, so that ``validate`` and ``plan``
start fast.
"""

from __future__ import annotations

from .app import cli, main

__all__ = ["cli", "main"]
