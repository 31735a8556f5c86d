"""Running an attempt here, in the calling process: its output captured, its timeout
enforced, a stop able to leave it (docs/executors.md).

Timeouts, two ways:

- ``signal`` (used automatically on the main thread where SIGALRM exists and nobody else owns
  it): the one SIGALRM timer of :mod:`.alarm` interrupts the attempt with an exception that
  ``except Exception`` in user code does not catch. The attempt really stops (unless it is
  blocked inside C code that ignores signals), and it costs no system call per attempt.
- ``thread`` (everywhere else, and for every *detached* attempt: one a stop must reach even
  without a timeout, as in the workbench): the attempt runs in a helper
  thread that the calling thread keeps, and the caller stops waiting at the limit. Python
  cannot kill a thread, so a timed-out call keeps running in the background until it returns;
  its late result is discarded and the helper is replaced.

Either way the attempt is also timed on its clock, so a task that sleeps through a
:class:`~harness_tui.engine.clock.FakeClock` past its limit is timed out without real waiting.
"""

from __future__ import annotations

import queue
import signal
import threading
import weakref
from collections.abc import Callable, Mapping
from time import monotonic
from typing import Any, Protocol

from .aio import is_async, run_coroutine
from .alarm import CallTimeout, arm_for, timer
from .alarm import available as alarm_available
from .capture import LogBuffer, current, install
from .clock import Clock
from .failures import error_of, traceback_of
from .outcome import CANCELLED, ERROR, INTERRUPTED, OK, TIMEOUT, Outcome, OutcomeKind
from .recorded_calls import AttemptIO
from .recorded_calls import current as current_io

__all__ = ["Call", "cancel", "close_here", "interrupt_here", "run_here"]


class Call(Protocol):
    """What running a call here needs (an :class:`~harness_tui.engine.attempt.Attempt`)."""

    @property
    def fn(self) -> Callable[[Mapping[str, Any]], Any]: ...
    @property
    def inputs(self) -> Mapping[str, Any]: ...
    @property
    def timeout(self) -> float | None: ...
    @property
    def log(self) -> LogBuffer | None: ...
    @property
    def clock(self) -> Clock: ...
    @property
    def io(self) -> AttemptIO | None: ...


_TIMED_OUT = Outcome(TIMEOUT)
_CANCELLED = Outcome(CANCELLED)


def _captured(
    fn: Callable[[Mapping[str, Any]], Any],
    inputs: Mapping[str, Any],
    log: LogBuffer | None,
    io: AttemptIO | None = None,
) -> Outcome:
    """:func:`_call` with the attempt's output going to ``log`` and its requests to ``io``
    while it runs."""
    if io is not None:
        install()
        io_token = current_io.set(io)
        try:
            return _captured(fn, inputs, log)
        finally:
            current_io.reset(io_token)
    if log is None:
        return _call(fn, inputs)
    install()
    token = current.set(log)
    try:
        return _call(fn, inputs)
    finally:  # also when the SIGALRM timeout unwinds through here
        current.reset(token)


_tuple_new = tuple.__new__


def _call(fn: Callable[[Mapping[str, Any]], Any], inputs: Mapping[str, Any]) -> Outcome:
    """The one place user code is called. Whatever the task raises is its failure, data for
    the trace: ``SystemExit`` and a bare ``BaseException`` too. Ctrl+C (``KeyboardInterrupt``)
    stops the run instead, and a timeout's own exception goes on to the timer's owner."""
    try:
        return _tuple_new(Outcome, (OK, fn(inputs), None, None, None, None, None, None, None))
    except CallTimeout:
        raise
    except KeyboardInterrupt:
        return INTERRUPTED
    except BaseException as exc:
        return Outcome(ERROR, error=error_of(exc), traceback=traceback_of(exc), exception=exc)


class _Job:
    __slots__ = ("call", "cancelled", "done", "outcome")

    def __init__(self, call: Call) -> None:
        self.call = call
        self.done = threading.Event()
        self.outcome: Outcome | None = None
        self.cancelled = False


class _Worker:
    """A daemon thread that runs jobs one by one until it is abandoned."""

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._loop, name="harness-attempt", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            call = job.call
            try:
                outcome = _captured(call.fn, call.inputs, call.log, call.io)
            except BaseException as exc:  # never leave the run waiting on a dead worker
                outcome = Outcome(ERROR, error=error_of(exc))
            if not job.cancelled:
                job.outcome = outcome
            job.done.set()


class _Here(threading.local):
    """Per calling thread: its helper thread, the detached job it waits for, and whether an
    attempt runs on it right now."""

    worker: _Worker | None = None
    job: _Job | None = None
    inline = False


_here = _Here()
_lock = threading.RLock()  # reentrant: Ctrl+C's handler cancels on a thread that may hold it
_jobs: dict[int, _Job] = {}  # detached calls running now, by id(call), for cancel()


def cancel(call: Call) -> None:
    """Stop waiting for ``call`` if it runs detached in this process (from any thread); it is
    then reported ``cancelled``."""
    with _lock:
        job = _jobs.get(id(call))
        if job is not None and job.call is call:
            job.cancelled = True
            job.done.set()


