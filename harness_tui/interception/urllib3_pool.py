"""``urllib3`` (so ``requests``) recorded where a connection pool makes one request.

``HTTPConnectionPool._make_request`` sends one request on one connection and returns its
response; ``urlopen`` around it keeps its retries, redirects and pooling. A live answer's raw
body (still encoded) is read to the end as urllib3 streams it (chunk by chunk for a chunked
answer) and handed to the caller as a fresh response over those bytes; a recorded answer is the
same kind of response, and a recorded error (connection refused, a read timeout) is raised
again as urllib3 raised it, so ``urlopen`` retries or gives up exactly as it did live.

Unlike httpx's, a urllib3 answer is read whole before the caller sees it: a streamed answer
arrives complete, in the same bytes.
"""

from __future__ import annotations

import io
from types import ModuleType
from typing import Any

from ..engine.recorded_calls import Exchange, target
from ..engine.replayed_errors import rebuild

__all__ = ["patch"]

_CHUNK = 64 * 1024


def patch(urllib3: ModuleType) -> list[tuple[Any, str, Any]]:
    """Wrap ``urllib3.connectionpool.HTTPConnectionPool._make_request``; return
    ``(owner, name, original)``."""
    from urllib3 import exceptions
    from urllib3.connectionpool import HTTPConnectionPool
    from urllib3.response import HTTPResponse

    original = HTTPConnectionPool._make_request

    def error_of(error: dict[str, str], pool: Any, conn: Any, url: str) -> BaseException:
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

    def response(pool: Any, answer_status: int, headers: Any, body: bytes, method: str,
                 url: str, kw: dict[str, Any]) -> Any:  # fmt: skip
        # The body is whole: the chunked framing is gone, so the response is built without
        # ``transfer-encoding`` and given every header back afterwards.
        plain = [(n, v) for n, v in headers if n.lower() != "transfer-encoding"]
        made = HTTPResponse(
            body=io.BytesIO(body),
            headers=urllib3.HTTPHeaderDict(plain),
            status=answer_status,
            preload_content=kw.get("preload_content", True),
            decode_content=kw.get("decode_content", True),
            enforce_content_length=kw.get("enforce_content_length", True),
            request_method=method,
            request_url=url,
            retries=kw.get("retries"),
        )
        made.headers = urllib3.HTTPHeaderDict(list(headers))
        made._connection = kw.get("response_conn")
        made._pool = pool
        return made

    def replayed(pool: Any, conn: Any, method: str, url: str, answer: Exchange,
                 kw: dict[str, Any]) -> Any:  # fmt: skip
        if answer.status is None or answer.error is not None:
            raise error_of(answer.error or {"type": "RecordedError"}, pool, conn, url)
        return response(pool, answer.status, answer.response_headers, answer.body, method, url,
                        kw)  # fmt: skip

    def _make_request(self: Any, conn: Any, method: str, url: str, *args: Any, **kw: Any) -> Any:
        io_ = target()
        if io_ is None:
            return original(self, conn, method, url, *args, **kw)
        names = ("body", "headers", "retries", "timeout", "chunked", "response_conn",
                 "preload_content", "decode_content", "enforce_content_length")  # fmt: skip
        kw.update(zip(names, args, strict=False))
        body = kw.get("body")
        if isinstance(body, str):
            body = body.encode("utf-8")
        elif body is not None and not isinstance(body, bytes):
            body = b"".join(
                part.encode("utf-8") if isinstance(part, str) else bytes(part) for part in body
            )
            kw["body"] = body
        full = f"{self.scheme}://{self.host}:{self.port}{url}"
        headers = list((kw.get("headers") or {}).items())
        pending = io_.begin("http", method, full, headers, body)
        if pending.answer is not None:
            return replayed(self, conn, method, url, pending.answer, kw)
        live_kw = {**kw, "preload_content": False, "decode_content": False}
        try:
            live = original(self, conn, method, url, **live_kw)
        except BaseException as exc:
            pending.failed(exc)
            raise
        chunks: list[bytes] = []
        try:
            for chunk in live.stream(_CHUNK, decode_content=False):
                chunks.append(chunk)
        except BaseException as exc:
            pending.responded(live.status, live.headers.items(), chunks, exc)
            raise
        # The connection goes back to the pool when the caller releases the new response
        # (it holds the same ``response_conn``), never twice.
        headers = list(live.headers.items())
        pending.responded(live.status, headers, chunks)
        return response(self, live.status, headers, b"".join(chunks), method, url, kw)

    _make_request.__wrapped__ = original  # type: ignore[attr-defined]
    HTTPConnectionPool._make_request = _make_request  # type: ignore[method-assign]
    return [(HTTPConnectionPool, "_make_request", original)]
