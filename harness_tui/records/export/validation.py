"""Checking an export against its schema (:mod:`.model`) without a model of the whole run in
memory: the long arrays (plan, trace, timings, attempts) are checked a run of members at a
time, the rest of the document at once. A document that fails is checked again whole, so
that the error reported is exactly the one the whole schema gives first."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, TypeAdapter

from .model import Attempt, Event, PlanRow, RunExport, Timing

__all__ = ["validate_export"]

_ARRAYS: dict[str, type[BaseModel]] = {
    "plan": PlanRow,
    "trace": Event,
    "timings": Timing,
    "attempts": Attempt,
}
_RUN = 2048
"""Members of a long array checked in one call."""


def validate_export(document: Mapping[str, Any]) -> None:
    """Check ``document`` against :class:`~.model.RunExport`.

    Raises:
        pydantic.ValidationError: the whole schema's own error.
    """
    arrays = {k: v for k, v in document.items() if k in _ARRAYS and type(v) is list}
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


@functools.cache
def _adapter(field: str) -> TypeAdapter[list[Any]]:
    return TypeAdapter(list[_ARRAYS[field]])  # type: ignore[valid-type]
