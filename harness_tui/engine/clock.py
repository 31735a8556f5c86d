"""Time, injected (I5): the engine never reads the wall clock or sleeps by itself."""

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

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` on this clock."""
        ...

    def wait(self, done: threading.Event, timeout: float | None) -> bool:
        """Block until ``done`` is set or ``timeout`` passes; True if it was set."""
        ...


class SystemClock:
    """The real clock: monotonic time, real sleeps and waits."""

    def now(self) -> float:
        """Monotonic seconds."""
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        """Sleep for real."""
        if seconds > 0:
            time.sleep(seconds)

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
    """

    def __init__(self, start: float = 0.0, tick: float = 0.0) -> None:
        self._now = start
        self._tick = tick
        self.sleeps: list[float] = []

    def now(self) -> float:
        """The current fake time (then advance by ``tick``)."""
        value = self._now
        self._now = value + self._tick
        return value

    def advance(self, seconds: float) -> None:
        """Move time forward."""
        self._now += seconds

    def sleep(self, seconds: float) -> None:
        """Record the sleep and advance instantly."""
        self.sleeps.append(seconds)
        self.advance(max(seconds, 0.0))

    def wait(self, done: threading.Event, timeout: float | None) -> bool:
        """Wait until the attempt finishes; fake time decides about timeouts afterwards."""
        done.wait()
        return True
