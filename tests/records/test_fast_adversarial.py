"""An adversarial pass over orjson's part in exports (``records/export/fast.py``).

The contract, which the tests below try to break:

1. ``fast.compact(v, finite=...)`` and ``fast.both(v, level, finite=...)`` are None or
   exactly the standard library's text, for any value (``finite=True``: any value whose
   floats are finite);
2. an export is the same bytes written with or without orjson, for any run, and a run whose
   clock reads NaN or an infinity is refused the same way by both, never written with ``null``;
3. the lean reader (:func:`.streamed.read_lean`) never accepts a file the whole reader
   refuses, and when it accepts, its views are the whole reader's, whatever spelling of a
   number the file holds and whatever text its checksum was taken over;
4. a JSON library that writes anything otherwise fails the probe, and is then not used.

The pass found four defects, each fixed with its test here: values that are not JSON
(dataclasses, dates, subclasses) written by orjson, a probe without NaN and the infinities, a
clock's time that is not a number vouched for as a record, and an integer too large for a
float ending the export in a traceback.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import datetime
import decimal
import enum
import fractions
import hashlib
import json
import math
import random
import struct
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness_tui.engine.canonical import CanonicalError, check_json
from harness_tui.engine.clock import FakeClock
from harness_tui.engine.orchestrator import TaskOrchestrator
from harness_tui.engine.recorded_calls import CallMode, CallSession
from harness_tui.records.errors import RecordError
from harness_tui.records.export import RunRecord, fast, streamed
from harness_tui.records.export.reading import document_of
from harness_tui.records.export.streamed import Lean, read_lean
from harness_tui.records.export.writing import checksum, export_text
from harness_tui.workflow.loader import load_workflow
from harness_tui.workflow.python_source import load_python

from .lean_views import assert_same_views

ROOT = Path(__file__).resolve().parents[2]
NAME = "run.json"
FIXTURE = settings(
    deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60
)


def _expected(value: Any) -> str | None:
    """The standard library's canonical text of ``value``, or None where it refuses it."""
    try:
        return check_json(value)
    except CanonicalError:
        return None


def _layout(value: Any, level: int) -> str | None:
    if _expected(value) is None:
        return None
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
    return text.replace("\n", "\n" + "  " * level)


def _indented(value: Any, level: int, *, finite: bool = False) -> str | None:
    """The file's layout of ``value`` from :func:`fast.both`, or None."""
    texts = fast.both(value, level, finite=finite)
    return None if texts is None else texts[0]


def _assert_fast(value: Any, *, finite: bool = False, level: int = 1) -> None:
    """Property 1 for ``value``: each text orjson gives is the standard library's."""
    compact = fast.compact(value, finite=finite)
    assert compact is None or compact == _expected(value), (value, compact)
    layout = _indented(value, level, finite=finite)
    assert layout is None or layout == _layout(value, level), (value, layout)


# -- 1. the texts of fast: the standard library's or none -------------------------------------


def _doubles(count: int) -> list[float]:
    """Floats of every exponent: each power of ten and its neighbours, and random bits."""
    values: list[float] = []
    for exponent in range(-330, 310):
        for mantissa in ("1", "1.5", "2.5", "5", "7", "9.999999999999999", "1.2345678901234567"):
            values.append(float(f"{mantissa}e{exponent}"))
    values += [math.nextafter(v, math.inf) for v in values[::7]]
    rng = random.Random(41)
    values += [struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]]
    values += [
        struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(count)
    ]
    subnormals = [5e-324, -5e-324, 2.2250738585072009e-308, 2.2250738585072014e-308]
    return [*values, *subnormals, 0.0, -0.0, 1.7976931348623157e308, -1.7976931348623157e308]


def test_every_float_is_written_as_python_writes_it_or_left_to_it() -> None:
    for value in _doubles(20_000):
        if math.isfinite(value):
            _assert_fast([value], finite=True)
            _assert_fast({"t": value, "n": None}, finite=True, level=2)
        _assert_fast([value])  # NaN and the infinities: never written (as null)
        assert math.isfinite(value) or fast.compact([value]) is None


def test_every_character_is_escaped_as_python_escapes_it() -> None:
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    for start in range(0, len(chars), 4096):
        piece = chars[start : start + 4096]
        value: Any = ["".join(piece), {c: i for i, c in enumerate(piece[:512])}]
        assert fast.compact(value) == check_json(value)  # no float: orjson's own text
        _assert_fast(value, level=3)
    for surrogate in ("\ud800", "\udfff", "a\udc00b"):
        for value in ([surrogate], {surrogate: 1}, {"k": {"x": surrogate}}):
            assert fast.compact(value) is None
            assert _indented(value, 1) is None


