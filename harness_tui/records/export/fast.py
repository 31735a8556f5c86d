"""orjson, when it is installed, for the bulk of an export's text: the runs of records of its
long arrays (plan, trace, timings, attempts) and its results, written and read at about ten
times the standard library's speed. Every text it gives is the one :mod:`json` gives, byte for
byte; where that is not certain it gives None and the caller encodes the usual way.

orjson writes the same JSON text as Python's encoder (sorted keys, UTF-8 kept, the same
escapes) for every value but two kinds of float:

- floats below 1e-4, which Python writes with a negative exponent: orjson 3.13 writes
  ``0.00001`` and ``3.5e-6`` where Python writes ``1e-05`` and ``3.5e-06`` (other versions
  may differ again). A text holding ``e-`` or ``0.0000`` is not used (a hex digest holds
  neither): the times of a run, the bulk of its floats, are not that small. From 1e16 both
  write ``1e+16`` alike, which the probe below holds orjson to;
- NaN and the infinities, which canonical JSON refuses and orjson writes as ``null``. A text
  with ``null`` is used only when the caller knows every float in the value is finite
  (``finite=True``): the times of a run's events were checked (:func:`plain_times`),
  and a reader's values were checked before they are hashed (the depth check and the schema's
  plain pass refuse a float that is not finite).

Integers beyond 64 bits and strings with a lone surrogate make orjson raise: None then. So do
subclasses of the JSON types, dataclasses and dates, which it is told to hand back (and which
are refused). Tuples, enums and UUIDs orjson writes on its own where canonical JSON refuses
them: the values given here are of JSON types only (what :func:`json.loads` made, or records
whose values were checked to be scalars of exact JSON types). At first use a probe compares
orjson's text of awkward values (the float formats above, NaN and the infinities, escapes,
key order, non-BMP text) with Python's; if one differs and the guard above would not catch
it, orjson is not used at all.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from ...engine.canonical import object_text, quote

__all__ = [
    "all_finite",
    "both",
    "compact",
    "members_both",
    "object_both",
    "plain_times",
    "texts_of",
    "values_of",
]


def _spelled_apart(text: bytes) -> bool:
    """Whether orjson's ``text`` may spell a float otherwise than Python does, or holds a
    string that looks like one (the usual way is then taken, which is only slower).

    Each pattern is looked for only where its rarest byte is in the text (a search for one
    byte is a ``memchr``, many times quicker than one for a pattern ending in a digit, which
    the text is full of): the answer is the same, sooner (a run's trace has neither ``-``
    nor ``.``, its times no ``-``)."""
    return (b"-" in text and b"e-" in text) or (b"." in text and b"0.0000" in text)


_state: list[Any] = []  # [the orjson module or None], set at first use


def _orjson() -> Any:
    """The orjson module, if it is installed and passes the probe (looked at once)."""
    if not _state:
        try:
            import orjson
        except ImportError:  # pragma: no cover - orjson is a dependency; tested by patching
            _state.append(None)
        else:
            _state.append(orjson if _probe_passes(orjson) else None)
    return _state[0]


def _python(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


_PROBE: list[Any] = [
    0.0, -0.0, 0.1, 1.5, -2.25, 1e-4, 0.00015, 9.999e-5, 1e-5, 3.5e-6, 1e-7, 1e-10, 5e-324,
    123456789.123456789, 41896.136856749, 1796181647.9082382, 1e15, 9999999999999998.0, 1e16,
    1.2345e17, 1e22, 1.7976931348623157e308, 2**53 + 1, -(2**63), 2**63 - 1, 2**64 - 1, 0, -1,
    True, False, None, "", "\x00\x01\x08\t\n\x0b\x0c\r\x1f\x7f\"\\/",
    "\u00e9\u2028\u2029\ud7ff\ue000\ufeff\uffff\U0001f600\U0010ffff", "1e-05 0.0000 e+1",
    {"b": 1, "a": [], "B": {}, "\u00e9": 2, "\uffff": 3, "\U0001f600": 4, "a\x00": 5, "": 6},
    [[], {}, [[1, {"x": None}]]],
]  # fmt: skip


def _probe_passes(orjson: Any) -> bool:
    """Whether orjson's text of each probe value is Python's, or one the guard turns away,
    and NaN and the infinities are ``null`` (which only ``finite=False`` guards against)."""
    for value in (math.nan, math.inf, -math.inf):
        try:
            if orjson.dumps([value]) != b"[null]":
                return False
        except TypeError:
            return False
    for value in _PROBE:
        try:
            text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
            layout = orjson.dumps([value], option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2)
        except TypeError:
            return False
        if _spelled_apart(text):
            continue
        if text.decode() != _python(value):
            return False
        if layout.decode() != json.dumps([value], indent=2, sort_keys=True, ensure_ascii=False):
            return False
    return True


def _encoded(value: Any, option: int, finite: bool) -> bytes | None:
    orjson = _orjson()
    if orjson is None:
        return None
    try:
        text: bytes = orjson.dumps(value, _refuse, option | _options(orjson))
    except TypeError:  # orjson.JSONEncodeError: a long integer, a lone surrogate, not JSON
        return None
    if _spelled_apart(text) or (not finite and b"null" in text):
        return None
    return text


def _options(orjson: Any) -> int:
    """Keys sorted; subclasses, dataclasses and dates handed to :func:`_refuse`."""
    return int(
        orjson.OPT_SORT_KEYS
        | orjson.OPT_PASSTHROUGH_SUBCLASS
        | orjson.OPT_PASSTHROUGH_DATACLASS
        | orjson.OPT_PASSTHROUGH_DATETIME
    )


def _refuse(value: Any) -> Any:
    raise TypeError(type(value).__name__)


def compact(value: Any, *, finite: bool = False) -> str | None:
    """Canonical JSON of ``value`` (JSON types only, string keys), or None: see the module's
    docstring (``finite``: every float in it is known to be finite)."""
    text = _encoded(value, 0, finite)
    return None if text is None else text.decode()


def both(value: Any, level: int, *, finite: bool = False) -> tuple[str, str] | None:
    """``value`` as ``json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)`` writes
    it at indent ``level`` (its lines after the first shifted right), and its canonical JSON;
    or None as :func:`compact` (the same values, so the compact text alone is looked at)."""
    compact = _encoded(value, 0, finite)
    if compact is None:
        return None
    layout = _layout(value, level)
    if layout is None:
        return None
    head, tail = _nesting(level)
    return layout[head : -tail or None].decode(), compact.decode()


def members_both(value: Any, *, finite: bool = False) -> tuple[str, str] | None:
    """The members of ``value`` (a non-empty array or object) as the file lays them out in a
    member of the document (indent 2), without its brackets and the first member's indent,
    and as canonical JSON without its brackets; or None as :func:`compact`."""
    compact = _encoded(value, 0, finite)
    layout = None if compact is None else _layout(value, 1)
    if compact is None or layout is None:
        return None
    head, tail = _nesting(2)
    return layout[head:-tail].decode(), compact[1:-1].decode()


def object_both(names: list[str], texts: Mapping[str, str]) -> tuple[str, str] | None:
    """:func:`members_both` of the object of ``names`` (a run of an export's results, in
    order) whose values' canonical JSON is in ``texts`` (a run's committed texts), made from
    those texts: orjson reads the object they make, and its text of what it read must be
    theirs again, under the same names (canonical JSON is one text a value, so that is the
    value the texts are; an integer beyond 64 bits, which orjson reads as a float, is not),
    with no float it may spell otherwise than Python (:func:`_spelled_apart`); else None."""
    orjson = _orjson()
    if orjson is None or not names:
        return None
    members = ",".join([f"{quote(name)}:{texts[name]}" for name in names])
    try:
        whole = f"{{{members}}}".encode()
    except UnicodeEncodeError:  # a lone surrogate: the usual way says where
        return None
    if _spelled_apart(whole):
        return None
    try:
        value = orjson.loads(whole)
        same = orjson.dumps(value, option=orjson.OPT_SORT_KEYS) == whole and list(value) == names
    except (TypeError, ValueError):  # orjson.JSONDecodeError is a ValueError
        return None
    if not same:
        return None
    # What reads back to its own text holds no NaN or infinity (orjson reads neither, and
    # writes either as null): every null in it is one.
    layout = _layout(value, 1)
    if layout is None:
        return None
    head, tail = _nesting(2)
    return layout[head:-tail].decode(), members


def _nesting(level: int) -> tuple[int, int]:
    """The lengths of the text before and after a value nested in ``level`` arrays, as
    orjson lays it out with a two-space indent (``[\n  [\n    `` ... ``\n  ]\n]``)."""
    return 2 * level + level * (level + 1), 2 * level + level * (level - 1)


def _layout(value: Any, level: int) -> bytes | None:
    """orjson's layout of ``value`` (whose compact text it gave) nested in ``level`` arrays:
    its lines are then shifted right by orjson itself, not by a replace after. None where the
    nesting takes it past orjson's depth limit."""
    orjson = _orjson()
    for _ in range(level):
        value = [value]
    try:
        text: bytes = orjson.dumps(value, _refuse, orjson.OPT_INDENT_2 | _options(orjson))
    except TypeError:  # orjson.JSONEncodeError: nested deeper than orjson writes
        return None
    return text


