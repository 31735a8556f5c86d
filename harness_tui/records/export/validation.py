"""Checking an export against its schema (:mod:`.model`).

A plain check in Python first: it accepts only what the schema accepts (exact JSON types, the
statuses, the bounds), so a document it passes is valid, and reading a sound export neither
imports pydantic nor builds a model of the run (at 100,000 tasks, seconds). A document it does
not plainly pass is judged by the schema, so that the error reported is exactly the one the
whole schema gives first. The schema checks the long arrays (plan, trace, timings, attempts) a
run of members at a time; a document that fails is checked again whole, for its first error.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from math import isfinite
from typing import TYPE_CHECKING, Any

from ...engine.events import RunStatus, Status
from .fast import all_finite

if TYPE_CHECKING:
    from pydantic import BaseModel, TypeAdapter

__all__ = ["MEMBER_TESTS", "SCALAR_FIELDS", "first_error", "plainly_valid"]

_RUN = 2048
"""Members of a long array checked in one call."""


def first_error(document: Mapping[str, Any]) -> tuple[str, str] | None:
    """The schema's first error in ``document`` as ``(where, message)``, or None when it is a
    valid export."""
    if plainly_valid(document):
        return None
    from pydantic import ValidationError

    try:
        _validate(document)
    except ValidationError as exc:
        first = exc.errors()[0]
        return ".".join(str(p) for p in first["loc"]), first["msg"]
    return None


def _validate(document: Mapping[str, Any]) -> None:
    """Check ``document`` against :class:`~.model.RunExport`, the long arrays in slices.

    Raises:
        pydantic.ValidationError: the whole schema's own error.
    """
    from .model import RunExport

    arrays = {k: v for k, v in document.items() if k in _ARRAY_FIELDS and type(v) is list}
    if sum(map(len, arrays.values())) <= _RUN:  # small: at once (no adapters to build)
        RunExport.model_validate(document)
        return
    try:
        RunExport.model_validate({**document, **{key: [] for key in arrays}})
        for field, members in arrays.items():
            adapter = _adapter(field)
            for start in range(0, len(members), _RUN):
                adapter.validate_python(members[start : start + _RUN])
    except ValueError:  # ValidationError: found again on the whole, to report it as it does
        RunExport.model_validate(document)
        raise  # pragma: no cover - the parts and the whole disagree


_ARRAY_FIELDS = ("plan", "trace", "timings", "attempts")


@functools.cache
def _adapter(field: str) -> TypeAdapter[list[Any]]:
    from pydantic import TypeAdapter

    from .model import Attempt, Event, PlanRow, Timing

    models: dict[str, type[BaseModel]] = {
        "plan": PlanRow, "trace": Event, "timings": Timing, "attempts": Attempt,
    }  # fmt: skip
    return TypeAdapter(list[models[field]])  # type: ignore[valid-type]


# -- the plain check -----------------------------------------------------------------------------
# Each field: (name, test of a present value, required). A test answers True only for a value
# the schema's strict model accepts; anything else (an int where a float is, a bool where an
# int is, an unknown shape) is left to the schema, which words the error.

_VERSION = re.compile(r"1\.[0-9]+")


class Test:
    """A test of one value (``test(value)``) that also tests many at once (``test.all``,
    which answers as ``all(map(test, values))``): a long array's members are tested field by
    field, a column of 100,000 values in a few calls in C."""

    def __init__(self, one: Callable[[Any], bool]) -> None:
        self._one = one

    def __call__(self, value: Any) -> bool:
        return self._one(value)

    def all(self, values: list[Any]) -> bool:
        return all(map(self._one, values))


class _Exact(Test):
    """A value of one of ``types`` exactly (a bool is no int)."""

    def __init__(self, *types: type) -> None:
        self.types = frozenset(types)
        super().__init__(lambda value: type(value) in self.types)

    def all(self, values: list[Any]) -> bool:
        return self.types.issuperset(map(type, values))


class _Finite(Test):
    """A finite float, or None: the schema takes the infinities JSON text can spell
    (``1e400``), which canonical JSON refuses; they are left to it, and to the checksum."""

    def __init__(self) -> None:
        super().__init__(lambda value: value is None or (type(value) is float and isfinite(value)))

    def all(self, values: list[Any]) -> bool:
        return _FLOAT_TYPES.issuperset(map(type, values)) and all_finite(values)


class _AtLeast(Test):
    def __init__(self, low: int) -> None:
        self.low = low
        super().__init__(lambda value: type(value) is int and value >= low)

    def all(self, values: list[Any]) -> bool:
        return _INT_TYPE.issuperset(map(type, values)) and (not values or min(values) >= self.low)


class _OneOf(Test):
    def __init__(self, *allowed: str) -> None:
        self.allowed = frozenset(allowed)
        super().__init__(lambda value: type(value) is str and value in self.allowed)

    def all(self, values: list[Any]) -> bool:
        return _STR_TYPE.issuperset(map(type, values)) and self.allowed.issuperset(values)


class _Optional(Test):
    def __init__(self, test: Test) -> None:
        self.test = test
        super().__init__(lambda value: value is None or test(value))

    def all(self, values: list[Any]) -> bool:
        return self.test.all([value for value in values if value is not None])


class _Model(Test):
    """An object with these fields: (name, test of a present value, required); other keys
    are the schema's to judge (it ignores them)."""

    def __init__(self, fields: tuple[tuple[str, Test, bool], ...]) -> None:
        self.fields = fields
        super().__init__(self._test)

    def _test(self, value: Any) -> bool:
        if type(value) is not dict:
            return False
        for name, check, required in self.fields:
            if name in value:
                if not check(value[name]):
                    return False
            elif required:
                return False
        return True

    def all(self, values: list[Any]) -> bool:
        if not _DICT_TYPE.issuperset(map(type, values)):
            return False
        for name, check, required in self.fields:
            if required:
                try:
                    column = [value[name] for value in values]
                except KeyError:
                    return False
            else:
                column = [value[name] for value in values if name in value]
            if not check.all(column):
                return False
        return True