def test_keys_that_sort_apart_as_utf16_sort_by_code_point() -> None:
    keys = ["\uffff", "\U00010000", "\U0010ffff", "\ue000", "\ud7ff", "\uff61", "\U0001f600"]
    value = {key: [key] for key in [*keys, "a", "A", "", "\x00", "\x7f", "\u2028", "\ufeff"]}
    assert fast.compact(value) == check_json(value)
    _assert_fast(value, level=0)


@pytest.mark.parametrize(
    "value",
    [
        2**53 + 1, -(2**53) - 1, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64 - 1, 2**64,
        -(2**64), 10**400, True, False, [True, 1, 1.0, 0, False, 0.0, -0.0], None, "null",
        {"1e-05": "0.0000", "e+1": "a e-5"}, {1: "a"}, {True: 1}, {None: 1}, {1.5: 1},
        {("a",): 1}, [[[[]]]], [{}], {"": {"": {}}},
    ],
)  # fmt: skip
def test_json_scalars_and_keys_are_python_text_or_none(value: Any) -> None:
    _assert_fast(value)
    _assert_fast(value, finite=True)


class _IntEnum(enum.IntEnum):
    A = 3


class _StrEnum(enum.StrEnum):
    A = "a\u2028"


class _Float(float):
    def __repr__(self) -> str:
        return "2.0"


class _Str(str):
    def __str__(self) -> str:
        return "other"


class _Int(int):
    def __repr__(self) -> str:
        return "99"


class _Reversed(str):  # json sorts keys by their own order, orjson by their bytes
    def __lt__(self, other: object) -> bool:
        return str.__gt__(self, other)  # type: ignore[operator]

    def __gt__(self, other: object) -> bool:
        return str.__lt__(self, other)  # type: ignore[operator]


@pytest.mark.parametrize(
    "value",
    [
        [_IntEnum.A], {"k": _StrEnum.A}, [_Float(1.5)], [_Str("s")], {_Str("k"): 1}, [_Int(5)],
        {_Reversed("a"): 1, _Reversed("b"): 2},
        collections.OrderedDict([("b", 1), ("a", 2)]), collections.defaultdict(int, {"z": 1}),
        collections.UserDict({"a": 1}), collections.UserList([1]),
        [float("nan")], {"k": float("inf")}, [-math.inf],
    ],
    ids=[
        "int-enum", "str-enum", "float-subclass", "str-subclass", "str-subclass-key",
        "int-subclass", "keys-sorting-otherwise", "ordered-dict", "defaultdict", "user-dict",
        "user-list",
        "nan", "inf", "minus-inf",
    ],
)  # fmt: skip
def test_subclasses_and_non_finite_floats_are_python_text_or_none(value: Any) -> None:
    _assert_fast(value)


@pytest.mark.parametrize(
    "value",
    [
        b"a", bytearray(b"a"), {1}, frozenset(), decimal.Decimal("1.5"), fractions.Fraction(1, 3),
        1j, object(), range(3), [Ellipsis], {"k": type(None)}, iter([1]),
    ],
    ids=[
        "bytes", "bytearray", "set", "frozenset", "decimal", "fraction", "complex", "object",
        "range", "ellipsis", "type", "iterator",
    ],
)  # fmt: skip
def test_other_values_that_are_not_json_are_left_to_the_usual_way(value: Any) -> None:
    assert _expected(value) is None and _expected([value]) is None
    for wrapped in (value, [value], {"k": value}):
        assert fast.compact(wrapped) is None
        assert fast.compact(wrapped, finite=True) is None
        assert _indented(wrapped, 1, finite=True) is None


def test_nesting_past_orjson_limit_is_python_text_or_none() -> None:
    for depth in (1, 100, 254, 255, 256, 257, 500, 900):
        value: Any = 0.5
        for level in range(depth):
            value = [value] if level % 2 else {"k": value}
        _assert_fast(value)
        _assert_fast(value, finite=True)


_text = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()))
_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(-(2**70), 2**70),
    st.floats(),
    st.builds(
        lambda m, e: float(f"{m}e{e}"), st.integers(-(10**17), 10**17), st.integers(-345, 325)
    ),
    st.sampled_from([-0.0, 5e-324, 1e16, 1e-5, 1e-4, 0.0001, 1e15, 9999999999999998.0]),
    _text,
    st.sampled_from(["null", "0.0000", "1e-05", "e+1", "\u2028\x7f\ufeff\x1f", "\\u0000"]),
)
_value = st.recursive(
    _scalar,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(_text, inner, max_size=4)
        | st.dictionaries(st.sampled_from(["a", "B", "\uffff", "\U0001f600", "é"]), inner)
    ),
    max_leaves=16,
)


