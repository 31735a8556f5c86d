"""One attempt of a task, and the contract of what runs it (docs/executors.md).

The orchestrator decides *what* runs and records *what happened*; an :class:`Executor`
decides only *where and when* an :class:`Attempt` runs, and reports its :class:`Outcome`.
Calling ``attempt()`` runs the task here, in the calling process, with its output captured
and its timeout enforced; an executor that runs attempts elsewhere pickles the attempt (by
reference: ``module:function`` and the inputs as JSON) and calls it there.

Timeouts of an attempt run here, two ways:

- ``signal`` (used automatically on the main thread where SIGALRM exists and nobody else owns
  it): a one-shot interval timer interrupts the attempt with an exception that ``except
  Exception`` in user code does not catch. The attempt really stops (unless it is blocked inside
  C code that ignores signals), and it costs two system calls instead of a thread hand-off.
- ``thread`` (everywhere else, and for every *detached* attempt: one a stop must reach even
  without a timeout, as in a parallel run or the workbench): the attempt runs in a helper
  thread that the calling thread keeps, and the caller stops waiting at the limit. Python
  cannot kill a thread, so a timed-out call keeps running in the background until it returns;
  its late result is discarded and the helper is replaced.

Either way the attempt is also timed on its clock, so a task that sleeps through a
:class:`~harness_tui.engine.clock.FakeClock` past its limit is timed out without real waiting.
"""

from __future__ import annotations

import json
import queue
import signal
import sys
import sysconfig
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any, NamedTuple

from .aio import is_async, run_coroutine
from .capture import AttemptLog, LogBuffer, current, install
from .clock import Clock, SystemClock
from .errors import HarnessError
from .failures import error_of, traceback_of
from .graph import TaskGraph
from .untrusted import quoted

__all__ = [
    "INTERRUPTED",
    "Attempt",
    "Executor",
    "ExecutorError",
    "Outcome",
    "OutcomeKind",
    "PlainInputs",
    "interrupt_here",
    "reference_of",
    "refuse_unpicklable",
    "request_of",
]


class ExecutorError(HarnessError):
    """An executor cannot be chosen or cannot run this run (one line says why)."""


class OutcomeKind(StrEnum):
    """How an attempt ended."""

    OK = "ok"
    """It returned :attr:`Outcome.value`."""
    ERROR = "error"
    """It raised (:attr:`Outcome.error`), or could not be run at all."""
    TIMEOUT = "timeout"
    """It exceeded its ``timeout`` and was stopped or abandoned."""
    CANCELLED = "cancelled"
    """The run was stopped while it ran (or Ctrl+C reached it)."""


OK, ERROR, TIMEOUT, CANCELLED = OutcomeKind  # the hot path reads module names, not attributes


class Outcome(NamedTuple):
    """What one attempt produced. Picklable, so it can come back from another process.

    Attributes:
        kind: how it ended.
        value: the returned value when :attr:`OutcomeKind.OK` (a JSON value; checked at commit).
        error: ``{"type", "message"}`` when it failed or was cancelled (it enters the canonical
            trace: no addresses, host names or times).
        traceback: formatted traceback of an error (kept out of the canonical trace).
        worker: which worker ran the attempt when the executor knows better than the run
            (a cluster worker's number, from 1); None: the run's own thread or pool worker.
        log: what the attempt printed when it ran where the run's log could not see it (an
            attempt called in another process fills this in itself).
    """

    kind: OutcomeKind
    value: Any = None
    error: dict[str, str] | None = None
    traceback: str | None = None
    worker: int | None = None
    log: AttemptLog | None = None


INTERRUPTED = Outcome(
    CANCELLED,
    error={
        "type": "KeyboardInterrupt",
        "message": "interrupted (Ctrl+C, or the task raised KeyboardInterrupt)",
    },
)
"""A ``KeyboardInterrupt`` in an attempt: the run stops as when the user stops it."""

_TIMED_OUT = Outcome(TIMEOUT)
_CANCELLED = Outcome(CANCELLED)
_SYSTEM_CLOCK = SystemClock()


