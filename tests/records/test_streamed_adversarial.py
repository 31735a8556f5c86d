"""An adversarial pass over the streamed export reader (:mod:`.export.streamed`).

The contract: for any bytes, when :func:`read_lean` gives a ``Lean`` the whole-document reader
accepts the same bytes and makes the same views; ``RunRecord.read(path, lean=True)`` refuses
exactly what ``RunRecord.read(path)`` refuses, with the same message; a sound export in the
harness's own layout is read lean; and nothing but a RecordError comes out. Exports are
untrusted input, and anyone can compute a checksum: several attacks below forge one (sha256
of a canonical text made by hand) so that only the reader's own reading stands between the
file and its acceptance.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness_tui.records.errors import RecordError
from harness_tui.records.export import RunRecord, streamed
from harness_tui.records.export.reading import document_of
from harness_tui.records.export.streamed import Lean, read_lean
from harness_tui.records.export.writing import checksum, export_text

from .lean_views import assert_same_views

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests/records/data/golden"
NAME = "run.json"
FIXTURE = settings(
    deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=150
)


# -- helpers -----------------------------------------------------------------------------------


def _sealed(document: dict[str, Any]) -> bytes:
    """The export file of ``document`` in the harness's layout, its checksum taken again."""
    document = {k: v for k, v in document.items() if k != "checksum"}
    return export_text({**document, "checksum": checksum(document)}).encode()


def _canonical(document: dict[str, Any]) -> str:
    """The text the checksum is taken over, made here without the harness's encoders."""
    rest = {k: v for k, v in document.items() if k != "checksum"}
    return json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _with_checksum(data: bytes, text: str) -> bytes:
    """``data`` with its checksum replaced by the sha256 of ``text`` (a forged checksum)."""
    start = data.index(b'\n  "checksum": "') + len(b'\n  "checksum": "')
    assert data[start + 64 : start + 65] == b'"'
    return data[:start] + hashlib.sha256(text.encode()).hexdigest().encode() + data[start + 64 :]


def _replaced(text: Any, old: Any, new: Any) -> Any:
    """``text`` with its one ``old`` replaced by ``new`` (the edit must hit one place)."""
    assert text.count(old) == 1, (old, text.count(old))
    return text.replace(old, new)


def _lean(data: bytes) -> Lean | None:
    return read_lean(data, NAME)


def _whole(data: bytes) -> RunRecord | str:
    """The record the whole-document reader makes of ``data`` (arrays let go), or its error."""
    try:
        return RunRecord(document_of([data], NAME), NAME).let_arrays_go()
    except RecordError as exc:
        return str(exc)


def _read(path: Path, *, lean: bool) -> RunRecord | str:
    try:
        return RunRecord.read(path, lean=lean)
    except RecordError as exc:
        return str(exc)


def _assert_contract(data: bytes, directory: Path, *, records: bool = True) -> Lean | None:
    """Properties 1, 2 and 4 for ``data``; returns what the streamed reader made of it.
    ``records``: also compare ``RunRecord.read`` with and without ``lean`` (slower: the
    workflow is parsed and the run checked)."""
    lean = _lean(data)  # raises nothing (property 4)
    whole = _whole(data)
    if lean is not None:
        assert not isinstance(whole, str), f"read lean, but the whole reader says: {whole}"
        assert_same_views(lean, whole)
    if records:
        path = directory / NAME
        path.write_bytes(data)
        plain, leanly = _read(path, lean=False), _read(path, lean=True)
        if isinstance(plain, str) or isinstance(leanly, str):
            assert leanly == plain
        else:
            assert leanly.events == plain.events
            assert leanly.plan == plain.plan
            assert leanly.outputs == plain.outputs
            assert leanly.logs == plain.logs
    return lean


@pytest.fixture(scope="module")
def sealed(document: dict[str, Any]) -> bytes:
    return _sealed(document)


# -- the head: format, format_version, the order of keys, the checksum --------------------------


