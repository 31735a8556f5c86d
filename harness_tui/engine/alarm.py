"""The one SIGALRM timer that times out attempts run on the main thread.

An attempt with a timeout sets a deadline; the kernel's timer is armed only when it is not
already due to fire by then (the first timed attempt of a run, or a shorter timeout than the
one it was armed for). When it fires before the current attempt's deadline (it was armed for
an attempt that has ended since), the handler arms it for the rest of that deadline; between
attempts it lets it lapse. A run of tasks with the same timeout therefore makes about one
system call per timeout period instead of two per attempt, and no attempt checks who owns
SIGALRM: the handler is installed, or found taken, once per run (:func:`prepare`).

At the deadline the handler raises :class:`CallTimeout` (a ``BaseException``, so ``except
Exception`` in user code lets it through) and fires again every :data:`REPEAT_SECONDS` while
the attempt goes on, so a task that swallows it is interrupted again, not waited for.
"""

from __future__ import annotations

import signal
import threading
import time

__all__ = ["REPEAT_SECONDS", "CallTimeout", "available", "lapse", "prepare", "timer"]

REPEAT_SECONDS = 0.05
"""After the deadline the alarm repeats this often until the attempt ends."""

_NEVER = float("inf")
_EARLY = 1e-4
"""An alarm less than this before the deadline counts as on time (timers round)."""
_MAIN = threading.main_thread().ident
_SUPPORTED = hasattr(signal, "setitimer")


class CallTimeout(BaseException):
    """Raised by the SIGALRM handler at an attempt's deadline."""


class _Timer:
    """The timer's state: the deadline of the attempt running now (None between attempts),
    when the kernel timer fires (``inf``: it is not armed), and whether the handler is ours."""

    __slots__ = ("deadline", "fires", "ready")

    def __init__(self) -> None:
        self.deadline: float | None = None
        self.fires = _NEVER
        self.ready = False


timer = _Timer()


def _arm(seconds: float) -> None:
    timer.fires = time.monotonic() + seconds
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-6))  # 0 would disarm it


def arm_for(deadline: float, seconds: float) -> None:
    """Make sure the timer fires by ``deadline`` (``seconds`` from now), arming it only when
    it is not due by then already."""
    if timer.fires > deadline:
        _arm(seconds)


def _on_alarm(signum: int, frame: object) -> None:
    deadline = timer.deadline
    if deadline is None:  # the attempt it was armed for has ended: let it lapse
        timer.fires = _NEVER
        return
    left = deadline - time.monotonic()
    if left > _EARLY:  # armed for an earlier attempt: wait out the rest of this one
        _arm(left)
        return
    _arm(REPEAT_SECONDS)
    raise CallTimeout


def prepare() -> None:
    """A run starts: on the main thread, install the handler when SIGALRM is free (or ours
    already), so that its attempts' timeouts use the timer; a timer a finished run left
    armed lapses."""
    if not _SUPPORTED or threading.get_ident() != _MAIN:
        return
    handler = signal.getsignal(signal.SIGALRM)
    if handler is signal.SIG_DFL:
        signal.signal(signal.SIGALRM, _on_alarm)
        handler = _on_alarm
    timer.ready = handler is _on_alarm
    if timer.ready:
        lapse()


def lapse() -> None:
    """Disarm the timer when no attempt needs it (the end of a run: no stray alarm after)."""
    if timer.fires != _NEVER and timer.deadline is None and threading.get_ident() == _MAIN:
        signal.setitimer(signal.ITIMER_REAL, 0)
        timer.fires = _NEVER


def available() -> bool:
    """Whether an attempt on the calling thread can be timed out by the timer: the main
    thread, with the handler ours (installed now when nobody has prepared a run yet and
    SIGALRM is free: a direct call of an attempt)."""
    if threading.get_ident() != _MAIN:
        return False
    if not timer.ready:
        prepare()
    return timer.ready
