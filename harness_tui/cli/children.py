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
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

from ..records.store.statuses import StoredStatus

__all__ = ["end_children", "keep_children", "leave_now", "leaving_on_ctrl_c"]

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


@contextlib.contextmanager
def leaving_on_ctrl_c() -> Iterator[None]:
    """For the block, the end of a command whose run is recorded (its export being written,
    its cluster closing): a Ctrl+C leaves at once, as the third one does during the run.
    One line, the processes tasks started ended, exit 130: never a traceback, nor click's
    ``Aborted!``, from the middle of a close."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def leave(signum: int, frame: object) -> None:
        leave_now(StoredStatus.INTERRUPTED)

    previous = signal.signal(signal.SIGINT, leave)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def leave_now(line: str) -> NoReturn:
    """Leave at once (a Ctrl+C that does not wait): ``line`` on stderr, then nothing more on
    the terminal, the processes tasks started ended, exit 130.

    Other threads still run while the children end (a Dask cluster's, which sees its
    workers go and would say so, or start another), and so would what they start: from
    the line on, the process's streams and descriptors 1 and 2 write nowhere."""
    from .common import EXIT_INTERRUPTED, echo

    echo(line, err=True)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    null = os.open(os.devnull, os.O_WRONLY)
    for fd in (1, 2):
        with contextlib.suppress(OSError):
            os.dup2(null, fd)
    sys.stdout = sys.stderr = open(null, "w", encoding="utf-8")  # noqa: SIM115 - until exit
    end_children()
    os._exit(EXIT_INTERRUPTED)
