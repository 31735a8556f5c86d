"""Processes a task leaves behind are ended with the command (docs/reliability.md, "Children
of tasks end with the command").

A task may fork, or start a process and not wait for it. The command makes itself a child
subreaper (Linux): a process a task starts, and whatever that one starts and orphans, stays a
descendant of the command instead of moving to init. When the command exits, every process
still its child gets SIGTERM, then SIGKILL after a grace period, until none is left (each
one's orphans come back to the command as they end).

Elsewhere (no ``prctl``, no ``/proc``), nothing is done: children are left as they are.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import time
from pathlib import Path

__all__ = ["end_children", "keep_children"]

_PR_SET_CHILD_SUBREAPER = 36
GRACE_SECONDS = 1.0
"""How long a child has after SIGTERM before SIGKILL."""


def keep_children() -> bool:
    """Make this process the subreaper of what it starts; whether that worked."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _children() -> list[int]:
    """The processes whose parent is this one (read from ``/proc``)."""
    me, found = os.getpid(), []
    with contextlib.suppress(OSError):
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text(encoding="ascii", errors="replace")
            except OSError:
                continue  # ended meanwhile
            fields = stat.rsplit(")", 1)[-1].split()  # the name may hold spaces and ')'
            if len(fields) > 1 and fields[1] == str(me) and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def _reap() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def end_children() -> None:
    """SIGTERM every child, SIGKILL those still there after :data:`GRACE_SECONDS`, until
    none is left; reap them all."""
    _reap()
    deadline: float | None = None
    while children := _children():
        now = time.monotonic()
        if deadline is None:
            deadline = now + GRACE_SECONDS
        sig = signal.SIGTERM if now < deadline else signal.SIGKILL
        for pid in children:
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        time.sleep(0.02)
        _reap()
