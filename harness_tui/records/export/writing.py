"""Writing exports: the document of a run, its checksum, and its text."""

from __future__ import annotations

import functools
import hashlib
import json
import platform
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from pathlib import Path
from typing import IO, Any, overload

from ...engine.canonical import canonical_chunks, digest_chunks, is_unicode
from ...engine.canonical import quote as _quote
from ...engine.capture import UNATTRIBUTED, AttemptLog
from ...engine.events import Status, TraceEvent
from ...engine.graph import TaskGraph
from ...engine.orchestrator import Run
from ...engine.scheduler import PlanStep
from ...files import atomic_write_chunks, is_device
from ...version import __version__
from ...workflow.loader import Workflow
from ...workflow.python_source import python_spec
from .version import FORMAT, FORMAT_VERSION, FORMAT_VERSION_IO

__all__ = [
    "Rows",
    "checksum",
    "export_chunks",
    "export_name",
    "export_text",
    "plain",
    "run_document",
    "write_sealed",
]

_PACKAGES = ("textual", "rich", "pyyaml", "click", "pydantic", "jmespath")


def export_name(workflow_name: str, run_digest: str) -> str:
    """The default file name of an export: ``<workflow>-<first 12 of the run digest>.json``."""
    return f"{workflow_name}-{run_digest[:12]}.json"


def _environment() -> dict[str, Any]:
    from importlib import metadata  # 20 ms to import: only when an export is written

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


def _log_dict(log: AttemptLog | None) -> dict[str, Any] | None:
    if log is None or not (log.text or log.truncated):
        return None
    return {"text": log.text, "truncated": log.truncated}


def _attempts(run: Run, graph: TaskGraph) -> Rows:
    """Each attempt as it really ran (export 1.1): from its ``running`` event to its final one,
    with what it printed or logged (``log`` is None when it wrote nothing), as :class:`Rows`
    made when written.

    A fallback has no ``running`` event; its start is its final event's ``started_at``.
    """
    started: dict[tuple[str, int], TraceEvent] = {}
    # As of now, as the events, and without holding the run: what an ended attempt wrote
    # and was answered is whole.
    recordings, logs = run.recordings(), run.logs()
    ended: list[tuple[TraceEvent, TraceEvent | None]] = []
    for event in run.events:
        if event.attempt == 0:
            continue
        if event.status is Status.RUNNING:
            started[(event.task, event.attempt)] = event
        else:
            ended.append((event, started.pop((event.task, event.attempt), None)))

    def attempt(pair: tuple[TraceEvent, TraceEvent | None]) -> dict[str, Any]:
        event, opened = pair
        fallback = event.attempt > graph[event.task].max_retries + 1
        made = {
            "task": event.task,
            "attempt": event.attempt,
            "kind": "fallback" if fallback else "task",
            "started_at": event.started_at,
            "ended_at": event.ended_at,
            "wall_started": opened.wall if opened is not None else None,
            "wall_ended": event.wall,
            "worker": event.worker,
            "log": _log_dict(logs.get((event.task, event.attempt))),
        }
        exchanges = recordings.get((event.task, event.attempt))
        if exchanges:
            made["io"] = [exchange.to_json() for exchange in exchanges]
        return made

    return Rows(ended, attempt, lambda pair: not (_has_log(logs, pair[0]) or recordings))


def _has_log(logs: Mapping[tuple[str, int], AttemptLog], event: TraceEvent) -> bool:
    log = logs.get((event.task, event.attempt))
    return log is not None and bool(log.text or log.truncated)


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


def checksum(document: Mapping[str, Any], *, parsed: bool = False) -> str:
    """sha256 of the canonical JSON of every field but ``checksum``, taken piece by piece (an
    export of 100,000 tasks is never one canonical string in memory). ``parsed``: the
    document is what ``json.loads`` made of a file (see
    :func:`~harness_tui.engine.canonical.canonical_chunks`)."""
    rest = {k: v for k, v in document.items() if k != "checksum"}
    return digest_chunks(canonical_chunks(rest, depth=2, parsed=parsed))


_FIRST_KEYS = ("format", "format_version")


def export_text(document: Mapping[str, Any]) -> str:
    """The export text: ``format`` and ``format_version`` first, so that a sniffer reading
    the head of a large file finds them; every other key sorted (the checksum is over
    canonical JSON, so the order of keys in the file does not change it)."""
    return "".join(export_chunks(document))


