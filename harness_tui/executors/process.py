"""``isolation: process``: an attempt run in a child process, for what no thread can contain.

In-process (the default), a task shares the harness's process: ``os._exit`` ends the harness,
closing file descriptors 1 and 2 silences it, blocking SIGALRM defeats the timeout, and a task
that swallows every exception in a loop can only be waited for. :class:`ProcessExecutor` runs
the attempts of the tasks that ask for it (or of every task) in a child process started for
the attempt: the task is named by its ``module:function`` reference, its inputs go to the
child's stdin as JSON, the result comes back as JSON through a pipe of its own (what the task
prints goes to the attempt's log), and a timeout or a stop kills the child's whole process
group. The child runs :data:`COMMAND` (:mod:`.child`); a callable with no reference (a
Python-defined harness) runs in-process as before.

Process isolation is not an ``--executor``: it wraps whichever executor runs the run's other
attempts (``threads`` or a plugin), and a run that asks for it on an executor whose attempts
run elsewhere already (Dask) or run no code (a replay) is left as it is.

Each attempt pays for a Python start-up (about 0.1-0.3 s): isolate the tasks that need it.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import IO

from ..engine.attempt import (
    CANCELLED,
    ERROR,
    INTERRUPTED,
    OK,
    TIMEOUT,
    Attempt,
    Executor,
    Outcome,
    request_of,
)
from ..engine.canonical import loads

__all__ = ["COMMAND", "PROCESS", "ProcessExecutor"]

PROCESS = "process"
"""The value of a callable's ``isolation`` attribute that asks for a child process."""

COMMAND = (sys.executable, "-m", "harness_tui.executors.child")
"""The child's command line, without its arguments."""


