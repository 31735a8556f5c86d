"""A loopback fake of an OpenAI-compatible model server, for the recording tests.

``POST /v1/chat/completions`` answers with a random completion after a fixed 20 ms latency:
plain JSON (gzip-encoded when the client accepts it) or, with ``"stream": true``, server-sent
events in chunked transfer encoding. Models with special names help the retry tests:
``flaky-500`` answers 500 on every odd call, ``slow`` answers after ``slow_seconds`` (longer than
a client's read timeout). ``answer`` (a function of the request) makes the completions known
in advance; a streamed one comes 8 characters an event. Bound to 127.0.0.1 on a free port;
:meth:`FakeModel.stop` stops it.
"""

from __future__ import annotations

import gzip
import json
import secrets
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LATENCY = 0.02


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed ACK
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        model = request.get("model", "fake")
        with self.server.lock:
            self.server.calls += 1
            calls = self.server.calls
            self.server.requests.append(request)
        time.sleep(self.server.slow_seconds if model == "slow" else LATENCY)
        if model == "flaky-500" and calls % 2 == 1:
            self._send(500, b'{"error": {"message": "try again"}}', "application/json")
            return
        chosen = self.server.answer
        answer = secrets.token_hex(8) if chosen is None else chosen(request)
        if request.get("stream"):
            self._stream(model, answer)
            return
        body = json.dumps(
            {
                "id": f"chatcmpl-{secrets.token_hex(4)}",
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": answer},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        ).encode()
        self._send(200, body, "application/json")

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("set-cookie", "session=server-secret")
        if "gzip" in (self.headers.get("accept-encoding") or ""):
            body = gzip.compress(body, mtime=0)
            self.send_header("content-encoding", "gzip")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _stream(self, model: str, answer: str) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        pieces: list[str | None] = [answer[i : i + 8] for i in range(0, len(answer), 8)]
        for index, piece in enumerate([*pieces, None]):
            delta = {} if piece is None else {"content": piece}
            if index == 0:
                delta["role"] = "assistant"
            event = {
                "id": "chatcmpl-stream",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [
                    {"index": 0, "delta": delta, "finish_reason": None if piece else "stop"}
                ],
            }
            self._chunk(f"data: {json.dumps(event)}\n\n".encode())
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.calls = 0
        self.requests: list[dict[str, Any]] = []
        self.slow_seconds = 1.0
        self.answer: Callable[[dict[str, Any]], str] | None = None

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up (a read timeout) closed its end: nothing to report


class FakeModel:
    """The server, running in a thread until :meth:`stop`."""

    def __init__(self) -> None:
        self.server = _Server()
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def requests(self) -> list[dict[str, Any]]:
        return list(self.server.requests)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()