def _unblock_alarm() -> None:
    """A task that blocked SIGALRM must not disable the timeouts of every later attempt (checked
    only after a timeout: a system call per attempt would cost the hot path)."""
    if signal.SIGALRM in signal.pthread_sigmask(signal.SIG_BLOCK, ()):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, (signal.SIGALRM,))


_MODES = ("auto", "signal", "thread")


def run_here(attempt: Call, detach: bool, timeouts: str) -> Outcome:
    """Run the attempt directly, under a signal timer, or in this thread's helper thread; an
    ``async def`` task on the harness's event loop."""
    if is_async(attempt.fn):
        return _run_coroutine(attempt)
    if attempt.timeout is None and not detach:
        here = _here
        here.inline = True
        try:
            return _captured(attempt.fn, attempt.inputs, attempt.log, attempt.io)
        finally:
            here.inline = False
    if timeouts not in _MODES:
        raise ValueError(f"timeouts must be auto, signal or thread, not {timeouts!r}")
    if not detach and timeouts != "thread" and alarm_available():
        return _run_with_alarm(attempt)
    if timeouts == "signal" and not detach:
        raise RuntimeError("signal timeouts need the main thread and a free SIGALRM")
    return _run_in_worker(attempt)


def _run_with_alarm(attempt: Call) -> Outcome:
    timeout = attempt.timeout
    assert timeout is not None
    clock = attempt.clock
    started = clock.now()
    deadline = monotonic() + timeout
    here = _here
    here.inline = True
    try:
        timer.deadline = deadline  # before arming: an alarm due now sees this attempt's
        if timer.fires > deadline:
            arm_for(deadline, timeout)
        try:
            outcome = _captured(attempt.fn, attempt.inputs, attempt.log, attempt.io)
        finally:
            timer.deadline = None  # the timer is left to lapse or serve the next attempt
    except CallTimeout:
        outcome = _TIMED_OUT
    finally:
        here.inline = False
    if outcome is _TIMED_OUT or clock.now() - started > timeout:
        _unblock_alarm()  # the task may have blocked SIGALRM (after the alarm came, too)
        return _TIMED_OUT
    return outcome


def _enter(job: _Job) -> None:
    with _lock:
        _jobs[id(job.call)] = job
        _here.job = job


def _leave(job: _Job) -> bool:
    """Forget the job; whether it was cancelled (no cancel can reach it after this)."""
    with _lock:
        if _jobs.get(id(job.call)) is job:
            del _jobs[id(job.call)]
        _here.job = None
        return job.cancelled


def _run_in_worker(attempt: Call) -> Outcome:
    clock = attempt.clock
    started = clock.now()
    job = _Job(attempt)
    here = _here
    worker = here.worker
    if worker is None:
        worker = here.worker = _Worker()
        # The helper ends with the thread that keeps it (a workbench run's thread, a pool's).
        weakref.finalize(threading.current_thread(), worker.jobs.put, None).atexit = False
    _enter(job)
    worker.jobs.put(job)
    finished = clock.wait(job.done, attempt.timeout)
    cancelled = _leave(job)
    if cancelled or not finished:
        # The worker is still busy with this call: leave it behind and start afresh.
        job.cancelled = True
        worker.jobs.put(None)
        here.worker = None
    if cancelled and finished:
        return _CANCELLED
    if not finished:
        return _TIMED_OUT
    assert job.outcome is not None
    if attempt.timeout is not None and clock.now() - started > attempt.timeout:
        return _TIMED_OUT
    return job.outcome


def _run_coroutine(attempt: Call) -> Outcome:
    """Await an ``async def`` attempt on the harness loop; a timeout or a stop cancels the
    coroutine."""
    clock = attempt.clock
    started = clock.now()
    job = _Job(attempt)
    _enter(job)
    future, outcome = run_coroutine(attempt.fn, attempt.inputs, attempt.log, job.done, attempt.io)
    finished = clock.wait(job.done, attempt.timeout)
    cancelled = _leave(job)
    if cancelled or not finished:
        future.cancel()
        return _CANCELLED if cancelled else _TIMED_OUT
    kind, value, error, trace = outcome()
    if attempt.timeout is not None and clock.now() - started > attempt.timeout:
        return _TIMED_OUT
    return Outcome(OutcomeKind(kind), value, error, trace)


def interrupt_here() -> None:
    """Ctrl+C, from the main thread's SIGINT handler: an attempt running on this thread is
    interrupted (``KeyboardInterrupt``, recorded ``cancelled``); one in its helper thread is
    left, as by :meth:`Call.cancel`."""
    here = _here
    job = here.job
    if job is not None:
        cancel(job.call)
    if here.inline:
        raise KeyboardInterrupt


def close_here() -> None:
    """Let this thread's helper thread end once it is idle."""
    here = _here
    if here.worker is not None:
        here.worker.jobs.put(None)
        here.worker = None