class Attempt(NamedTuple):
    """One call of a task (or of its fallback) to run.

    Calling it (``attempt()``) runs it in the calling process and returns its
    :class:`Outcome`; it never raises for the task's own errors. Pickling it sends it by
    reference: the callable's ``module:function`` and the inputs as plain JSON; unpickled in
    another process, calling it runs the task there and the outcome carries what it printed.

    Attributes:
        task: the task name.
        number: 1-based attempt number (the fallback is attempt ``max_retries + 2``).
        kind: ``task`` or ``fallback``.
        fn: the callable to run.
        inputs: the mapping to pass it (``payload``, ``context``, ``params``, ``task``).
        timeout: seconds, or None.
        log: where the attempt's output is captured, or None to let it through.
        clock: the run's clock: timeouts are measured on it.
        detach: run it in a helper thread even without a timeout, so that a stop reaches it
            (the engine asks for it in parallel runs).
        away: a copy unpickled in another process: its outcome carries its log.
    """

    task: str
    number: int
    kind: str
    fn: Callable[[Mapping[str, Any]], Any]
    inputs: Mapping[str, Any]
    timeout: float | None
    log: LogBuffer | None = None
    clock: Clock = _SYSTEM_CLOCK
    detach: bool = False
    away: bool = False

    def __call__(self, *, detach: bool | None = None, timeouts: str = "auto") -> Outcome:
        """Run the attempt here, with capture and timeout.

        Args:
            detach: override :attr:`detach` (run in a helper thread that a stop can leave).
            timeouts: ``auto`` (signal where possible, else thread), ``signal`` or ``thread``.
        """
        outcome = _run_here(self, self.detach if detach is None else detach, timeouts)
        if self.away and self.log is not None:
            self.log.close()
            return outcome._replace(log=self.log.snapshot())
        return outcome

    def cancel(self) -> None:
        """Stop waiting for this attempt if it runs detached in this process (any thread may
        call it); it is then reported ``cancelled``. The engine calls it on a stop."""
        with _lock:
            job = _jobs.get(id(self))
            if job is not None and job.attempt is self:
                job.cancelled = True
                job.done.set()

    @property
    def reference(self) -> str | None:
        """The callable's ``module:function``, or None when another process cannot import it
        (a lambda, a closure, a function of ``__main__``)."""
        found = reference_of(self.fn)
        return None if found is None else found[0]

    def __reduce__(self) -> tuple[Any, ...]:
        if reference_of(self.fn) is None:
            raise ExecutorError(f"task {quoted(self.task)}: {_unreferenced(self.fn)}")
        limit = self.log.limit if self.log is not None else 0
        request = request_of(self.inputs)
        return (_arrive, (self.task, self.number, self.kind, self.fn, request, self.timeout,
                          limit, self.detach))  # fmt: skip


def _arrive(
    task: str,
    number: int,
    kind: str,
    fn: Callable[[Mapping[str, Any]], Any],
    request: str,
    timeout: float | None,
    limit: int,
    detach: bool,
) -> Attempt:
    log = LogBuffer(task, number, limit) if limit else None
    inputs = PlainInputs(json.loads(request))
    return Attempt(task, number, kind, fn, inputs, timeout, log, _SYSTEM_CLOCK, detach, True)


class PlainInputs(dict[str, Any]):
    """A task's inputs rebuilt from JSON in another process, with the ``clock`` and
    ``cancelled`` attributes that built-ins look for."""

    clock = _SYSTEM_CLOCK
    cancelled = threading.Event()


def request_of(inputs: Mapping[str, Any]) -> str:
    """The JSON text of a task's inputs, as another process receives them (plain mappings)."""
    results = inputs["context"]["results"]
    return json.dumps(
        {
            "payload": inputs["payload"],
            "context": {"results": {name: results[name] for name in results}},
            "params": inputs["params"],
            "task": inputs["task"],
        },
        ensure_ascii=True,
    )


# -- references --------------------------------------------------------------------------------


def _installed(path: Path) -> bool:
    paths = sysconfig.get_paths()
    roots = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    return any(path.is_relative_to(root) for root in roots)


