"""The child process of ``isolation: process`` (see :mod:`.process`).

``python -m harness_tui.executors.child REF BASE FD``: reads the task's inputs (JSON) from
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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..engine.attempt import INTERRUPTED, PlainInputs
from ..engine.canonical import CanonicalError, check_json
from ..engine.failures import error_of, traceback_of
from ..workflow.refs import LazyCallable

__all__ = ["main", "reply_of"]


def reply_of(ref: str, base: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Resolve ``ref`` (``base`` first on the path), call it once with ``inputs``, and say how
    it went as JSON-ready data: ``{"kind": "ok", "text"}``, ``cancelled`` or ``error``."""
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
    inputs = PlainInputs(json.loads(sys.stdin.read()))
    reply = reply_of(ref, base, inputs)
    result.write(json.dumps(reply, ensure_ascii=True))
    result.close()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # the task closed it
            stream.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
