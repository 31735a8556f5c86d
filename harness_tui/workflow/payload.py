"""Payloads as people type them: JSON text or ``@file.json``, parsed once where they enter
(the command line, the workbench, the payload editor) and passed inward as a value."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NamedTuple

from ..engine.canonical import CanonicalError, check_json
from ..engine.errors import HarnessError
from ..engine.untrusted import quoted, shown
from ..files import read_capped
from .limits import current

__all__ = [
    "MAX_PAYLOAD_FILE_BYTES",
    "Payload",
    "PayloadError",
    "editable_text",
    "parse_payload",
    "too_many_digits",
]

MAX_PAYLOAD_FILE_BYTES = 64 * 1024 * 1024


class PayloadError(HarnessError, ValueError):
    """A payload given by a person is unusable; the message says why, in one line."""


class Payload(NamedTuple):
    """A parsed payload (any JSON value, ``null`` included; absent means the workflow's own)."""

    value: Any


def parse_payload(text: str, what: str = "payload", path: str = "payload") -> Payload:
    """Parse ``text``: JSON, or ``@path`` for a JSON file.

    Args:
        text: what the person typed.
        what: how to name the input in errors (``--payload``).
        path: how to name the value itself where a part of it is not JSON (``payload.a[0]``).

    Raises:
        PayloadError: unreadable file, not JSON, or not a JSON value (one line each).
    """
    source = text
    if text.startswith("@"):
        path = Path(text[1:])
        try:
            data = read_capped(path, MAX_PAYLOAD_FILE_BYTES)
            if data is None:
                raise PayloadError(
                    f"{what}: {shown(str(path))} is over the {MAX_PAYLOAD_FILE_BYTES:,}-byte limit"
                )
            source = data.decode("utf-8-sig")  # a BOM from a Windows editor is not JSON
        except OSError as exc:
            raise PayloadError(f"{what}: cannot read {shown(str(path))}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise PayloadError(f"{what}: {shown(str(path))} is not UTF-8 text") from None
        except ValueError:  # os.open refuses a NUL in a path
            raise PayloadError(
                f"{what}: cannot read {quoted(text[1:])}: a NUL in the name"
            ) from None
    try:
        value = json.loads(source)
    except json.JSONDecodeError as exc:
        raise PayloadError(
            f"{what}: not JSON: {exc.msg}, line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise PayloadError(f"{what}: nested too deeply") from None
    except ValueError:  # an integer past the interpreter's digit limit (CVE-2020-10735)
        raise PayloadError(f"{what}: {too_many_digits()}") from None
    try:
        text = check_json(value, path)
    except CanonicalError as exc:
        raise PayloadError(f"{what}: {exc}") from None
    check_payload_size(text, what)
    return Payload(value)


def check_payload_size(text: str, what: str) -> None:
    """Refuse a payload whose canonical JSON ``text`` is over the ``payload_bytes`` cap.

    Raises:
        PayloadError: one line, ``what`` first.
    """
    limit = current().payload_bytes
    if len(text) > limit // 4 and len(text.encode("utf-8")) > limit:
        raise PayloadError(
            f"{what}: {len(text.encode('utf-8')):,} bytes as JSON; the limit is {limit:,} "
            f"(raise it with HARNESS_TUI_LIMITS=payload_bytes=N)"
        )


def too_many_digits() -> str:
    """Why ``json.loads`` refused text that is otherwise JSON: the one ``ValueError`` it
    raises besides a decode error is an integer longer than Python converts."""
    return f"a number has more than {sys.get_int_max_str_digits():,} digits"


def editable_text(value: Any) -> str:
    """A payload as a person edits it: indented, keys sorted, non-ASCII kept."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)
