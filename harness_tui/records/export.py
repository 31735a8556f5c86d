"""Run exports: a run as one JSON file that anyone can open, step through and replay.

Writing is atomic (temp file, fsync, rename). Reading checks, in order: size, JSON, format and
major version, schema, checksum, then internal consistency (the plan re-derived from the
embedded workflow and payload, trace task ids, digests, output digests). Each failure is a
:class:`RecordError` with one line saying what is wrong.
"""

from __future__ import annotations

import errno
import json
import os
import platform
import re
import stat
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from functools import cached_property
from importlib import metadata
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .. import __version__
from ..engine.canonical import (
    CanonicalError,
    check_json,
    combine_digests,
    digest,
    digest_text,
    object_text,
    payload_text,
)
from ..engine.capture import UNATTRIBUTED, AttemptLog
from ..engine.events import RUN_FAILING_STATUSES, RunStatus, Status, TraceEvent
from ..engine.graph import TaskGraph
from ..engine.orchestrator import Run
from ..engine.recorded_calls import Exchange
from ..engine.scheduler import DeterministicScheduler, Plan, SchedulerError, check_order
from ..engine.state import RunState
from ..workflow.errors import WorkflowError
from ..workflow.limits import Limits, current
from ..workflow.loader import Workflow, parse_workflow
from ..workflow.payload import NotRegularFileError, open_regular, read_capped, too_many_digits
from ..workflow.python_source import python_spec, workflow_from_spec
from .errors import RecordError
from .io_redaction import redact_recordings
from .model import FORMAT, FORMAT_VERSION, FORMAT_VERSION_IO, RunExport
from .overrides import Override, add_overrides
from .redaction import REPLACEMENT, UNCHECKED, redact_document

__all__ = [
    "FileKind",
    "RunRecord",
    "atomic_write",
    "check_target",
    "export_name",
    "file_kind",
]

_PACKAGES = ("textual", "rich", "pyyaml", "click", "pydantic", "jmespath")


def _is_device(path: Path) -> bool:
    """Whether ``path`` is something other than a file or a folder (a device, a pipe)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def atomic_write(path: str | Path, text: str, max_bytes: int | None = None) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the new one, never half
    (a device or a pipe is written into as it is: a rename would replace it).

    The file gets the mode a plain ``open`` would give it (``0o666 & ~umask``), not the
    private mode of the temporary file it is renamed from.

    Raises:
        RecordError: the text is over ``max_bytes`` (what the reader would refuse).
        OSError: the file cannot be written.
    """
    data = text.encode("utf-8")
    if max_bytes is not None and len(data) > max_bytes:
        raise RecordError(
            f"{path}: the export is {len(data):,} bytes, over the {max_bytes:,}-byte limit of "
            "the reader: not written"
        )
    target = Path(path)
    if _is_device(target):  # /dev/null, /dev/stdout, a pipe: written into, never replaced
        _write_into(target, data)
        return
    directory = target.resolve().parent
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    try:  # make the rename itself durable
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


PIPE_READER_WAIT = 5.0
"""Seconds a named pipe given as a target may take to get a reader (one started beside the
command) before it is refused."""


