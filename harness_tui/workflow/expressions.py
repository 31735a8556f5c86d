"""``condition(text)``: a workflow file's ``when:`` for a graph built in Python."""

from __future__ import annotations

import jmespath

from ..engine.errors import HarnessError
from .builtins import jmespath_message
from .loader import Condition

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
        return Condition(source, jmespath.compile(source))
    except jmespath.exceptions.JMESPathError as exc:
        raise ConditionError(f"invalid JMESPath in 'when': {jmespath_message(exc)}") from None
