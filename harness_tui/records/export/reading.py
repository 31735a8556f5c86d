"""Reading exports: text from a file within the reader's cap, and a document from text, checked
in order: JSON, format and major version, schema, free-form parts, checksum. What is inside the
document (plan, trace, digests) is checked by :class:`.record.RunRecord`."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from math import isfinite
from pathlib import Path
from typing import Any

from ...engine.canonical import CanonicalError
from ...files import read_capped
from ...workflow.limits import Limits, current
from ...workflow.payload import too_many_digits
from ..errors import RecordError
from .document import Rows
from .validation import SCALAR_FIELDS, first_error
from .version import FORMAT, FORMAT_VERSION
from .writing import checksum

__all__ = [
    "document_of", "parse_document", "read_bytes", "read_document", "short_result",
]  # fmt: skip


def read_bytes(path: str | Path, name: str | None = None) -> bytes:
    """The bytes of an export file, read within the reader's ``export_bytes`` cap; ``name``:
    how messages name the file (default: ``path``).

    Raises:
        RecordError: one line saying why the file cannot be read.
    """
    name = str(path) if name is None else name
    limit = current().export_bytes
    try:
        data = read_capped(path, limit)
    except OSError as exc:
        raise RecordError(f"{name}: cannot read: {exc.strerror}") from None
    except ValueError:  # a NUL in the name (only the Python API can pass one)
        raise RecordError(f"{name!r}: cannot read: a file name holds no NUL") from None
    if data is None:
        raise RecordError(f"{name}: over the {limit:,}-byte limit")
    return data


def _decoded(holder: list[bytes], name: str) -> str:
    """The text of the bytes in ``holder``, which is emptied (the bytes go once decoded)."""
    try:
        return holder.pop().decode("utf-8-sig")  # a BOM (an editor's) is not part of the JSON
    except UnicodeDecodeError as exc:
        raise RecordError(f"{name}: cannot read as UTF-8 text: {exc}") from None


def read_document(path: str | Path) -> dict[str, Any]:
    """The export document in the file ``path``, checked up to its checksum; its text is let
    go once parsed (a 100,000-task export's is over 100 MB).

    Raises:
        RecordError: one line saying why the file cannot be read, or what is wrong in it.
    """
    return document_of([read_bytes(path)], str(path))


def document_of(holder: list[bytes], name: str) -> dict[str, Any]:
    """The export document in the bytes in ``holder`` (read by :func:`read_bytes`), checked up
    to its checksum; ``holder`` is emptied, so that the bytes go once decoded and the text
    once parsed.

    Raises:
        RecordError: one line saying what is wrong in it.
    """
    return _checked(_loads([_decoded(holder, name)], name), name)


def parse_document(text: str, name: str) -> dict[str, Any]:
    """The export document in ``text``, checked up to its checksum.

    Raises:
        RecordError: one line saying what is wrong.
    """
    return _checked(_loads([text], name), name)


def _loads(holder: list[str], name: str) -> Any:
    """The JSON value of the text in ``holder``, which is emptied (so that the text can go
    as soon as nothing else holds it)."""
    text = holder.pop()
    try:
        return json.loads(text, parse_constant=_refuse_constant)
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


def _checked(document: Any, name: str) -> dict[str, Any]:
    """``document`` (what ``json.loads`` made of the export's text) checked: format and
    version, schema, free-form parts, checksum."""
    limits = current()
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
    error = first_error(document)
    if error is not None:
        raise RecordError(f"{name}: invalid export at {error[0]}: {error[1]}")
    check_free_form(document, name, limits)
    expected = document["checksum"]
    try:
        actual = checksum(document, parsed=True)
    except CanonicalError as exc:
        raise RecordError(f"{name}: {exc}") from None
    if actual != expected:
        raise RecordError(f"{name}: checksum mismatch: the file was changed after it was exported")
    return document


class _NotJsonNumberError(ValueError):
    pass


def _refuse_constant(text: str) -> Any:
    raise _NotJsonNumberError(text)


def short_result(limits: Limits) -> int:
    """The length up to which a result's canonical text can spell neither a value nested
    deeper than ``export_depth`` nor an integer longer than ``int_digits`` (depth d takes 2d
    characters, the results object one level of it; n digits, n): :func:`check_free_form`
    need not walk it."""
    return min(2 * (limits.export_depth - 1), limits.int_digits)


def check_free_form(
    document: Mapping[str, Any],
    name: str,
    limits: Limits,
    texts: Mapping[str, str] | None = None,
) -> None:
    """Depth, integer size and finite numbers of the parts of an export that the schema
    leaves free (payload, results, spec, environment, recorded calls, and any member it does
    not know), so that no later step meets a value it cannot digest or show, and no reader
    meets one nested as deep as Python itself goes (where two readers could differ). The
    long arrays' records hold scalars (the schema says so) but for a few fields
    (:func:`check_records`). Only containers go on the stack: a run's many scalar leaves are
    looked at once, where they are found (this runs on every export written and read).

    ``texts``: the canonical JSON of each result, where it is known (a record made from a
    run): a text too short to spell a value nested too deep or an integer too long (most
    outputs) is not walked."""
    first = ("payload", "results", "spec", "environment", "forked_from")
    rest = sorted(key for key in document if key not in first and key not in SCALAR_FIELDS)
    for part in (*first, *rest):
        value = document.get(part)
        if part == "results" and texts is not None and type(value) is dict:
            short = short_result(limits)
            for task, output in value.items():
                text = texts.get(task)
                if text is None or len(text) > short:  # in its object: one level more
                    check_value({task: output}, part, name, limits)
            continue
        check_value(value, part, name, limits)
    for key in SCALAR_FIELDS:
        members = document.get(key)
        if type(members) is list:
            check_records(key, members, name, limits)
        elif type(members) is Rows:  # a run's: only those that may nest are made and looked at
            check_records(key, members.unflat(), name, limits)


def check_records(key: str, members: Iterable[Any], name: str, limits: Limits) -> None:
    """:func:`check_free_form` of the fields of a long array's members that may nest (see
    :data:`~.validation.SCALAR_FIELDS`): most members have none."""
    scalar = SCALAR_FIELDS[key]
    for member in members:
        if type(member) is dict and not scalar.issuperset(member):
            for field, value in member.items():
                if field not in scalar and value is not None:  # most attempts' log is None
                    check_value(value, key, name, limits)


def check_value(value: Any, part: str, name: str, limits: Limits) -> None:
    """:func:`check_free_form` of one part's ``value``.

    Raises:
        RecordError: an integer too long, a number too large for a float (JSON text reads
            ``1e400`` as infinity, which canonical JSON refuses), or a value nested too
            deep, named by ``part``.
    """
    max_bits = int(limits.int_digits * 3.33) + 1
    max_depth = limits.export_depth
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        value, depth = stack.pop()
        kind = type(value)
        if kind is dict or isinstance(value, dict):
            children: Iterable[Any] = value.values()
        elif kind is list or isinstance(value, list):
            children = value
        else:
            if kind is int and value.bit_length() > max_bits:
                raise RecordError(
                    f"{name}: an integer in {part} has more than {limits.int_digits:,} digits"
                )
            if kind is float and not isfinite(value):
                raise RecordError(f"{name}: a number in {part} is too large for a float")
            continue
        if depth > max_depth:
            raise RecordError(f"{name}: {part} is nested more than {max_depth} levels deep")
        for child in children:
            child_kind = type(child)
            if child_kind is dict or child_kind is list or isinstance(child, dict | list):
                stack.append((child, depth + 1))
            elif child_kind is int and child.bit_length() > max_bits:
                raise RecordError(
                    f"{name}: an integer in {part} has more than {limits.int_digits:,} digits"
                )
            elif child_kind is float and not isfinite(child):
                raise RecordError(f"{name}: a number in {part} is too large for a float")
