"""How one attempt of a task is executed.

The orchestrator decides *what* runs and records *what happened*; an executor only runs one
call and reports an :class:`Outcome`. The :class:`SerialExecutor` runs user code; the
:class:`RecordedExecutor` returns what a recorded run says happened, so a replay goes through
the very same orchestrator code path without importing or running any user code.

Timeouts, two ways:

- ``signal`` (used automatically on the main thread where SIGALRM exists and nobody else owns
  it): a one-shot interval timer interrupts the attempt with an exception that ``except
  Exception`` in user code does not catch. The attempt really stops (unless it is blocked inside
  C code that ignores signals), and it costs two system calls instead of a thread hand-off.
- ``thread`` (everywhere else, and for every attempt when ``isolate`` is set, which is what an
  interactive front end wants so that any attempt can be cancelled): the attempt runs in a
  worker thread and the executor stops waiting at the limit. Python cannot kill a thread, so a
  timed-out call keeps running in the background until it returns; its late result is discarded
  and the worker is replaced.

Either way the attempt is also timed on the injected clock, so a task that sleeps through a
:class:`~harness_tui.engine.clock.FakeClock` past its limit is timed out without real waiting.
"""

from __future__ import annotations

import queue
import signal
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple, Protocol

from .aio import is_async, run_coroutine
from .canonical import loads
from .capture import AttemptLog, LogBuffer, current, install
from .clock import Clock
from .events import Status, TraceEvent
from .failures import error_of, traceback_of
from .recorded_calls import AttemptIO
from .recorded_calls import current as current_io

__all__ = [
    "AttemptCall",
    "Executor",
    "Outcome",
    "RecordedExecutor",
    "SerialExecutor",
]


class Outcome(NamedTuple):
    """What one attempt produced.

    Attributes:
        kind: ``ok``, ``error``, ``timeout`` or ``cancelled``.
        value: the returned value when ``ok``.
        error: ``{"type", "message"}`` when ``error``.
        traceback: formatted traceback of an error (kept out of the canonical trace).
        worker: which worker ran the attempt when the executor knows better than the run
            (a Dask worker's number); None: the pool worker that asked.
    """

    kind: str
    value: Any = None
    error: dict[str, str] | None = None
    traceback: str | None = None
    worker: int | None = None


class AttemptCall(NamedTuple):
    """One call to execute.

    Attributes:
        task: the task name.
        attempt: 1-based attempt number (the fallback is attempt ``max_retries + 2``).
        kind: ``task`` or ``fallback``.
        fn: the callable to run.
        inputs: the mapping to pass it.
        timeout: seconds, or None.
        log: where the attempt's output is captured, or None to let it through.
        io: the attempt's recorder of HTTP and recorded calls, or None when the run records
            nothing.
    """

    task: str
    attempt: int
    kind: str
    fn: Callable[[Mapping[str, Any]], Any]
    inputs: Mapping[str, Any]
    timeout: float | None
    log: LogBuffer | None = None
    io: AttemptIO | None = None


class Executor(Protocol):
    """Runs attempts; may be asked from another thread to cancel the current one."""

    def execute(self, call: AttemptCall, clock: Clock) -> Outcome:
        """Run one attempt and report its outcome; never raises for the task's own errors."""
        ...

    def cancel(self) -> None:
        """Stop waiting for the current attempt; it is reported ``cancelled``."""
        ...


INTERRUPTED = Outcome(
    "cancelled",
    error={
        "type": "KeyboardInterrupt",
        "message": "interrupted (Ctrl+C, or the task raised KeyboardInterrupt)",
    },
)
"""A ``KeyboardInterrupt`` in an attempt: the run stops as when the user stops it."""


_tuple_new = tuple.__new__


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


def _call(fn: Callable[[Mapping[str, Any]], Any], inputs: Mapping[str, Any]) -> Outcome:
    """The one place user code is called. Whatever the task raises is its failure, data for
    the trace: ``SystemExit`` and a bare ``BaseException`` too. Ctrl+C (``KeyboardInterrupt``)
    stops the run instead, and a timeout's own exception goes on to the timer's owner."""
    try:
        return _tuple_new(Outcome, ("ok", fn(inputs), None, None, None))
    except _AttemptTimeout:
        raise
    except KeyboardInterrupt:
        return INTERRUPTED
    except BaseException as exc:
        return Outcome("error", error=error_of(exc), traceback=traceback_of(exc))