@settings(max_examples=300, deadline=None)
@given(_value, st.integers(0, 4))
def test_any_json_value_is_python_text_or_none(value: Any, level: int) -> None:
    _assert_fast(value, level=level)
    if _expected(value) is not None:  # its floats are all finite
        _assert_fast(value, finite=True, level=level)


@dataclasses.dataclass
class _Point:
    x: float


class _Colour(enum.Enum):
    RED = 1.5


class _ItemsHidden(dict):  # type: ignore[type-arg]
    def items(self) -> Any:  # what json's encoder reads of a dict subclass
        return [("hidden", 0)]


class _IterHidden(list):  # type: ignore[type-arg]
    def __iter__(self) -> Any:  # what json's encoder reads of a list subclass
        return iter([0])


@pytest.mark.parametrize(
    "value",
    [
        [_Point(1.5)], [datetime.datetime(2026, 1, 1)], [datetime.date(2026, 1, 1)],
        [datetime.time(1, 2)], _ItemsHidden(a=1), _IterHidden([1]),
    ],
    ids=["dataclass", "datetime", "date", "time", "dict-subclass-items", "list-subclass-iter"],
)  # fmt: skip
def test_a_value_that_is_not_json_is_never_written_by_orjson(value: Any) -> None:
    assert _expected(value) is None  # the standard library refuses it
    assert fast.compact(value) is None
    assert fast.compact(value, finite=True) is None
    assert _indented(value, 1) is None


@pytest.mark.parametrize(
    "value",
    [(1, 2), [(1.5,)], {"k": (None,)}, [_Colour.RED], [uuid.UUID(int=5)]],
    ids=["tuple", "tuple-in-list", "tuple-in-dict", "enum", "uuid"],
)
def test_what_orjson_writes_on_its_own_never_reaches_it_from_the_writer(value: Any) -> None:
    # orjson writes tuples, enums and UUIDs itself (fast's contract: JSON types only); the
    # writer hands it only records whose values it checked to be scalars of exact JSON types.
    from harness_tui.records.export import writing

    assert _expected(value) is None
    assert writing._both_ways([{"k": value}]) is None
    assert writing._members_both_ways({"t": {"k": value}}) is None


# -- 4. the probe: a library that writes anything otherwise is not used ------------------------


def _mapped(value: Any, leaf: Any) -> Any:
    kind = type(value)
    if kind is dict:
        return {key: _mapped(item, leaf) for key, item in value.items()}
    if kind is list:
        return [_mapped(item, leaf) for item in value]
    return leaf(value)


def _utf16_sorted(value: Any) -> Any:
    """``value`` with each object's keys in UTF-16 order (JavaScript's, not Python's)."""
    if type(value) is dict:
        order = sorted(value, key=lambda key: key.encode("utf-16-be", "surrogatepass"))
        return {key: _utf16_sorted(value[key]) for key in order}
    if type(value) is list:
        return [_utf16_sorted(item) for item in value]
    return value


class _Otherwise:
    """orjson with one difference: ``leaf`` rewrites each scalar (an ``orjson.Fragment`` is
    written as it stands), ``text`` the bytes written, ``utf16`` sorts keys as UTF-16."""

    OPT_SORT_KEYS, OPT_INDENT_2 = orjson.OPT_SORT_KEYS, orjson.OPT_INDENT_2
    OPT_PASSTHROUGH_SUBCLASS = orjson.OPT_PASSTHROUGH_SUBCLASS
    OPT_PASSTHROUGH_DATACLASS = orjson.OPT_PASSTHROUGH_DATACLASS
    OPT_PASSTHROUGH_DATETIME = orjson.OPT_PASSTHROUGH_DATETIME

    def __init__(self, leaf: Any = None, text: Any = None, *, utf16: bool = False) -> None:
        self.leaf, self.text, self.utf16 = leaf, text, utf16

    def dumps(self, value: Any, default: Any = None, option: int = 0) -> bytes:
        if self.leaf is not None:
            value = _mapped(value, self.leaf)
        if self.utf16:
            value, option = _utf16_sorted(value), option & ~orjson.OPT_SORT_KEYS
        written: bytes = orjson.dumps(value, default, option=option)
        return written if self.text is None else self.text(written, option)


def _floats_as(spell: Any) -> Any:
    def leaf(value: Any) -> Any:
        return orjson.Fragment(spell(value)) if type(value) is float else value

    return leaf


def _replace(old: bytes, new: bytes) -> Any:
    return lambda text, _option: text.replace(old, new)


