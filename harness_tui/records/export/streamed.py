"""Reading an export a run of records at a time, for the readers of its views only (replay,
diff): the long arrays are never held whole.

An export this harness wrote is laid out as ``json.dumps`` lays it out with a two-space indent
(:mod:`.writing`): a top-level member begins after ``,\\n  "`` and a record of a long array
(plan, trace, timings, attempts) after ``},\\n    {``. JSON text holds no raw line break inside
a string, so those bytes are layout, and the file is cut there, each piece parsed alone. A cut
that falls inside a value (a file laid out some other way) leaves a piece that does not parse,
so a file whose pieces all parse is the JSON value they make. Each run of records is checked
(:data:`~.validation.MEMBER_TESTS`, and the depth of what may nest: :func:`.reading.check_records`),
hashed into the checksum by its canonical encoding (of what JSON reads, never of the text as
it stands: anyone can compute a checksum over another spelling of the same values), made into
the views (:mod:`.views`), then let go: at 100,000 tasks the whole-document reader holds the
text and some 600,000 records at once.

Only a sound export is read here. For anything else :func:`read_lean` gives None and the
whole-document reader (:mod:`.reading`), which words every error, reads the bytes: a file laid
out some other way, a key out of order or given twice, a redacted export (its markers are
looked for in the whole trace), a part the schema refuses, a checksum that differs.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from sys import intern
from typing import Any

from ...engine.canonical import canonical_chunks, is_unicode, object_text, payload_text
from ...engine.canonical import quote as _quote
from ...engine.capture import AttemptLog
from ...engine.events import TraceEvent
from ...engine.scheduler import Plan
from ...workflow.limits import current
from ..errors import RecordError
from . import fast
from .reading import check_free_form, check_records
from .validation import MEMBER_TESTS, first_error, plainly_valid
from .views import add_logs, array_claim, events_of, plan_claim, with_stray

__all__ = ["Lean", "read_lean"]

_HEAD = b'{\n  "format": '
_TAIL = b"\n}\n"
_MEMBER = b',\n  "'  # between two top-level members: the quote opens the second's key
_RECORD = b"\n    },\n    {"  # between two records of a long array
_OPEN = b"[\n    {"
_CLOSE = b"\n    }\n  ]"
_FIRST = ("format", "format_version")  # at the head of the file; hashed in their sorted place
_LONG = frozenset(MEMBER_TESTS)
_LEFT_OUT = _LONG | {"results"}  # not in a lean record's document (made into its views)
_RUN_BYTES = 1 << 18
"""About how much of a long array is parsed at once."""


@dataclass(frozen=True)
class Lean:
    """An export read lean: its document without the long arrays and results, and its views."""

    document: dict[str, Any]
    plan: Plan
    events: list[TraceEvent]
    logs: dict[tuple[str, int], AttemptLog]
    outputs: dict[str, str]
    claim: str | None
    """The first claim of the long arrays the trace contradicts (:func:`.views.array_claim`)."""


class _NotLeanError(Exception):
    """The file is not read here (see :func:`read_lean`)."""


def read_lean(data: bytes, name: str) -> Lean | None:
    """The export in ``data`` (a file's bytes), checked up to its checksum as
    :func:`.reading.document_of` checks it, or None when it is not read here (see the
    module's docstring)."""
    if not (data.startswith(_HEAD) and data.endswith(_TAIL)):
        return None
    try:
        return _Reader(data, name).read()
    except (_NotLeanError, RecordError, ValueError, TypeError, RecursionError):
        # ValueError: JSON, UTF-8 or canonical form (CanonicalError); TypeError: a value
        # the plain check would have refused. The whole-document reader words it.
        return None


class _Reader:
    def __init__(self, data: bytes, name: str) -> None:
        self.data = data
        self.name = name
        self.hasher = hashlib.sha256()
        self.hashed = 0  # members hashed so far
        self.document: dict[str, Any] = {}  # every member but the long arrays' records
        self.pending: list[str] = []  # the head's keys, hashed in their sorted place
        self.names: list[str] = []
        self.task_ids: list[str] = []
        self.levels: list[int] = []
        self.plan_claim: str | None = None
        self.timings: dict[int, dict[str, Any]] = {}
        self.seqs: list[int] = []
        self.events: list[TraceEvent] = []
        self.logs: dict[tuple[str, int], AttemptLog] = {}
        self.attempts: list[tuple[str, int]] = []
        self.outputs: dict[str, str] | None = None  # each result's canonical text

    def read(self) -> Lean:
        data = self.data
        end = len(data) - len(_TAIL)
        start = len(_HEAD) - len(b'"format": ')  # the first key's quote
        keys: list[str] = []
        while True:
            cut = data.find(_MEMBER, start, end)
            stop = end if cut < 0 else cut
            colon = data.find(b'": ', start, stop)
            if colon < 0:
                raise _NotLeanError
            key = _parsed(data, start, colon + 1)
            if type(key) is not str or not _in_order(keys, key):
                raise _NotLeanError
            keys.append(key)
            self._member(key, colon + 3, stop)
            if cut < 0:
                break
            start = cut + len(_MEMBER) - 1
        self._hash_pending(None)
        self._hash("}")
        return self._lean()

    def _member(self, key: str, start: int, stop: int) -> None:
        data = self.data
        if key in _LONG and data.startswith(_OPEN, start) and data.endswith(_CLOSE, start, stop):
            self.document[key] = []
            self._hash_pending(key)
            self._hash_key(key)
            self._hash("[")
            begin, end = start + 1, stop - len(b"\n  ]")  # from "\n    {" to "\n    }"
            first = True
            while begin < end:
                cut = data.find(_RECORD, begin + _RUN_BYTES, end)
                last = cut < 0
                close = end if last else cut + len(b"\n    }")
                run = _parsed(data, begin, close, "[", "]")
                if type(run) is not list:
                    raise _NotLeanError
                self._records(key, run)  # checked: its floats are finite (see .fast)
                text = fast.compact(run, finite=True) or "".join(
                    canonical_chunks(run, f"$.{key}", 0, parsed=True)
                )
                text = text[1:-1]
                self._hash(text if first else "," + text)
                first = False
                begin = end if last else cut + len(b"\n    },")
            self._hash("]")
            return
        value = _parsed(data, start, stop)
        if key == "redacted" and value:  # its markers are looked for in the whole trace
            raise _NotLeanError
        self.document[key] = value
        if key in _LONG:
            if type(value) is not list:
                raise _NotLeanError
            self._records(key, value)
        if key in _FIRST:
            self.pending.append(key)
        elif key != "checksum":
            self._hash_pending(key)
            self._hash_member(key)

    def _records(self, key: str, run: list[Any]) -> None:
        """Check a run of a long array's members and add them to the views."""
        if not MEMBER_TESTS[key].all(run):
            raise _NotLeanError
        check_records(key, run, self.name, current())
        if key == "trace":
            self.events.extend(events_of(run, self.timings))
        elif key == "timings":
            for timing in run:
                self.timings[timing["seq"]] = timing
                self.seqs.append(timing["seq"])
        elif key == "plan":
            if self.plan_claim is None:
                self.plan_claim = plan_claim(run, len(self.names))
            self.names.extend(intern(row["task"]) for row in run)  # as the events' (events_of)
            self.task_ids.extend(intern(row["task_id"]) for row in run)
            self.levels.extend(row["level"] for row in run)
        else:
            add_logs(self.logs, run)
            self.attempts.extend((a["task"], a["attempt"]) for a in run)

    # -- the checksum: the canonical JSON of every member but itself, keys sorted ----------

    def _hash_pending(self, key: str | None) -> None:
        """Hash the head's members that sort before ``key`` (None: all that are left)."""
        while self.pending and (key is None or self.pending[0] < key):
            self._hash_member(self.pending.pop(0))

    def _hash_member(self, key: str) -> None:
        self._hash_key(key)
        value = self.document[key]
        if key == "results" and type(value) is dict:  # each output's text is a view too
            # Not known finite yet (free-form parts are checked at the end, and the check
            # trusts these texts' lengths): a null may be an infinity, left to the usual way.
            self.outputs = fast.texts_of(value) or {
                task: "".join(canonical_chunks(output, "$.results", 0, parsed=True))
                for task, output in value.items()
            }
            self._hash(object_text(self.outputs))
            return
        self._hash("".join(canonical_chunks(value, f"$.{key}", 1, parsed=True)))

    def _hash_key(self, key: str) -> None:
        self._hash(("," if self.hashed else "{") + _quote(key) + ":")
        self.hashed += 1

    def _hash(self, text: str) -> None:
        if not is_unicode(text):
            raise _NotLeanError
        self.hasher.update(text.encode())

    # -- the result --------------------------------------------------------------------------

    def _lean(self) -> Lean:
        document = self.document
        if not plainly_valid(document) and first_error(document) is not None:
            raise _NotLeanError  # the schema (what the plain check leaves to it: overrides)
        check_free_form(document, self.name, current(), self.outputs)
        if self.hasher.hexdigest() != document["checksum"]:
            raise _NotLeanError
        outputs = self.outputs
        if outputs is None:  # no results object: the plain check has refused it already
            raise _NotLeanError
        logs = with_stray(document.get("unattributed_log"), self.logs)
        plan = Plan(
            tuple(self.names), tuple(self.task_ids), tuple(self.levels),
            payload_text(document["payload"]),
        )  # fmt: skip
        claim = array_claim(self.plan_claim, self.seqs, self.events, self.attempts)
        return Lean(
            {k: v for k, v in document.items() if k not in _LEFT_OUT},
            plan,
            self.events,
            logs,
            outputs,
            claim,
        )


def _in_order(keys: list[str], key: str) -> bool:
    """Whether ``key`` may follow ``keys``: the head's keys first, then the rest sorted."""
    if len(keys) < len(_FIRST):
        return key == _FIRST[len(keys)]
    return key not in _FIRST and (len(keys) == len(_FIRST) or keys[-1] < key)


def _parsed(data: bytes, start: int, stop: int, before: str = "", after: str = "") -> Any:
    """The JSON value of ``data[start:stop]`` (UTF-8, strictly), between ``before`` and
    ``after``.

    Raises:
        ValueError: not UTF-8, or not one JSON value (NaN and Infinity refused).
    """
    return json.loads(before + data[start:stop].decode() + after, parse_constant=_refuse)


def _refuse(text: str) -> Any:
    raise ValueError(text)
