"""The command line: the only place that prints and picks exit codes.

Exit codes: 0 success, 1 a failed run (or, with ``--exit-code``, a difference), 2 invalid input,
130 a run stopped by Ctrl+C.
Heavy imports (rich, textual, the records layer) are deferred into the commands that need them
so that ``validate`` and ``plan`` start fast.
"""

from __future__ import annotations

from . import check_cmds, diff_cmd, records_cmds, report_cmd, rerun_cmd, tui_cmds
from .app import cli, main

__all__ = [
    "check_cmds",
    "cli",
    "diff_cmd",
    "main",
    "records_cmds",
    "report_cmd",
    "rerun_cmd",
    "tui_cmds",
]
