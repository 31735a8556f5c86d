"""The workbench's run controller: what the user asked, one thing at a time, and the drive.

No Textual here: a front end (the workbench screen, or a test) calls these methods from one
thread, its *owner*, and receives what happened as typed updates through one ``publish``
callback, which may be called from other threads (the drive's and the pulse's). The screen
posts each update to itself as one message and renders it; the controller decides.

- **Intents** (step, continue, restart, reload, payload changes, open, export...) queue behind
  the one in progress and start only when it is done, so a burst of key presses never puts
  two drives on one run, or restarts a run under a drive. An intent's ``start`` returns True
  when it began work that ends later (a drive, a modal), after which :meth:`done` is called
  (for a drive, by the owner once it has shown the update that ends it).
- **Signals** (pause, stop) act at once on the drive in progress and start nothing; they drop
  queued steps and continues, which would undo them.
- **Hold and release**: with break on failure the drive holds at a failed attempt (an
  :class:`Held` update) until a step or continue releases it.
- **Updates**, in the order they happen: :class:`DriveStarted`, then :class:`EventsRecorded`
  (coalesced batches) and :class:`Ticked` (every ``pulse_seconds`` while a drive goes on or
  tasks run ahead), perhaps :class:`Held`, and one of :class:`Paused`, :class:`Finished` or
  :class:`Crashed` ending the drive. Each says how many events the trace held when it was
  published (``recorded``): the screen shows the trace up to there.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from ..engine.driver import StopReason
from ..engine.events import RunStatus, Status, TraceEvent
from ..engine.orchestrator import Run
from .session import Session

__all__ = [
    "COALESCE_SECONDS",
    "PULSE_SECONDS",
    "Crashed",
    "DriveStarted",
    "EventsRecorded",
    "Finished",
    "Go",
    "Held",
    "Paused",
    "RunController",
    "RunUpdate",
    "Ticked",
    "WorkbenchState",
]

COALESCE_SECONDS = 0.05
"""At most one batch of events per this many seconds while continuing (the UI stays smooth)."""

PULSE_SECONDS = 0.1
"""While a drive goes on, a :class:`Ticked` update this often: an attempt shows as running
(with its elapsed time) as soon as it starts, before its step retires."""

RUN_INTENTS = frozenset({"step", "continue"})


# -- what happened (published) ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DriveStarted:
    """A step (``single``) or a continue began."""

    recorded: int
    single: bool


@dataclass(frozen=True, slots=True)
class EventsRecorded:
    """Steps retired: their events are in the trace (coalesced while continuing)."""

    recorded: int


@dataclass(frozen=True, slots=True)
class Ticked:
    """Time passed while a drive goes on (or tasks still run ahead of a pause)."""

    recorded: int


@dataclass(frozen=True, slots=True)
class Held:
    """Break on failure holds the run at ``event``, a failed attempt, before any retry."""

    recorded: int
    event: TraceEvent


@dataclass(frozen=True, slots=True)
class Paused:
    """The drive returned before the run's end: why, and the task concerned."""

    recorded: int
    reason: StopReason
    task: str | None


@dataclass(frozen=True, slots=True)
class Finished:
    """``run`` reached its end; ``store_problem`` says why it is not (fully) recorded.

    ``run`` tells a run left behind from the one on screen: a run stopped to fork a what-if
    re-run ends after the fork has replaced it.
    """

    recorded: int
    status: RunStatus
    store_problem: str | None
    run: Run


@dataclass(frozen=True, slots=True)
class Crashed:
    """The drive raised: a defect of ours, never a task's failure (those are events)."""

    recorded: int
    error: Exception


RunUpdate = DriveStarted | EventsRecorded | Ticked | Held | Paused | Finished | Crashed
"""Everything the controller publishes."""

DRIVE_ENDS = (Paused, Finished, Crashed)


class Go(StrEnum):
    """What a step or continue did."""

    RELEASED = "released"
    """A held run goes on (no new drive)."""
    STARTED = "started"
    """A drive began."""
    QUEUED = "queued"
    """It waits behind the intent in progress."""
    NOTHING = "nothing"
    """Nothing to drive (nothing open, or the run is finished)."""


@dataclass(frozen=True, slots=True)
class WorkbenchState:
    """What decides whether an action can act now (see ``why_not`` in :mod:`.actions`)."""

    open: bool = False
    replay: bool = False
    finished: bool = False
    driving: bool = False
    at_start: bool = True
    """The time cursor is before the first event."""
    live_end: bool = True
    """The view follows the run (not back in time)."""
    recorded: bool = False
    """At least one event is shown."""


