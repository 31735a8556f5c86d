"""The one loop that drives a run: every front end (the CLI, the workbench, replay) calls it.

Its contract is the dispatch/retire model (docs/architecture.md, "The one driver loop"). A step
is *dispatched* in plan order once nothing holds it; it *retires* (its events enter the
canonical trace) in plan order. With one worker dispatch and retire coincide; with more, steps
run ahead behind the same interface (see :mod:`.parallel`), and a breakpoint holds their
dispatch too.

- **Hold**: a breakpoint on task *k* holds dispatch of every plan index >= *k*; the step the
  drive started on runs even if it is a breakpoint (you are on it). A drive that returned
  holds everything: jobs already running finish, nothing new starts until the next drive.
- **Hooks**: ``after_attempt`` sees each attempt's final event as it happens and may ask to
  pause once the step retires (break on failure); ``after_step`` sees each retired step's
  events and may stop the drive; ``on_events`` receives the events in batches.
- **Pause and cancel** may come from any thread: pause stops after the step in progress
  retires; cancel abandons the attempt in progress and cancels what remains.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Sequence
from enum import StrEnum
from typing import NamedTuple, Protocol

from .events import FAILURE_STATUSES, Status, TraceEvent
from .scheduler import PlanStep

__all__ = ["Driver", "Steppable", "Stop", "StopReason", "break_on_failed_attempt"]


class StopReason(StrEnum):
    """Why a drive returned."""

    FINISHED = "finished"
    """Every task has its final status (or the run was cancelled)."""
    STEP = "step"
    """A single step was asked for and it retired."""
    BREAKPOINT = "breakpoint"
    """The next step is held by a breakpoint."""
    FAILURE = "failure"
    """An attempt failed and ``break_on_failure`` is on."""
    PAUSED = "paused"
    """:meth:`Driver.pause` was called, or ``after_step`` asked to stop."""


class Stop(NamedTuple):
    """The result of a drive: why it returned, and the task concerned (if any)."""

    reason: StopReason
    task: str | None = None


class Steppable(Protocol):
    """What the driver needs of a run (:class:`~harness_tui.engine.orchestrator.Run`)."""

    @property
    def finished(self) -> bool: ...

    @property
    def next_step(self) -> PlanStep | None: ...

    @property
    def cancelled(self) -> bool: ...

    def step(self) -> list[TraceEvent]: ...

    def cancel(self) -> None: ...

    def hold_dispatch(self, breakpoints: Collection[str] | None) -> None: ...

    def add_listener(self, listener: Callable[[TraceEvent], None]) -> None: ...

    def remove_listener(self, listener: Callable[[TraceEvent], None]) -> None: ...


def break_on_failed_attempt(event: TraceEvent) -> bool:
    """The ``after_attempt`` hook of "break on failure": any failed or timed-out attempt."""
    return event.status in FAILURE_STATUSES


class Driver:
    """Drives one run step by step, with holds, hooks, pause and cancel.

    The hooks and options are attributes too: a front end may set them between drives.

    Args:
        run: the run to drive.
        breakpoints: task names; may be changed between (and during) drives.
        break_on_failure: pause once a step with a failed attempt retires.
        after_attempt: sees each final event of an attempt (or of a task that ran none, like a
            failed condition) as it happens, in the run's thread;
            returning True pauses the drive once that step retires (reason ``failure``).
            ``break_on_failure`` is this hook with :func:`break_on_failed_attempt`.
        on_events: receives the events produced, in batches.
        batch_seconds: while continuing, deliver at most one batch per this many seconds
            (0: one batch per step). The last batch of a drive is always delivered.
        after_step: receives each retired step's events; returning True ends the drive.
        hold_attempts: when ``after_attempt`` (or break on failure) fires, hold the run right
            there, before any retry or fallback, until :meth:`release`; ``on_hold`` is told
            (in the run's thread). Without it the drive stops once the step retires.
        on_hold: called with the attempt's event when the run is held.
        now: the monotonic clock used for batching (not the run's clock: batching is about
            the screen, not the trace).
    """

    def __init__(
        self,
        run: Steppable,
        *,
        breakpoints: Collection[str] = (),
        break_on_failure: bool = False,
        after_attempt: Callable[[TraceEvent], bool] | None = None,
        on_events: Callable[[list[TraceEvent]], object] | None = None,
        batch_seconds: float = 0.0,
        after_step: Callable[[Sequence[TraceEvent]], bool] | None = None,
        hold_attempts: bool = False,
        on_hold: Callable[[TraceEvent], object] | None = None,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.run = run
        self.breakpoints = breakpoints
        self.break_on_failure = break_on_failure
        self.after_attempt = after_attempt
        self.on_events = on_events
        self.batch_seconds = batch_seconds
        self.after_step = after_step
        self.hold_attempts = hold_attempts
        self.on_hold = on_hold
        self._now = now
        self._pause = threading.Event()
        self._busy = threading.Lock()
        self._failed_attempt: TraceEvent | None = None
        self._release = threading.Event()
        self._held: TraceEvent | None = None
        self._was_held = False
        self._single_after_release = False

    # -- control from any thread ------------------------------------------------------------

    def pause(self) -> None:
        """Make the drive in progress return once the current step retires."""
        self._pause.set()

    def cancel(self) -> None:
        """Stop the run: the attempt in progress and every remaining task are cancelled (a
        held run is released to record that)."""
        self.run.cancel()
        self._release.set()

    @property
    def held(self) -> TraceEvent | None:
        """The failed attempt the run is held at, or None."""
        return self._held

    def release(self, *, single: bool = False) -> bool:
        """Let a held run go on: to the end of its task (``single``) or as the drive was
        going. False if the run was not held."""
        if self._held is None:
            return False
        self._single_after_release = single
        self._release.set()
        return True

    @property
    def busy(self) -> bool:
        """True while a drive is in progress."""
        return self._busy.locked()

    # -- driving ----------------------------------------------------------------------------

    def step(self) -> Stop:
        """Dispatch and retire the next step (a held step too: the user asked for it)."""
        return self._drive(single=True)

    def continue_(self) -> Stop:
        """Go on until a hold, a failure (when asked), a pause or the end."""
        return self._drive(single=False)

    def _drive(self, single: bool) -> Stop:
        if not self._busy.acquire(blocking=False):
            raise RuntimeError("this run is already being driven")
        self._pause.clear()
        self._failed_attempt = None
        self._was_held = False
        run = self.run
        run.add_listener(self._watch_attempt)
        batch: list[TraceEvent] = []
        last = self._now()
        try:
            stop = self._loop(single, batch, last)
            # Delivered before the drive ends, so no later drive's batch can overtake it.
            if batch and self.on_events is not None:
                self.on_events(batch)
        finally:
            run.hold_dispatch(None)  # a drive that returned starts nothing more ahead
            run.remove_listener(self._watch_attempt)
            self._busy.release()
        return stop

    def _loop(self, single: bool, batch: list[TraceEvent], last: float) -> Stop:
        run = self.run
        first = True
        paused = self._pause.is_set
        deliver = self.on_events  # set between drives, never during one
        delivers = deliver is not None
        while not run.finished:
            upcoming = run.next_step
            if not first and upcoming is not None and upcoming.task in self.breakpoints:
                return Stop(StopReason.BREAKPOINT, upcoming.task)
            first = False
            run.hold_dispatch(self.breakpoints)
            events = run.step()
            if delivers:
                batch.extend(events)
            if self._was_held:  # the user already stopped at this step's failure
                self._was_held = False
                single = single or self._single_after_release
            if single:
                return Stop(StopReason.FINISHED if run.finished else StopReason.STEP)
            failed = self._failed_attempt
            if failed is not None and not run.finished:
                return Stop(StopReason.FAILURE, failed.task)
            if paused() or (self.after_step and self.after_step(events)):
                return Stop(StopReason.FINISHED if run.finished else StopReason.PAUSED)
            if deliver is not None and batch:
                now = self._now()
                if now - last >= self.batch_seconds:
                    deliver(batch[:])
                    batch.clear()
                    last = now
        return Stop(StopReason.FINISHED)

    def _watch_attempt(self, event: TraceEvent) -> None:
        if event.status is Status.RUNNING:
            return
        hook = self.after_attempt
        if hook is None and self.break_on_failure:
            hook = break_on_failed_attempt
        if hook is None or not hook(event):
            return
        if self.hold_attempts and not self.run.cancelled:
            self._hold(event)
        elif self._failed_attempt is None:
            self._failed_attempt = event

    def _hold(self, event: TraceEvent) -> None:
        """Block the run's thread at this attempt until :meth:`release` or :meth:`cancel`."""
        self._release.clear()
        self._held = event
        self._was_held = True
        self._single_after_release = False
        if self.on_hold is not None:
            self.on_hold(event)
        self._release.wait()
        self._held = None
