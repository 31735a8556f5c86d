"""``isolation: process``: an attempt run in a child process, for what no thread can contain.

In-process (the default), a task shares the harness's process: ``os._exit`` ends the harness,
closing file descriptors 1 and 2 silences it, blocking SIGALRM defeats the timeout, and a task
that swallows every exception in a loop can only be waited for. :class:`ProcessExecutor` runs
the attempts of the tasks that ask for it (or of every task) in a child process started for
the attempt: the task is named by its ``module:function`` reference, its inputs go to the
child's stdin as JSON, the result comes back as JSON through a pipe of its own (what the task
prints goes to the attempt's log), and a timeout or a stop kills the child's whole process
group. The child runs ``command`` (a front end gives the workflow layer's runner); a callable
with no reference (a Python-defined harness) runs in-process as before.

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
from collections.abc import Mapping, Sequence
from typing import IO, Any

from .canonical import loads
from .clock import Clock
from .executors import INTERRUPTED, AttemptCall, Executor, Outcome

__all__ = ["PROCESS", "ProcessExecutor", "request_of"]

PROCESS = "process"
"""The value of a callable's ``isolation`` attribute that asks for a child process."""


def request_of(inputs: Mapping[str, Any]) -> str:
    """The JSON text of a task's inputs, as the child receives them (plain mappings)."""
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


class _Child:
    """One attempt's child process and the threads that feed it and read it."""

    def __init__(self, command: Sequence[str], call: AttemptCall) -> None:
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
            threading.Thread(target=self._feed, args=(request_of(call.inputs),), daemon=True),
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
        if isinstance(reply, dict) and reply.get("kind") == "ok":
            return Outcome("ok", loads(reply["text"]))
        if isinstance(reply, dict) and reply.get("kind") == "cancelled":
            return Outcome("cancelled", error=reply.get("error"))
        if isinstance(reply, dict) and reply.get("kind") == "error":
            return Outcome("error", error=reply["error"], traceback=reply.get("traceback"))
        code = self.process.returncode
        how = (
            f"was killed by {signal.Signals(-code).name}"
            if code < 0
            else f"exited with code {code}"
        )
        return Outcome(
            "error",
            error={
                "type": "ProcessExited",
                "message": f"the task's process {how} without a result",
            },
        )


class ProcessExecutor:
    """Runs the attempts whose callable asks for it (``isolation`` attribute ``process``), or
    every attempt with ``everything``, in a child process; the others go to ``inner``.

    Args:
        inner: the executor for in-process attempts.
        command: the child's command line (the reference, its base folder and the result
            pipe's descriptor are appended).
        everything: isolate every task, not only those that ask.
    """

    def __init__(self, inner: Executor, command: Sequence[str], everything: bool = False) -> None:
        self.inner = inner
        self.command = tuple(command)
        self.everything = everything
        self._current: _Child | None = None
        self._lock = threading.RLock()

    def for_thread(self) -> ProcessExecutor:
        """A copy for one worker thread of a parallel run (each has its own child to stop)."""
        from .parallel import executor_factory

        make = executor_factory(self.inner)
        return ProcessExecutor(make() if make else self.inner, self.command, self.everything)

    def _isolated(self, call: AttemptCall) -> bool:
        fn = call.fn
        if getattr(fn, "ref", None) is None:
            return False  # a plain Python callable: nothing to start a child with
        return self.everything or getattr(fn, "isolation", None) == PROCESS

    def execute(self, call: AttemptCall, clock: Clock) -> Outcome:
        """Run the attempt in a child process when it is isolated, else in ``inner``."""
        if not self._isolated(call):
            return self.inner.execute(call, clock)
        started = clock.now()
        try:
            child = _Child(self.command, call)
        except OSError as exc:  # no process to be had (limits, a missing interpreter)
            return Outcome(
                "error",
                error={"type": "ProcessStartFailed", "message": f"{exc.strerror or exc}"},
            )
        with self._lock:
            self._current = child
        finished = False
        try:
            finished = clock.wait(child.done, call.timeout)
        finally:
            with self._lock:
                self._current = None
            if child.cancelled or not finished:
                child.kill()
        if child.cancelled:
            return INTERRUPTED if child.interrupted else Outcome("cancelled")
        if not finished:
            return Outcome("timeout")
        if call.timeout is not None and clock.now() - started > call.timeout:
            return Outcome("timeout")
        return child.outcome()

    def cancel(self) -> None:
        """Stop the attempt in progress: a child is killed (``cancelled``)."""
        self.inner.cancel()
        with self._lock:
            child = self._current
            if child is not None:
                child.cancelled = True
                child.done.set()

    def interrupt(self) -> None:
        """Ctrl+C (see :meth:`SerialExecutor.interrupt`): a child is stopped; an in-process
        attempt is interrupted by the inner executor."""
        with self._lock:
            if self._current is not None:
                self._current.interrupted = True
        self.cancel()
        interrupt = getattr(self.inner, "interrupt", None)
        if interrupt is not None:
            interrupt()

    def close(self) -> None:
        """Close the inner executor."""
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()
