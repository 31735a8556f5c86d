"""One recorded exchange: a request and what answered it, as kept in memory, in an export's
``attempts[].io`` and in the store (docs/recording.md)."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

__all__ = ["Exchange", "Headers", "error_json"]

Headers = tuple[tuple[str, str], ...]


def _text_or_base64(data: bytes) -> dict[str, str]:
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}


def _bytes_of(item: Any, where: str) -> bytes:
    if isinstance(item, dict) and isinstance(item.get("text"), str):
        return str(item["text"]).encode("utf-8")
    if isinstance(item, dict) and isinstance(item.get("base64"), str):
        try:
            return base64.b64decode(str(item["base64"]), validate=True)
        except ValueError:
            raise ValueError(f"{where}: not base64") from None
    raise ValueError(f"{where}: expected {{'text': ...}} or {{'base64': ...}}")


def _headers_of(value: Any, where: str) -> Headers:
    if not isinstance(value, list) or not all(
        isinstance(p, list) and len(p) == 2 and all(isinstance(s, str) for s in p) for p in value
    ):
        raise ValueError(f"{where}: expected a list of [name, value] pairs")
    return tuple((str(n), str(v)) for n, v in value)


@dataclass(frozen=True, slots=True)
class Exchange:
    """One request and what answered it (or the error it got instead).

    Attributes:
        seq: its number within the attempt (HTTP and recorded calls share one sequence).
        kind: ``http`` or ``call``.
        method: the HTTP method, or ``CALL``.
        url: the URL, or the recorded call's name.
        request_headers: as sent, less the secret ones.
        request_body: the bytes sent (a call's arguments as canonical JSON).
        status: the HTTP status, when an answer came.
        response_headers: as received, less the secret ones.
        chunks: the response body as the client received it, chunk by chunk (still encoded:
            a gzip answer is kept as gzip, so a replay is byte for byte).
        value: a recorded call's return value (JSON).
        error: ``{"type", "message", "module"}`` when no answer came (connection refused, a
            timeout, a cancellation) or the call raised.
        duration: seconds from the request to the end of its answer (or to its error), on
            the recording session's clock; None when not measured (recorded before it was).
    """

    seq: int
    kind: str
    method: str
    url: str
    request_headers: Headers = ()
    request_body: bytes | None = None
    status: int | None = None
    response_headers: Headers = ()
    chunks: tuple[bytes, ...] = ()
    value: Any = None
    error: dict[str, str] | None = None
    duration: float | None = None

    @property
    def body(self) -> bytes:
        """The whole response body, still encoded."""
        return b"".join(self.chunks)

    def to_json(self) -> dict[str, Any]:
        """The exchange as stored in an export's ``attempts[].io``."""
        document: dict[str, Any] = {
            "seq": self.seq,
            "kind": self.kind,
            "method": self.method,
            "url": self.url,
            "request_headers": [list(pair) for pair in self.request_headers],
            "request_body": (
                None if self.request_body is None else _text_or_base64(self.request_body)
            ),
            "status": self.status,
            "response_headers": [list(pair) for pair in self.response_headers],
            "chunks": [_text_or_base64(chunk) for chunk in self.chunks],
            "error": self.error,
        }
        if self.kind == "call":
            document["value"] = self.value
        if self.duration is not None:
            document["duration_s"] = self.duration
        return document

    @classmethod
    def from_json(cls, data: Any, where: str = "io") -> Exchange:
        """An exchange read back from an export (untrusted: every field checked).

        Raises:
            ValueError: one line saying which field is wrong.
        """
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected an object")
        seq, kind, method, url = (data.get(k) for k in ("seq", "kind", "method", "url"))
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
            raise ValueError(f"{where}.seq: expected a number from 0")
        if kind not in ("http", "call") or not isinstance(method, str) or not isinstance(url, str):
            raise ValueError(f"{where}: kind must be http or call, method and url strings")
        status = data.get("status")
        if status is not None and (not isinstance(status, int) or isinstance(status, bool)):
            raise ValueError(f"{where}.status: expected a number or null")
        error = data.get("error")
        if error is not None and not (
            isinstance(error, dict) and all(isinstance(v, str) for v in error.values())
        ):
            raise ValueError(f"{where}.error: expected an object of strings or null")
        duration = data.get("duration_s")
        if duration is not None and (
            not isinstance(duration, int | float)
            or isinstance(duration, bool)
            or not 0 <= duration <= _MAX_SECONDS  # an int past a float's range: OverflowError
        ):
            raise ValueError(f"{where}.duration_s: expected a number from 0 or null")
        body = data.get("request_body")
        chunks = data.get("chunks") or []
        if not isinstance(chunks, list):
            raise ValueError(f"{where}.chunks: expected a list")
        return cls(
            seq,
            str(kind),
            method,
            url,
            _headers_of(data.get("request_headers") or [], f"{where}.request_headers"),
            None if body is None else _bytes_of(body, f"{where}.request_body"),
            status,
            _headers_of(data.get("response_headers") or [], f"{where}.response_headers"),
            tuple(_bytes_of(c, f"{where}.chunks[{i}]") for i, c in enumerate(chunks)),
            data.get("value"),
            None if error is None else {str(k): str(v) for k, v in error.items()},
            None if duration is None else float(duration),
        )


_MAX_SECONDS = 1e9
"""The longest duration an exchange read back may say (about 32 years): more, or a number no
float holds, is damage."""


def error_json(exc: BaseException) -> dict[str, str]:
    """``{"type", "message", "module"}`` of an exception, to raise it again on replay."""
    try:
        message = str(exc)
    except Exception:
        message = f"<str() of {type(exc).__name__} failed>"
    return {"type": type(exc).__name__, "message": message, "module": type(exc).__module__}