def reference_of(fn: Any) -> tuple[str, Path | None] | None:
    """``(module:function, folder to import it from)`` for a task callable, or None when
    another process cannot import it (a lambda, a closure, a function of ``__main__`` or of
    no file). The folder is None for an installed module."""
    ref = getattr(fn, "ref", None)
    if isinstance(ref, str):  # a workflow's reference
        base = getattr(fn, "base", None)
        return ref, base if isinstance(base, Path) else None
    module_name = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None)
    if not module_name or not qualname or module_name == "__main__" or "<" in qualname:
        return None
    module = sys.modules.get(module_name)
    file = getattr(module, "__file__", None)
    if file is None:
        return None
    path = Path(file).resolve()
    depth = module_name.count(".") + (2 if path.name == "__init__.py" else 1)
    base = path.parents[depth - 1]
    return f"{module_name}:{qualname}", None if _installed(path) else base


def _unreferenced(fn: Any) -> str:
    return (
        f"its callable {quoted(repr(fn))} has no module:function reference another process "
        f"can import (a lambda, a closure or a function of __main__)"
    )


def _callables(graph: TaskGraph) -> Iterator[tuple[str, Any]]:
    for node in graph.nodes.values():
        for fn in (node.fn, node.fallback):
            if fn is not None:
                yield node.name, fn


def refuse_unpicklable(graph: TaskGraph, executor: str) -> None:
    """Check, before a run starts, that every task of ``graph`` can be sent to another process.

    Raises:
        ExecutorError: the first task whose callable has no reference, in one line.
    """
    for task, fn in _callables(graph):
        if reference_of(fn) is None:
            raise ExecutorError(
                f"task {quoted(task)} cannot run on {executor}: {_unreferenced(fn)}"
            )


# -- the contract ------------------------------------------------------------------------------


class Executor:
    """Runs attempts: decides where and when, never what (docs/executors.md).

    Subclasses set :attr:`name`, override :meth:`run`, and override the optional methods
    they need; the defaults do nothing. This base class itself runs every attempt in the
    thread that asks (the engine's default when no executor is given).

    Attributes:
        name: the ``--executor NAME[=ARG]`` that chooses it.
        pickles: attempts are pickled to run in other processes: the run refuses, before it
            starts, tasks whose callables cannot be pickled by reference.
        isolatable: its attempts run user code in this process, so process isolation
            (``isolation: process``) may wrap it; False when they run elsewhere already, or
            run no code at all.
    """

    name: str = ""
    pickles: bool = False
    isolatable: bool = True

    @classmethod
    def from_option(cls, arg: str | None) -> Executor:
        """The executor that ``--executor NAME[=ARG]`` asks for (``arg`` is None without
        ``=``); the default takes no argument.

        Raises:
            ExecutorError: an argument it cannot use (one line).
        """
        if arg is not None:
            raise ExecutorError(f"--executor {cls.name} takes no argument (not {quoted(arg)})")
        return cls()

    def run(self, attempt: Attempt) -> Outcome:
        """Run one attempt and report its outcome; never raise for the task's own errors.
        Called from the run's thread or from one of its worker threads, possibly several at
        once: an executor is shared by the threads of a run."""
        return attempt()

    def start(self) -> None:
        """Acquire what runs need (a cluster, a pool), before the first run."""

    def close(self) -> None:
        """Release it, after the last run."""

    def cancel(self, attempt: Attempt) -> None:
        """The run was stopped while ``attempt`` ran: stop work started for it elsewhere.
        An ``attempt()`` called in this process has been left already."""

    def interrupt(self) -> None:
        """Ctrl+C, from the main thread's SIGINT handler (after the run's stop)."""

    def capacity(self) -> int | None:
        """Attempts it can run at once: the worker count when ``--workers`` is not given
        (None: 1)."""
        return None

    def option(self) -> str:
        """The ``--executor`` text that reaches this very executor from another process."""
        return self.name


# -- running an attempt here -------------------------------------------------------------------


