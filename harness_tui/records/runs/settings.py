"""How live runs are run and recorded: one value, decided once where a command or the
workbench starts, and handed to every run it makes (new, resumed, forked)."""

from __future__ import annotations

from dataclasses import dataclass

from ...engine.attempt import Executor
from ...engine.clock import Clock
from ...engine.recorded_calls import CallMode, CallSession
from ...engine.spec import DEFAULT_ISOLATION
from ...executors.process import PROCESS
from ..store.run_store import RunStore

__all__ = ["DEFAULT_SETTINGS", "ISOLATIONS", "Recording", "RunSettings"]

ISOLATIONS = (PROCESS, DEFAULT_ISOLATION)
"""What ``isolation`` may say: every task in a child process, or none (None: as each task's
workflow says)."""


@dataclass(frozen=True, slots=True)
class Recording:
    """Record what HTTP services and ``io.call`` answer each attempt (docs/recording.md)."""

    volatile: tuple[str, ...] = ()
    """JSON paths of request bodies left out of matching."""
    secret_headers: tuple[str, ...] = ()
    """Headers never recorded, beside the ones always left out."""

    def session(self) -> CallSession:
        """A fresh recording session, for one run."""
        return CallSession(
            CallMode.LIVE, volatile=self.volatile, secret_headers=self.secret_headers
        )


@dataclass(frozen=True, slots=True)
class RunSettings:
    """The settings of the live runs a front end starts.

    Attributes:
        clock: the runs' clock (None: the system clock).
        store: where runs are recorded (None: nowhere).
        workers: how many attempts run at once.
        executor: where attempts run (None: threads of this process).
        isolation: ``process`` runs every task in a child process, ``in-process`` none;
            None runs in a child only the tasks whose workflow asks for it.
        recording: record what the outside world answers each run (None: nothing).
    """

    clock: Clock | None = None
    store: RunStore | None = None
    workers: int = 1
    executor: Executor | None = None
    isolation: str | None = None
    recording: Recording | None = None

    def new_calls(self) -> CallSession | None:
        """The recording session of a new run, if runs are recorded."""
        return None if self.recording is None else self.recording.session()


DEFAULT_SETTINGS = RunSettings()
"""Threads of this process, one worker, nothing recorded."""