def _head_swapped(data: bytes) -> bytes:
    return _replaced(
        data,
        b'"format": "harness-run",\n  "format_version": "1.1",',
        b'"format_version": "1.1",\n  "format": "harness-run",',
    )


def _version_missing(data: bytes) -> bytes:
    return _replaced(data, b'\n  "format_version": "1.1",', b"")


def _format_twice(data: bytes) -> bytes:
    return _replaced(
        data, b'"format": "harness-run",', b'"format": "harness-run",\n  "format": "harness-run",'
    )


def _version_twice(data: bytes) -> bytes:  # the second (read by JSON) is another version
    return _replaced(
        data, b'"format_version": "1.1",', b'"format_version": "1.1",\n  "format_version": "2.0",'
    )


def _version_again_below(data: bytes) -> bytes:  # given again in its sorted place
    return _replaced(data, b'\n  "payload": ', b'\n  "format_version": "1.1",\n  "payload": ')


def _checksum_last(data: bytes) -> bytes:
    start = data.index(b'\n  "checksum": ')
    end = data.index(b"\n", start + 1)
    member = data[start:end].rstrip(b",")
    body = data[:start] + data[end:]
    return body[: -len(b"\n}\n")] + b"," + member + b"\n}\n"


def _checksum_twice(data: bytes) -> bytes:  # the first, a wrong one, is what JSON drops
    return _replaced(
        data, b'\n  "checksum": ', b'\n  "checksum": "' + b"0" * 64 + b'",\n  "checksum": '
    )


def _status_twice(data: bytes) -> bytes:
    return _replaced(data, b'\n  "status": ', b'\n  "status": "failed",\n  "status": ')


def _trace_twice(data: bytes) -> bytes:  # an empty trace first: JSON keeps the second
    return _replaced(data, b'\n  "trace": [', b'\n  "trace": [],\n  "trace": [')


def _trace_last_twice(data: bytes) -> bytes:  # JSON keeps the empty one
    return _replaced(data, b'\n  "workflow": ', b'\n  "trace": [],\n  "workflow": ')


def _escaped_key(data: bytes) -> bytes:  # "st\u0061tus" is "status"
    return _replaced(data, b'\n  "status": ', b'\n  "st\\u0061tus": ')


def _escaped_head_key(data: bytes) -> bytes:
    return _replaced(data, b'\n  "format": ', b'\n  "\\u0066ormat": ')


def _key_out_of_order(data: bytes) -> bytes:  # "status" moved before "results"
    start = data.index(b'\n  "status": ')
    end = data.index(b"\n", start + 1)
    member = data[start:end]
    body = data[:start] + data[end:]
    return _replaced(body, b'\n  "results": ', member + b'\n  "results": ')


def _extra_space_after_colon(data: bytes) -> bytes:
    return _replaced(data, b'\n  "status": ', b'\n  "status":  ')


def _trailing_space_after_record(data: bytes) -> bytes:
    return _replaced(data, b'\n    }\n  ],\n  "checksum"', b'\n    }  \n  ],\n  "checksum"')


def _extra_brace(data: bytes) -> bytes:
    return data[: -len(b"\n}\n")] + b"\n}\n}\n"


def _crlf(data: bytes) -> bytes:
    return data.replace(b"\n", b"\r\n")


def _crlf_in_body(data: bytes) -> bytes:  # the head and tail as written
    head = len(b'{\n  "format": ')
    return data[:head] + data[head:-3].replace(b"\n", b"\r\n") + data[-3:]


def _bom(data: bytes) -> bytes:
    return b"\xef\xbb\xbf" + data


def _empty_trace_spread(data: bytes) -> bytes:  # "[\n  ]": not the writer's "[]"
    doc = json.loads(data)
    doc["trace"] = []
    text = _sealed(doc)
    return _replaced(text, b'"trace": []', b'"trace": [\n  ]')


def _nul_in_record(data: bytes) -> bytes:  # a raw NUL: no JSON text
    return _replaced(data, b'"kind": "fallback"', b'"kind": "fall\x00back"')


