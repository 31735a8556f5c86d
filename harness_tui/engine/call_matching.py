"""Which recorded exchange answers a request, and how a request differs from the nearest one.

A request is matched by its *key*: the method, the URL and the canonical JSON of its body minus
the volatile paths the user named (a request id, a timestamp), plus how many times the same key
came before it within the attempt. Headers never take part: clients add their own (a user agent,
a retry count) and secrets are not stored. See ``docs/recording.md``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = [
    "FieldChange",
    "MatchKey",
    "Mismatch",
    "VolatilePath",
    "body_json",
    "differences",
    "field_changes",
    "match_key",
    "nearest",
    "parse_volatile",
    "redact_url",
]

MatchKey = tuple[str, str, str]
"""``(method, url, canonical body)``."""

VolatilePath = tuple[str | int | None, ...]
"""A JSON path as its steps: a key, an index, or None for ``[*]`` (every item)."""

_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+|\*)\]|\[\"([^\"]*)\"\]")

REPLACEMENT = "<redacted>"


def parse_volatile(path: str) -> VolatilePath:
    """``$.metadata.request_id`` or ``$.messages[*].id`` as steps.

    Raises:
        ValueError: the path is not of that form (one line names it).
    """
    if not path.startswith("$"):
        raise ValueError(f"volatile path {path!r} must start with '$'")
    steps: list[str | int | None] = []
    at = 1
    while at < len(path):
        found = _STEP.match(path, at)
        if found is None:
            raise ValueError(f"volatile path {path!r}: cannot read it from column {at + 1}")
        name, index, quoted = found.groups()
        if name is not None:
            steps.append(name)
        elif quoted is not None:
            steps.append(quoted)
        else:
            steps.append(None if index == "*" else int(index))
        at = found.end()
    if not steps:
        raise ValueError(f"volatile path {path!r} names no field")
    return tuple(steps)


def _drop(value: Any, steps: VolatilePath) -> None:
    if not steps:
        return
    step, rest = steps[0], steps[1:]
    if isinstance(value, dict) and isinstance(step, str) and step in value:
        if rest:
            _drop(value[step], rest)
        else:
            del value[step]
    elif isinstance(value, list):
        if step is None:
            for item in value if rest else ():
                _drop(item, rest)
            if not rest:
                value.clear()
        elif isinstance(step, int) and step < len(value):
            if rest:
                _drop(value[step], rest)
            else:
                value[step] = None


def _redact(value: Any, keys: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {k: REPLACEMENT if k in keys else _redact(v, keys) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact(item, keys) for item in value]
    return value


def redact_url(url: str, keys: frozenset[str]) -> str:
    """``url`` with the values of query parameters named in ``keys`` replaced."""
    if not keys or "?" not in url:
        return url
    parts = urlsplit(url)
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    if not any(name in keys for name, _ in pairs):
        return url
    query = urlencode([(n, REPLACEMENT if n in keys else v) for n, v in pairs], safe="<>")
    return urlunsplit(parts._replace(query=query))


def body_json(body: bytes | None) -> tuple[bool, Any]:
    """``(True, value)`` when the body is a JSON document, else ``(False, None)``."""
    if not body:
        return False, None
    head = body.lstrip()[:1]
    if head not in (b"{", b"["):
        return False, None
    try:
        return True, json.loads(body)
    except (ValueError, RecursionError):
        return False, None


def match_key(
    method: str,
    url: str,
    body: bytes | None,
    volatile: Sequence[VolatilePath] = (),
    redact: frozenset[str] = frozenset(),
) -> MatchKey:
    """The key a request is matched by (redacted with ``redact`` first, as a redacted
    recording was)."""
    url = redact_url(url, redact)
    is_json, value = body_json(body)
    if is_json:
        if redact:
            value = _redact(value, redact)
        for steps in volatile:
            _drop(value, steps)
        text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    elif body:
        text = body.decode("utf-8", "backslashreplace")
    else:
        text = ""
    return (method.upper(), url, text)


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One field in which a request differs from a recorded one.

    Attributes:
        path: ``method``, ``url``, ``body``, or a JSON path into the body
            (``$.messages[0].content``).
        kind: ``changed``, ``added`` (only in the request) or ``removed`` (only recorded).
        recorded: the recorded value (None when added).
        sent: the request's value (None when removed).
    """

    path: str
    kind: str
    recorded: Any = None
    sent: Any = None

    def line(self) -> str:
        """The change in a few words: ``$.messages[0].content changed``."""
        if self.path == "method":
            return f"method {self.recorded} -> {self.sent}"
        return f"{self.path} {self.kind}"


