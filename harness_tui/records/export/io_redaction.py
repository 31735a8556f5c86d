"""Redaction of recorded calls (export 1.2 ``attempts[].io``, ``unattributed_io``).

The values under a redacted key are replaced in every JSON body of a request or an answer
(a whole JSON document, or each ``data:`` line of a server-sent event stream; a gzip answer is
decoded first and then stored decoded, without its ``content-encoding``), in the query strings
of URLs, and in recorded call arguments and values. Every value so found, and every value the
payload and results hold under those keys, is then scrubbed from all the recorded text (URLs,
headers, bodies, errors). Secret headers were never stored (see docs/recording.md).
"""

from __future__ import annotations

import contextlib
import gzip
import json
import zlib
from collections.abc import Iterable
from typing import Any

from ...engine.call_matching import redact_url
from ...engine.recorded_calls import Exchange
from .redaction import MIN_SCRUBBED, REPLACEMENT, redact_value

__all__ = ["redact_recordings"]


def _found(value: Any, keys: frozenset[str], into: set[str]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if key in keys:
                _leaves(item, into)
            else:
                _found(item, keys, into)
    elif isinstance(value, list):
        for item in value:
            _found(item, keys, into)


def _leaves(value: Any, into: set[str]) -> None:
    if isinstance(value, dict | list):
        for item in value.values() if isinstance(value, dict) else value:
            _leaves(item, into)
    elif value is not None and not isinstance(value, bool):
        text = value if isinstance(value, str) else json.dumps(value)
        if len(text) >= MIN_SCRUBBED:
            into.add(text)


def _json_text(text: str, keys: frozenset[str], secrets: set[str]) -> str | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict | list):
        return None
    _found(value, keys, secrets)
    return json.dumps(redact_value(value, keys), ensure_ascii=False)


def _body_text(text: str, keys: frozenset[str], secrets: set[str]) -> str:
    whole = _json_text(text, keys, secrets)
    if whole is not None:
        return whole
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if line.startswith("data:"):
            redacted = _json_text(line[5:].strip(), keys, secrets)
            if redacted is not None:
                lines[index] = "data: " + redacted
    return "\n".join(lines)


def _decoded(body: bytes, encoding: str) -> bytes | None:
    try:
        if encoding == "gzip":
            return gzip.decompress(body)
        if encoding == "deflate":
            return zlib.decompress(body)
    except (OSError, zlib.error, EOFError):
        return None
    return body if not encoding or encoding == "identity" else None


def _exchange(exchange: Exchange, keys: frozenset[str], secrets: set[str]) -> Exchange:
    request_body = exchange.request_body
    if request_body:
        with contextlib.suppress(UnicodeDecodeError):
            request_body = _body_text(request_body.decode("utf-8"), keys, secrets).encode()
    headers = exchange.response_headers
    chunks = exchange.chunks
    value = exchange.value
    if exchange.kind == "call":
        _found(value, keys, secrets)
        value = redact_value(value, keys)
    elif chunks:
        encoding = next((v.lower() for n, v in headers if n.lower() == "content-encoding"), "")
        plain = _decoded(exchange.body, encoding)
        if plain is not None:
            try:
                text = plain.decode("utf-8")
            except UnicodeDecodeError:
                text = None
            if text is not None:
                redacted = _body_text(text, keys, secrets)
                if redacted != text:
                    chunks = (redacted.encode("utf-8"),)
                    drop = {"content-encoding", "content-length"}
                    headers = tuple((n, v) for n, v in headers if n.lower() not in drop)
    return Exchange(
        exchange.seq, exchange.kind, exchange.method, redact_url(exchange.url, keys),
        exchange.request_headers, request_body, exchange.status, headers, chunks, value,
        exchange.error,
    )  # fmt: skip


def _scrub(value: Any, secrets: Iterable[str]) -> Any:
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, REPLACEMENT)
        return value
    if isinstance(value, dict):
        return {k: _scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(item, secrets) for item in value]
    return value


def redact_recordings(document: dict[str, Any], keys: frozenset[str], known: Any) -> None:
    """Redact the recorded calls of an export ``document`` in place.

    Args:
        keys: the redacted keys.
        known: the unredacted payload and results: their values under ``keys`` are scrubbed
            from the recordings too.
    """
    places = [a for a in document.get("attempts") or [] if a.get("io")]
    stray = document.get("unattributed_io")
    if not places and not stray:
        return
    secrets: set[str] = set()
    _found(known, keys, secrets)
    for attempt in places:
        attempt["io"] = [_exchange(Exchange.from_json(e), keys, secrets) for e in attempt["io"]]
    if stray:
        document["unattributed_io"] = [
            _exchange(Exchange.from_json(e), keys, secrets) for e in stray
        ]
    ordered = sorted(secrets, key=len, reverse=True)
    for attempt in places:
        attempt["io"] = [_scrub(e.to_json(), ordered) for e in attempt["io"]]
    if stray:
        document["unattributed_io"] = [_scrub(e.to_json(), ordered) for e in document[
            "unattributed_io"]]  # fmt: skip
    redaction = document.get("redaction")
    if isinstance(redaction, dict):
        redaction["places"] = [*redaction.get("places", []), "recorded calls"]