_OTHERWISE = {
    "minus-zero-unsigned": _Otherwise(text=_replace(b"-0.0", b"0.0")),
    "capital-exponent": _Otherwise(_floats_as(lambda v: repr(v).upper().encode())),
    "seventeen-digits": _Otherwise(_floats_as(lambda v: f"{v:.17g}".encode())),
    "large-without-exponent": _Otherwise(
        _floats_as(lambda v: f"{v:.1f}".encode() if abs(v) >= 1e16 else repr(v).encode())
    ),
    "big-int-as-float": _Otherwise(lambda v: float(v) if type(v) is int and v > 2**53 else v),
    "bool-as-int": _Otherwise(lambda v: int(v) if type(v) is bool else v),
    "escaped-slash": _Otherwise(text=_replace(b"/", b"\\/")),
    "escaped-line-separator": _Otherwise(text=_replace("\u2028".encode(), b"\\u2028")),
    "escaped-delete": _Otherwise(text=_replace(b"\x7f", b"\\u007f")),
    "escaped-bom": _Otherwise(text=_replace("\ufeff".encode(), b"\\ufeff")),
    "ascii-only": _Otherwise(text=_replace("\u00e9".encode(), b"\\u00e9")),
    "tab-as-unicode": _Otherwise(text=_replace(b"\\t", b"\\u0009")),
    "raw-unit-separator": _Otherwise(text=_replace(b"\\u001f", b"\x1f")),
    "utf16-key-order": _Otherwise(utf16=True),
    "empty-array-spread": _Otherwise(
        text=lambda t, o: t.replace(b"[]", b"[\n]") if o & orjson.OPT_INDENT_2 else t
    ),
    "indent-4": _Otherwise(text=_replace(b"\n  ", b"\n    ")),
    "space-after-colon": _Otherwise(
        text=lambda t, o: t if o & orjson.OPT_INDENT_2 else t.replace(b'":', b'": ')
    ),
}


@pytest.mark.parametrize("library", list(_OTHERWISE.values()), ids=list(_OTHERWISE))
def test_a_library_that_writes_otherwise_fails_the_probe(library: _Otherwise) -> None:
    assert fast._probe_passes(orjson)
    assert not fast._probe_passes(library)


def test_a_library_that_fails_the_probe_is_never_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "orjson", _OTHERWISE["ascii-only"])
    monkeypatch.setattr(fast, "_state", [])
    assert fast.compact([{"t": 1.5}], finite=True) is None
    assert _indented([{"t": 1.5}], 1, finite=True) is None
    assert fast._state == [None]


_NON_FINITE_SPELLED = _Otherwise(
    _floats_as(lambda v: repr(v).encode() if math.isfinite(v) else json.dumps(v).encode())
)


