"""The plain schema check of exports: it passes only what the pydantic schema accepts, passes
sound exports (so reading one needs no pydantic), and leaves the wording of errors to the
schema."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from harness_tui.records.export.model import RunExport
from harness_tui.records.export.validation import MEMBER_TESTS, first_error, plainly_valid

DATA = Path(__file__).resolve().parent / "data"
EXPORTS = sorted(DATA.glob("*.json")) + sorted((DATA / "golden").glob("*.json"))
ODD = [None, True, 0, -1, 2, 1.5, "", "running", "x", [], [1], {}, {"a": 1}]


def _places(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key and index in ``value`` (the first two members of each list)."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield (*path, key)
            yield from _places(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value[:2]):
            yield (*path, index)
            yield from _places(child, (*path, index))


def _set(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    changed = copy.deepcopy(document)
    here = changed
    for part in path[:-1]:
        here = here[part]
    if value is _DROP:
        del here[path[-1]]
    else:
        here[path[-1]] = value
    return changed


_DROP = object()


def _schema_accepts(document: Any) -> bool:
    try:
        RunExport.model_validate(document)
    except ValidationError:
        return False
    return True


@pytest.mark.parametrize("path", EXPORTS, ids=lambda p: p.name)
def test_sound_exports_pass_plainly(path: Path) -> None:
    document = json.loads(path.read_text())
    assert plainly_valid(document)
    assert first_error(document) is None


@pytest.mark.parametrize("path", EXPORTS, ids=lambda p: p.name)
def test_the_plain_check_passes_nothing_the_schema_refuses(path: Path) -> None:
    document = json.loads(path.read_text())
    passed = refused = 0
    for place in _places(document):
        for value in [*ODD, _DROP]:
            changed = _set(document, place, value)
            if plainly_valid(changed):
                passed += 1
                assert _schema_accepts(changed), (place, value)
            else:
                refused += 1
                error = first_error(changed)
                assert (error is None) == _schema_accepts(changed), (place, value)
    assert passed and refused


def test_reading_a_sound_export_imports_no_pydantic(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from harness_tui.records.export import RunRecord\n"
        f"RunRecord.read({str(EXPORTS[-1])!r})\n"
        "print('pydantic' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr


_MEMBERS = {
    key: [member for path in EXPORTS for member in json.loads(path.read_text()).get(key) or []]
    for key in MEMBER_TESTS
}


def _changed_members(key: str) -> Iterator[list[Any]]:
    """Columns of members of ``key`` with one field of one of them changed to each odd value
    (or dropped), and with a member that is no record."""
    sound = _MEMBERS[key][:3]
    for index, member in enumerate(sound):
        for field in sorted(member):
            for value in [*ODD, _DROP]:
                changed = copy.deepcopy(sound)
                if value is _DROP:
                    del changed[index][field]
                else:
                    changed[index][field] = value
                yield changed
    for odd in ODD:
        yield [*sound, odd]


@pytest.mark.parametrize("key", sorted(MEMBER_TESTS))
def test_a_column_at_once_answers_as_member_by_member(key: str) -> None:
    test = MEMBER_TESTS[key]
    answers = [test.all(members) == all(map(test, members)) for members in _changed_members(key)]
    assert answers and all(answers)
    assert test.all(_MEMBERS[key]) and test.all([])
