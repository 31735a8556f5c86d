"""Built-in tasks, usable as ``run: builtin:NAME`` without writing Python."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import jmespath

__all__ = ["BUILTINS", "builtin_problem"]

Inputs = Mapping[str, Any]


def echo(inputs: Inputs) -> Any:
    """Return the task's ``with:`` parameters."""
    return inputs["params"]


def merge(inputs: Inputs) -> Any:
    """Merge object outputs key by key, later wins: the dependencies in ``depends_on`` order,
    or ``with: {from: [a, b]}`` to name any ancestors, in that order. Skipped ones are left
    out."""
    results = inputs["context"]["results"]
    names = inputs["params"].get("from") or [
        name for name in inputs["task"]["depends_on"] if name in results
    ]
    merged: dict[str, Any] = {}
    for name in names:
        value = results[name]
        if not isinstance(value, dict):
            raise TypeError(f"merge: output of {name!r} is {type(value).__name__}, not an object")
        merged.update(value)
    return merged


def select(inputs: Inputs) -> Any:
    """A JMESPath projection over ``{payload, results}``: ``with: {expr: ...}``."""
    expr = inputs["params"]["expr"]
    scope = {"payload": inputs["payload"], "results": dict(inputs["context"]["results"])}
    return jmespath.search(expr, scope)


def sleep(inputs: Inputs) -> Any:
    """Wait ``with: {seconds: S}`` on the run's clock, then return ``{"slept": S}``."""
    seconds = float(inputs["params"].get("seconds", 0))
    clock = getattr(inputs, "clock", None)
    if clock is None:  # called outside the orchestrator
        import time

        time.sleep(seconds)
    else:  # a stop wakes it, so an abandoned attempt's thread ends promptly
        clock.sleep(seconds, getattr(inputs, "cancelled", None))
    return {"slept": seconds}


def fail(inputs: Inputs) -> Any:
    """Fail the first ``with: {times: N}`` attempts (default: every attempt), then return
    ``with: {value: ...}`` (default ``{"attempts": n}``). For retry demos and tests."""
    params = inputs["params"]
    attempt = inputs["task"]["attempt"]
    times = params.get("times")
    if times is None or attempt <= times:
        raise RuntimeError(params.get("message", f"failing on purpose (attempt {attempt})"))
    return params.get("value", {"attempts": attempt})


BUILTINS: dict[str, Callable[[Inputs], Any]] = {
    "echo": echo,
    "merge": merge,
    "select": select,
    "sleep": sleep,
    "fail": fail,
}


def builtin_problem(name: str, params: Mapping[str, Any]) -> str | None:
    """Check a built-in's static parameters at load time; a message, or None if fine."""
    if name == "select":
        expr = params.get("expr")
        if not isinstance(expr, str):
            return "builtin:select needs 'with: {expr: <JMESPath>}'"
        try:
            jmespath.compile(expr)
        except jmespath.exceptions.JMESPathError as exc:
            return f"invalid JMESPath in with.expr: {jmespath_message(exc)}"
    if name == "sleep" and not isinstance(params.get("seconds", 0), int | float):
        return "builtin:sleep needs 'with: {seconds: <number>}'"
    if name == "fail" and not isinstance(params.get("times", 0), int):
        return "builtin:fail takes 'with: {times: <integer>}'"
    if name == "merge":
        sources = params.get("from")
        if sources is not None and not (
            isinstance(sources, list) and all(isinstance(s, str) for s in sources)
        ):
            return "builtin:merge takes 'with: {from: [task, ...]}'"
    return None


def jmespath_message(exc: Exception) -> str:
    """One line for a JMESPath compile error: what and where."""
    from ..engine.untrusted import shown

    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    # The message quotes the expression's own characters: made visible, never obeyed.
    what = shown(first.split(": ", 1)[-1].rstrip(":")) or "invalid expression"
    position = getattr(exc, "lex_position", None)
    if isinstance(position, int):
        return f"{what} at character {position + 1}"
    return what