def test_a_library_that_spells_non_finite_floats_fails_the_probe(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert not fast._probe_passes(_NON_FINITE_SPELLED)
    monkeypatch.setitem(sys.modules, "orjson", _NON_FINITE_SPELLED)
    monkeypatch.setattr(fast, "_state", [])
    assert fast.compact([math.inf]) is None
    assert fast._state == [None]


# -- 2. an export is the same bytes with or without orjson ----------------------------------------

_HOSTILE = '''
"""Tasks that return strange JSON, print, fail, fall back and record calls."""

from harness_tui import Harness

NAME = "hostile"
ON_FAILURE = "continue"
PAYLOAD = {"outputs": [{"x": 1}, {"x": 2}, {"x": 3}], "text": "t", "call": 1}


def echo(inputs):
    return inputs["payload"]["outputs"][inputs["params"]["i"]]


def noisy(inputs):
    print(inputs["payload"]["text"])
    return {"said": inputs["payload"]["text"]}


def failing(inputs):
    print(inputs["payload"]["text"])
    raise ValueError(inputs["payload"]["text"])


def fallback(inputs):
    return inputs["payload"]["outputs"][0]


def dice(inputs):
    value = inputs["io"].call("dice", lambda: inputs["payload"]["call"])
    return {"dice": value}


def build():
    harness = Harness()
    for i in range(3):
        harness.register(f"echo{i}", echo, params={"i": i})
    harness.register("noisy", noisy)
    harness.register("flaky", failing, max_retries=1, fallback=fallback)
    harness.register("broken", failing)
    harness.register("after", echo, depends_on=["broken"], params={"i": 0})
    harness.register("dice", dice)
    return harness
'''


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("hostile") / "hostile.py"
    path.write_text(_HOSTILE, encoding="utf-8")
    return load_python(f"{path}:build")


class _WallClock(FakeClock):
    """A fake clock whose wall time is always ``wall`` (anything: the engine only keeps it)."""

    def __init__(self, wall: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._wall = wall

    def wall(self) -> Any:
        return self._wall


def _run(workflow: Any, clock: FakeClock, payload: Any, *, calls: bool = True) -> Any:
    """A run of ``workflow`` to its end, its calls recorded (``calls``)."""
    orchestrator = TaskOrchestrator(workflow.graph, clock=clock, on_failure=workflow.on_failure)
    session = CallSession(CallMode.LIVE) if calls else None
    return orchestrator.start(payload, calls=session).run_to_end()


def _export(workflow: Any, run: Any, path: Path, *, quick: bool) -> tuple[bytes | str, bool]:
    """The export of ``run`` written with orjson or without, or the error that refused it;
    and whether orjson gave any of its text."""
    fast._state[:] = [] if quick else [None]
    encoded, taken = fast._encoded, []

    def spy(value: Any, option: int, finite: bool) -> bytes | None:
        text = encoded(value, option, finite)
        taken.append(text is not None)
        return text

    fast._encoded = spy
    try:
        record = RunRecord.from_run(run, workflow, run_id="r1", environment={"python": "3"})
        return record.write(path).read_bytes(), any(taken)
    except (CanonicalError, RecordError) as exc:
        return f"{type(exc).__name__}: {exc}", any(taken)
    finally:
        fast._state[:] = []
        fast._encoded = encoded


def _both(
    workflow: Any, make_clock: Any, payload: Any, *, calls: bool = True, taken: bool = False
) -> bytes | str:
    """The export of one run written with orjson, once checked the same without it (a run's
    recorded calls time themselves on the clock other threads read too: one run, two
    writes); ``taken``: orjson must have written some of it."""
    run = _run(workflow, make_clock(), payload, calls=calls)
    with tempfile.TemporaryDirectory() as directory:
        quick, used = _export(workflow, run, Path(directory) / "quick.json", quick=True)
        usual, unused = _export(workflow, run, Path(directory) / "usual.json", quick=False)
    assert quick == usual
    assert not unused and (used or not taken)
    return quick


def _assert_reads(data: bytes | str, *, finite: bool) -> None:
    """A written export reads back, lean as whole; its times are finite, never ``null``."""
    if isinstance(data, str):
        assert not finite or "has no JSON form" not in data, data
        return
    document = json.loads(data)
    for timing in document["timings"]:
        for field in ("started_at", "ended_at", "wall"):
            assert timing.get(field, 0.0) is not None, timing
            assert math.isfinite(timing.get(field, 0.0)), timing
    whole = RunRecord(document_of([data], NAME), NAME).let_arrays_go()  # it reads whole
    lean = read_lean(data, NAME)  # None: left to the whole reader (times it cannot vouch for)
    if lean is not None:
        assert_same_views(lean, whole)


_finite = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([-0.0, 5e-324, 1e-5, 3.5e-6, 1e16, 1.2345e17, 1e-4, 0.1 + 0.2]),
)
_unicode = st.text(st.characters(exclude_categories=["Cs"]))  # a payload is valid Unicode
_record_value = st.one_of(st.none(), st.booleans(), st.integers(-(2**64), 2**64), _finite, _unicode)
_output = st.dictionaries(
    st.one_of(_unicode, st.sampled_from(["\uffff", "\U0001f600", "null", "e-1"])),
    _record_value,
    min_size=1,
    max_size=4,
)
_strange_output = st.one_of(
    _output,
    st.recursive(_record_value, lambda inner: st.lists(inner, max_size=3)
                 | st.dictionaries(_unicode, inner, max_size=3), max_leaves=8),
)  # fmt: skip
_printable = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)  # printed too


@settings(FIXTURE, max_examples=25)
@given(
    outputs=st.lists(_strange_output, min_size=3, max_size=3),
    text=_printable,
    call=_record_value,
    tick=st.sampled_from([0.01, 1e-5, 0.1, 3.0, 1e-9, 1e12]),
)
def test_a_run_with_strange_outputs_is_the_same_export_with_or_without_orjson(
    hostile: Any, outputs: list[Any], text: str, call: Any, tick: float
) -> None:
    payload = {"outputs": outputs, "text": text, "call": call}
    data = _both(hostile, lambda: FakeClock(tick=tick), payload, taken=True)
    assert isinstance(data, bytes), data
    for part in (b'"io": [', b'"kind": "fallback"', b'"log": {', b'"status": "failed"'):
        assert part in data  # recorded calls, a fallback, a log, a failure
    _assert_reads(data, finite=True)