class _Job:
    __slots__ = ("call", "cancelled", "done", "outcome")

    def __init__(self, call: AttemptCall) -> None:
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
            try:
                outcome = _captured(job.call.fn, job.call.inputs, job.call.log, job.call.io)
            except BaseException as exc:  # never leave the run waiting on a dead worker
                outcome = Outcome("error", error=error_of(exc))
            if not job.cancelled:
                job.outcome = outcome
            job.done.set()


class _AttemptTimeout(BaseException):
    """Raised by the SIGALRM handler; a BaseException so ``except Exception`` lets it through."""


_REPEAT_SECONDS = 0.05
"""After the first alarm the timer repeats, so a task that swallows the timeout's exception
(``except BaseException``) and goes on is interrupted again, not waited for."""

_alarm = {"armed": False}


def _on_alarm(signum: int, frame: object) -> None:
    if _alarm["armed"]:  # a late alarm after the attempt ended is ignored
        raise _AttemptTimeout


def _signal_timeouts_available() -> bool:
    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        return False
    handler = signal.getsignal(signal.SIGALRM)
    return handler in (signal.SIG_DFL, _on_alarm)


_TIMED_OUT = Outcome("timeout")


def _unblock_alarm() -> None:
    """A task that blocked SIGALRM must not disable the timeouts of every later attempt (checked
    only after a timeout: a system call per attempt would cost the hot path)."""
    if signal.SIGALRM in signal.pthread_sigmask(signal.SIG_BLOCK, ()):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, (signal.SIGALRM,))


class SerialExecutor:
    """Runs attempts one at a time.

    Args:
        isolate: run every attempt in the worker thread, not only those with a timeout, so
            that any attempt can be cancelled (what an interactive front end wants).
        timeouts: ``auto`` (signal where possible, else thread), ``signal`` or ``thread``.
    """

    def __init__(self, isolate: bool = False, timeouts: str = "auto") -> None:
        if timeouts not in ("auto", "signal", "thread"):
            raise ValueError(f"timeouts must be auto, signal or thread, not {timeouts!r}")
        self.isolate = isolate
        self.timeouts = timeouts
        self._worker: _Worker | None = None
        self._current: _Job | None = None
        # Reentrant: Ctrl+C's handler cancels on the main thread, which may hold it already.
        self._lock = threading.RLock()
        self.running_inline = False
        """True while an attempt runs on the calling thread (see :meth:`interrupt`)."""

    def execute(self, call: AttemptCall, clock: Clock) -> Outcome:
        """Run the call directly, under a signal timer, or in the worker thread; an ``async
        def`` task on the harness's event loop."""
        if is_async(call.fn):
            return self._execute_coroutine(call, clock)
        if call.timeout is None and not self.isolate:
            self.running_inline = True
            try:
                return _captured(call.fn, call.inputs, call.log, call.io)
            finally:
                self.running_inline = False
        if not self.isolate and self.timeouts != "thread" and _signal_timeouts_available():
            return self._execute_with_alarm(call, clock)
        if self.timeouts == "signal" and not self.isolate:
            raise RuntimeError("signal timeouts need the main thread and a free SIGALRM")
        return self._execute_in_worker(call, clock)

    def _execute_with_alarm(self, call: AttemptCall, clock: Clock) -> Outcome:
        assert call.timeout is not None
        started = clock.now()
        if signal.getsignal(signal.SIGALRM) is not _on_alarm:
            signal.signal(signal.SIGALRM, _on_alarm)
        self.running_inline = True
        try:
            _alarm["armed"] = True
            signal.setitimer(signal.ITIMER_REAL, call.timeout, _REPEAT_SECONDS)
            try:
                outcome = _captured(call.fn, call.inputs, call.log, call.io)
            finally:
                _alarm["armed"] = False
                signal.setitimer(signal.ITIMER_REAL, 0)
        except _AttemptTimeout:
            outcome = _TIMED_OUT
        finally:
            self.running_inline = False
        if outcome is _TIMED_OUT or clock.now() - started > call.timeout:
            _unblock_alarm()  # the task may have blocked SIGALRM (after the alarm came, too)
            return _TIMED_OUT
        return outcome

    def _execute_in_worker(self, call: AttemptCall, clock: Clock) -> Outcome:
        started = clock.now()
        job = _Job(call)
        with self._lock:
            if self._worker is None:
                self._worker = _Worker()
            worker = self._worker
            self._current = job
        worker.jobs.put(job)
        finished = clock.wait(job.done, call.timeout)
        with self._lock:
            self._current = None
            if job.cancelled or not finished:
                # The worker is still busy with this call: leave it behind and start afresh.
                job.cancelled = True
                worker.jobs.put(None)
                self._worker = None
        if job.cancelled and finished:
            return Outcome("cancelled")
        if not finished:
            return Outcome("timeout")
        assert job.outcome is not None
        if call.timeout is not None and clock.now() - started > call.timeout:
            return Outcome("timeout")
        return job.outcome

    def _execute_coroutine(self, call: AttemptCall, clock: Clock) -> Outcome:
        """Await an ``async def`` attempt on the harness loop; a timeout or a stop cancels
        the coroutine."""
        started = clock.now()
        job = _Job(call)
        with self._lock:
            self._current = job
        future, outcome = run_coroutine(call.fn, call.inputs, call.log, job.done, call.io)
        finished = clock.wait(job.done, call.timeout)
        with self._lock:
            self._current = None
        if job.cancelled or not finished:
            future.cancel()
            return Outcome("cancelled") if job.cancelled else Outcome("timeout")
        kind, value, error, trace = outcome()
        if call.timeout is not None and clock.now() - started > call.timeout:
            return Outcome("timeout")
        return Outcome(kind, value, error, trace)

    def cancel(self) -> None:
        """Abandon the attempt in progress, if any (it is reported ``cancelled``)."""
        with self._lock:
            job = self._current
            if job is not None:
                job.cancelled = True
                job.done.set()

    def interrupt(self) -> None:
        """Ctrl+C, from the main thread's SIGINT handler: an attempt running on this thread is
        interrupted (``KeyboardInterrupt``, recorded ``cancelled``); one in the worker thread
        is abandoned as by :meth:`cancel`."""
        self.cancel()
        if self.running_inline:
            raise KeyboardInterrupt

    def close(self) -> None:
        """Let the worker thread end once it is idle."""
        with self._lock:
            if self._worker is not None:
                self._worker.jobs.put(None)
                self._worker = None


