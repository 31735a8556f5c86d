"""One attempt of a task, and the contract of what runs it (docs/executors.md).

The orchestrator decides *what* runs and records *what happened*; an :class:`Executor`
decides only *where and when* an :class:`Attempt` runs, and reports its :class:`Outcome`.
Calling ``attempt()`` runs the task here, in the calling process, with its output captured
and its timeout enforced (:mod:`.here`); an executor that runs attempts elsewhere pickles the
attempt (by reference: ``module:function`` and the inputs as JSON) and calls it there.
"""

from __future__ import annotations

import json
import sys
import sysconfig
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from . import offline_guard
from .capture import LogBuffer
from .clock import Clock, SystemClock
from .errors import HarnessError
from .graph import TaskGraph
from .here import cancel, close_here, interrupt_here, run_here
from .outcome import CANCELLED, ERROR, INTERRUPTED, OK, TIMEOUT, Outcome, OutcomeKind
from .recorded_calls import AttemptIO, from_ticket, io
from .untrusted import quoted

__all__ = [
    "CANCELLED",
    "ERROR",
    "INTERRUPTED",
    "OK",
    "TIMEOUT",
    "Attempt",
    "Executor",
    "ExecutorError",
    "Outcome",
    "OutcomeKind",
    "PlainInputs",
    "away_io",
    "close_here",
    "interrupt_here",
    "reference_of",
    "refuse_unpicklable",
    "request_of",
]


class ExecutorError(HarnessError):
    """An executor cannot be chosen or cannot run this run (one line says why)."""


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
            (a parallel run does without: a stop takes over the job instead, see
            :mod:`.parallel`).
        away: a copy unpickled in another process: its outcome carries its log.
        io: the attempt's recorder of HTTP and recorded calls (docs/recording.md), or None
            when the run records nothing. Sent to another process as its settings and the
            attempt's recorded answers: a copy unpickled there records its ``io.call`` calls
            (and its HTTP where that process installed :mod:`harness_tui.interception`),
            closes the network when offline, and its outcome carries what it recorded
            (:attr:`Outcome.calls`).
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
    io: AttemptIO | None = None

    def __call__(self, *, detach: bool | None = None, timeouts: str = "auto") -> Outcome:
        """Run the attempt here, with capture and timeout.

        Args:
            detach: override :attr:`detach` (run in a helper thread that a stop can leave).
            timeouts: ``auto`` (signal where possible, else thread), ``signal`` or ``thread``.
        """
        outcome = run_here(self, self.detach if detach is None else detach, timeouts)
        if self.away and self.log is not None:
            self.log.close()
            outcome = outcome._replace(log=self.log.snapshot())
        if self.away and self.io is not None:
            outcome = outcome._replace(calls=self.io.report())
        return outcome

    def cancel(self) -> None:
        """Stop waiting for this attempt if it runs detached in this process (any thread may
        call it); it is then reported ``cancelled``. The engine calls it on a stop."""
        cancel(self)

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
        ticket = None if self.io is None else self.io.ticket()
        return (_arrive, (self.task, self.number, self.kind, self.fn, request, self.timeout,
                          limit, self.detach, ticket))  # fmt: skip


def _arrive(
    task: str,
    number: int,
    kind: str,
    fn: Callable[[Mapping[str, Any]], Any],
    request: str,
    timeout: float | None,
    limit: int,
    detach: bool,
    ticket: Mapping[str, Any] | None = None,
) -> Attempt:
    log = LogBuffer(task, number, limit) if limit else None
    inputs = PlainInputs(json.loads(request))
    io = None if ticket is None else away_io(ticket)
    return Attempt(task, number, kind, fn, inputs, timeout, log, _SYSTEM_CLOCK, detach, True, io)


def away_io(ticket: Mapping[str, Any]) -> AttemptIO:
    """The recorder of an attempt sent to this process (:meth:`AttemptIO.ticket`), with the
    network closed to it when it is offline."""
    found = from_ticket(ticket)
    if found.guarded:
        offline_guard.install()
    return found


class PlainInputs(dict[str, Any]):
    """A task's inputs rebuilt from JSON in another process, with the ``clock`` and
    ``cancelled`` attributes that built-ins look for, and ``io`` (recorded calls: recorded
    for the attempt whose recorder is current, plain calls otherwise)."""

    clock = _SYSTEM_CLOCK
    cancelled = threading.Event()

    def __init__(self, request: Mapping[str, Any]) -> None:
        super().__init__(request)
        self["io"] = io


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
        if attempt.away:
            return attempt()
        return run_here(attempt, attempt.detach, "auto")  # attempt(), one call less per task

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