_CLOCKS = {
    "tiny-tick": lambda: FakeClock(tick=1e-5),
    "subnormal-tick": lambda: FakeClock(tick=5e-324),
    "tick-of-a-tenth": lambda: FakeClock(tick=0.1),
    "negative-tick": lambda: FakeClock(start=-1e6, tick=-0.01),
    "minus-zero": lambda: FakeClock(start=-0.0, tick=-0.0, epoch=-0.0),
    "huge": lambda: FakeClock(start=1e300, tick=1e290),
    "largest": lambda: FakeClock(start=1.7976931348623157e308, epoch=0.0),
    "large-ints": lambda: FakeClock(start=2**62, tick=2**40, epoch=0),
}
_NOT_FINITE = {
    "start-nan": lambda: FakeClock(start=math.nan, tick=0.01),
    "start-inf": lambda: FakeClock(start=math.inf, tick=0.01),
    "start-minus-inf": lambda: FakeClock(start=-math.inf, tick=0.01),
    "overflows-to-inf": lambda: FakeClock(start=1.7e308, tick=1e307, epoch=0.0),
    "wall-nan": lambda: _WallClock(math.nan, tick=0.01),
    "wall-inf": lambda: _WallClock(math.inf, tick=0.01),
    "wall-minus-inf": lambda: _WallClock(-math.inf, tick=0.01),
    "epoch-inf": lambda: FakeClock(tick=0.01, epoch=math.inf),
}
_WORKFLOWS = [
    "workflows/agent_triage.yaml", "workflows/etl_fanout.yaml", "hostile", "hostile-recorded",
]  # fmt: skip


def _workflow(name: str, hostile: Any) -> Any:
    return hostile if name.startswith("hostile") else load_workflow(ROOT / name)


@pytest.mark.parametrize("where", _WORKFLOWS)
@pytest.mark.parametrize("clock", list(_CLOCKS.values()), ids=list(_CLOCKS))
def test_odd_clocks_give_the_same_export_with_or_without_orjson(
    clock: Any, where: str, hostile: Any
) -> None:
    workflow = _workflow(where, hostile)
    data = _both(workflow, clock, workflow.payload, calls=where.endswith("recorded"), taken=True)
    assert isinstance(data, bytes), data
    _assert_reads(data, finite=True)


@pytest.mark.parametrize("where", _WORKFLOWS)
@pytest.mark.parametrize("clock", list(_NOT_FINITE.values()), ids=list(_NOT_FINITE))
def test_a_clock_that_is_not_finite_is_refused_with_or_without_orjson(
    clock: Any, where: str, hostile: Any
) -> None:
    workflow = _workflow(where, hostile)
    data = _both(workflow, clock, workflow.payload, calls=where.endswith("recorded"))
    assert isinstance(data, str) and "has no JSON form" in data, data


@pytest.mark.parametrize("wall", [(1.0, 2.0), [1.0, 2.0]], ids=["tuple", "list"])
def test_a_wall_time_that_is_not_a_number_is_the_same_export_with_or_without_orjson(
    wall: Any,
) -> None:
    # Times that are not numbers are not vouched for: looked at as any value, a tuple is
    # refused and a list written as JSON (the reader's schema then refuses the file), the
    # same both ways.
    workflow = load_workflow(ROOT / "workflows/agent_triage.yaml")
    clock = lambda: _WallClock(wall, tick=0.01)  # noqa: E731
    data = _both(workflow, clock, workflow.payload, calls=False)  # no call: flat attempts
    if type(wall) is tuple:
        assert isinstance(data, str) and "tuple" in data, data
    else:
        assert isinstance(data, bytes) and b'"wall": [\n' in data


def test_a_wall_time_too_large_for_a_float_is_not_a_traceback(hostile: Any) -> None:
    assert fast.all_finite([1.0, 10**400]) is False
    data = _both(hostile, lambda: _WallClock(10**400, tick=0.01), hostile.payload)
    assert isinstance(data, bytes | str)


@pytest.mark.parametrize("steps", [0, 1, 2, 5, 9])
@pytest.mark.parametrize("tick", [0.01, 1e-5])
def test_a_run_exported_midway_is_the_same_export_with_or_without_orjson(
    steps: int, tick: float
) -> None:
    workflow = load_workflow(ROOT / "workflows/agent_triage.yaml")
    orchestrator = TaskOrchestrator(
        workflow.graph, clock=FakeClock(tick=tick), on_failure=workflow.on_failure
    )
    run = orchestrator.start(workflow.payload)
    for _ in range(steps):
        run.step()
    with tempfile.TemporaryDirectory() as directory:
        quick, used = _export(workflow, run, Path(directory) / "quick.json", quick=True)
        usual, _ = _export(workflow, run, Path(directory) / "usual.json", quick=False)
    assert used and quick == usual
    _assert_reads(quick, finite=True)


