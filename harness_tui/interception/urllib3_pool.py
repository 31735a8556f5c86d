"""``urllib3`` (so ``requests``) recorded where a connection pool makes one request.

``HTTPConnectionPool._make_request`` sends one request on one connection and returns its
response; ``urlopen`` around it keeps its retries, redirects and pooling. A live answer's raw
body (still encoded) is read to the end as urllib3 streams it (chunk by chunk for a chunked
answer) and handed to the caller as a fresh response over those bytes; a recorded answer is the
same kind of response, and a recorded error (connection refused, a read timeout) is raised
again as urllib3 raised it, so ``urlopen`` retries or gives up exactly as it did live.

Unlike httpx's, a urllib3 answer is read whole before the caller sees it: a streamed answer
arrives complete, in the same bytes. This module imports urllib3: it is imported only when
urllib3 is installed.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from types import ModuleType
from typing import Any

from urllib3 import HTTPHeaderDict, exceptions
from urllib3.connectionpool import HTTPConnectionPool
from urllib3.response import HTTPResponse

from ..engine.recorded_calls import Exchange, target
from ..engine.replayed_errors import rebuild

__all__ = ["patch"]

_CHUNK = 64 * 1024
_ARGS = ("body", "headers", "retries", "timeout", "chunked", "response_conn", "preload_content",
         "decode_content", "enforce_content_length")  # fmt: skip
"""``_make_request``'s parameters after ``conn, method, url``, in order."""


def _error(error: dict[str, str], pool: Any, conn: Any, url: str) -> BaseException:
    def with_conn(cls: type[BaseException], message: str) -> Any:
        if issubclass(cls, exceptions.NewConnectionError):
            return cls(conn, message)
        return None

    def with_pool(cls: type[BaseException], message: str) -> Any:
        if issubclass(cls, exceptions.RequestError):
            return cls(pool, url, message)
        if issubclass(cls, exceptions.PoolError):
            return cls(pool, message)
        return None

    return rebuild(error, with_conn, with_pool)


def _response(pool: Any, status: int, headers: Iterable[tuple[str, str]], body: bytes,
              method: str, url: str, kw: dict[str, Any]) -> HTTPResponse:  # fmt: skip
    """A response over a whole body. The chunked framing is gone, so it is built without
    ``transfer-encoding`` and given every header back afterwards."""
    headers = list(headers)
    plain = [(n, v) for n, v in headers if n.lower() != "transfer-encoding"]
    made = HTTPResponse(
        body=io.BytesIO(body),
        headers=HTTPHeaderDict(plain),
        status=status,
        preload_content=kw.get("preload_content", True),
        decode_content=kw.get("decode_content", True),
        enforce_content_length=kw.get("enforce_content_length", True),
        request_method=method,
        request_url=url,
        retries=kw.get("retries"),
    )
    made.headers = HTTPHeaderDict(headers)
    # The connection goes back to the pool when the caller releases this response, once.
    made._connection = kw.get("response_conn")
    made._pool = pool
    return made


def _replayed(pool: Any, conn: Any, method: str, url: str, answer: Exchange,
              kw: dict[str, Any]) -> HTTPResponse:  # fmt: skip
    if answer.status is None or answer.error is not None:
        raise _error(answer.error or {"type": "RecordedError"}, pool, conn, url)
    return _response(pool, answer.status, answer.response_headers, answer.body, method, url, kw)


def _body(kw: dict[str, Any]) -> bytes | None:
    body = kw.get("body")
    if isinstance(body, str):
        return body.encode("utf-8")
    if body is not None and not isinstance(body, bytes):
        body = kw["body"] = b"".join(
            part.encode("utf-8") if isinstance(part, str) else bytes(part) for part in body
        )
    return body


def patch(urllib3: ModuleType) -> list[tuple[Any, str, Any]]:
    """Wrap ``urllib3.connectionpool.HTTPConnectionPool._make_request``; return
    ``(owner, name, original)``."""
    original = HTTPConnectionPool._make_request

    def _make_request(self: Any, conn: Any, method: str, url: str, *args: Any, **kw: Any) -> Any:
        recorder = target()
        if recorder is None:
            return original(self, conn, method, url, *args, **kw)
        kw.update(zip(_ARGS, args, strict=False))
        body = _body(kw)
        full = f"{self.scheme}://{self.host}:{self.port}{url}"
        headers = list((kw.get("headers") or {}).items())
        pending = recorder.begin("http", method, full, headers, body)
        if pending.answer is not None:
            return _replayed(self, conn, method, url, pending.answer, kw)
        raw = {**kw, "preload_content": False, "decode_content": False}
        try:
            live = original(self, conn, method, url, **raw)
        except BaseException as exc:
            pending.failed(exc)
            raise
        chunks: list[bytes] = []
        try:
            chunks.extend(live.stream(_CHUNK, decode_content=False))
        except BaseException as exc:
            pending.responded(live.status, live.headers.items(), chunks, exc)
            raise
        answered = list(live.headers.items())
        pending.responded(live.status, answered, chunks)
        return _response(self, live.status, answered, b"".join(chunks), method, url, kw)

    _make_request.__wrapped__ = original  # type: ignore[attr-defined]
    HTTPConnectionPool._make_request = _make_request  # type: ignore[method-assign]
    return [(HTTPConnectionPool, "_make_request", original)]
