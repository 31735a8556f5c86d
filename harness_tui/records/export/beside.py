"""Reading a large export in a second process while this one parses its workflow.

A reader of an export's views (replay, diff) spends its time on two things that do not need
each other until the end: reading the export's arrays (:mod:`.streamed`: parsing, checking and
hashing some 120 MB at 100,000 tasks) and parsing the workflow embedded in it (the YAML of
100,000 tasks). On a machine with a second core they go side by side: a child process reads
the export lean and hands back its :class:`~.streamed.Lean` (pickled, through a pipe), while
this process parses the embedded workflow from the file's last member, ahead of the checks
that need it (:func:`~harness_tui.workflow.loader.parse_shared` keeps that parse for them).

Nothing is trusted from it that the one-process read would not trust: the child runs this
package's own lean reader on the same file, with the same limits (``HARNESS_TUI_LIMITS`` is
inherited), and either gives its views, says the file is not read lean (this process then
reads it whole, which words what is wrong) or gives the one line of a :class:`RecordError`.
The workflow parsed ahead is the file's as it was when peeked at: the checks ask for the
workflow of the source the child checked, so a file changed in between is parsed again
(another source is another key). A child that cannot start or dies is not an error: the file
is read here, as without a second process.

Only files of :data:`BESIDE_BYTES` or more are read so, and only when a core is free
(:func:`core_free`): below that size, or taking turns with this process on a busy machine,
the child costs more than it saves.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import json
import mmap
import os
import pickle
import stat
import subprocess
import sys
from collections.abc import Iterator, Sequence
from itertools import repeat
from typing import Any, TypeGuard

from ...engine.events import TraceEvent
from ...engine.scheduler import Plan
from ...files import open_regular
from ...workflow.errors import WorkflowError
from ...workflow.limits import current
from ...workflow.loader import Workflow
from ..errors import RecordError
from .streamed import Lean
from .views import parse_embedded

__all__ = ["BESIDE_BYTES", "NOT_READ", "Beside", "core_free", "reading_beside"]

BESIDE_BYTES = 32 * 1024 * 1024
"""The size from which an export is read in a second process (about 25,000 tasks; at 2,000
the process would cost more than the parse it runs beside)."""

NOT_READ = object()
"""What :meth:`Beside.outcome` gives when the child read nothing for this process to use (it
could not start, or died): the file is then read here."""

_CHILD = (
    "import gc, json, sys\n"
    "sys.path[:] = json.loads(sys.argv[1])\n"
    "gc.set_threshold(*json.loads(sys.argv[2]))\n"
    "sys.set_int_max_str_digits(int(sys.argv[3]))\n"
    "from harness_tui.records.export.beside import serve\n"
    "serve(sys.argv[4], sys.argv[5])\n"
)


class Beside:
    """The lean read of one export file going on in a child process: the file at ``path``
    (resolved: ``/dev/stdin`` is each process's own), named ``name`` in messages."""

    def __init__(self, path: str, name: str) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        try:
            # -P: nothing from the working folder is imported before sys.path is set to
            # this process's own, so that the child runs the code this process runs, and
            # reads as this process reads (the collector, the digits of an integer).
            self.process = subprocess.Popen(
                [sys.executable, "-P", "-c", _CHILD, json.dumps(sys.path),
                 json.dumps(gc.get_threshold()), str(sys.get_int_max_str_digits()), path,
                 name],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )  # fmt: skip
        except (OSError, ValueError, TypeError):  # TypeError: a path entry JSON cannot hold
            self.process = None

    def outcome(self) -> Lean | RecordError | object | None:
        """The child's answer: the :class:`Lean` it read, a :class:`RecordError` saying why
        the file cannot be read, None if it is not read lean, or :data:`NOT_READ`."""
        process = self.process
        if process is None or process.stdout is None:
            return NOT_READ
        with process.stdout:
            data = process.stdout.read()
        if process.wait() != 0:
            return NOT_READ
        try:
            kind, value, columns = pickle.loads(data)  # our own child's answer
            if kind == "lean" and _is_lean(value):
                return dataclasses.replace(value, events=_events(columns))
        except Exception:  # a torn answer is no answer: the file is read here
            return NOT_READ
        if kind == "error" and type(value) is str:
            return RecordError(value)
        return None if kind == "whole" else NOT_READ

    def stop(self) -> None:
        """End the child if it is still reading, and let its pipe go (the caller no longer
        needs its answer)."""
        process = self.process
        if process is None:
            return
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


def serve(path: str, name: str) -> None:
    """The child's side: read ``path`` (named ``name``) lean and write the pickled answer to
    stdout."""
    from .reading import read_bytes
    from .streamed import read_lean

    answer: tuple[str, Any, Any]
    try:
        lean = read_lean(read_bytes(path, name), name)
    except RecordError as exc:
        answer = ("error", str(exc), None)
    else:
        if lean is None:
            answer = ("whole", None, None)
        else:  # the events as columns: a quarter of the time to pickle, as quick to rebuild
            columns = tuple(zip(*lean.events, strict=True))
            answer = ("lean", dataclasses.replace(lean, events=[]), columns)
    sys.stdout.buffer.write(pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL))
    sys.stdout.buffer.flush()