_any_scalar = st.one_of(
    _record_value,
    st.sampled_from([math.nan, math.inf, -math.inf, 2**64, -(2**64) - 1, 10**30, "\ud800"]),
    st.sampled_from([_IntEnum.A, _StrEnum.A, _Float(1.5), _Str("s"), _Int(5)]),
)


def _write(document: dict[str, Any], path: Path, *, quick: bool) -> bytes | str:
    fast._state[:] = [] if quick else [None]
    try:
        return RunRecord(document).write(path).read_bytes()
    except (CanonicalError, RecordError) as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        fast._state[:] = []


@settings(FIXTURE, max_examples=80)
@given(
    field=st.sampled_from(["timings", "attempts", "trace", "plan"]),
    index=st.integers(0, 6),
    key=st.sampled_from(["started_at", "wall", "ended_at", "zz", "\uffff", "\U0001f600"]),
    value=_any_scalar,
    result=st.dictionaries(_text, _any_scalar, min_size=1, max_size=3),
)
def test_a_document_with_strange_records_is_the_same_export_with_or_without_orjson(
    document: dict[str, Any], field: str, index: int, key: str, value: Any, result: Any
) -> None:
    changed = json.loads(json.dumps(document))
    del changed["checksum"]
    changed[field][index][key] = value
    changed["results"][changed["trace"][-1]["task"]] = result
    with tempfile.TemporaryDirectory() as directory:
        quick = _write(changed, Path(directory) / NAME, quick=True)
        assert quick == _write(changed, Path(directory) / NAME, quick=False)
    if isinstance(quick, bytes):
        _assert_lean_within_whole(quick)


# -- 3. the lean reader accepts only what the whole reader does, whatever the spelling ---------

_SENTINEL = 0.123456789
_MARK = repr(_SENTINEL)


def _failed(document: dict[str, Any]) -> dict[str, Any]:
    error: dict[str, Any] = next(e for e in document["trace"] if e.get("error"))["error"]
    return error


_PLACES: dict[str, Any] = {
    "timing-started": lambda d: d["timings"][0].__setitem__("started_at", _SENTINEL),
    "timing-wall": lambda d: d["timings"][-1].__setitem__("wall", _SENTINEL),
    "timing-unknown": lambda d: d["timings"][2].__setitem__("note", _SENTINEL),
    "attempt-ended": lambda d: d["attempts"][0].__setitem__("ended_at", _SENTINEL),
    "attempt-wall-started": lambda d: d["attempts"][-1].__setitem__("wall_started", _SENTINEL),
    "attempt-unknown": lambda d: d["attempts"][1].__setitem__("zz", [_SENTINEL]),
    "attempt-io": lambda d: d["attempts"][0].__setitem__("io", [{"value": _SENTINEL}]),
    "attempt-log": lambda d: d["attempts"][1].__setitem__(
        "log", {"text": "t", "truncated": False, "x": _SENTINEL}
    ),
    "trace-unknown": lambda d: d["trace"][1].__setitem__("x", _SENTINEL),
    "trace-error": lambda d: _failed(d).__setitem__("x", _SENTINEL),
    "plan-unknown": lambda d: d["plan"][0].__setitem__("x", _SENTINEL),
    "result": lambda d: d["results"].__setitem__(d["trace"][-1]["task"], {"v": _SENTINEL}),
    "result-nested": lambda d: d["results"].__setitem__(d["trace"][-1]["task"], [[_SENTINEL]]),
    "environment": lambda d: d["environment"].__setitem__("x", _SENTINEL),
    "unattributed-log": lambda d: d.__setitem__("unattributed_log", {"text": "", "x": _SENTINEL}),
    "member-first": lambda d: d.__setitem__("aa", _SENTINEL),
    "member-last": lambda d: d.__setitem__("zz", {"deep": [_SENTINEL]}),
}
_SPELLINGS = [
    "1e400", "-1e400", "1E400", "1e309", "1.7976931348623159e308", "1e-400", "-1e-400",
    "0.00001", "1e-5", "1E-5", "1e-05", "8.0e-5", "0.00008", "1E5", "1e5", "1e+5", "100000.0",
    "-0", "-0.0", "0", "0.0", "1.0", "1", "4.9e-324", "5e-324", "2.5e-06", "1e16", "1e+16",
    "10000000000000000.0", "0.1e1", "123456789012345678901234567890", "18446744073709551616",
    _MARK,
]  # fmt: skip


