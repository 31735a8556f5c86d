"""What a Dask worker runs for ``--executor dask`` (see :mod:`.dask`): imported only where
Dask is installed."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

from distributed import WorkerPlugin, get_worker

from ..engine.attempt import ERROR, TIMEOUT, PlainInputs
from ..engine.capture import LogBuffer, current, install
from ..workflow.refs import LazyCallable, _import_lock
from .child import attempt_io, recording, reply_of, report_of

__all__ = ["FolderPlugin", "dask_setup", "remote_attempt"]


def remote_attempt(
    ref: str,
    folder: str,
    request: str,
    limit: int,
    timeout: float | None,
    ticket: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One attempt on a Dask worker: the reply of ``isolation: process``'s child, with what the
    task printed (``log``, when ``limit`` asks for it) and the worker's address.

    The timeout counts from the attempt's start on the worker (time queued for a free worker
    is not the task's). A timed-out call goes on in a daemon thread, its result discarded,
    and the worker's slot is free at once.

    Args:
        ref: the task's ``module:function`` reference.
        folder: the name of the uploaded folder to import it from ("" for none).
        request: the task's inputs as JSON text (:func:`~harness_tui.engine.attempt.request_of`).
        limit: characters of output kept, 0 to capture none.
        timeout: seconds, or None.
        ticket: the attempt's recorded-calls ticket (docs/recording.md), or None: its
            requests are then recorded or answered here, and come back under ``calls``.
    """
    worker = get_worker()
    base = os.path.join(worker.local_directory, folder) if folder else ""
    if base:
        _forget_others(ref.partition(":")[0].split(".")[0], Path(base))
    inputs = PlainInputs(json.loads(request))
    log = LogBuffer("", 0, limit) if limit else None
    if log is not None:
        install()
    try:
        io = attempt_io(ticket)
    except ValueError as exc:
        return {"kind": ERROR, "error": {"type": "CallDiverged", "message": str(exc)},
                "worker": worker.address}  # fmt: skip
    token = current.set(log)
    try:
        with recording(io):  # before the clock's thread starts: capture hands both to it
            reply = _timed(ref, base, inputs, timeout)
    finally:
        current.reset(token)
    if io is not None:
        reply["calls"] = report_of(io)
    if log is not None:
        log.close()
        reply["log"] = log.snapshot()
    reply["worker"] = worker.address
    return reply


def _forget_others(top: str, base: Path) -> None:
    """Drop module ``top`` (and its submodules) from the worker's imports when ``base``
    provides it but it was imported from elsewhere: another workflow's module of the same
    name, or an earlier version of this folder (a long-lived cluster, an edited task)."""
    if not ((base / top).is_dir() or (base / f"{top}.py").is_file()):
        return
    with _import_lock:
        module = sys.modules.get(top)
        if module is None:
            return
        where = getattr(module, "__file__", None) or next(iter(getattr(module, "__path__", [])), "")
        if where and Path(where).resolve().is_relative_to(base.resolve()):
            return
        for name in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
            del sys.modules[name]


def _timed(ref: str, base: str, inputs: dict[str, Any], timeout: float | None) -> dict[str, Any]:
    if timeout is None:
        return reply_of(ref, base, inputs)
    # Imported before the clock starts: a worker's first import of the task's module is not
    # the task's time (in-process it was imported once, long before).
    with contextlib.suppress(Exception):  # a failing import is reported by the attempt
        LazyCallable(ref, Path(base) if base else None).resolve()
    replies: list[dict[str, Any]] = []
    thread = threading.Thread(
        target=lambda: replies.append(reply_of(ref, base, inputs)),
        name="harness-attempt",
        daemon=True,
    )
    thread.start()  # with the attempt's log: capture hands it to the thread
    thread.join(timeout)
    return replies[0] if replies else {"kind": TIMEOUT}


class FolderPlugin(WorkerPlugin):  # type: ignore[misc]
    """Writes a task folder's Python files under the worker's local directory, on every
    worker (those that join later too).

    Args:
        name: the folder's name there.
        files: contents by relative path.
    """

    idempotent = True

    def __init__(self, name: str, files: dict[str, bytes]) -> None:
        self.name = name
        self.files = files

    def setup(self, worker: Any) -> None:
        root = Path(worker.local_directory) / self.name
        for relative, data in self.files.items():
            target = root / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)


def dask_setup(worker: Any) -> None:
    """A LocalCluster worker of the command line (Dask runs it as the worker's preload):
    what the process writes to its standard streams (Dask's logging, a dying task's
    traceback, what a task writes straight to a file descriptor) goes nowhere, never to
    the terminal the command's own lines are on. A task's prints are captured as always."""
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        for fd in (1, 2):
            os.dup2(null, fd)
    finally:
        os.close(null)