def _is_lean(value: object) -> TypeGuard[Lean]:
    """Whether ``value`` is a :class:`Lean` whose parts are of their kinds."""
    return (
        type(value) is Lean
        and type(value.document) is dict
        and type(value.plan) is Plan
        and type(value.logs) is dict
        and type(value.outputs) is dict
        and (value.claim is None or type(value.claim) is str)
    )


def _events(columns: tuple[tuple[Any, ...], ...]) -> list[TraceEvent]:
    """The events whose fields are ``columns`` (one tuple a field, in the field order)."""
    events = list(map(tuple.__new__, repeat(TraceEvent), zip(*columns, strict=True)))
    if events and len(events[0]) != len(TraceEvent._fields):
        raise ValueError("not the fields of an event")
    return events


@contextlib.contextmanager
def reading_beside(paths: Sequence[str]) -> Iterator[list[Beside | None]]:
    """Start a child reading each large export file of ``paths`` (one each, a file named
    twice included), then parse the workflow each of them embeds here, holding it until the
    block ends; a child left unread at the end is stopped. Gives the child of each path, in
    their order (None: read here)."""
    free = core_free()
    files = [_file_for_child(path) if free else None for path in paths]
    started: list[Beside | None] = []
    try:
        for path, file in zip(paths, files, strict=True):
            started.append(None if file is None else Beside(file, path))
        # Held, so that the checks of the block find them parsed (parse_shared keeps a
        # parse only while something holds it).
        named = {file: path for path, file in zip(paths, files, strict=True) if file is not None}
        held = [_embedded_workflow(file, path) for file, path in named.items()]
        yield started
        del held
    finally:
        for child in started:
            if child is not None:
                child.stop()


def core_free() -> bool:
    """Whether a core is free for a child: this process may use two or more, and fewer
    processes than it may use less one ran on average over the last minute (this one among
    them). On a busy machine the child would only take turns with this process, and passing
    its answer costs more than it saves. Never in a frozen program, whose executable is not
    an interpreter to run the child with."""
    if getattr(sys, "frozen", False):
        return False
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - systems without affinity (macOS)
        cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # pragma: no cover - no load average (Windows)
        return cores > 1
    return cores > 1 and load < cores - 0.5


def _file_for_child(path: str) -> str | None:
    """The file ``path`` names, resolved, if a child is to read it: a regular file of
    :data:`BESIDE_BYTES` or more, and no more than the reader reads (it says so at once).
    A pipe or a device is read once, here; a name resolved through ``/dev/stdin`` or
    ``/proc/self/fd`` is this process's descriptor, which the child reaches by the file's
    own path (or not at all: a file deleted while open is read here)."""
    try:
        resolved = os.path.realpath(path)
        status = os.stat(resolved)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(status.st_mode):
        return None
    if not BESIDE_BYTES <= status.st_size <= current().export_bytes:
        return None
    return resolved


_WORKFLOW = b'\n  "workflow": '
_END = b"\n}\n"


def _embedded_workflow(path: str, name: str) -> Workflow | None:
    """The workflow embedded in the export at ``path`` (named ``name``), parsed, if the file
    ends with it as this harness writes it (the last member) and it is YAML; None otherwise,
    or if it does not parse (the checks then say so, from the checked document)."""
    try:
        with open_regular(path) as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as m:
            if len(m) > current().export_bytes:  # grown since it was looked at
                return None
            if m[-len(_END) :] != _END:
                return None
            at = m.rfind(_WORKFLOW)
            if at < 0:
                return None
            member = json.loads(m[at + len(_WORKFLOW) : len(m) - len(_END)].decode())
    except (OSError, ValueError, RecursionError):
        return None
    if not (type(member) is dict and type(member.get("source")) is str):
        return None
    if type(member.get("path")) is not str or member["source"].lstrip().startswith("{"):
        return None  # a workflow defined in Python: its spec is rebuilt, not parsed
    try:
        return parse_embedded(member, name)
    except (RecordError, WorkflowError):
        return None
