"""Canonical JSON, digests and task ids.

Canonical JSON is the one text form of a JSON value that every digest in the project is taken
over: sorted keys, no insignificant whitespace, UTF-8 kept as is, no NaN or Infinity. Values
that JSON cannot represent faithfully (sets, bytes, tuples, non-string keys, NaN...) are refused
with an error naming where they are, because silently coercing them would make a replayed run
see different data from the live one.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Iterator
from typing import Any

from .errors import HarnessError

__all__ = [
    "CanonicalError",
    "canonical_chunks",
    "canonical_json",
    "check_json",
    "combine_digests",
    "compute_task_id",
    "digest",
    "digest_chunks",
    "digest_text",
    "event_text",
    "is_unicode",
    "loads",
    "object_text",
    "payload_text",
    "plan_text",
    "quote",
    "task_id",
    "task_id_from_text",
    "text_batches",
]

_loads = json.loads


def _refuse(value: Any) -> Any:
    raise TypeError(type(value).__name__)


try:
    from json.encoder import c_make_encoder as _c_make_encoder  # type: ignore[attr-defined]
    from json.encoder import encode_basestring as _quote
except ImportError:  # pragma: no cover - interpreters without the C accelerator
    _c_make_encoder = None
    from json.encoder import py_encode_basestring as _quote

if _c_make_encoder is not None:
    # The C encoder called directly: json.dumps() builds a new encoder object per call, which
    # costs more than encoding a small task output. No circular check: a self-referencing value
    # ends in RecursionError, which check_json reports like any other non-JSON value.
    _c_encode = _c_make_encoder(None, _refuse, _quote, None, ":", ",", True, False, False)

    def _dumps(value: Any) -> str:
        return "".join(_c_encode(value, 0))

else:  # pragma: no cover
    _py_encoder = json.JSONEncoder(
        sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )

    def _dumps(value: Any) -> str:
        return _py_encoder.encode(value)


_scan = json.JSONDecoder().scan_once  # type: ignore[attr-defined]

quote = _quote
"""JSON string literal of a str, non-ASCII kept (canonical form)."""


class CanonicalError(HarnessError, ValueError):
    """A value is not a JSON value.

    Attributes:
        path: where the offending value sits, like ``$.results.items[3]``.
        type_name: the Python type that was found there.
    """

    def __init__(self, path: str, type_name: str, detail: str = "") -> None:
        self.path = path
        self.type_name = type_name
        message = f"{path}: {type_name} is not a JSON value"
        if detail:
            message += f" ({detail})"
        super().__init__(message)


_NOT_UNICODE = "not valid Unicode text: it holds a lone surrogate"


def _is_unicode(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8: a lone surrogate (``json.loads`` makes one
    from ``"\\ud800"``) cannot, and would fail every digest and file write later."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def is_unicode(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8 (no lone surrogate); quick for ASCII."""
    return text.isascii() or _is_unicode(text)