def export_chunks(document: Mapping[str, Any]) -> Iterator[str]:
    """:func:`export_text` in pieces, to be written as they come: exactly ``json.dumps`` with
    a two-space indent, sorted keys and UTF-8 kept, a final newline, and ``format`` and
    ``format_version`` moved to the head."""
    rest = {k: v for k, v in document.items() if k not in _FIRST_KEYS}
    first = [
        f"  {json.dumps(k)}: {json.dumps(document[k], ensure_ascii=False)}"
        for k in _FIRST_KEYS
        if k in document
    ]
    if not first:
        yield from _indented_chunks(rest, 0, 2)
        yield "\n"
        return
    if not rest:
        yield "{\n" + ",\n".join(first) + "\n}\n"
        return
    yield "{\n" + ",\n".join(first) + ",\n"
    skip = 2  # the body's own "{\n"
    for chunk in _indented_chunks(rest, 0, 2):
        if skip:
            dropped = min(skip, len(chunk))
            chunk, skip = chunk[dropped:], skip - dropped
        yield chunk
    yield "\n"


_INDENT = "  "


def _indented_chunks(value: Any, level: int, depth: int) -> Iterator[str]:
    """``json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)`` as written at
    indent ``level``, in pieces: objects and arrays down to ``depth`` levels member by member
    (an object with a key that is not a string, which ``json`` would convert, whole)."""
    kind = type(value)
    if kind is Rows:  # written a run of members at a time, as a list is
        if not value:
            yield "[]"
            return
        kind = list
    if (
        depth <= 0
        or not value
        or (kind is not dict and kind is not list)
        or (kind is dict and not all(type(key) is str for key in value))
    ):
        yield _indented(value, level)
        return
    inner = "\n" + _INDENT * (level + 1)
    if kind is dict:
        yield "{"
        for index, key in enumerate(sorted(value)):
            yield f"{',' if index else ''}{inner}{_quote(key)}: "
            yield from _indented_chunks(value[key], level + 1, depth - 1)
        yield "\n" + _INDENT * level + "}"
    else:
        yield "["
        for start in range(0, len(value), _RUN):
            run = value[start : start + _RUN]
            records = _records(run, level + 1) if depth == 1 else None
            if records is not None:
                yield (f",{inner}" if start else inner) + records
                continue
            for index, item in enumerate(run, start):
                yield f",{inner}" if index else inner
                yield from _indented_chunks(item, level + 1, depth - 1)
        yield "\n" + _INDENT * level + "]"


_RUN = 1024
"""Members of a long array written in one call when they are all records (see
:func:`_records`)."""
_SCALAR_TYPES = frozenset((str, int, float, bool, type(None)))
_STR = frozenset((str,))


def _records(run: list[Any], level: int) -> str | None:
    """A run of records (non-empty objects of scalars under string keys: events, timings,
    attempts without a log) as ``json.dumps`` indents them at ``level`` and joins them in an
    array; None if one is not a record.

    One call of the C encoder writes the run with a control character between members: JSON
    text never holds one raw (a string escapes it), and only between two records does one
    follow a ``}`` (a scalar never ends in one), so replacing them lays the text out exactly.
    """
    if not _all_records(run):
        return None
    text = _encode_records(run)[2:-2]  # without "[{" and "}]"
    inner = "\n" + _INDENT * (level + 1)
    close_open = "\n" + _INDENT * level + "},\n" + _INDENT * level + "{" + inner
    text = text.replace("}\x01{", "\x02").replace("\x01", "," + inner).replace("\x02", close_open)
    return "{" + inner + text + "\n" + _INDENT * level + "}"


def _all_records(run: Iterable[Any]) -> bool:
    """Whether every member is a record: a non-empty object of scalars under string keys."""
    for item in run:
        if type(item) is not dict or not item:
            return False
        if not (
            _STR.issuperset(map(type, item)) and _SCALAR_TYPES.issuperset(map(type, item.values()))
        ):
            return False
    return True


_SCALARS = (str, int, float, bool, type(None))