_INT_TYPE, _STR_TYPE, _DICT_TYPE = frozenset((int,)), frozenset((str,)), frozenset((dict,))
_FLOAT_TYPES = frozenset((float, type(None)))
_is_str, _is_int, _is_dict = _Exact(str), _Exact(int), _Exact(dict)
_is_empty = Test(lambda value: type(value) is list and not value)
_is_version = Test(lambda value: type(value) is str and _VERSION.fullmatch(value) is not None)
_is_any = Test(lambda value: True)
_at_least, _one_of, _model = _AtLeast, _OneOf, _Model


def _optional(test: Test) -> Test:
    if isinstance(test, _Exact):
        return _Exact(*test.types, type(None))
    return _Optional(test)


def _list_of(test: Test) -> Test:
    return Test(lambda value: type(value) is list and test.all(value))


_FLOAT = _Finite()
_STR = _optional(_is_str)
_LOG = _model((("text", _is_str, True), ("truncated", _Exact(bool), False)))
_PLAN_ROW = _model((
    ("index", _is_int, True), ("task", _is_str, True), ("task_id", _is_str, True),
    ("level", _is_int, True),
))  # fmt: skip
_EVENT = _model((
    ("seq", _is_int, True), ("task", _is_str, True), ("task_id", _is_str, True),
    ("status", _one_of(*Status), True), ("attempt", _at_least(0), True),
    ("error", _optional(_model((("type", _is_str, True), ("message", _is_str, True)))), False),
    ("input_digest", _STR, False), ("output_digest", _STR, False),
))  # fmt: skip
_TIMING = _model((
    ("seq", _is_int, True), ("started_at", _FLOAT, False), ("ended_at", _FLOAT, False),
    ("traceback", _STR, False), ("wall", _FLOAT, False), ("worker", _at_least(0), False),
))  # fmt: skip
_ATTEMPT = _model((
    ("task", _is_str, True), ("attempt", _at_least(1), True),
    ("kind", _one_of("task", "fallback"), True), ("started_at", _FLOAT, False),
    ("ended_at", _FLOAT, False), ("wall_started", _FLOAT, False), ("wall_ended", _FLOAT, False),
    ("worker", _optional(_is_int), False), ("log", _optional(_LOG), False),
    ("io", _optional(_list_of(_is_dict)), False),
))  # fmt: skip
_STRS = _list_of(_is_str)
_TOOL = _model((("name", _is_str, True), ("version", _is_str, True)))
_WORKFLOW = _model(tuple((name, _is_str, True) for name in ("name", "path", "source", "digest")))
_DIGESTS = _model(
    tuple((name, _is_str, True) for name in ("payload", "plan", "trace", "results", "run"))
)
# Overrides have rules across fields (answer, with): the schema judges any.
_FORKED_FROM = _model(
    (("run_digest", _is_str, True), ("task", _is_str, True), ("overrides", _is_empty, False))
)
_REDACTION = _model((
    ("keys", _STRS, True), ("replacement", _is_str, True), ("places", _STRS, False),
    ("unchecked", _STRS, False),
))  # fmt: skip
_EXPORT = _model((
    ("format", _one_of("harness-run"), True), ("format_version", _is_version, True),
    ("tool", _TOOL, True), ("run_id", _STR, False), ("workflow", _WORKFLOW, True),
    ("payload", _is_any, True), ("plan", _list_of(_PLAN_ROW), True),
    ("trace", _list_of(_EVENT), True), ("results", _is_dict, True),
    ("status", _one_of(*RunStatus), True), ("digests", _DIGESTS, True),
    ("redacted", _STRS, False), ("timings", _list_of(_TIMING), False),
    ("environment", _is_dict, False), ("attempts", _list_of(_ATTEMPT), False),
    ("forked_from", _optional(_FORKED_FROM), False), ("redaction", _optional(_REDACTION), False),
    ("spec", _optional(_is_dict), False), ("logs_omitted", _STR, False),
    ("scheduler", _STR, False), ("unattributed_log", _optional(_LOG), False),
    ("checksum", _is_str, True),
))  # fmt: skip


MEMBER_TESTS: dict[str, Test] = {
    "plan": _PLAN_ROW, "trace": _EVENT, "timings": _TIMING, "attempts": _ATTEMPT,
}  # fmt: skip
"""The plain check of one member of each long array: a document whose arrays are empty
plainly passes, and whose members each pass, passes whole (:func:`plainly_valid`)."""


_SCALARS = frozenset((str, int, float, bool, type(None)))


def _scalar(check: Test) -> bool:
    """Whether ``check`` passes only a scalar."""
    if isinstance(check, _Exact):
        return check.types <= _SCALARS
    return isinstance(check, _AtLeast | _OneOf | _Finite)


SCALAR_FIELDS = {
    key: frozenset(name for name, check, _ in test.fields if _scalar(check))
    for key, test in MEMBER_TESTS.items()
    if isinstance(test, _Model)
}
"""The fields of each long array's members that hold one scalar: any other (an error, a log,
recorded calls, a field the schema does not know and ignores) may nest."""


def plainly_valid(document: Mapping[str, Any]) -> bool:
    """Whether ``document`` is plainly a valid export: True only if the schema accepts it
    (False may still be valid: the schema then decides)."""
    return _EXPORT(document)
