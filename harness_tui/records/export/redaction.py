"""Redaction that holds: the values of chosen keys taken out of every part of an export.

A redacted export is for sharing in a bug report. Each value found under a redacted key (in
the payload, the workflow's default payload and every task's ``with:``, the Python spec, the
results) becomes the literal ``<redacted>``: no digest of the value is written, so a short
id cannot be recovered by hashing guesses. Every one of those values is then searched for
everywhere else in the export and replaced there too: in every free text (the embedded
workflow source and path, error messages, tracebacks, logs, strings inside the payload and
results, the environment) and as a number anywhere in the payload and results. So a task
that printed a customer id, returned its API key under another name or failed with its
password in the message does not leak it, wherever the value was given.

The export keeps the run's original digests (so that a run with the real payload can be
compared with it); the checks of the reader that would need the redacted content are skipped
and listed in ``redaction.unchecked``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from typing import Any

import yaml

from ...engine.canonical import check_json

__all__ = ["MIN_SCRUBBED", "REPLACEMENT", "UNCHECKED", "redact_document", "redact_value"]

REPLACEMENT = "<redacted>"

MIN_SCRUBBED = 3
"""Shorter values are replaced where their key is, but not searched for in free text: a
two-character value would match inside unrelated words and numbers."""

UNCHECKED = (
    "workflow-digest",
    "plan-from-payload",
    "payload-digest",
    "trace-digest",
    "output-digests",
    "results-digest",
)
"""The reader checks a redacted export skips: each needs the redacted content."""


def redact_value(value: Any, keys: frozenset[str]) -> Any:
    """``value`` with whatever sits under one of ``keys`` (at any depth) replaced."""
    if isinstance(value, dict):
        return {k: (REPLACEMENT if k in keys else redact_value(v, keys)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_value(item, keys) for item in value]
    return value


def _leaves(value: Any) -> Iterable[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    elif isinstance(value, str):
        yield value
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield json.dumps(value)


def _secrets(value: Any, keys: frozenset[str], found: set[str]) -> None:
    """Collect the texts of every leaf under one of ``keys`` in ``value``."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k in keys:
                found.update(_leaves(v))
            else:
                _secrets(v, keys, found)
    elif isinstance(value, list):
        for item in value:
            _secrets(item, keys, found)


class _Scrubber:
    """Replaces the texts of redacted values, longest first, in free text."""

    def __init__(self, secrets: set[str]) -> None:
        self.secrets = sorted(
            (s for s in secrets if len(s) >= MIN_SCRUBBED and s != REPLACEMENT),
            key=lambda s: (-len(s), s),
        )
        self.numbers = frozenset(self.secrets)  # a number's secret is its JSON text

    def text(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, REPLACEMENT)
        return text

    def value(self, value: Any) -> Any:
        """Data (payload, results): every string scrubbed, a number equal to a secret
        replaced whole."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        number = isinstance(value, int | float) and not isinstance(value, bool)
        return REPLACEMENT if number and json.dumps(value) in self.numbers else value

    def texts(self, value: Any) -> Any:
        """Fields beside the data (timings, the environment): their strings scrubbed, their
        numbers (sequence numbers, times) kept."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.texts(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.texts(v) for v in value]
        return value


def _yaml_spans(source: str, keys: frozenset[str]) -> list[tuple[int, int]]:
    """The character spans of the scalar values under ``keys`` in a YAML (or JSON) source."""
    try:
        root = yaml.compose(source, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return []
    spans: list[tuple[int, int]] = []
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.value in keys:
                    if isinstance(value, yaml.ScalarNode) and value.style not in ("|", ">"):
                        spans.append((value.start_mark.index, value.end_mark.index))
                    continue  # a collection's leaves are scrubbed as text
                stack.append(value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return sorted(spans, reverse=True)


def _redact_source(source: str, keys: frozenset[str], scrub: _Scrubber) -> str:
    for start, end in _yaml_spans(source, keys):
        source = source[:start] + json.dumps(REPLACEMENT) + source[end:]
    return scrub.text(source)


def redact_document(
    document: dict[str, Any], keys: frozenset[str], sources: Iterable[Any]
) -> dict[str, Any]:
    """A copy of an unredacted export ``document`` with ``keys`` redacted everywhere.

    Args:
        sources: the values the workflow gives its run besides the document's payload: its
            default payload and each task's ``with:`` (the values under ``keys`` in them are
            secrets too).

    The caller checks that the embedded workflow is still valid (a redacted value may also
    be written where the workflow needs it, such as a timeout).
    """
    found: set[str] = set()
    for part in (document["payload"], document["results"], document.get("spec"), *sources):
        _secrets(part, keys, found)
    scrub = _Scrubber(found)
    out = copy.deepcopy(document)
    out["payload"] = scrub.value(redact_value(out["payload"], keys))
    out["results"] = scrub.value(redact_value(out["results"], keys))
    workflow = out["workflow"]
    if out.get("spec") is not None:
        out["spec"] = scrub.value(redact_value(out["spec"], keys))
        workflow["source"] = check_json(out["spec"])
    else:
        workflow["source"] = _redact_source(workflow["source"], keys, scrub)
    workflow["name"], workflow["path"] = scrub.text(workflow["name"]), scrub.text(workflow["path"])
    for event in out["trace"]:
        if "error" in event:
            event["error"] = scrub.texts(event["error"])
    if "timings" in out:
        out["timings"] = scrub.texts(out["timings"])
    for attempt in out.get("attempts") or []:
        if attempt.get("log") is not None:
            attempt["log"]["text"] = scrub.text(attempt["log"]["text"])
    if out.get("unattributed_log") is not None:
        out["unattributed_log"]["text"] = scrub.text(out["unattributed_log"]["text"])
    if "environment" in out:
        out["environment"] = scrub.texts(out["environment"])
    out["redacted"] = sorted(keys)
    out["redaction"] = {
        "keys": sorted(keys),
        "replacement": REPLACEMENT,
        "places": ["payload", "workflow", "results", "errors", "tracebacks", "logs"],
        "unchecked": list(UNCHECKED),
    }
    return out