class Rows(Sequence[dict[str, Any]]):
    """A long array of an export made from a run (its plan, trace or timings): each member is
    made when it is asked for, from the run's own record of it, so that writing the export
    holds a run of them at a time, not some 500,000 objects (about 160 MB at 100,000 tasks).
    :attr:`.record.RunRecord.document` gives plain lists (:func:`plain`)."""

    __slots__ = ("_flat", "_items", "_make")

    def __init__(
        self,
        items: Sequence[Any],
        make: Callable[[Any], dict[str, Any]],
        flat: Callable[[Any], bool] | None = None,
    ) -> None:
        self._items = items
        self._make = make
        self._flat = flat

    def flat(self, start: int, stop: int) -> bool:
        """Whether the members ``start:stop`` are known to be records (non-empty objects of
        scalars under string keys) without looking at them: ``flat`` says so of the item each
        is made from (an event without an error; a plan row always)."""
        return self._flat is not None and all(map(self._flat, self._items[start:stop]))

    @property
    def source(self) -> Sequence[Any]:
        """The run's own records the members are made from (a trace's events)."""
        return self._items

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return list(map(self._make, self._items[index]))
        return self._make(self._items[index])

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return map(self._make, self._items)


def _always(_item: Any) -> bool:
    return True


def _without_error(event: TraceEvent) -> bool:
    return event.error is None


