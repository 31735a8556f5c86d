"""``condition(text)``: a workflow file's ``when:`` for a graph built in Python."""

from __future__ import annotations

from ..engine.errors import HarnessError
from .loader import Condition, compile_when

__all__ = ["ConditionError", "condition"]


class ConditionError(HarnessError, ValueError):
    """The text is not a JMESPath expression."""


def condition(source: str) -> Condition:
    """A ``when`` predicate written as JMESPath over ``{payload, results}``, as in a workflow
    file: it decides the same, and specs, diffs and golden files show the same text.

    Example:
        ``harness.register("check", check, when=condition("payload.user_id != 'anonymous'"))``

    Raises:
        ConditionError: ``source`` is not valid JMESPath.
    """
    try:
        return Condition(source, compile_when(source))
    except ValueError as exc:
        raise ConditionError(str(exc)) from None
