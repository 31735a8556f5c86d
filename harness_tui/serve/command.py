"""The command line of the app that each browser connection runs.

One function builds it, from the same words a person types, so a served workbench opens
exactly what ``harness-tui`` opens in a terminal (with no file: whatever the bare command opens)
and follows it when that changes. It is an argument list, run without a shell: a file name
is one argument whatever it contains, and ``--`` keeps one that starts with ``-`` a file.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

__all__ = ["Target", "app_command"]


@dataclass(frozen=True, slots=True)
class Target:
    """What a served workbench opens.

    Attributes:
        file: a workflow file, a Python harness reference or a run export (None: what the
            bare ``harness-tui`` opens).
        store: the run store (None: the default one).
        no_store: record no live runs.
        replay: open ``file``, a run export, read-only: nothing that runs or imports code.
    """

    file: str | None = None
    store: str | None = None
    no_store: bool = False
    replay: bool = False


def app_command(target: Target, python: str = sys.executable) -> list[str]:
    """The argument list that starts the workbench on ``target`` (the web driver is chosen by
    the environment textual-serve gives it)."""
    base = [python, "-m", "harness_tui"]
    if target.replay:
        assert target.file is not None
        return [*base, "show", "--read-only", "--", target.file]
    store = [] if target.store is None else ["--store", target.store]
    store += ["--no-store"] if target.no_store else []
    if target.file is None:
        return [*base, *store]
    return [*base, "open", *store, "--", target.file]