def plain(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with its :class:`Rows` made into lists (the same dict if it has none)."""
    if not any(type(value) is Rows for value in document.values()):
        return document
    return {k: list(v) if type(v) is Rows else v for k, v in document.items()}


# -- one pass: the text written and the checksum taken together ------------------------------


def write_sealed(path: str | Path, document: dict[str, Any], limit: int | None) -> str:
    """Write the export of ``document`` (which has no ``checksum`` yet) atomically and return
    its checksum, now also in the file: exactly what :func:`export_chunks` writes of the
    document with :func:`checksum` added, in one pass over the run instead of two.

    The checksum comes second in the file but covers all that follows, so it is written as
    a placeholder and set in place before the file is made durable and renamed. A run of
    records (events, timings, attempts, plan rows) is encoded once, with control characters
    for separators, and laid out both ways: indented for the file, compact for the
    checksum. A device or a pipe, which cannot be written into afterwards, and a document
    the pass does not take (a value with no JSON form, a lone surrogate) are written the
    usual way, in two passes, with the same refusals.

    Raises:
        FileError: over ``limit`` bytes (nothing written).
        CanonicalError: a value has no canonical JSON form (nothing written).
    """
    if "checksum" in document:
        raise ValueError("the document has its checksum already")
    keys_fit = all(key in document for key in _FIRST_KEYS) and all(
        type(key) is str for key in document
    )
    if keys_fit and not is_device(Path(path)):
        pass_ = _OnePass(document)
        try:
            atomic_write_chunks(path, pass_.pieces(), limit, pass_.seal)
        except _NotInOnePassError:
            pass  # written below, the usual way, which says what is wrong if anything is
        else:
            return pass_.checksum
    whole = plain(document)
    sealed = checksum(whole)
    atomic_write_chunks(path, export_chunks({**whole, "checksum": sealed}), limit)
    return sealed


class _NotInOnePassError(Exception):
    """The one pass met what only the usual way words (see :func:`write_sealed`)."""


_PLACEHOLDER = "0" * 64


class _OnePass:
    """The file's text of a document with a placeholder checksum, and its checksum, taken
    while the text is written (see :func:`write_sealed`)."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.hasher = hashlib.sha256()
        self.offset = -1  # where the placeholder's first byte is in the file
        self.checksum = ""

    def pieces(self) -> Iterator[str]:
        """The file's text in pieces (see :class:`_OnePass`); anything the pass cannot
        take is left to the usual way, which words it."""
        try:
            yield from self._pieces()
        except (TypeError, ValueError, RecursionError):  # CanonicalError, UnicodeError too
            raise _NotInOnePassError from None

    def _pieces(self) -> Iterator[str]:
        document, hash_text = self.document, self._hash_text
        head = ",\n".join(
            f"  {json.dumps(key)}: {json.dumps(document[key], ensure_ascii=False)}"
            for key in _FIRST_KEYS
        )
        written = len(head.encode()) + 4  # "{\n" + head + ",\n"
        yield "{\n" + head + ",\n"
        hash_text("{")
        hashed = written_keys = 0
        for key in sorted({*document, "checksum"}):
            file_sep = ",\n  " if written_keys else "  "
            if key == "checksum":
                self.offset = written + len(file_sep) + len('"checksum": "')
                piece = f'{file_sep}"checksum": "{_PLACEHOLDER}"'
                written += len(piece)
                written_keys += 1
                yield piece
                continue
            value = document[key]
            hash_text(f"{',' if hashed else ''}{_quote(key)}:")
            hashed += 1
            if key in _FIRST_KEYS:  # written at the head, hashed in its sorted place
                for chunk in canonical_chunks(value, f"$.{key}", 1):
                    hash_text(chunk)
                continue
            written_keys += 1
            for piece in self._value_pieces(key, value, f"{file_sep}{_quote(key)}: "):
                written += len(piece) if piece.isascii() else len(piece.encode())
                yield piece
        hash_text("}")
        yield "\n}\n"

    def _hash_text(self, text: str) -> None:
        if not is_unicode(text):
            raise _NotInOnePassError
        self.hasher.update(text.encode())

    def _value_pieces(self, key: str, value: Any, opening: str) -> Iterator[str]:
        """The file's pieces of one top-level value (the first led by ``opening``), its
        canonical text hashed along the way: an array, or an object with string keys (a
        run's results), in runs of members; a run of records encoded once and laid out both
        ways, any other member by member."""
        if type(value) is Rows and not value:
            value = []
        is_object = type(value) is dict and all(type(name) is str for name in value)
        if not value or not (is_object or type(value) is list or type(value) is Rows):
            yield opening
            yield from _indented_chunks(value, 1, 1)
            for chunk in canonical_chunks(value, f"$.{key}", 1):
                self._hash_text(chunk)
            return
        brackets = "{}" if is_object else "[]"
        yield opening + brackets[0]
        self._hash_text(brackets[0])
        names = sorted(value) if is_object else []
        inner = "\n" + _INDENT * 2
        for start in range(0, len(value), _RUN):
            run: Any
            if is_object:
                run = {name: value[name] for name in names[start : start + _RUN]}
                written = _members_both_ways(run)
            else:
                run = value[start : start + _RUN]
                written = _both_ways(run, type(value) is Rows and value.flat(start, start + _RUN))
            if written is None:  # not all records: member by member, each way
                for index, member in enumerate(run, start):
                    if is_object:
                        yield f"{',' if index else ''}{inner}{_quote(member)}: "
                        member = run[member]
                    else:
                        yield f",{inner}" if index else inner
                    yield from _indented_chunks(member, 2, 0)
                compact = "".join(canonical_chunks(run, f"$.{key}", 1))[1:-1]
            else:
                text, compact = written
                yield (f",{inner}" if start else inner) + text
            self._hash_text(f",{compact}" if start else compact)
        self._hash_text(brackets[1])
        yield "\n" + _INDENT + brackets[1]

    def seal(self, handle: IO[bytes]) -> None:
        """Set the checksum in place of the placeholder (the text is all written)."""
        self.checksum = self.hasher.hexdigest()
        handle.flush()
        handle.seek(self.offset)
        handle.write(self.checksum.encode("ascii"))
        handle.seek(0, 2)


def _members_both_ways(run: dict[str, Any]) -> tuple[str, str] | None:
    """Members of an object whose values are all records, as the file lays them out at
    indent 2 (without the braces) and as compact canonical JSON, from one call of the C
    encoder; None if a value is not a record.

    Between two members the encoder writes ``}\x01"`` (a record closes, the next key
    opens: a scalar never ends in ``}``), after a member's key ``\x02{`` (a record's value
    is a scalar, never ``{``); every other separator is inside a record.

    Raises:
        _NotInOnePassError: as :func:`_both_ways`.
    """
    if not _all_records(run.values()):
        return None
    text = _dual_text(run)
    compact = text[1:-1].replace("\x01", ",").replace("\x02", ":")
    member, field = "\n" + _INDENT * 2, "\n" + _INDENT * 3
    body = text[1:-2].replace("}\x01", "\x03").replace("\x02{", "\x04")
    body = body.replace("\x01", "," + field).replace("\x02", ": ")
    body = body.replace("\x03", member + "}," + member).replace("\x04", ": {" + field)
    return body + member + "}", compact


def _dual_text(value: Any) -> str:
    """``value`` by the C encoder, ``\x01`` between members and ``\x02`` after keys.

    Raises:
        _NotInOnePassError: a value has no JSON form (NaN) or the text holds a lone
            surrogate: the usual way says which.
    """
    try:
        text = "".join(_dual_encoder(value, 0))
    except ValueError:
        raise _NotInOnePassError from None
    if not is_unicode(text):
        raise _NotInOnePassError
    return text


def _both_ways(run: list[Any], known: bool = False) -> tuple[str, str] | None:
    """A run of records (see :func:`_records`) as the file lays it out at indent 2 and as
    compact canonical JSON, from one call of the C encoder; None if one is not a record
    (``known``: they are, see :meth:`Rows.flat`).

    Raises:
        _NotInOnePassError: a value has no JSON form (NaN) or the text holds a lone
            surrogate: the usual way says which.
    """
    if not (known or _all_records(run)):
        return None
    text = _dual_text(run)
    compact = text[1:-1].replace("\x01", ",").replace("\x02", ":")
    inner = "\n" + _INDENT * 3
    close_open = "\n" + _INDENT * 2 + "},\n" + _INDENT * 2 + "{" + inner
    body = text[2:-2].replace("}\x01{", "\x03").replace("\x01", "," + inner)
    body = body.replace("\x02", ": ").replace("\x03", close_open)
    return "{" + inner + body + "\n" + _INDENT * 2 + "}", compact


def _indented(value: Any, level: int) -> str:
    """One value as ``json.dumps`` indents it, at indent ``level``. An object or array of
    scalars (most of an export's members: an event, a timing, an attempt) is written by the
    C encoder, each member on its own line; anything else by ``json.dumps``, its lines
    shifted right (JSON text has no line break but those of the layout)."""
    kind = type(value)
    if value and (kind is dict or kind is list):
        members = value.values() if kind is dict else value
        if all(type(member) in _SCALARS for member in members) and (
            kind is list or all(type(key) is str for key in value)
        ):
            text = _flat_encoder(level + 1)(value)
            close = "}" if kind is dict else "]"
            return f"{text[0]}\n{_INDENT * (level + 1)}{text[1:-1]}\n{_INDENT * level}{close}"
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
    return text.replace("\n", "\n" + _INDENT * level) if level else text


@functools.cache
def _flat_encoder(level: int) -> Callable[[Any], str]:
    """An encoder of an object or array of scalars with its members on lines indented to
    ``level`` (its brackets are then set on their own lines by :func:`_indented`): what
    ``json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=...).encode`` gives,
    without making an encoder per call."""
    separators = (",\n" + _INDENT * level, ": ")
    if c_make_encoder is None:  # pragma: no cover - interpreters without the C accelerator
        return json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=separators).encode
    encode = c_make_encoder(
        None, _not_scalar, encode_basestring, None, separators[1], separators[0], True, False, True
    )
    return lambda value: "".join(encode(value, 0))


