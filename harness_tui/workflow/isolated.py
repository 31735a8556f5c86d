"""The child process of ``isolation: process`` (see :mod:`harness_tui.engine.isolation`).

``python -m harness_tui.workflow.isolated REF BASE FD``: reads the task's inputs (JSON) from
stdin, resolves ``REF`` as the workflow loader does (``BASE``, the workflow's folder, first on
the path), calls it once, and writes the outcome as JSON to descriptor ``FD``. Then it ends at
once: a thread the task left running does not hold it.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..engine.canonical import CanonicalError, check_json
from ..engine.clock import SystemClock
from ..engine.executors import INTERRUPTED
from ..engine.failures import error_of, traceback_of
from ..engine.recorded_calls import io
from .refs import LazyCallable

__all__ = ["COMMAND", "main"]

COMMAND = (sys.executable, "-m", "harness_tui.workflow.isolated")
"""The child's command line, without its arguments."""


class _Inputs(dict[str, Any]):
    """The inputs mapping, with the ``clock`` and ``cancelled`` built-ins look for, and
    ``io`` (recorded calls; plain calls here: a child records nothing yet)."""

    clock = SystemClock()
    cancelled = threading.Event()

    def __init__(self, request: Mapping[str, Any]) -> None:
        super().__init__(request)
        self["io"] = io


def _attempt(ref: str, base: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    try:
        fn = LazyCallable(ref, Path(base) if base else None).resolve()
        value = fn(inputs)
        if inspect.iscoroutine(value):  # an async def task: this process has no other loop
            value = asyncio.run(value)
    except KeyboardInterrupt:
        return {"kind": "cancelled", "error": INTERRUPTED.error}
    except BaseException as exc:  # the task's failure, as in-process
        return {"kind": "error", "error": error_of(exc), "traceback": traceback_of(exc)}
    try:
        return {"kind": "ok", "text": check_json(value, "$output")}
    except CanonicalError as exc:
        return {"kind": "error", "error": {"type": "OutputNotJSON", "message": str(exc)}}


def main(argv: list[str]) -> None:
    """Run one attempt; the outcome goes to the descriptor given, never to stdout."""
    ref, base, fd = argv[1], argv[2], int(argv[3])
    for stream in (sys.stdout, sys.stderr):  # as in-process capture: a lone surrogate prints
        stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    result = os.fdopen(fd, "w", encoding="ascii")
    inputs = _Inputs(json.loads(sys.stdin.read()))
    reply = _attempt(ref, base, inputs)
    result.write(json.dumps(reply, ensure_ascii=True))
    result.close()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # the task closed it
            stream.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