def _noted(data: bytes, value: bytes) -> bytes:  # a key the schema ignores, in the attempt
    return _replaced(
        data, b'"kind": "fallback",', b'"kind": "fallback",\n      "note": ' + value + b","
    )


def _lone_surrogate(data: bytes) -> bytes:
    return _noted(data, b'"\\ud800"')


def _paired_surrogates(data: bytes) -> bytes:
    return _noted(data, b'"\\ud83d\\ude00 \\u2028 \\u0000"')


def _huge_int(data: bytes) -> bytes:  # more digits than Python reads
    return _noted(data, b"9" * 5000)


def _boundary_inside_a_record(data: bytes) -> bytes:
    # The record boundary's bytes inside an attempt's recorded calls, at the records' indent.
    calls = b'[\n    {\n"a": 1\n    },\n    {\n"b": [\n    {"c": 2\n    },\n    {}]\n    }\n]'
    return _replaced(
        data, b'"kind": "fallback",', b'"io": ' + calls + b',\n      "kind": "fallback",'
    )


def _trace_laid_out(data: bytes, indent: int | None) -> bytes:
    """The trace laid out by ``json.dumps`` with ``indent``, shifted two columns."""
    start = data.index(b'\n  "trace": [') + len(b'\n  "trace": ')
    end = data.index(b"\n  ]", start) + len(b"\n  ]")
    trace = json.dumps(json.loads(data[start:end]), indent=indent, ensure_ascii=False)
    return data[:start] + trace.replace("\n", "\n  ").encode() + data[end:]


def _trace_at_indent_1(data: bytes) -> bytes:  # records cut at "\n   },\n   {"
    return _trace_laid_out(data, 1)


def _trace_at_indent_4(data: bytes) -> bytes:  # the boundary's bytes one level deeper
    return _trace_laid_out(data, 4)


def _trace_on_one_line(data: bytes) -> bytes:
    return _trace_laid_out(data, None)


HEAD_EDITS = [
    _head_swapped, _version_missing, _format_twice, _version_twice, _version_again_below,
    _checksum_last, _checksum_twice, _status_twice, _trace_twice, _trace_last_twice,
    _escaped_key, _escaped_head_key, _key_out_of_order, _extra_space_after_colon,
    _trailing_space_after_record, _extra_brace, _crlf, _crlf_in_body, _bom,
    _empty_trace_spread, _nul_in_record, _lone_surrogate, _paired_surrogates, _huge_int,
    _boundary_inside_a_record, _trace_at_indent_1, _trace_at_indent_4, _trace_on_one_line,
]  # fmt: skip


@pytest.mark.parametrize("edit", HEAD_EDITS, ids=lambda f: f.__name__.strip("_"))
def test_an_edited_layout_keeps_the_contract(sealed: bytes, edit: Any, tmp_path: Path) -> None:
    _assert_contract(edit(sealed), tmp_path)