def _not_scalar(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


if c_make_encoder is not None:
    _records_encoder = c_make_encoder(
        None, _not_scalar, encode_basestring, None, ": ", "\x01", True, False, True
    )
    # Both separators marked, NaN refused (see _both_ways).
    _dual_encoder = c_make_encoder(
        None, _not_scalar, encode_basestring, None, "\x02", "\x01", True, False, False
    )

    def _encode_records(run: list[Any]) -> str:
        return "".join(_records_encoder(run, 0))

else:  # pragma: no cover - interpreters without the C accelerator
    _encode_records = json.JSONEncoder(  # type: ignore[assignment]
        ensure_ascii=False, sort_keys=True, separators=("\x01", ": ")
    ).encode
    _dual_iterencode = json.JSONEncoder(
        ensure_ascii=False, sort_keys=True, separators=("\x01", "\x02"), allow_nan=False
    ).iterencode

    def _dual_encoder(run: list[Any], _level: int) -> Iterator[str]:
        return _dual_iterencode(run)


def run_document(
    run: Run,
    workflow: Workflow,
    *,
    run_id: str | None,
    status: str | None,
    forked_from: tuple[str, str] | None,
    environment: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The export document of a run (finished or not) with its workflow, before redaction
    and without its checksum (see :meth:`.record.RunRecord.from_run`). Its plan, trace and
    timings are :class:`Rows` of the run's plan and of its events as they are now."""
    events = tuple(run.events)  # the trace as of now: a paused run may go on
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
        "plan": Rows(run.plan.steps, PlanStep._asdict, _always),
        "trace": Rows(events, TraceEvent.canonical, _without_error),
        "results": run.results,
        "status": status or run.status.value,
        "digests": run.digests(),
        "redacted": [],
        "timings": Rows(events, TraceEvent.timing, _always),
        "environment": dict(environment) if environment is not None else _environment(),
        **_additions_1_1(run, workflow, forked_from),
        **_additions_1_2(run),
    }
    if run.plan.scheduler is not None:  # only then: every other export stays as it was
        document["scheduler"] = run.plan.scheduler
    return document