def _hashed_spellings(spelling: str) -> list[str]:
    """The texts a forger may have taken the checksum over for ``spelling``: itself,
    Python's canonical text of what JSON reads, orjson's text of it (``null`` for an
    infinity), and ``null``."""
    read = json.loads(spelling)
    spellings = [spelling, "null"]
    with contextlib.suppress(orjson.JSONEncodeError):  # an integer beyond 64 bits
        spellings.append(orjson.dumps(read).decode())
    if _expected(read) is not None:
        spellings.append(check_json(read))
    return sorted(set(spellings))


class _Files(dict):  # type: ignore[type-arg]
    def __repr__(self) -> str:  # what hypothesis shows of the fixture
        return f"<{len(self)} marked files>"


@pytest.fixture(scope="module")
def marked(document: dict[str, Any]) -> dict[str, tuple[bytes, str]]:
    """Per place, the harness's file of the document with the sentinel there, and the
    canonical text its checksum is taken over."""
    files = _Files()
    for place, put in _PLACES.items():
        changed = json.loads(json.dumps(document))
        del changed["checksum"]
        put(changed)
        data = export_text({**changed, "checksum": checksum(changed)}).encode()
        text = check_json(changed)
        assert data.count(_MARK.encode()) == 1 and text.count(_MARK) == 1, place
        files[place] = (data, text)
    return files


def _forged(data: bytes, text: str, spelling: str, hashed: str) -> bytes:
    """``data`` with the sentinel spelled ``spelling``, and a checksum taken over the
    canonical text with it spelled ``hashed``."""
    sealed = hashlib.sha256(text.replace(_MARK, hashed).encode()).hexdigest()
    forged = data.replace(_MARK.encode(), spelling.encode())
    start = forged.index(b'\n  "checksum": "') + len(b'\n  "checksum": "')
    return forged[:start] + sealed.encode() + forged[start + 64 :]


def _whole(data: bytes) -> RunRecord | str:
    try:
        return RunRecord(document_of([data], NAME), NAME).let_arrays_go()
    except RecordError as exc:
        return str(exc)


def _assert_lean_within_whole(data: bytes) -> Lean | None:
    """Property 3 for ``data``: a lean accept is a whole accept, with the same views."""
    lean, whole = read_lean(data, NAME), _whole(data)
    if lean is not None:
        assert not isinstance(whole, str), f"read lean, but the whole reader says: {whole}"
        assert_same_views(lean, whole)
    return lean


@settings(FIXTURE, max_examples=150)
@given(
    place=st.sampled_from(list(_PLACES)),
    spelling=st.sampled_from(_SPELLINGS),
    choice=st.integers(0, 3),
    run_bytes=st.sampled_from([1, 300, 1 << 18]),
)
def test_a_number_spelled_otherwise_is_read_lean_only_as_whole(
    marked: dict[str, tuple[bytes, str]],
    place: str,
    spelling: str,
    choice: int,
    run_bytes: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(streamed, "_RUN_BYTES", run_bytes)
    hashed = _hashed_spellings(spelling)
    data, text = marked[place]
    _assert_lean_within_whole(_forged(data, text, spelling, hashed[choice % len(hashed)]))


@pytest.mark.parametrize("place", list(_PLACES))
def test_an_infinity_hashed_as_orjson_writes_it_is_refused_by_both(
    marked: dict[str, tuple[bytes, str]], place: str
) -> None:
    data, text = marked[place]
    for spelling in ("1e400", "-1E400", "1e309"):
        for hashed in ("null", spelling, "Infinity"):
            forged = _forged(data, text, spelling, hashed)
            assert read_lean(forged, NAME) is None, (spelling, hashed)
            assert isinstance(_whole(forged), str), (spelling, hashed)


@pytest.mark.parametrize("place", list(_PLACES))
def test_a_number_respelled_with_its_real_checksum_is_read_the_same(
    marked: dict[str, tuple[bytes, str]], place: str
) -> None:
    data, text = marked[place]
    for spelling in ("0.123456789e0", "1234.56789e-4", "0.1234567890", "123456789E-9"):
        forged = _forged(data, text, spelling, _MARK)  # the checksum of what JSON reads
        assert not isinstance(_whole(forged), str), spelling
        _assert_lean_within_whole(forged)


@pytest.mark.slow
def test_every_spelling_in_every_place_is_read_lean_only_as_whole(
    marked: dict[str, tuple[bytes, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(streamed, "_RUN_BYTES", 300)
    accepted = 0
    for data, text in marked.values():
        for spelling in _SPELLINGS:
            for hashed in _hashed_spellings(spelling):
                lean = _assert_lean_within_whole(_forged(data, text, spelling, hashed))
                accepted += lean is not None
    assert accepted > len(_PLACES)  # the real spellings with their real checksums, at least