class RecordedExecutor:
    """Replays recorded attempt outcomes instead of running code.

    Args:
        events: the recorded trace.
        outputs: committed outputs by task name, as canonical JSON text.
        logs: what each ``(task, attempt)`` printed, replayed into the attempt's log.
    """

    def __init__(
        self,
        events: Iterable[TraceEvent],
        outputs: Mapping[str, str],
        logs: Mapping[tuple[str, int], AttemptLog] | None = None,
    ) -> None:
        self._logs = logs or {}
        self._terminal: dict[tuple[str, int], TraceEvent] = {}
        for event in events:
            if event.status is not Status.RUNNING and event.attempt > 0:
                self._terminal[(event.task, event.attempt)] = event
        self._outputs = outputs

    def execute(self, call: AttemptCall, clock: Clock) -> Outcome:
        """The recorded outcome of this task's attempt (and its recorded log)."""
        key = (call.task, call.attempt)
        log = self._logs.get(key)
        if log is not None and call.log is not None:
            call.log.load(log)
        event = self._terminal.get(key)
        if event is None:
            return Outcome(
                "error",
                error={
                    "type": "ReplayDivergence",
                    "message": f"the record has no attempt {call.attempt} of {call.task!r}",
                },
            )
        if event.status in (Status.SUCCEEDED, Status.FALLBACK):
            return Outcome("ok", loads(self._outputs[call.task]))
        if event.status is Status.TIMED_OUT:
            return Outcome("timeout")
        if event.status is Status.CANCELLED:
            return Outcome("cancelled", error=dict(event.error) if event.error else None)
        return Outcome("error", error=dict(event.error or {"type": "Error", "message": ""}))

    def cancel(self) -> None:
        """Nothing runs, so there is nothing to stop."""