def _find_problem(value: Any, path: str) -> CanonicalError | None:
    """Walk ``value`` and return the first non-JSON part, or None."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        if value.isascii() or _is_unicode(value):
            return None
        return CanonicalError(path, "str", _NOT_UNICODE)
    if isinstance(value, int):
        return None
    if isinstance(value, float):
        if math.isfinite(value):
            return None
        return CanonicalError(path, "float", f"{value!r} has no JSON form")
    if isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                return CanonicalError(
                    f"{path}[{key!r}]", type(key).__name__, "object keys must be strings"
                )
            if not (key.isascii() or _is_unicode(key)):
                # The key is named escaped: printing the surrogate itself would fail too.
                return CanonicalError(f"{path}[{json.dumps(key)}]", "str", _NOT_UNICODE)
        for key in sorted(value):
            problem = _find_problem(value[key], _child(path, key))
            if problem is not None:
                return problem
        return None
    if isinstance(value, list):
        for index, item in enumerate(value):
            problem = _find_problem(item, f"{path}[{index}]")
            if problem is not None:
                return problem
        return None
    hint = {
        "tuple": "use a list",
        "set": "use a sorted list",
        "bytes": "decode it to str",
        "date": "quote it to keep it a string",
        "datetime": "quote it to keep it a string",
    }
    name = type(value).__name__
    return CanonicalError(path, name, hint.get(name, ""))


def _child(path: str, key: str) -> str:
    if key.isidentifier():
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def check_json(value: Any, path: str = "$") -> str:
    """Return the canonical JSON text of ``value``, refusing anything that is not JSON.

    The fast path lets the C encoder and decoder do the work and compares the round trip with
    the original; only when they differ (a tuple, a non-string key, a NaN...) is the value
    walked in Python to name the offending path. Text must be valid Unicode (no lone
    surrogate); ``str.isascii()`` is O(1) in CPython, so only non-ASCII text pays for that.

    Args:
        value: the value to serialize.
        path: the name of the value in error messages.

    Raises:
        CanonicalError: naming the path and type of the first non-JSON part.
    """
    kind = type(value)
    if kind is str:
        if value.isascii() or _is_unicode(value):
            return _quote(value)
        raise CanonicalError(path, "str", _NOT_UNICODE)
    if kind is int:
        return int.__repr__(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    try:
        text = _dumps(value)
        # Equality is exact for JSON types; a tuple never equals a list, {1: x} never {"1": x}.
        if _scan(text, 0)[0] == value and (text.isascii() or _is_unicode(text)):
            return text
    except (TypeError, ValueError):
        pass
    except RecursionError:
        raise CanonicalError(path, kind.__name__, "circular or too deeply nested") from None
    problem = _find_problem(value, path)
    if problem is None:  # pragma: no cover - the fast path and the walk disagree
        raise CanonicalError(path, type(value).__name__, "cannot be represented exactly")
    raise problem


canonical_json = check_json


def payload_text(payload: Any) -> str:
    """The payload text in task ids: ``json.dumps(payload, sort_keys=True, ensure_ascii=False)``.

    This is invariant I1's exact form (default separators), kept apart from canonical JSON so
    task ids match the ones the original harness computed.
    """
    check_json(payload, "$payload")
    return json.dumps(payload, sort_keys=True, ensure_ascii=False)


def task_id_from_text(name: str, text: str) -> str:
    """Task id from a task name and an already serialized payload (see :func:`payload_text`)."""
    return hashlib.sha256(f"{name}:{text}".encode()).hexdigest()[:16]


def task_id(name: str, payload: Any) -> str:
    """The stable task id: first 16 hex digits of sha256 of ``name:payload-json`` (I1).

    Name first; the article's :func:`compute_task_id` takes the payload first.
    """
    return task_id_from_text(name, payload_text(payload))


def compute_task_id(payload: Any, task_name: str) -> str:
    """The stable task id of ``task_name`` for ``payload``, argument order as in the article."""
    return task_id_from_text(task_name, payload_text(payload))


def digest_text(text: str) -> str:
    """sha256 hex digest of a text, UTF-8 encoded."""
    return hashlib.sha256(text.encode()).hexdigest()


def digest(value: Any) -> str:
    """sha256 hex digest of the canonical JSON of ``value``."""
    return digest_text(check_json(value))


def canonical_chunks(
    value: Any, path: str = "$", depth: int = 2, *, parsed: bool = False
) -> Iterator[str]:
    """The canonical JSON of ``value`` in pieces: their concatenation is exactly
    :func:`check_json` of it, and it is refused the same way (the same error, naming the same
    path). Objects and arrays down to ``depth`` levels are written in runs of members, anything
    deeper whole, so that a large document (an export's trace of 200,000 events) is never
    one string in memory.

    ``parsed``: ``value`` is what :func:`json.loads` made (with NaN and Infinity refused), so
    it holds only JSON types under string keys and the C encoder's text of it is canonical as
    it stands; only what that encoder refuses (a float too large, read as infinity) or a lone
    surrogate is looked at again, for the same error.
    """
    kind = type(value)
    if depth <= 0 or (kind is not dict and kind is not list):
        yield _parsed_text(value, path) if parsed else check_json(value, path)
        return
    if kind is dict and not all(
        type(key) is str and (key.isascii() or _is_unicode(key)) for key in value
    ):
        check_json(value, path)  # raises, naming the key
    keys = sorted(value) if kind is dict else range(len(value))
    yield "{" if kind is dict else "["
    for start in range(0, len(keys), _RUN):
        run = keys[start : start + _RUN]
        if start:
            yield ","
        if depth == 1:  # the members are written whole: a run of them in one call
            part = {key: value[key] for key in run} if kind is dict else value[start : start + _RUN]
            try:
                yield (_parsed_text(part, path) if parsed else _records_text(part))[1:-1]
                continue
            except (CanonicalError, TypeError, ValueError):
                pass  # found again below, member by member, to name its path
        for index, key in enumerate(run):
            if index:
                yield ","
            if kind is dict:
                yield f"{_quote(key)}:"
                yield from canonical_chunks(value[key], _child(path, key), depth - 1, parsed=parsed)
            else:
                yield from canonical_chunks(value[key], f"{path}[{key}]", depth - 1, parsed=parsed)
    yield "}" if kind is dict else "]"


_RUN = 512
"""Members of a large object or array encoded in one call by :func:`canonical_chunks`."""
_SCALAR_TYPES = frozenset((str, int, float, bool, type(None)))
_STR = frozenset((str,))


def _records_text(part: Any) -> str:
    """:func:`check_json` of a run of members, quicker when they are all records (objects of
    scalars under string keys: events, timings, results of one field): the C encoder's text
    of those is canonical as it stands (it refuses NaN and Infinity itself), so only its
    Unicode is checked, not the round trip."""
    members = part.values() if type(part) is dict else part
    for member in members:
        if not (
            type(member) is dict
            and _STR.issuperset(map(type, member))
            and _SCALAR_TYPES.issuperset(map(type, member.values()))
        ):
            return check_json(part)
    text = _dumps(part)
    if text.isascii() or _is_unicode(text):
        return text
    return check_json(part)  # raises, naming nothing: the caller names the member


def _parsed_text(value: Any, path: str) -> str:
    """:func:`check_json` of a value :func:`json.loads` made (see :func:`canonical_chunks`)."""
    try:
        text = _dumps(value)
    except (TypeError, ValueError, RecursionError):
        return check_json(value, path)  # raises, naming the path
    if text.isascii() or _is_unicode(text):
        return text
    return check_json(value, path)  # raises, naming the lone surrogate


def digest_chunks(chunks: Iterable[str]) -> str:
    """sha256 hex digest of the UTF-8 text made of ``chunks`` (see :func:`canonical_chunks`)."""
    hasher = hashlib.sha256()
    for batch in text_batches(chunks):
        hasher.update(batch.encode())
    return hasher.hexdigest()


def text_batches(chunks: Iterable[str], size: int = 1 << 20) -> Iterator[str]:
    """``chunks`` joined into pieces of about ``size`` characters (fewer calls to hash or
    write, and never more than about ``size`` held)."""
    batch: list[str] = []
    held = 0
    for chunk in chunks:
        batch.append(chunk)
        held += len(chunk)
        if held >= size:
            yield "".join(batch)
            batch.clear()
            held = 0
    if batch:
        yield "".join(batch)


def loads(text: str) -> Any:
    """Decode canonical JSON text (a fresh copy each call)."""
    return _loads(text)


def combine_digests(parts: dict[str, str]) -> str:
    """sha256 of the canonical JSON object ``{name: digest}`` (the run digest's form)."""
    body = ",".join(f'{_quote(k)}:"{parts[k]}"' for k in sorted(parts))
    return hashlib.sha256(("{" + body + "}").encode()).hexdigest()


def object_text(items: dict[str, str]) -> str:
    """Canonical JSON of an object whose values are already canonical JSON texts."""
    return "{" + ",".join(f"{_quote(k)}:{items[k]}" for k in sorted(items)) + "}"


# -- speed-tuned encoders of the engine's own records -----------------------------------------
# Each writes the canonical JSON of a record whose shape is known, so keys are already in
# sorted order and only strings from outside need quoting; each has a property test that it
# equals check_json() of the plain value (tests/engine/test_canonical.py).


def event_text(
    seq: int,
    task: str,
    task_id: str,
    status: str,
    attempt: int,
    error: dict[str, str] | None,
    input_digest: str | None,
    output_digest: str | None,
) -> str:
    """Canonical JSON of a trace event's canonical fields (the trace digest's hot path)."""
    head = f'{{"attempt":{attempt}'
    if error is not None:
        head += f',"error":{check_json(error)}'
    if input_digest is not None:
        head += f',"input_digest":"{input_digest}"'
    if output_digest is not None:
        head += f',"output_digest":"{output_digest}"'
    return f'{head},"seq":{seq},"status":"{status}","task":{_quote(task)},"task_id":"{task_id}"}}'


def plan_text(names: tuple[str, ...], task_ids: tuple[str, ...], levels: tuple[int, ...]) -> str:
    """Canonical JSON of a plan's rows ``[{"index", "level", "task", "task_id"}, ...]``."""
    rows = [
        f'{{"index":{i},"level":{level},"task":{_quote(name)},"task_id":"{task_id}"}}'
        for i, (name, task_id, level) in enumerate(zip(names, task_ids, levels, strict=True))
    ]
    return "[" + ",".join(rows) + "]"