@dataclass(frozen=True, slots=True)
class _Intent:
    name: str
    start: Callable[[], bool]


def _thread(body: Callable[[], None]) -> None:
    threading.Thread(target=body, name="harness-drive", daemon=True).start()


@dataclass
class RunController:
    """Owns the intents and the drive of the session on screen.

    Args:
        session: what is open (None: nothing).
        publish: receives every update, from any thread.
        spawn: runs the drive's body in another thread (the screen uses its worker pool, so
            that waiting for its workers waits for the drive too).
        pulse_seconds: see :data:`PULSE_SECONDS`.
    """

    session: Session | None
    publish: Callable[[RunUpdate], object]
    spawn: Callable[[Callable[[], None]], object] = _thread
    pulse_seconds: float = PULSE_SECONDS
    driving: bool = field(default=False, init=False)
    """From a drive's start until its end has been received (:meth:`drive_ended`)."""

    def __post_init__(self) -> None:
        self._queue: deque[_Intent] = deque()
        self._current: _Intent | None = None
        self._idle = threading.Event()  # clear while a drive's body runs
        self._idle.set()
        self._lock = threading.Lock()
        self._pulsing = False
        self._closed = threading.Event()

    # -- state ------------------------------------------------------------------------------

    def state(self) -> WorkbenchState:
        """What the actions' availability is read from."""
        session = self.session
        if session is None:
            return WorkbenchState()
        return WorkbenchState(
            open=True,
            replay=session.replay,
            finished=session.run.finished,
            driving=self.driving,
            at_start=session.position < 0,
            live_end=session.view_seq is None,
            recorded=session.delivered > 0,
        )

    @property
    def held(self) -> TraceEvent | None:
        """The failed attempt the run is held at (break on failure), or None."""
        return None if self.session is None else self.session.live.driver.held

    @property
    def executing(self) -> bool:
        """A drive is in progress and not held (a held run waits for the user: it executes
        nothing until released)."""
        return self.driving and self.held is None

    @property
    def busy(self) -> bool:
        """An intent is in progress."""
        return self._current is not None

    def pending(self, name: str | None = None) -> int:
        """How many intents wait (of one name, or of any)."""
        return sum(1 for intent in self._queue if name is None or intent.name == name)

    # -- intents ----------------------------------------------------------------------------

    def submit(self, name: str, start: Callable[[], bool]) -> bool:
        """Queue an intent; start it now if nothing is in progress. True if it waits."""
        self._queue.append(_Intent(name, start))
        if self._current is None:
            self._next()
            return False
        return True

    def done(self) -> None:
        """The intent in progress has ended: start the next one."""
        self._current = None
        self._next()

    def _next(self) -> None:
        while self._queue and self._current is None:
            intent = self._queue.popleft()
            self._current = intent
            if not intent.start():
                self._current = None

    def _drop_run_intents(self) -> int:
        kept = deque(intent for intent in self._queue if intent.name not in RUN_INTENTS)
        dropped = len(self._queue) - len(kept)
        self._queue = kept
        return dropped

    def step(self) -> Go:
        """Execute the next task (a held run: finish its task)."""
        return self._go(single=True)

    def continue_(self) -> Go:
        """Run to the next breakpoint or the end (a held run: go on as it was going)."""
        return self._go(single=False)

    def _go(self, single: bool) -> Go:
        session = self.session
        if session is not None and session.live.driver.release(single=single):
            return Go.RELEASED
        name = "step" if single else "continue"
        if self.submit(name, lambda: self._begin_drive(single)):
            return Go.QUEUED
        return Go.STARTED if self.driving else Go.NOTHING

    def replace(self, session: Session | None) -> None:
        """Show ``session`` in place of the one open (which is left behind: abandoned)."""
        if self.session is not None and self.session is not session:
            self.session.close()
        self.session = session

    # -- signals ----------------------------------------------------------------------------

    def pause(self) -> tuple[int, TraceEvent | None]:
        """Make a continuing run stop after the current task: the queued steps and
        continues dropped, and the attempt running now (if shown)."""
        dropped = self._drop_run_intents()
        if self.session is None:
            return dropped, None
        self.session.live.driver.pause()
        return dropped, self.session.running_attempt()

    def stop(self) -> TraceEvent | None:
        """Stop the drive in progress: the attempt running and the remaining tasks are
        cancelled (cleanups still run; a second stop cancels them too)."""
        self._drop_run_intents()
        if self.session is None:
            return None
        running = self.session.running_attempt()
        self.session.live.driver.cancel()
        return running

    def stop_to_end(self) -> TraceEvent | None:
        """Stop the run as :meth:`stop` does, then drive it to its end before any intent
        submitted after this: its ``all_done`` cleanups run (a drive that was one step, or
        was held, would otherwise leave them to a next step that never comes). For what
        replaces the run on screen (a restart, a re-run, a what-if)."""
        running = self.stop()
        session = self.session
        if session is not None and not session.run.finished:
            self.submit("wind down", lambda: self._begin_drive(single=False))
        return running

    # -- the drive --------------------------------------------------------------------------

    def _begin_drive(self, single: bool) -> bool:
        session = self.session
        if session is None or session.run.finished or self._closed.is_set():
            return False  # nothing to drive, or the workbench is quitting
        session.go_live()
        self.driving = True
        self._idle.clear()
        with self._lock:
            pulse = not self._pulsing
            self._pulsing = True
        self.publish(DriveStarted(len(session.run.events), single))
        if pulse:
            threading.Thread(target=self._pulse, name="harness-pulse", daemon=True).start()
        self.spawn(lambda: self._drive(session, single))
        return True

    def _drive(self, session: Session, single: bool) -> None:
        """The drive's body, in its own thread: step once or continue."""
        run = session.run
        driver = session.live.driver
        driver.breakpoints = session.stops_at
        driver.hold_attempts = True
        driver.on_hold = lambda event: self.publish(Held(len(run.events), event))
        driver.on_events = lambda _batch: self.publish(EventsRecorded(len(run.events)))
        driver.batch_seconds = COALESCE_SECONDS
        update: RunUpdate
        try:
            stop = session.live.drive(single=single)
        except Exception as exc:  # a defect of ours: said on screen, the workbench goes on
            update = Crashed(len(run.events), exc)
        else:
            if run.finished:
                update = Finished(len(run.events), run.status, session.store_problem, run)
            else:
                update = Paused(len(run.events), stop.reason, stop.task)
        finally:
            self._idle.set()
        self.publish(update)

    def _pulse(self) -> None:
        """Tick while a drive's body runs or tasks run ahead of a pause (their marks clear
        when they end); then one last tick, and the thread ends."""
        while not self._closed.wait(self.pulse_seconds):
            session = self.session
            if session is None:
                break
            self.publish(Ticked(len(session.run.events)))
            with self._lock:
                if self._idle.is_set() and not session.run.in_flight():
                    self._pulsing = False
                    return
        with self._lock:
            self._pulsing = False

    def drive_ended(self, update: RunUpdate) -> None:
        """The owner received ``update``, which ends a drive: nothing drives any more (a
        finished run also drops the steps and continues queued). Once it is shown, the owner
        calls :meth:`done` so that the next intent may start."""
        if isinstance(update, Finished):
            self._drop_run_intents()
        self.driving = False

    @staticmethod
    def ends_drive(update: RunUpdate) -> bool:
        """``update`` is the last of its drive."""
        return isinstance(update, DRIVE_ENDS)

    # -- leaving ----------------------------------------------------------------------------

    def working_on(self) -> tuple[str, ...] | None:
        """What :meth:`leave` would wait for: None when nothing goes on (it returns at
        once), else the tasks running now (the drive's attempt, and those ahead of it)."""
        session = self.session
        if session is None or (self._idle.is_set() and not session.run.in_flight()):
            return None
        events = session.run.events
        running = [events[-1].task] if events and events[-1].status is Status.RUNNING else []
        return tuple(dict.fromkeys([*running, *sorted(session.run.in_flight())]))

    def leave(self, wait: float) -> None:
        """The workbench is quitting. A run going on is paused (after the task it is on; a
        hold finishes its task) and left behind: ``abandoned``, resumable. A task still busy
        after ``wait`` seconds is stopped as Ctrl+C stops a run (the run ends ``cancelled``,
        cleanups not run), so that quitting never waits on it; a run that does not stop even
        then is left to its lease (read as ``interrupted`` once this process ends). Called
        again, it does nothing."""
        if self._closed.is_set():
            return
        self._closed.set()
        self._queue.clear()  # nothing queued starts after this
        session = self.session
        if session is None:
            return
        driver = session.live.driver
        deadline = time.monotonic() + wait
        if not self._idle.is_set():
            driver.pause()
        while not self._idle.is_set() and time.monotonic() < deadline:
            if driver.held is not None:  # a hold would never end: finish its task instead
                driver.release(single=True)
            self._idle.wait(0.05)
        if not self._idle.is_set():
            driver.cancel()
            driver.cancel()  # a second stop: no cleanups either
            if not self._idle.wait(wait):
                return
        session.close()