class _Child:
    """One attempt's child process and the threads that feed it and read it."""

    def __init__(self, command: Sequence[str], call: Attempt) -> None:
        self.call = call
        self.done = threading.Event()
        self.cancelled = False
        self.interrupted = False  # by Ctrl+C, which the trace says
        self.result = b""
        read_fd, write_fd = os.pipe()
        try:
            self.process = subprocess.Popen(
                [*command, str(call.fn.ref), str(call.fn.base or ""), str(write_fd)],  # type: ignore[attr-defined]
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(write_fd,),
                start_new_session=True,  # Ctrl+C reaches the harness, which stops the child
            )
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
        assert self.process.stdout is not None and self.process.stderr is not None
        self._threads = [
            threading.Thread(target=self._feed, args=(_request(call),), daemon=True),
            threading.Thread(target=self._copy, args=(self.process.stdout, 1), daemon=True),
            threading.Thread(target=self._copy, args=(self.process.stderr, 2), daemon=True),
            threading.Thread(target=self._collect, args=(read_fd,), daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _feed(self, request: str) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(request.encode("ascii"))
            stdin.close()
        except OSError:  # the child is gone already: its exit says why
            pass

    def _copy(self, stream: IO[bytes], fd: int) -> None:
        """What the child prints, into the attempt's log (or through, without one)."""
        decoder = codecs.getincrementaldecoder("utf-8")("backslashreplace")
        log = self.call.log
        while chunk := stream.read1(65536):  # type: ignore[attr-defined]
            text = decoder.decode(chunk)
            if log is not None:
                log.write(text)
            else:
                (sys.stdout if fd == 1 else sys.stderr).write(text)
        stream.close()

    def _collect(self, read_fd: int) -> None:
        with os.fdopen(read_fd, "rb") as result:
            self.result = result.read()
        self.process.wait()
        for thread in self._threads[1:3]:
            thread.join(timeout=1.0)
        self.done.set()

    def kill(self) -> None:
        """End the child and everything it started (its process group)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):  # it ended already
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def outcome(self) -> Outcome:
        """The outcome the child reported, or why it reported none."""
        try:
            reply = json.loads(self.result) if self.result else None
        except ValueError:
            reply = None
        if isinstance(reply, dict):
            calls = reply.get("calls") if isinstance(reply.get("calls"), dict) else None
            if reply.get("kind") == OK:
                return Outcome(OK, loads(reply["text"]), calls=calls)
            if reply.get("kind") == CANCELLED:
                return Outcome(CANCELLED, error=reply.get("error"), calls=calls)
            if reply.get("kind") == ERROR:
                return Outcome(
                    ERROR, error=reply["error"], traceback=reply.get("traceback"), calls=calls
                )
        code = self.process.returncode
        how = (
            f"was killed by {signal.Signals(-code).name}"
            if code < 0
            else f"exited with code {code}"
        )
        return Outcome(
            ERROR,
            error={
                "type": "ProcessExited",
                "message": f"the task's process {how} without a result",
            },
        )


def _request(call: Attempt) -> str:
    """What the child reads on stdin: the task's inputs and the attempt's recorded-calls
    ticket (null when the run records nothing)."""
    ticket = None if call.io is None else call.io.ticket()
    calls = json.dumps(ticket, ensure_ascii=True)
    return f'{{"inputs": {request_of(call.inputs)}, "calls": {calls}}}'


class ProcessExecutor(Executor):
    """Runs the attempts whose callable asks for it (``isolation`` attribute ``process``), or
    every attempt with ``everything``, in a child process; the others go to ``inner``.

    Args:
        inner: the executor for the other attempts.
        command: the child's command line (the reference, its base folder and the result
            pipe's descriptor are appended).
        everything: isolate every task, not only those that ask.
    """

    name = "process"
    isolatable = False  # it is the isolation already

    def __init__(
        self, inner: Executor, command: Sequence[str] = COMMAND, everything: bool = False
    ) -> None:
        self.inner = inner
        self.pickles = inner.pickles
        self.command = tuple(command)
        self.everything = everything
        self._children: dict[int, _Child] = {}  # by id(attempt): a run's threads share it
        self._lock = threading.RLock()

    def _isolated(self, attempt: Attempt) -> bool:
        fn = attempt.fn
        if getattr(fn, "ref", None) is None:
            return False  # a plain Python callable: nothing to start a child with
        return self.everything or getattr(fn, "isolation", None) == PROCESS

    def run(self, attempt: Attempt) -> Outcome:
        """Run the attempt in a child process when it is isolated, else in ``inner``."""
        if not self._isolated(attempt):
            return self.inner.run(attempt)
        clock = attempt.clock
        started = clock.now()
        try:
            child = _Child(self.command, attempt)
        except OSError as exc:  # no process to be had (limits, a missing interpreter)
            return Outcome(
                ERROR,
                error={"type": "ProcessStartFailed", "message": f"{exc.strerror or exc}"},
            )
        key = id(attempt)
        with self._lock:
            self._children[key] = child
        finished = False
        try:
            finished = clock.wait(child.done, attempt.timeout)
        finally:
            with self._lock:
                del self._children[key]
            if child.cancelled or not finished:
                child.kill()
        if child.cancelled:
            return INTERRUPTED if child.interrupted else Outcome(CANCELLED)
        if not finished:
            return Outcome(TIMEOUT)
        if attempt.timeout is not None and clock.now() - started > attempt.timeout:
            return Outcome(TIMEOUT)
        return child.outcome()

    def cancel(self, attempt: Attempt) -> None:
        """Stop the attempt: its child is killed (``cancelled``), or ``inner`` is told."""
        with self._lock:
            child = self._children.get(id(attempt))
            if child is not None:
                child.cancelled = True
                child.done.set()
                return
        self.inner.cancel(attempt)

    def interrupt(self) -> None:
        """Ctrl+C: every child is stopped and says so (``KeyboardInterrupt``); ``inner`` is
        told."""
        with self._lock:
            for child in self._children.values():
                child.interrupted = child.cancelled = True
                child.done.set()
        self.inner.interrupt()

    def start(self) -> None:
        """Start ``inner``."""
        self.inner.start()

    def close(self) -> None:
        """Close ``inner``."""
        self.inner.close()