def texts_of(values: Mapping[str, Any], *, finite: bool = False) -> dict[str, str] | None:
    """The canonical JSON of each of ``values`` (an export's results), in their order, or
    None as :func:`compact` says of any of them: one guard over all the texts, not one call
    of :func:`compact` a value (at 100,000 results its own cost was most of the work)."""
    orjson = _orjson()
    if orjson is None:
        return None
    dumps, option = orjson.dumps, _options(orjson)
    try:
        # Each made text at once: orjson's bytes each hold a buffer of some kilobytes, and
        # 100,000 of them held at once took 350 MB.
        texts = {name: dumps(value, _refuse, option).decode() for name, value in values.items()}
    except TypeError:  # orjson.JSONEncodeError: as in _encoded
        return None
    every = "\n".join(texts.values()).encode()
    if _spelled_apart(every) or (not finite and b"null" in every):
        return None
    return texts


def all_finite(values: Iterable[float | None]) -> bool:
    """Whether every one of ``values`` (None aside) is a finite number: a clock that read NaN
    would otherwise be written ``null`` (see the module's docstring), and a reader refuses
    what JSON text reads as infinity (``1e400``). Their sum is finite if they all are, and
    is taken in C; a sum too large to be finite (values near 1e308) only says no where it
    could have said yes, and is then left to the slower way."""
    try:
        return math.isfinite(sum(filter(None, values)))  # None and 0.0 add nothing
    except (TypeError, OverflowError):  # not a number; an integer too large for a float
        return False


_TIME_TYPES = frozenset((float, int, type(None)))


def plain_times(values: Iterable[float | None]) -> bool:
    """Whether every one of ``values`` is a float or an integer (exactly) or None, and
    finite (:func:`all_finite`): what a clock must give for its times to be written as
    records without a second look."""
    values = list(values)
    return _TIME_TYPES.issuperset(map(type, values)) and all_finite(values)


def values_of(texts: dict[str, str]) -> dict[str, Any]:
    """The value of each canonical JSON text in ``texts`` (a run's committed outputs), in
    their order: read by orjson all at once where its text of what it read is theirs again
    (it reads an integer beyond 64 bits as a float, which it then writes otherwise), else
    each by :func:`json.loads`. Canonical JSON is one text per value, so what reads back to
    the same text is the same value."""
    orjson = _orjson()
    if orjson is not None and texts:
        whole = object_text(texts)
        try:
            read = orjson.loads(whole)
            same = orjson.dumps(read, option=orjson.OPT_SORT_KEYS) == whole.encode()
        except (TypeError, ValueError):  # orjson.JSONDecodeError is a ValueError
            same = False
        if same:
            return {name: read[name] for name in texts}
    return {name: json.loads(text) for name, text in texts.items()}
