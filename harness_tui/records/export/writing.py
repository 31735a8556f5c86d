"""Writing exports: the checksum and the text of an export document (:mod:`.document`),
written as it is made; a run's in one pass (:func:`write_sealed`)."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from pathlib import Path
from typing import IO, Any

from ...engine.canonical import canonical_chunks, check_json, digest_chunks, is_unicode
from ...engine.canonical import quote as _quote
from ...files import atomic_write_chunks, is_device
from . import fast
from .document import Results, Rows, plain

__all__ = ["checksum", "export_chunks", "export_text", "write_sealed"]


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
    if kind is Results:  # a document written again, its checksum taken: rare, read
        value = value.read()
        kind = dict
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
_LAZY = (Rows, Results)


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
        if type(value) in _LAZY and not value:
            value = {} if type(value) is Results else []
        results = value if type(value) is Results else None
        is_object = results is not None or (
            type(value) is dict and all(type(name) is str for name in value)
        )
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
                batch = names[start : start + _RUN]
                # A run's results: written from their texts, or else as values, as any object.
                written = None if results is None else fast.object_both(batch, results.texts)
                if written is None:
                    values = value if results is None else results.read()
                    run = {name: values[name] for name in batch}
                    written = _members_both_ways(run)
            else:
                run = value[start : start + _RUN]
                rows = type(value) is Rows
                known = rows and value.flat(start, start + _RUN)
                written = _both_ways(run, known, rows and value.finite)
            if written is None:  # not all records: member by member, each way
                compact = yield from _members_apart(key, run, start)
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


def _members_apart(
    key: str, run: list[Any] | dict[str, Any], start: int
) -> Generator[str, None, str]:
    """The file's pieces of a run of members (an array's, or an object's: ``run`` is then a
    dict) that are not all records, member by member at indent 2, the first at ``start``;
    returns their compact canonical text (without brackets). A scalar's text is the same both
    ways: taken once (a workflow's source is megabytes of it)."""
    inner = "\n" + _INDENT * 2
    members = run.values() if isinstance(run, dict) else run
    scalars = _SCALAR_TYPES.issuperset(map(type, members))
    texts = [check_json(member, f"$.{key}") for member in members] if scalars else []
    for index, member in enumerate(run, start):
        if isinstance(run, dict):
            yield f"{',' if index else ''}{inner}{_quote(member)}: "
            member = run[member]
        else:
            yield f",{inner}" if index else inner
        if scalars:
            yield texts[index - start]
        else:
            yield from _indented_chunks(member, 2, 0)
    if not scalars:
        return "".join(canonical_chunks(run, f"$.{key}", 1))[1:-1]
    if isinstance(run, dict):
        return ",".join(map("{}:{}".format, map(_quote, run), texts))
    return ",".join(texts)


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
    quick = fast.members_both(run, finite=False)
    if quick is not None:
        return quick
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


def _both_ways(run: list[Any], known: bool = False, finite: bool = False) -> tuple[str, str] | None:
    """A run of records (see :func:`_records`) as the file lays it out at indent 2 and as
    compact canonical JSON, by orjson or from one call of the C encoder; None if one is not
    a record (``known``: they are, see :meth:`Rows.flat`; ``finite``: their floats are, see
    :attr:`Rows.finite`).

    Raises:
        _NotInOnePassError: a value has no JSON form (NaN) or the text holds a lone
            surrogate: the usual way says which.
    """
    if not (known or _all_records(run)):
        return None
    quick = fast.members_both(run, finite=finite)
    if quick is not None:
        return quick
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