@pytest.mark.parametrize(
    "edit",
    [e for e in HEAD_EDITS if e not in (_extra_brace, _nul_in_record, _huge_int)],  # not JSON
    ids=lambda f: f.__name__.strip("_"),
)
def test_an_edited_layout_resealed_over_what_json_reads_keeps_the_contract(
    sealed: bytes, edit: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The checksum made right for what json.loads reads of the edited file: only the
    # reader's own reading can tell the edit.
    data = edit(sealed)
    read = json.loads(data.decode("utf-8-sig"))
    old = b'"' + read["checksum"].encode() + b'"'
    hashed = _canonical(read).encode("utf-8", "surrogatepass")  # a lone one: refused anyway
    new = b'"' + hashlib.sha256(hashed).hexdigest().encode() + b'"'
    _assert_contract(data.replace(old, new), tmp_path)
    monkeypatch.setattr(streamed, "_RUN_BYTES", 1)  # a run per record: every boundary cut
    _assert_contract(data.replace(old, new), tmp_path, records=False)


@pytest.mark.parametrize("edit", [_trace_at_indent_1, _trace_at_indent_4, _trace_on_one_line])
def test_a_trace_laid_out_otherwise_is_read_lean_as_one_piece(
    sealed: bytes, edit: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Not the records' layout: the trace is parsed as one value and hashed in canonical form.
    data = edit(sealed)
    data = _with_checksum(data, _canonical(json.loads(data)))
    monkeypatch.setattr(streamed, "_RUN_BYTES", 1)
    lean, whole = _lean(data), _whole(data)
    assert lean is not None and not isinstance(whole, str)
    assert_same_views(lean, whole)


def test_an_escaped_top_level_key_resealed_is_read_lean_as_whole(
    sealed: bytes, tmp_path: Path
) -> None:
    # The same document, its key spelled another way: the checksum is unchanged and true.
    lean = _assert_contract(_escaped_key(sealed), tmp_path)
    assert lean is not None


HEAD = b'{\n  "format": '
SMALL_FILES = [
    b"", b"\n}\n", HEAD + b"\n}\n", HEAD + b'"harness-run"\n}\n',
    HEAD + b'"harness-run",\n  "format_version": "1.1"\n}\n',
    HEAD + b'"harness-run",\n  "format_version": "1.1",\n  "checksum": "x"\n}\n',
    HEAD + b'"harness-run",\n  "format_version": "1.1",\n  "plan": [\n    {\n    }\n  ]\n}\n',
    HEAD + b'"harness-run",\n  "format_version": "1.1",\n  "plan": [\n    {\n  ]\n}\n',
    HEAD + b'"harness-run",\n  "format_version": "1.1",\n  "": 1,\n  "": 2\n}\n',
    HEAD + b'"harness-run",\n  "format_version": "1.1",\n  "a": ' + b"[" * 100_000 + b"\n}\n",
    HEAD + b"[" * 5000 + b"]" * 5000 + b"\n}\n",
    HEAD + b'"harness-run",\n  "format_version": "1.1",\n  "a": ' + b"9" * 5000 + b"\n}\n",
    HEAD + b'"harness-run",\n  "format_version": "1.1",\n  "a": 1e400\n}\n',
    HEAD + b'"harness-run",\n  "format_version": "1.1",\n  "a": NaN\n}\n',
    HEAD + b'"harness-run",\n  "format_version": "1.1",\n  "\\ud800": 1\n}\n',
    HEAD + b'"harness-run",\n  "format_version": "1.1",\n  "a": "\xed\xa0\x80"\n}\n',
]  # fmt: skip


@pytest.mark.parametrize("data", SMALL_FILES)
def test_a_small_or_strange_file_keeps_the_contract(data: bytes, tmp_path: Path) -> None:
    assert _assert_contract(data, tmp_path) is None


# -- the streamed checksum: record text hashed as it stands ------------------------------------
# Each edit keeps the file in the writer's layout and changes only how a record of the
# attempts array is spelled (or, for infinity, a value no JSON text can hold). With the real
# checksum the streamed hash differs and the file is read whole, which accepts it: JSON reads
# the same values. With a checksum forged over the text the streamed reader hashes, it is read
# lean, while the whole reader, hashing what JSON reads, refuses it.

_FALLBACK = (
    '"attempt": 3,\n      "ended_at": 1.2700000000000002,\n      "kind": "fallback",\n'
    '      "log": null,'
)
_FALLBACK_CANONICAL = '"attempt":3,"ended_at":1.2700000000000002,"kind":"fallback","log":null,'

SPELLINGS = {
    # name: (the record's text in the file, the text the streamed reader hashes)
    "escaped_ascii": (
        _FALLBACK.replace('"fallback"', '"f\\u0061llback"'),
        _FALLBACK_CANONICAL.replace('"fallback"', '"f\\u0061llback"'),
    ),
    "escaped_solidus": (
        _FALLBACK + '\n      "note": "a\\/b",',
        _FALLBACK_CANONICAL + '"note":"a\\/b",',
    ),
    "float_exponent": (
        _FALLBACK.replace("1.2700000000000002", "127.00000000000002E-2"),
        _FALLBACK_CANONICAL.replace("1.2700000000000002", "127.00000000000002E-2"),
    ),
    "float_trailing_zero": (
        _FALLBACK.replace("1.2700000000000002", "1.27000000000000020"),
        _FALLBACK_CANONICAL.replace("1.2700000000000002", "1.27000000000000020"),
    ),
    "negative_zero_int": (
        _FALLBACK.replace('"attempt": 3', '"attempt": 3,\n      "count": -0'),
        _FALLBACK_CANONICAL.replace('"attempt":3', '"attempt":3,"count":-0'),
    ),
    "two_spaces_after_colon": (
        _FALLBACK.replace('"kind": ', '"kind":  '),
        _FALLBACK_CANONICAL.replace('"kind":', '"kind": '),
    ),
    "keys_out_of_order": (
        _FALLBACK.replace(
            '"ended_at": 1.2700000000000002,\n      "kind": "fallback"',
            '"kind": "fallback",\n      "ended_at": 1.2700000000000002',
        ),
        _FALLBACK_CANONICAL.replace(
            '"ended_at":1.2700000000000002,"kind":"fallback"',
            '"kind":"fallback","ended_at":1.2700000000000002',
        ),
    ),
    "key_given_twice": (  # read, the text says "task" first; JSON keeps "fallback"
        _FALLBACK.replace('"kind": "fallback"', '"kind": "task",\n      "kind": "fallback"'),
        _FALLBACK_CANONICAL.replace('"kind":"fallback"', '"kind":"task","kind":"fallback"'),
    ),
    "carriage_return": (
        _FALLBACK.replace('"fallback",\n', '"fallback",\r\n'),
        _FALLBACK_CANONICAL.replace('"fallback",', '"fallback",\r'),
    ),
    "tab_before_line_break": (
        _FALLBACK.replace('"fallback",\n', '"fallback",\t\n'),
        _FALLBACK_CANONICAL.replace('"fallback",', '"fallback",\t'),
    ),
    "infinity": (  # 1e400 reads as inf, which has no JSON form
        _FALLBACK.replace("1.2700000000000002", "1e400"),
        _FALLBACK_CANONICAL.replace("1.2700000000000002", "1e400"),
    ),
}


def _respelled(sealed: bytes, name: str) -> tuple[bytes, str]:
    """The sealed file with the fallback attempt spelled as ``SPELLINGS[name]``, and the
    canonical text with that record as the streamed reader hashes it."""
    in_file, hashed = SPELLINGS[name]
    data = _replaced(sealed, _FALLBACK.encode(), in_file.encode())
    canonical = _replaced(_canonical(json.loads(sealed)), _FALLBACK_CANONICAL, hashed)
    return data, canonical


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_a_record_spelled_otherwise_with_its_real_checksum_is_read_as_whole(
    sealed: bytes, name: str, tmp_path: Path
) -> None:
    data, _ = _respelled(sealed, name)
    data = _with_checksum(data, _canonical(json.loads(data)))  # over what JSON reads
    lean = _assert_contract(data, tmp_path)
    if name != "infinity":  # the same values: both readers accept the real checksum
        assert lean is not None and not isinstance(_whole(data), str)


# A checksum forged over the text as it stands (escapes, number forms, key order, duplicate
# keys, stray whitespace kept) is refused by both: each reader hashes what JSON reads.
@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_a_record_spelled_otherwise_with_a_forged_checksum_is_refused_by_both(
    sealed: bytes, name: str, tmp_path: Path
) -> None:
    data, canonical = _respelled(sealed, name)
    forged = _with_checksum(data, canonical)
    assert isinstance(_whole(forged), str)  # the whole reader refuses it
    _assert_contract(forged, tmp_path)


# -- nesting: the streamed pieces are parsed one level shallower than the whole -----------------


def _deep_in_attempt(sealed: bytes, depth: int) -> bytes:
    nested = "[" * depth + "]" * depth
    kind = '"kind": "fallback",'
    data = _replaced(sealed, kind.encode(), f'"io": [{{"a": {nested}}}],\n      {kind}'.encode())
    hashed = '"kind":"fallback",'
    canonical = _replaced(
        _canonical(json.loads(sealed)), hashed, f'"io":[{{"a":{nested}}}],{hashed}'
    )
    return _with_checksum(data, canonical)


def _deep_at_top(sealed: bytes, depth: int) -> bytes:
    nested = "[" * depth + "]" * depth
    data = _replaced(
        sealed, b'\n  "unattributed_log": ',
        b'\n  "unattributed_io": [{"a": ' + nested.encode() + b'}],\n  "unattributed_log": ',
    )  # fmt: skip
    canonical = _replaced(
        _canonical(json.loads(sealed)), ',"unattributed_log":',
        f',"unattributed_io":[{{"a":{nested}}}],"unattributed_log":',
    )  # fmt: skip
    return _with_checksum(data, canonical)


def test_a_deep_but_readable_recorded_call_is_read_lean_as_whole(sealed: bytes) -> None:
    # 100 levels: well within what both readers parse; the checksum (made by hand) is true.
    for make in (_deep_in_attempt, _deep_at_top):
        data = make(sealed, 100)
        lean, whole = _lean(data), _whole(data)
        assert lean is not None and not isinstance(whole, str)
        assert_same_views(lean, whole)


def test_nesting_near_the_recursion_limit_is_refused_by_both_or_neither(sealed: bytes) -> None:
    # Deep recorded calls in an attempt, and an unattributed_io at the top level; the
    # checksum is true (made by hand): only the depth differs.
    limit = sys.getrecursionlimit()
    accepted_lean_only = []
    for make in (_deep_in_attempt, _deep_at_top):
        for depth in range(limit - 200, limit + 5):  # the window moves with the stack's depth
            data = make(sealed, depth)
            whole = _whole(data)
            if isinstance(whole, str) and _lean(data) is not None:
                accepted_lean_only.append((make.__name__, depth, whole))
    assert not accepted_lean_only


# -- sound exports: read lean (property 3) and the same (property 1) -----------------------------

HOSTILE = st.sampled_from(
    ['",\n  "', "},\n    {", "\n    },\n    {", '": ', '\\": ', "\\", '"', '\\"', "\\u0041",
     "\u2028", "\u2029", "\x00", "\x7f", "é", "😀", "\r\n", "\n}\n", "\n  ]", "\t"]
) | st.text(max_size=6)  # fmt: skip
FLOAT = st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(
    [0.0, -0.0, 1e16, 1e-7, 5e-324, 1.7976931348623157e308, 100000.0]
)
NUMBER = FLOAT | st.integers() | st.integers(min_value=10**600, max_value=10**900)
SCALAR = HOSTILE | NUMBER | st.booleans() | st.none()
EXCHANGE = st.recursive(
    SCALAR, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(HOSTILE, inner, max_size=3),
    max_leaves=12,
)  # fmt: skip


@FIXTURE
@given(
    extra=st.dictionaries(st.sampled_from(["a", "é", "k\\", 'q"', "zz"]), EXCHANGE, max_size=3),
    io=st.lists(st.dictionaries(HOSTILE, EXCHANGE, max_size=3), max_size=2),
    text=HOSTILE,
    wall=FLOAT,
    run_bytes=st.sampled_from([1, 300, 1 << 18]),  # how much of an array is parsed at once
)  # fmt: skip
def test_a_sound_export_with_hostile_records_is_read_lean_as_whole(
    document: dict[str, Any],
    extra: dict[str, Any],
    io: list[Any],
    text: str,
    wall: float,
    run_bytes: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = _sealed(_hostile(document, extra, io, text, wall))
    monkeypatch.setattr(streamed, "_RUN_BYTES", run_bytes)
    lean, whole = _lean(data), _whole(data)
    assert not isinstance(whole, str), whole
    assert lean is not None, "a sound export in the harness's layout was read whole"
    assert_same_views(lean, whole)


@settings(FIXTURE, max_examples=50)
@given(
    extra=st.dictionaries(st.sampled_from(["note", "é", 'q"']), EXCHANGE, max_size=2),
    io=st.lists(st.dictionaries(HOSTILE, EXCHANGE, max_size=3), max_size=2),
    text=HOSTILE,
    wall=FLOAT,
)
def test_an_export_the_harness_writes_is_read_lean(
    document: dict[str, Any], extra: dict[str, Any], io: list[Any], text: str, wall: float
) -> None:
    # Written as a run is (RunRecord.write: the one-pass writer), not by export_text.
    changed = _hostile(document, extra, io, text, wall)
    del changed["checksum"]
    with tempfile.TemporaryDirectory() as directory:
        path = RunRecord(changed).write(Path(directory) / NAME)
        data = path.read_bytes()
    assert data == _sealed(changed)
    assert _lean(data) is not None


def _hostile(
    document: dict[str, Any], extra: dict[str, Any], io: list[Any], text: str, wall: float
) -> dict[str, Any]:
    """``document`` with hostile text, numbers and nesting in its records and results."""
    changed = copy.deepcopy(document)
    failed = next(event for event in changed["trace"] if event.get("error"))
    for record in (*changed["trace"][:2], *changed["timings"][:2], *changed["attempts"][:2],
                   changed["plan"][0], failed["error"]):  # fmt: skip
        record.update(extra)  # keys the schema ignores
    failed["error"]["message"] = text
    changed["attempts"][0]["io"] = io
    changed["attempts"][1]["log"] = {"text": text, "truncated": True}
    changed["timings"][0]["wall"] = wall
    changed["timings"][1]["traceback"] = text
    changed["unattributed_log"] = {"text": text}
    changed["unattributed_io"] = io
    changed["results"][changed["trace"][-1]["task"]] = {text: [text, wall], "io": io}
    return changed


@pytest.mark.parametrize("empty", ["trace", "timings", "attempts", "plan"])
def test_a_sound_export_with_an_empty_long_array_is_read_lean(
    document: dict[str, Any], empty: str, tmp_path: Path
) -> None:
    changed = {**document, empty: []}
    data = _sealed(changed)
    assert f'"{empty}": []'.encode() in data
    lean = _assert_contract(data, tmp_path, records=False)
    assert lean is not None


def test_the_golden_exports_keep_the_contract(tmp_path: Path) -> None:
    for golden in sorted(GOLDEN.glob("*.json")):
        lean = _assert_contract(golden.read_bytes(), tmp_path)
        assert (lean is None) == ("redacted" in golden.name), golden.name


def _forked_with_overrides(document: dict[str, Any]) -> dict[str, Any]:
    task = document["trace"][-1]["task"]
    overrides = [{"kind": "output", "task": task, "value": {"answer": 42}}]
    forked = {"run_digest": "0" * 64, "task": task, "overrides": overrides}
    return {**document, "format_version": "1.3", "forked_from": forked}


def test_a_fork_without_overrides_is_read_lean(document: dict[str, Any], tmp_path: Path) -> None:
    forked = _forked_with_overrides(document)
    forked["forked_from"] = {**forked["forked_from"], "overrides": []}
    assert _assert_contract(_sealed(forked), tmp_path) is not None


def test_a_fork_with_overrides_is_read_lean(document: dict[str, Any], tmp_path: Path) -> None:
    data = _sealed(_forked_with_overrides(document))
    assert not isinstance(_whole(data), str)  # sound: the whole reader accepts it
    assert _assert_contract(data, tmp_path) is not None


# -- truncation and byte-level damage (properties 2 and 4) -------------------------------------


def test_a_file_truncated_at_any_cut_point_keeps_the_contract(
    sealed: bytes, tmp_path: Path
) -> None:
    cuts = []
    for mark in (b',\n  "', b"\n    },\n    {", b"\n  ]"):
        start = sealed.find(mark)
        while start >= 0:
            cuts.append(start)
            start = sealed.find(mark, start + 1)
    assert len(cuts) > 50
    for cut in cuts:
        for ending in (b"\n}\n", b"\n    }\n  ]\n}\n", b""):
            _assert_contract(sealed[:cut] + ending, tmp_path)


DAMAGE = st.sampled_from(
    [b',\n  "', b"\n    },\n    {", b'": ', b"\\", b'"', b"\\u0041", b" ", b"\n", b"\r", b"[",
     b"]", b"{", b"}", b",", b"1e400", b"-0", b"E5", b'\\"', b"\n      ", b"\n  ]", b"\n}\n",
     b"null", b'"z": 1,\n      ', b"\xe2\x80\xa8", b"\\ud800", b"\\udbff\\udc00", b"\x00",
     b"\xff", b"\xef\xbb\xbf", b'"checksum": "', b'"format": ', b'"trace": [']
)  # fmt: skip


@settings(
    deadline=None, max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    edits=st.lists(
        st.tuples(st.floats(0, 1), st.integers(0, 12), DAMAGE | st.binary(max_size=4)),
        min_size=1, max_size=3,
    )
)  # fmt: skip
def test_damaged_bytes_keep_the_contract(
    sealed: bytes, edits: list[tuple[float, int, bytes]], tmp_path: Path
) -> None:
    data = sealed
    for where, cut, inserted in edits:
        at = int(where * len(data))
        data = data[:at] + inserted + data[at + cut :]
    _assert_contract(data, tmp_path)


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_UNIT = re.compile(r"\\u[0-9a-fA-F]{4}|\\.|[^\\]")  # one character of a JSON string's text


@settings(
    deadline=None, max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(where=st.floats(0, 1), letter_only=st.booleans())
def test_a_character_spelled_as_an_escape_keeps_the_contract(
    sealed: bytes, where: float, letter_only: bool
) -> None:
    # Inside any string of the file, a character written \uXXXX: the same JSON values, so
    # the real checksum holds and the whole reader accepts; the streamed one reads it the
    # same or leaves it to the whole reader.
    text = sealed.decode()
    places = [
        unit.start()
        for string in _STRING.finditer(text)
        for unit in _UNIT.finditer(text, string.start() + 1, string.end() - 1)
        if len(unit.group()) == 1 and (unit.group().isalpha() or not letter_only)
    ]
    at = places[int(where * (len(places) - 1))]
    char = text[at]
    escaped = f"\\u{ord(char):04x}" if char.isascii() else json.dumps(char).strip('"')
    data = (text[:at] + escaped + text[at + 1 :]).encode()
    lean, whole = _lean(data), _whole(data)
    assert not isinstance(whole, str), whole
    if lean is not None:
        assert_same_views(lean, whole)


# -- a pair of exports (a diff) ------------------------------------------------------------------


def _pair_files(document: dict[str, Any]) -> dict[str, bytes]:
    sound = _sealed(document)
    failed = copy.deepcopy(document)
    failed["status"] = "failed"  # contradicts the trace
    edited = copy.deepcopy(document)
    edited["trace"][3]["attempt"] = 2  # the trace digest no longer holds
    return {
        "sound": sound,
        "status": _sealed(failed),
        "trace": _sealed(edited),
        "escaped": _respelled(sound, "escaped_ascii")[0],  # real checksum: read whole
        "truncated": sound[: len(sound) // 2] + b"\n}\n",
        "version": _version_twice(sound),
    }


def test_a_pair_is_refused_as_reading_one_after_the_other(
    document: dict[str, Any], tmp_path: Path
) -> None:
    files = _pair_files(document)
    paths = {}
    for name, data in files.items():
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_bytes(data)
    for first in files:
        for second in files:
            expected = _read(paths[first], lean=False)
            if not isinstance(expected, str):
                expected = _read(paths[second], lean=False)
            try:
                one, other = RunRecord.read_pair(paths[first], paths[second])
            except RecordError as exc:
                assert str(exc) == expected, (first, second)
            else:
                assert not isinstance(expected, str), (first, second, expected)
                assert one.lean and other.lean
                assert one.events == other.events