def _write_into(target: Path, data: bytes) -> None:
    """Write into a device or a named pipe. A pipe no process reads would block the open
    forever: it is opened without blocking, tried again for :data:`PIPE_READER_WAIT`
    seconds, and refused if nobody reads it by then."""
    deadline = time.monotonic() + PIPE_READER_WAIT
    while True:
        try:
            fd = os.open(target, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            break
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: a FIFO without a reader
                raise
            if time.monotonic() >= deadline:
                raise OSError(exc.errno, "it is a named pipe that no process reads") from None
            time.sleep(0.02)
    os.set_blocking(fd, True)  # a reader is there: wait for it to take the text
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def _umask() -> int:
    """The process's umask: read where the system shows it (Linux), else set and restored
    (which other threads creating files at that instant would see)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def check_target(path: str | Path) -> Path:
    """Check, before a run, that an export can be written to ``path``; return it absolute,
    so that a task that changes directory cannot move it.

    Raises:
        RecordError: one line saying why not (missing folder, a folder given, read-only).
    """
    target = Path(os.path.abspath(path))
    directory = target.parent
    if target.is_dir():
        raise RecordError(f"cannot write {path}: it is a folder")
    if not directory.is_dir():
        raise RecordError(f"cannot write {path}: no folder {directory}")
    if target.exists() and not os.access(target, os.W_OK):
        raise RecordError(f"cannot write {path}: the file is read-only")
    try:  # the folder's permissions, a read-only file system or a full disk: try it
        fd, probe = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise RecordError(f"cannot write {path}: {exc.strerror}") from None
    os.close(fd)
    os.unlink(probe)
    return target


class FileKind(StrEnum):
    """What a file given to harness-tui is, decided once where it enters."""

    WORKFLOW = "workflow"
    EXPORT = "export"


# A JSON string (escapes included; an unterminated one runs to the end of the head, so text
# cut off inside a string is never read as structure) or one structural character.
_JSON_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"?|[{}\[\]]', re.DOTALL)
_MARK_VALUE = re.compile(rb'\s*:\s*"harness-run"')
_KEY_COLON = re.compile(rb"\s*:")
_SNIFF_BYTES = 65536


def _declares_export(head: bytes) -> bool:
    """Whether the JSON object starting ``head`` has ``"format": "harness-run"`` at its top
    level. The first top-level ``format`` key decides; ``{"format": "harness-run"}`` nested in
    a workflow's ``with:`` is not at the top level. A 1.1 export written before ``format``
    came first begins with ``"attempts"``, which no workflow has (its schema forbids it)."""
    depth = 0
    first_key = True
    for token in _JSON_TOKEN.finditer(head):
        text = token.group()
        if text in (b"{", b"["):
            depth += 1
        elif text in (b"}", b"]"):
            depth -= 1
            if depth <= 0:
                return False
        elif depth == 1 and _KEY_COLON.match(head, token.end()):
            if text == b'"format"':
                return _MARK_VALUE.match(head, token.end()) is not None
            if first_key and text == b'"attempts"':
                return True
            first_key = False
    return False


def file_kind(path: str | Path) -> FileKind:
    """Whether ``path`` is a run export or a workflow file, from its content, not its name.

    An export is a JSON object that declares ``"format": "harness-run"`` as a top-level key
    in its first 64 KiB (exports write it first; :meth:`RunRecord.read` does the real
    checking); anything else, a JSON or flow-style YAML workflow included, is a workflow
    file, and a path that cannot be opened is reported by the workflow loader.

    Raises:
        RecordError: ``path`` is a FIFO, a device or a folder (reading it could block or
            never end).
    """
    try:
        with open_regular(path) as handle:
            head = handle.read(_SNIFF_BYTES)
    except NotRegularFileError as exc:
        raise RecordError(f"{path}: {exc.strerror}") from None
    except OSError:
        return FileKind.WORKFLOW
    head = head.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n")
    if not head.startswith(b"{"):
        return FileKind.WORKFLOW
    return FileKind.EXPORT if _declares_export(head) else FileKind.WORKFLOW


def export_name(workflow_name: str, run_digest: str) -> str:
    """The default file name of an export: ``<workflow>-<first 12 of the run digest>.json``."""
    return f"{workflow_name}-{run_digest[:12]}.json"


def _environment() -> dict[str, Any]:
    packages: dict[str, str | None] = {}
    for name in _PACKAGES:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            packages[name] = None
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "packages": packages,
    }


def _log_json(run: Run, task: str, attempt: int) -> dict[str, Any] | None:
    return _log_dict(run.log(task, attempt))


def _log_dict(log: AttemptLog | None) -> dict[str, Any] | None:
    if log is None or not (log.text or log.truncated):
        return None
    return {"text": log.text, "truncated": log.truncated}


def _attempts(run: Run, graph: TaskGraph, logs: bool = True) -> list[dict[str, Any]]:
    """Each attempt as it really ran (export 1.1): from its ``running`` event to its final one,
    with what it printed or logged (``log`` is None when it wrote nothing, or ``logs`` is off).

    A fallback has no ``running`` event; its start is its final event's ``started_at``.
    """
    started: dict[tuple[str, int], TraceEvent] = {}
    recordings = run.recordings()
    attempts = []
    for event in run.events:
        if event.attempt == 0:
            continue
        key = (event.task, event.attempt)
        if event.status is Status.RUNNING:
            started[key] = event
            continue
        opened = started.pop(key, None)
        fallback = event.attempt > graph[event.task].max_retries + 1
        attempts.append(
            {
                "task": event.task,
                "attempt": event.attempt,
                "kind": "fallback" if fallback else "task",
                "started_at": event.started_at,
                "ended_at": event.ended_at,
                "wall_started": opened.wall if opened is not None else None,
                "wall_ended": event.wall,
                "worker": event.worker,
                "log": _log_json(run, event.task, event.attempt) if logs else None,
            }
        )
        exchanges = recordings.get(key)
        if exchanges:
            attempts[-1]["io"] = [exchange.to_json() for exchange in exchanges]
    return attempts


def _additions_1_1(
    run: Run, workflow: Workflow, forked_from: tuple[str, str] | None
) -> dict[str, Any]:
    """The fields export 1.1 adds beside the trace (``redaction`` is set by redacting)."""
    return {
        "attempts": _attempts(run, workflow.graph),
        "forked_from": (
            None if forked_from is None else {"run_digest": forked_from[0], "task": forked_from[1]}
        ),
        "redaction": None,
        "spec": python_spec(workflow),
        "unattributed_log": _log_dict(run.unattributed_log()),
    }


def _additions_1_2(run: Run) -> dict[str, Any]:
    """Export 1.2: the exchanges of threads outside any attempt (each attempt's own are in
    ``attempts[].io``); nothing when the run recorded no calls, which is then a 1.1 export."""
    recordings = run.recordings()
    if not recordings:
        return {}
    stray = recordings.get(UNATTRIBUTED, [])
    return {
        "format_version": FORMAT_VERSION_IO,
        "unattributed_io": [exchange.to_json() for exchange in stray],
    }


def _checksum(document: Mapping[str, Any]) -> str:
    return digest({k: v for k, v in document.items() if k != "checksum"})


_FIRST_KEYS = ("format", "format_version")


def _dump(document: Mapping[str, Any]) -> str:
    """The export text: ``format`` and ``format_version`` first, so that a sniffer reading
    the head of a large file finds them; every other key sorted (the checksum is over
    canonical JSON, so the order of keys in the file does not change it)."""
    rest = {k: v for k, v in document.items() if k not in _FIRST_KEYS}
    body = json.dumps(rest, indent=2, sort_keys=True, ensure_ascii=False)
    first = [
        f"  {json.dumps(k)}: {json.dumps(document[k], ensure_ascii=False)}"
        for k in _FIRST_KEYS
        if k in document
    ]
    if not first:
        return body + "\n"
    if not rest:
        return "{\n" + ",\n".join(first) + "\n}\n"
    return "{\n" + ",\n".join(first) + ",\n" + body[2:] + "\n"


class RunRecord:
    """A run at rest. Build one with :meth:`from_run` or :meth:`read`."""

    def __init__(self, document: dict[str, Any], source_name: str = "<record>") -> None:
        self.document = document
        self.source_name = source_name

    # -- making -----------------------------------------------------------------------------

    @classmethod
    def from_run(
        cls,
        run: Run,
        workflow: Workflow,
        *,
        run_id: str | None = None,
        redact: Iterable[str] = (),
        status: str | None = None,
        forked_from: tuple[str, str] | None = None,
        environment: Mapping[str, Any] | None = None,
        overrides: Sequence[Override] = (),
    ) -> RunRecord:
        """Capture a run (finished or not) with its workflow.

        Args:
            run_id: the run's id in the store, if it has one.
            redact: keys whose values are taken out of the whole export (see
                :mod:`.redaction`).
            status: the run status to record instead of the run's own (a stored run's).
            forked_from: ``(run digest, task)`` of the run this one was re-run from.
            overrides: that re-run's what-if changes (export 1.3; redacted with ``redact``).
            environment: what to record as the environment (default: this interpreter's).
        """
        keys = frozenset(redact)
        document: dict[str, Any] = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "tool": {"name": "harness-tui", "version": __version__},
            "run_id": run_id,
            "workflow": {
                "name": workflow.name,
                "path": workflow.path,
                "source": workflow.source,
                "digest": workflow.digest,
            },
            "payload": run.payload,
            "plan": run.plan.to_json(),
            "trace": run.canonical_trace(),
            "results": run.results,
            "status": status or run.status.value,
            "digests": run.digests(),
            "redacted": [],
            "timings": [event.timing() for event in run.events],
            "environment": dict(environment) if environment is not None else _environment(),
            **_additions_1_1(run, workflow, forked_from),
            **_additions_1_2(run),
        }
        if run.plan.scheduler is not None:  # only then: every other export stays as it was
            document["scheduler"] = run.plan.scheduler
        add_overrides(document, overrides, redacted=bool(keys))  # export 1.3, if any
        if keys:
            params = [node.params for node in workflow.graph.nodes.values()]
            known = [run.payload, workflow.payload, *params, run.results]
            document = redact_document(document, keys, [workflow.payload, *params])
            redact_recordings(document, keys, known)
        document["checksum"] = _checksum(document)
        record = cls(document)
        if keys:
            record._check_redacted_workflow()
        return record

    def _check_redacted_workflow(self) -> None:
        """A redacted export's workflow must still be one (else no reader could open it)."""
        try:
            self.workflow  # noqa: B018 - parsing is the check
        except WorkflowError as exc:
            keys = ", ".join(self.redacted)
            raise RecordError(
                f"cannot redact {keys}: a redacted value is also written where the workflow "
                f"needs it ({exc.problems[0].message})"
            ) from None

    def to_text(self) -> str:
        """The export's JSON text: ``format`` and ``format_version`` first, then sorted keys;
        two-space indent, UTF-8, final newline."""
        return _dump(self.document)

    def write(self, path: str | Path) -> Path:
        """Write the export atomically; return the path. Task logs count against the
        reader's size limit: when they would take the export over it, they are left out (see
        :meth:`within`).

        Raises:
            RecordError: over the reader's ``export_bytes`` limit, which it would refuse.
        """
        limit = current().export_bytes
        atomic_write(path, self.within(limit)[1], limit)
        return Path(path)

    def within(self, limit: int) -> tuple[RunRecord, str]:
        """This export and its text, or, when it is over ``limit`` bytes with task logs in
        it, the same export without the logs (``logs_omitted`` says why): logs are beside the
        trace, in no digest, and the first thing to give up for an export the reader opens."""
        text = self.to_text()
        if len(text.encode("utf-8")) <= limit:
            return self, text
        if not self.logs:
            self._refuse_recordings_over(limit)
            return self, text
        document = dict(self.document)
        document["attempts"] = [{**a, "log": None} for a in document.get("attempts") or []]
        document["unattributed_log"] = None
        document["logs_omitted"] = (
            f"the task logs took the export over the {limit:,}-byte limit of the reader"
        )
        document.pop("checksum", None)
        document["checksum"] = _checksum(document)
        smaller = RunRecord(document, self.source_name)
        text = smaller.to_text()
        if len(text.encode("utf-8")) > limit:
            smaller._refuse_recordings_over(limit)
        return smaller, text

    def _refuse_recordings_over(self, limit: int) -> None:
        """An export over ``limit`` without logs to give up: with recorded calls it is refused
        (written without them, it could not be re-run offline)."""
        if self.document.get("unattributed_io") is not None or any(
            a.get("io") for a in self.document.get("attempts") or []
        ):
            raise RecordError(
                f"the recorded calls alone take the export over the {limit:,}-byte limit of "
                "the reader: not written (an export without them could not be re-run offline)"
            )

    # -- reading ----------------------------------------------------------------------------

    @classmethod
    def read(cls, path: str | Path) -> RunRecord:
        """Read and verify an export.

        Raises:
            RecordError: one line saying what is wrong with the file.
        """
        name = str(path)
        limit = current().export_bytes
        try:
            data = read_capped(path, limit)
        except OSError as exc:
            raise RecordError(f"{name}: cannot read: {exc.strerror}") from None
        if data is None:
            raise RecordError(f"{name}: over the {limit:,}-byte limit")
        try:
            text = data.decode("utf-8-sig")  # a BOM (an editor's) is not part of the JSON
        except UnicodeDecodeError as exc:
            raise RecordError(f"{name}: cannot read as UTF-8 text: {exc}") from None
        return cls.parse(text, name)

    @classmethod
    def parse(cls, text: str, name: str = "<record>") -> RunRecord:
        """Verify export text (see :meth:`read`)."""
        limits = current()
        try:
            document = json.loads(text, parse_constant=_refuse_constant)
        except _NotJsonNumberError as exc:
            raise RecordError(f"{name}: {exc} is not a JSON number") from None
        except json.JSONDecodeError as exc:
            raise RecordError(
                f"{name}: not JSON ({exc.msg}, line {exc.lineno} column {exc.colno}); "
                "the file may be truncated"
            ) from None
        except RecursionError:
            raise RecordError(f"{name}: nested too deeply to read") from None
        except ValueError:
            raise RecordError(f"{name}: {too_many_digits()}") from None
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            raise RecordError(f"{name}: not a harness-tui run export (no 'format: {FORMAT}')")
        version = document.get("format_version")
        if not isinstance(version, str) and version is not None:
            shown = f"the {type(version).__name__} {version!r}"
            raise RecordError(
                f"{name}: format_version must be a string such as {FORMAT_VERSION!r}, not {shown}"
            )
        if not isinstance(version, str) or version.split(".")[0] != FORMAT_VERSION.split(".")[0]:
            raise RecordError(
                f"{name}: format version {version!r} is not supported (this harness-tui reads "
                f"{FORMAT_VERSION.split('.')[0]}.x)"
            )
        try:
            RunExport.model_validate(document)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise RecordError(f"{name}: invalid export at {where}: {first['msg']}") from None
        _check_free_form(document, name, limits)
        expected = document["checksum"]
        try:
            actual = _checksum(document)
        except CanonicalError as exc:
            raise RecordError(f"{name}: {exc}") from None
        if actual != expected:
            raise RecordError(
                f"{name}: checksum mismatch: the file was changed after it was exported"
            )
        record = cls(document, name)
        record._check_consistency()
        record._check_claims()
        return record

    def _check_consistency(self) -> None:
        name = self.source_name
        skip = frozenset(self.unchecked)
        wf = self.document["workflow"]
        source, payload = wf["source"], self.payload
        # A check a redaction skips is excused only where a redacted value really is gone:
        # its part carries the marker (a redacted export lists every check as unchecked, so
        # the list alone proves nothing; an edited value without a marker stays an edit).
        excused = {
            "workflow-digest": _marked(source),
            "plan-from-payload": _marked(source) or _marked(payload),
            "payload-digest": _marked(payload),
            "trace-digest": _marked(self.document["trace"]),
            "results-digest": _marked(self.document["results"]),
        }
        skip = frozenset(check for check in skip if excused.get(check, True))
        if "workflow-digest" not in skip and digest_text(source) != wf["digest"]:
            raise RecordError(f"{name}: embedded workflow does not match its digest")
        try:
            workflow = self.workflow
        except WorkflowError as exc:
            raise RecordError(f"{name}: embedded workflow is invalid: {exc.problems[0]}") from None
        digests = self.document["digests"]
        if "workflow-digest" not in skip and workflow.digest != wf["digest"]:
            raise RecordError(f"{name}: embedded workflow does not match its digest")
        recorded_plan = self.plan
        if recorded_plan.digest != digests["plan"]:
            raise RecordError(f"{name}: plan does not match its digest")
        if "plan-from-payload" not in skip:
            self._check_plan(workflow, recorded_plan)
        if "payload-digest" not in skip and digest(payload) != digests["payload"]:
            raise RecordError(f"{name}: payload does not match its digest")
        self._check_trace(skip)
        outputs = self.outputs
        for event in self.events:
            if event.output_digest is None:
                continue
            if event.task not in outputs:  # redaction replaces values, never removes them
                raise RecordError(f"{name}: result of {event.task!r} is missing")
            text = outputs[event.task]
            unchecked = "output-digests" in skip and REPLACEMENT in text
            if not unchecked and digest_text(text) != event.output_digest:
                raise RecordError(
                    f"{name}: result of {event.task!r} does not match its output digest"
                )
        if "results-digest" not in skip and digest_text(object_text(outputs)) != digests["results"]:
            raise RecordError(f"{name}: results do not match their digest")
        parts = {k: digests[k] for k in ("payload", "plan", "results", "trace")}
        if combine_digests(parts) != digests["run"]:
            raise RecordError(f"{name}: run digest does not match its parts")

    def _check_trace(self, skip: frozenset[str]) -> None:
        name = self.source_name
        by_task = {step.task: step for step in self.plan}
        state = RunState()
        for position, event in enumerate(self.events):
            step = by_task.get(event.task)
            if event.seq != position:
                raise RecordError(f"{name}: trace event {position} has seq {event.seq}")
            if step is None or step.task_id != event.task_id:
                raise RecordError(
                    f"{name}: trace event {event.seq} ({event.task}) does not match the plan"
                )
            state.append(event)
        if "trace-digest" not in skip and state.trace_digest() != self.digests["trace"]:
            raise RecordError(f"{name}: trace does not match its digest (the trace was edited)")

    def _check_claims(self) -> None:
        """The fields outside the digests must not contradict the trace: plan indexes, the
        sequence numbers of timings, and the run status."""
        name = self.source_name
        for position, row in enumerate(self.document["plan"]):
            if row["index"] != position:
                raise RecordError(f"{name}: plan row {position} has index {row['index']}")
        count = len(self.document["trace"])
        seen: set[int] = set()
        for timing in self.document.get("timings", []):
            seq = timing["seq"]
            if not 0 <= seq < count or seq in seen:
                what = "a second timing for" if seq in seen else "a timing for no"
                raise RecordError(f"{name}: {what} trace event (seq {_short(seq)})")
            seen.add(seq)
        ran = {(event.task, event.attempt) for event in self.events if event.attempt}
        for attempt in self.document.get("attempts") or []:
            if (attempt["task"], attempt["attempt"]) not in ran:
                task, number = attempt["task"], attempt["attempt"]
                raise RecordError(f"{name}: attempt {number} of {task!r} is not in the trace")
        redaction = self.document.get("redaction")
        if redaction is not None and sorted(redaction["keys"]) != sorted(self.redacted):
            raise RecordError(f"{name}: redaction keys differ from the redacted keys")
        claimed = self.document["status"]
        derived = _possible_statuses(self.events, self.plan.names)
        if claimed not in derived:
            allowed = " or ".join(sorted(derived))
            raise RecordError(
                f"{name}: status {claimed!r} contradicts the trace (it allows {allowed})"
            )

    # -- views ------------------------------------------------------------------------------

    @cached_property
    def workflow(self) -> Workflow:
        """The embedded workflow (parsed; no code is imported).

        Raises:
            RecordError: its recorded path cannot be a path (a NUL in it...).
            WorkflowError: the embedded source is not a valid workflow.
        """
        wf = self.document["workflow"]
        spec = self.document.get("spec")
        if spec is not None:  # defined in Python: rebuilt from its code-free spec
            if check_json(spec) != wf["source"]:
                raise RecordError(f"{self.source_name}: the spec does not match its workflow")
            skipped = {e.task for e in self.events if e.status is Status.SKIPPED}
            return workflow_from_spec(spec, wf["path"], skipped)
        try:
            base = Path(wf["path"]).resolve().parent if wf["path"] != "<string>" else None
        except (OSError, ValueError):  # a NUL in the path, or one the OS cannot resolve
            raise RecordError(
                f"{self.source_name}: workflow path {wf['path']!r} is not a usable path"
            ) from None
        return parse_workflow(wf["source"], wf["path"], base=base)

    @property
    def payload(self) -> Any:
        return self.document["payload"]

    @property
    def redacted(self) -> list[str]:
        return list(self.document.get("redacted") or [])

    @property
    def unchecked(self) -> list[str]:
        """The reader's checks this export skips because they need redacted content: those
        its ``redaction`` lists (of :data:`~.redaction.UNCHECKED`); for a redacted export
        written before ``redaction.unchecked`` existed, the ones it could not pass."""
        if not self.redacted:
            return []
        redaction = self.document.get("redaction") or {}
        listed = redaction.get("unchecked")
        if isinstance(listed, list):
            return [check for check in UNCHECKED if check in listed]
        return ["plan-from-payload", "payload-digest", "output-digests", "results-digest"]

    @property
    def status(self) -> str:
        return str(self.document["status"])

    @property
    def digests(self) -> dict[str, str]:
        return dict(self.document["digests"])

    @property
    def run_id(self) -> str | None:
        value = self.document.get("run_id")
        return str(value) if value is not None else None

    def _check_plan(self, workflow: Workflow, recorded: Plan) -> None:
        """The plan follows from the workflow and payload: it is the deterministic plan, or,
        when a custom scheduler chose it (``scheduler``), a topological order of the graph
        with the task ids and levels that follow."""
        name = self.source_name
        derived = DeterministicScheduler(workflow.graph).plan(self.payload)
        custom = self.scheduler
        if custom is None:
            if derived != recorded:
                raise RecordError(f"{name}: plan does not match the embedded workflow and payload")
            return
        try:
            check_order(workflow.graph, recorded.names, custom)
        except SchedulerError as exc:
            raise RecordError(f"{name}: plan is no order of the embedded workflow: {exc}") from None
        ids = dict(zip(derived.names, derived.task_ids, strict=True))
        levels: dict[str, int] = {}
        graph = workflow.graph.nodes
        for task, task_id, level in zip(recorded.names, recorded.task_ids, recorded.levels,
                                         strict=True):  # fmt: skip
            levels[task] = max((levels[d] + 1 for d in graph[task].depends_on), default=0)
            if task_id != ids[task] or level != levels[task]:
                raise RecordError(f"{name}: plan row {task!r} does not match the payload")

    @property
    def scheduler(self) -> str | None:
        """The custom scheduler that chose the plan's order (None: the deterministic one)."""
        value = self.document.get("scheduler")
        return value if isinstance(value, str) else None

    @cached_property
    def plan(self) -> Plan:
        rows = self.document["plan"]
        text = payload_text(self.payload)
        return Plan(
            tuple(r["task"] for r in rows),
            tuple(r["task_id"] for r in rows),
            tuple(r["level"] for r in rows),
            text,
        )

    @cached_property
    def events(self) -> list[TraceEvent]:
        timings = {t["seq"]: t for t in self.document.get("timings", [])}
        return [TraceEvent.from_dicts(e, timings.get(e["seq"])) for e in self.document["trace"]]

    @cached_property
    def logs(self) -> dict[tuple[str, int], AttemptLog]:
        """What each ``(task, attempt)`` printed or logged (export 1.1; empty for 1.0), and
        what threads wrote after their attempt ended under ``UNATTRIBUTED``."""
        found = {}
        stray = self.document.get("unattributed_log")
        if stray is not None:
            found[UNATTRIBUTED] = AttemptLog(stray["text"], bool(stray.get("truncated")))
        for attempt in self.document.get("attempts") or []:
            log = attempt.get("log")
            if log is not None:
                found[(attempt["task"], attempt["attempt"])] = AttemptLog(
                    log["text"], bool(log.get("truncated"))
                )
        return found

    @cached_property
    def recordings(self) -> dict[tuple[str, int], list[Exchange]]:
        """What the outside world answered each ``(task, attempt)`` (export 1.2; empty before),
        the exchanges of threads outside any attempt under ``UNATTRIBUTED``.

        Raises:
            RecordError: a recorded exchange is malformed (one line names it).
        """
        found: dict[tuple[str, int], list[Exchange]] = {}
        try:
            stray = self.document.get("unattributed_io") or []
            if stray:
                found[UNATTRIBUTED] = [
                    Exchange.from_json(e, f"unattributed_io[{i}]") for i, e in enumerate(stray)
                ]
            for index, attempt in enumerate(self.document.get("attempts") or []):
                exchanges = attempt.get("io") or []
                if exchanges:
                    found[(attempt["task"], attempt["attempt"])] = [
                        Exchange.from_json(e, f"attempts[{index}].io[{i}]")
                        for i, e in enumerate(exchanges)
                    ]
        except ValueError as exc:
            raise RecordError(f"{self.source_name}: {exc}") from None
        return found

    @cached_property
    def outputs(self) -> dict[str, str]:
        """Each committed output as canonical JSON text."""
        return {name: check_json(value) for name, value in self.document["results"].items()}

    @property
    def results(self) -> dict[str, Any]:
        return dict(self.document["results"])


class _NotJsonNumberError(ValueError):
    pass


def _refuse_constant(text: str) -> Any:
    raise _NotJsonNumberError(text)


def _marked(value: Any) -> bool:
    """Whether ``value`` (text, or JSON data) carries the redaction marker somewhere."""
    return REPLACEMENT in (value if isinstance(value, str) else json.dumps(value))


def _short(value: int) -> str:
    text = str(value) if value.bit_length() < 200 else f"{str(value)[:12]}..."
    return text


def _check_free_form(document: Mapping[str, Any], name: str, limits: Limits) -> None:
    """Depth and integer size of the parts of an export that the schema leaves free
    (payload, results, spec, environment), so that no later step meets a value it cannot
    digest or show."""
    max_bits = int(limits.int_digits * 3.33) + 1
    for part in ("payload", "results", "spec", "environment", "forked_from"):
        stack: list[tuple[Any, int]] = [(document.get(part), 1)]
        while stack:
            value, depth = stack.pop()
            if isinstance(value, dict):
                children: Iterable[Any] = value.values()
            elif isinstance(value, list):
                children = value
            else:
                if type(value) is int and value.bit_length() > max_bits:
                    raise RecordError(
                        f"{name}: an integer in {part} has more than {limits.int_digits:,} digits"
                    )
                continue
            if depth > limits.export_depth:
                raise RecordError(
                    f"{name}: {part} is nested more than {limits.export_depth} levels deep"
                )
            stack.extend((child, depth + 1) for child in children)


def _possible_statuses(events: list[TraceEvent], names: Iterable[str]) -> frozenset[str]:
    """The run statuses a trace allows: ``pending`` before any event; ``running`` while a
    task has no final event; at the end ``succeeded`` or ``failed`` by the tasks' final
    statuses, or ``cancelled`` (stopped by the user)."""
    if not events:
        return frozenset({RunStatus.PENDING.value, RunStatus.RUNNING.value})
    final = {event.task: event.status for event in events}
    if any(final.get(task) in (None, Status.RUNNING) for task in names):
        return frozenset({RunStatus.RUNNING.value, RunStatus.CANCELLED.value})
    failed = any(status in RUN_FAILING_STATUSES for status in final.values())
    ending = RunStatus.FAILED if failed else RunStatus.SUCCEEDED
    return frozenset({ending.value, RunStatus.CANCELLED.value})