def _json_changes(old: Any, new: Any, path: str, out: list[FieldChange], limit: int) -> None:
    if len(out) >= limit:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(old.keys() | new.keys()):
            step = (
                f"{path}.{key}"
                if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key)
                else (f"{path}[{json.dumps(key)}]")
            )
            if key not in new:
                out.append(FieldChange(step, "removed", recorded=old[key]))
            elif key not in old:
                out.append(FieldChange(step, "added", sent=new[key]))
            else:
                _json_changes(old[key], new[key], step, out, limit)
        return
    if isinstance(old, list) and isinstance(new, list):
        for index in range(max(len(old), len(new))):
            step = f"{path}[{index}]"
            if index >= len(new):
                out.append(FieldChange(step, "removed", recorded=old[index]))
            elif index >= len(old):
                out.append(FieldChange(step, "added", sent=new[index]))
            else:
                _json_changes(old[index], new[index], step, out, limit)
        return
    if old != new or type(old) is not type(new):
        out.append(FieldChange(path, "changed", old, new))


def field_changes(recorded: MatchKey, request: MatchKey, limit: int = 50) -> list[FieldChange]:
    """How ``request`` differs from ``recorded``, field by field, with both values: the
    method, the URL, and each JSON path of the body that changed (the whole body when either
    is not JSON); at most ``limit`` changes."""
    out: list[FieldChange] = []
    if recorded[0] != request[0]:
        out.append(FieldChange("method", "changed", recorded[0], request[0]))
    if recorded[1] != request[1]:
        out.append(FieldChange("url", "changed", recorded[1], request[1]))
    if recorded[2] != request[2]:
        old_json, old = body_json(recorded[2].encode("utf-8"))
        new_json, new = body_json(request[2].encode("utf-8"))
        if old_json and new_json:
            _json_changes(old, new, "$", out, limit)
        else:
            out.append(FieldChange("body", "changed", recorded[2], request[2]))
    return out[:limit]


def differences(recorded: MatchKey, request: MatchKey, limit: int = 3) -> list[str]:
    """How ``request`` differs from ``recorded``, field by field: ``method changed``,
    ``url changed``, ``$.messages[2].content changed`` (at most ``limit`` items)."""
    return [change.line() for change in field_changes(recorded, request, limit)]


@dataclass(frozen=True, slots=True)
class Mismatch:
    """An offline request the recording could not answer, beside the recorded request nearest
    to it (None when the attempt has no recorded request at all).

    Attributes:
        request: the request's matching key ``(method, url, canonical body)``.
        nearest: the nearest recorded request's key.
    """

    request: MatchKey
    nearest: MatchKey | None

    def changes(self) -> list[FieldChange]:
        """Field by field, how the request differs from the nearest recorded one."""
        return [] if self.nearest is None else field_changes(self.nearest, self.request)

    def to_json(self) -> dict[str, Any]:
        return {"request": list(self.request), "nearest": self.nearest and list(self.nearest)}

    @classmethod
    def from_json(cls, data: Any) -> Mismatch | None:
        """Read back :meth:`to_json` (None when it is not of that shape)."""

        def key(value: Any) -> MatchKey | None:
            if not isinstance(value, list) or len(value) != 3:
                return None
            method, url, body = value
            ok = isinstance(method, str) and isinstance(url, str) and isinstance(body, str)
            return (method, url, body) if ok else None

        if not isinstance(data, dict) or (request := key(data.get("request"))) is None:
            return None
        return cls(request, key(data.get("nearest")))


def nearest(recorded: Iterable[MatchKey], request: MatchKey) -> MatchKey | None:
    """The recorded key closest to ``request``: same method and URL first, then the fewest
    differing fields; the first recorded wins a tie."""
    best: MatchKey | None = None
    best_score: tuple[int, int] | None = None
    for key in recorded:
        score = (
            (key[0] != request[0]) + (key[1] != request[1]),
            len(differences(key, request, limit=50)),
        )
        if best_score is None or score < best_score:
            best, best_score = key, score
    return best