def _captured(
    fn: Callable[[Mapping[str, Any]], Any], inputs: Mapping[str, Any], log: LogBuffer | None
) -> Outcome:
    """:func:`_call` with the attempt's output going to ``log`` while it runs."""
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
        return _tuple_new(Outcome, (OK, fn(inputs), None, None, None, None))
    except _AttemptTimeout:
        raise
    except KeyboardInterrupt:
        return INTERRUPTED
    except BaseException as exc:
        return Outcome(ERROR, error=error_of(exc), traceback=traceback_of(exc))


class _Job:
    __slots__ = ("attempt", "cancelled", "done", "outcome")

    def __init__(self, attempt: Attempt) -> None:
        self.attempt = attempt
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
            attempt = job.attempt
            try:
                outcome = _captured(attempt.fn, attempt.inputs, attempt.log)
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
_jobs: dict[int, _Job] = {}  # detached attempts running now, by id(attempt), for cancel()


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


def _unblock_alarm() -> None:
    """A task that blocked SIGALRM must not disable the timeouts of every later attempt (checked
    only after a timeout: a system call per attempt would cost the hot path)."""
    if signal.SIGALRM in signal.pthread_sigmask(signal.SIG_BLOCK, ()):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, (signal.SIGALRM,))


_MODES = ("auto", "signal", "thread")


def _run_here(attempt: Attempt, detach: bool, timeouts: str) -> Outcome:
    """Run the attempt directly, under a signal timer, or in this thread's helper thread; an
    ``async def`` task on the harness's event loop."""
    if is_async(attempt.fn):
        return _run_coroutine(attempt)
    if attempt.timeout is None and not detach:
        here = _here
        here.inline = True
        try:
            return _captured(attempt.fn, attempt.inputs, attempt.log)
        finally:
            here.inline = False
    if timeouts not in _MODES:
        raise ValueError(f"timeouts must be auto, signal or thread, not {timeouts!r}")
    if not detach and timeouts != "thread" and _signal_timeouts_available():
        return _run_with_alarm(attempt)
    if timeouts == "signal" and not detach:
        raise RuntimeError("signal timeouts need the main thread and a free SIGALRM")
    return _run_in_worker(attempt)


def _run_with_alarm(attempt: Attempt) -> Outcome:
    timeout = attempt.timeout
    assert timeout is not None
    clock = attempt.clock
    started = clock.now()
    if signal.getsignal(signal.SIGALRM) is not _on_alarm:
        signal.signal(signal.SIGALRM, _on_alarm)
    here = _here
    here.inline = True
    try:
        _alarm["armed"] = True
        signal.setitimer(signal.ITIMER_REAL, timeout, _REPEAT_SECONDS)
        try:
            outcome = _captured(attempt.fn, attempt.inputs, attempt.log)
        finally:
            _alarm["armed"] = False
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _AttemptTimeout:
        outcome = _TIMED_OUT
    finally:
        here.inline = False
    if outcome is _TIMED_OUT or clock.now() - started > timeout:
        _unblock_alarm()  # the task may have blocked SIGALRM (after the alarm came, too)
        return _TIMED_OUT
    return outcome


def _enter(job: _Job) -> None:
    with _lock:
        _jobs[id(job.attempt)] = job
        _here.job = job


def _leave(job: _Job) -> bool:
    """Forget the job; whether it was cancelled (no cancel can reach it after this)."""
    with _lock:
        if _jobs.get(id(job.attempt)) is job:
            del _jobs[id(job.attempt)]
        _here.job = None
        return job.cancelled


def _run_in_worker(attempt: Attempt) -> Outcome:
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


def _run_coroutine(attempt: Attempt) -> Outcome:
    """Await an ``async def`` attempt on the harness loop; a timeout or a stop cancels the
    coroutine."""
    clock = attempt.clock
    started = clock.now()
    job = _Job(attempt)
    _enter(job)
    future, outcome = run_coroutine(attempt.fn, attempt.inputs, attempt.log, job.done)
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
    left, as by :meth:`Attempt.cancel`."""
    here = _here
    job = here.job
    if job is not None:
        job.attempt.cancel()
    if here.inline:
        raise KeyboardInterrupt


def close_here() -> None:
    """Let this thread's helper thread end once it is idle."""
    here = _here
    if here.worker is not None:
        here.worker.jobs.put(None)
        here.worker = None
