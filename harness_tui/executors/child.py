"""The child process of ``isolation: process`` (see :mod:`.process`).

``python -m harness_tui.executors.child REF BASE FD``: reads ``{"inputs", "calls"}`` (JSON)
from stdin: the task's inputs, and the attempt's recorded-calls ticket or null
(docs/recording.md); resolves ``REF`` as the workflow loader does (``BASE``, the workflow's
folder, first on the path), calls it once, and writes the outcome as JSON to descriptor
``FD``, with what the attempt was answered under ``calls``. Then it ends at once: a thread the
task left running does not hold it.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..engine.attempt import CANCELLED, ERROR, INTERRUPTED, OK, PlainInputs, away_io
from ..engine.canonical import CanonicalError, check_json
from ..engine.capture import install
from ..engine.failures import error_of, traceback_of
from ..engine.recorded_calls import AttemptIO
from ..engine.recorded_calls import current as current_io
from ..interception import install as intercept
from ..workflow.refs import LazyCallable

__all__ = ["attempt_io", "main", "recording", "reply_of", "report_of"]


def attempt_io(ticket: Mapping[str, Any] | None) -> AttemptIO | None:
    """The recorder of an attempt sent here (None without a ticket): HTTP intercepted, the
    network closed to it when offline.

    Raises:
        ValueError: a malformed ticket.
    """
    if ticket is None:
        return None
    intercept()
    return away_io(ticket)


@contextlib.contextmanager
def recording(io: AttemptIO | None) -> Iterator[None]:
    """Requests made in this context (and threads it starts) go to ``io``."""
    if io is None:
        yield
        return
    install()
    token = current_io.set(io)
    try:
        yield
    finally:
        current_io.reset(token)


def report_of(io: AttemptIO) -> dict[str, Any]:
    """The attempt ended: what it was answered (later requests of its threads are dropped)."""
    io.session.close(io)
    return io.report()


def reply_of(
    ref: str, base: str, inputs: Mapping[str, Any], io: AttemptIO | None = None
) -> dict[str, Any]:
    """Resolve ``ref`` (``base`` first on the path), call it once with ``inputs`` (its requests
    going to ``io``), and say how it went as JSON-ready data: ``{"kind": "ok", "text"}``,
    ``cancelled`` or ``error``, and ``calls`` with ``io``."""
    reply = _reply(ref, base, inputs, io)
    if io is not None:
        reply["calls"] = report_of(io)
    return reply


def _reply(ref: str, base: str, inputs: Mapping[str, Any], io: AttemptIO | None) -> dict[str, Any]:
    try:
        fn = LazyCallable(ref, Path(base) if base else None).resolve()
        with recording(io):
            value = fn(inputs)
            if inspect.iscoroutine(value):  # an async def task: this process has no other loop
                value = asyncio.run(value)
    except KeyboardInterrupt:
        return {"kind": CANCELLED, "error": INTERRUPTED.error}
    except BaseException as exc:  # the task's failure, as in-process
        return {"kind": ERROR, "error": error_of(exc), "traceback": traceback_of(exc)}
    try:
        return {"kind": OK, "text": check_json(value, "$output")}
    except CanonicalError as exc:
        return {"kind": ERROR, "error": {"type": "OutputNotJSON", "message": str(exc)}}


def main(argv: list[str]) -> None:
    """Run one attempt; the outcome goes to the descriptor given, never to stdout."""
    ref, base, fd = argv[1], argv[2], int(argv[3])
    for stream in (sys.stdout, sys.stderr):  # as in-process capture: a lone surrogate prints
        stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    result = os.fdopen(fd, "w", encoding="ascii")
    request = json.loads(sys.stdin.read())
    inputs = PlainInputs(request["inputs"])
    try:
        io = attempt_io(request.get("calls"))
    except ValueError as exc:
        reply: dict[str, Any] = {"kind": ERROR, "error": {"type": "CallDiverged",
                                                            "message": str(exc)}}  # fmt: skip
    else:
        reply = reply_of(ref, base, inputs, io)
    result.write(json.dumps(reply, ensure_ascii=True))
    result.close()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # the task closed it
            stream.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
