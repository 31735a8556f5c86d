"""Payloads as people type them: JSON text or ``@file.json``, parsed once where they enter
(the command line, the workbench, the payload editor) and passed inward as a value."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from ..engine.canonical import CanonicalError, check_json
from ..engine.errors import HarnessError

__all__ = ["MAX_PAYLOAD_FILE_BYTES", "Payload", "PayloadError", "editable_text", "parse_payload"]

MAX_PAYLOAD_FILE_BYTES = 64 * 1024 * 1024


class PayloadError(HarnessError, ValueError):
    """A payload given by a person is unusable; the message says why, in one line."""


class Payload(NamedTuple):
    """A parsed payload (any JSON value, ``null`` included; absent means the workflow's own)."""

    value: Any


def parse_payload(text: str, what: str = "payload") -> Payload:
    """Parse ``text``: JSON, or ``@path`` for a JSON file.

    Args:
        text: what the person typed.
        what: how to name the input in errors (``--payload``).

    Raises:
        PayloadError: unreadable file, not JSON, or not a JSON value (one line each).
    """
    source = text
    if text.startswith("@"):
        path = Path(text[1:])
        try:
            if path.stat().st_size > MAX_PAYLOAD_FILE_BYTES:
                raise PayloadError(
                    f"{what}: {path} is over the {MAX_PAYLOAD_FILE_BYTES:,}-byte limit"
                )
            source = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise PayloadError(f"{what}: cannot read {path}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise PayloadError(f"{what}: {path} is not UTF-8 text") from None
    try:
        value = json.loads(source)
    except json.JSONDecodeError as exc:
        raise PayloadError(
            f"{what}: not JSON: {exc.msg}, line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise PayloadError(f"{what}: nested too deeply") from None
    try:
        check_json(value, "payload")
    except CanonicalError as exc:
        raise PayloadError(f"{what}: {exc}") from None
    return Payload(value)


def editable_text(value: Any) -> str:
    """A payload as a person edits it: indented, keys sorted, non-ASCII kept."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)
