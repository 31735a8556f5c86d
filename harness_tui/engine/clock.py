"""Time, injected (I5): the engine never reads the wall clock or sleeps by itself.

``now()`` is monotonic (retry intervals, timeouts, durations); ``wall()`` is epoch seconds for
timestamps people read. Neither ever enters a digest.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol

__all__ = ["Clock", "FakeClock", "SystemClock"]


class Clock(Protocol):
    """Where the engine gets time: timings, retry intervals and timeouts."""

    def now(self) -> float:
        """Seconds on this clock's own scale (only differences are meaningful)."""
        ...

    def wall(self) -> float:
        """Epoch seconds (UTC), for timestamps shown to people."""
        ...

    def sleep(self, seconds: float, cancel: threading.Event | None = None) -> None:
        """Wait ``seconds`` on this clock, or less once ``cancel`` is set."""
        ...

    def wait(self, done: threading.Event, timeout: float | None) -> bool:
        """Block until ``done`` is set or ``timeout`` passes; True if it was set."""
        ...


class SystemClock:
    """The real clock: monotonic time, real sleeps and waits."""

    def now(self) -> float:
        """Monotonic seconds."""
        return time.monotonic()

    def wall(self) -> float:
        """The system's epoch time."""
        return time.time()

    def sleep(self, seconds: float, cancel: threading.Event | None = None) -> None:
        """Sleep for real; a stop (``cancel``) wakes it at once."""
        if seconds <= 0:
            return
        if cancel is None:
            time.sleep(seconds)
        else:
            cancel.wait(seconds)

    def wait(self, done: threading.Event, timeout: float | None) -> bool:
        """Wait for real, at most ``timeout`` seconds."""
        return done.wait(timeout)


class FakeClock:
    """A clock that only moves when told to: sleeping advances it instantly.

    Deterministic timings for tests and snapshots. A task that "sleeps" through it past its
    timeout is detected as timed out without any real waiting; :meth:`wait` waits for the
    attempt to finish for real (a fake clock cannot interrupt a truly hanging call).

    Args:
        start: the initial time.
        tick: how far :meth:`now` advances on each call, so durations are non-zero and stable.
        epoch: what :meth:`wall` reads at fake time 0 (default 2026-01-01T00:00:00Z).
    """

    EPOCH = 1_767_225_600.0

    def __init__(self, start: float = 0.0, tick: float = 0.0, epoch: float = EPOCH) -> None:
        self._now = start
        self._tick = tick
        self._epoch = epoch
        self.sleeps: list[float] = []

    def now(self) -> float:
        """The current fake time (then advance by ``tick``)."""
        value = self._now
        self._now = value + self._tick
        return value

    def wall(self) -> float:
        """The fixed epoch plus the fake time (reading it does not advance the clock)."""
        return self._epoch + self._now

    def advance(self, seconds: float) -> None:
        """Move time forward."""
        self._now += seconds

    def sleep(self, seconds: float, cancel: threading.Event | None = None) -> None:
        """Record the sleep and advance instantly."""
        self.sleeps.append(seconds)
        self.advance(max(seconds, 0.0))

    def wait(self, done: threading.Event, timeout: float | None) -> bool:
        """Wait until the attempt finishes; fake time decides about timeouts afterwards."""
        done.wait()
        return True
