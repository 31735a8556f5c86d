"""``httpx`` (and ``httpx2``) recorded at the transport: sync, async and streamed answers.

A live answer's stream is passed through chunk by chunk (a streamed completion still streams)
and kept as it goes; the exchange is complete when the client has read the body to its end,
closed it, or the read failed (a read timeout in the middle of a stream is kept with the chunks
before it). A recorded answer is a response whose stream yields the recorded chunks, still
encoded (gzip stays gzip: the client decodes it as it did live).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from types import ModuleType
from typing import Any, NamedTuple

from ..engine.recorded_calls import AttemptIO, Exchange, Pending, target
from ..engine.replayed_errors import rebuild

__all__ = ["patch"]


def _error(error: dict[str, str], request: Any) -> BaseException:
    def with_request(cls: Any, message: str) -> Any:
        return cls(message, request=request)

    return rebuild(error, with_request)


class _Kept:
    """The chunks of a live answer as the client reads them."""

    __slots__ = ("chunks", "done", "headers", "pending", "status")

    def __init__(self, pending: Pending, response: Any) -> None:
        self.pending = pending
        self.status = response.status_code
        self.headers = response.headers.multi_items()
        self.chunks: list[bytes] = []
        self.done = False

    def finish(self, error: BaseException | None = None) -> None:
        if not self.done:
            self.done = True
            self.pending.responded(self.status, self.headers, self.chunks, error)


class _Streams(NamedTuple):
    """Stream classes built on one httpx module's base classes (its type checks need them)."""

    kept: type
    async_kept: type
    replay: type
    async_replay: type


def _streams(httpx: ModuleType) -> _Streams:
    class Kept(httpx.SyncByteStream):  # type: ignore[misc,name-defined]
        def __init__(self, stream: Any, kept: _Kept) -> None:
            self._stream, self._kept = stream, kept

        def __iter__(self) -> Iterator[bytes]:
            try:
                for chunk in self._stream:
                    self._kept.chunks.append(chunk)
                    yield chunk
            except BaseException as exc:
                self._kept.finish(exc)
                raise
            self._kept.finish()

        def close(self) -> None:
            self._kept.finish()
            self._stream.close()

    class AsyncKept(httpx.AsyncByteStream):  # type: ignore[misc,name-defined]
        def __init__(self, stream: Any, kept: _Kept) -> None:
            self._stream, self._kept = stream, kept

        async def __aiter__(self) -> AsyncIterator[bytes]:
            try:
                async for chunk in self._stream:
                    self._kept.chunks.append(chunk)
                    yield chunk
            except BaseException as exc:
                self._kept.finish(exc)
                raise
            self._kept.finish()

        async def aclose(self) -> None:
            self._kept.finish()
            await self._stream.aclose()

    class Replay(httpx.SyncByteStream):  # type: ignore[misc,name-defined]
        def __init__(self, answer: Exchange, request: Any) -> None:
            self._answer, self._request = answer, request

        def __iter__(self) -> Iterator[bytes]:
            yield from self._answer.chunks
            if self._answer.error is not None:
                raise _error(self._answer.error, self._request)

    class AsyncReplay(httpx.AsyncByteStream):  # type: ignore[misc,name-defined]
        def __init__(self, answer: Exchange, request: Any) -> None:
            self._answer, self._request = answer, request

        async def __aiter__(self) -> AsyncIterator[bytes]:
            for chunk in self._answer.chunks:
                yield chunk
            if self._answer.error is not None:
                raise _error(self._answer.error, self._request)

    return _Streams(Kept, AsyncKept, Replay, AsyncReplay)


def _begin(recorder: AttemptIO, request: Any, body: bytes) -> Pending:
    headers = request.headers.multi_items()
    return recorder.begin("http", request.method, str(request.url), headers, body)


def _replayed(httpx: ModuleType, answer: Exchange, request: Any, stream: type) -> Any:
    if answer.status is None:
        raise _error(answer.error or {"type": "RecordedError"}, request)
    headers = list(answer.response_headers)
    return httpx.Response(answer.status, headers=headers, stream=stream(answer, request))


def _kept(pending: Pending, response: Any, stream: type) -> Any:
    """The transport's own response, its stream kept as the client reads it."""
    response.stream = stream(response.stream, _Kept(pending, response))
    return response


def patch(httpx: ModuleType) -> list[tuple[Any, str, Any]]:
    """Wrap the default sync and async transports of ``httpx`` (or a module of its API);
    return ``(owner, name, original)`` of each method replaced."""
    streams = _streams(httpx)
    sync_transport = httpx.HTTPTransport.handle_request
    async_transport = httpx.AsyncHTTPTransport.handle_async_request

    def handle_request(self: Any, request: Any) -> Any:
        recorder = target()
        if recorder is None:
            return sync_transport(self, request)
        pending = _begin(recorder, request, request.read())
        if pending.answer is not None:
            return _replayed(httpx, pending.answer, request, streams.replay)
        try:
            response = sync_transport(self, request)
        except BaseException as exc:
            pending.failed(exc)
            raise
        return _kept(pending, response, streams.kept)

    async def handle_async_request(self: Any, request: Any) -> Any:
        recorder = target()
        if recorder is None:
            return await async_transport(self, request)
        pending = _begin(recorder, request, await request.aread())
        if pending.answer is not None:
            return _replayed(httpx, pending.answer, request, streams.async_replay)
        try:
            response = await async_transport(self, request)
        except BaseException as exc:
            pending.failed(exc)
            raise
        return _kept(pending, response, streams.async_kept)

    handle_request.__wrapped__ = sync_transport  # type: ignore[attr-defined]
    handle_async_request.__wrapped__ = async_transport  # type: ignore[attr-defined]
    httpx.HTTPTransport.handle_request = handle_request
    httpx.AsyncHTTPTransport.handle_async_request = handle_async_request
    return [
        (httpx.HTTPTransport, "handle_request", sync_transport),
        (httpx.AsyncHTTPTransport, "handle_async_request", async_transport),
    ]
