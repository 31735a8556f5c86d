"""The web server of ``harness-tui serve``: textual-serve's protocol behind :class:`.Guard`.

textual-serve runs a Textual app per WebSocket and relays its screen. Its own server is not
used: it accepts a WebSocket from any origin, has no authentication, fetches web fonts and
starts the app through a shell. Here every request passes the guard first, the page is our own
template whose every asset is served from this process, the app is started from an argument
list, and downloads always arrive as attachments.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import signal
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from string import Template
from typing import Any
from urllib.parse import quote

from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager

from .guard import Guard, default_hosts, parse_host

__all__ = ["ServeSettings", "Served", "bind", "create_web_app", "serve"]

STOP_SECONDS = 5.0
"""How long a served app may take to quit once asked before its process is killed."""

STDERR_LIMIT = 64 * 1024
"""Bytes of an app's standard error kept to report why it ended."""

_STATIC = files("harness_tui.serve") / "static"
_TEXTUAL = files("textual_serve") / "static"

ASSETS: dict[str, tuple[Traversable, str]] = {
    "textual.js": (_TEXTUAL / "js" / "textual.js", "text/javascript"),
    "xterm.css": (_TEXTUAL / "css" / "xterm.css", "text/css"),
    "fonts/RobotoMono-VariableFont_wght.ttf": (
        _TEXTUAL / "fonts" / "RobotoMono-VariableFont_wght.ttf",
        "font/ttf",
    ),
    "fonts/RobotoMono-Italic-VariableFont_wght.ttf": (
        _TEXTUAL / "fonts" / "RobotoMono-Italic-VariableFont_wght.ttf",
        "font/ttf",
    ),
    "serve.css": (_STATIC / "serve.css", "text/css"),
}
"""Everything the page loads, and nothing else: no directory is served."""

COMMON_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


def content_policy(host: str) -> str:
    """The page's Content-Security-Policy: scripts, styles and fonts from this server only,
    its one WebSocket, never framed (a page on another port cannot overlay it to steal keys)."""
    return (
        "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        f"font-src 'self'; img-src 'self' data:; connect-src 'self' ws://{host}; "
        "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    )


@dataclass(frozen=True, slots=True)
class ServeSettings:
    """What ``harness-tui serve`` was asked for.

    Attributes:
        command: the argument list that starts the app (see :func:`.command.app_command`).
        title: what the page calls it (a file name: escaped where shown).
        max_sessions: live connections at once (each runs its own app, and so its own run).
    """

    command: tuple[str, ...]
    title: str = "harness-tui"
    max_sessions: int = 1


class AppProcess(AppService):
    """One app process per connection, started without a shell; its standard error is kept
    (bounded) for the server to report instead of being echoed raw; it never makes the
    browser open a URL (the workbench has none to open, and a request must not leave)."""

    def __init__(
        self, argv: tuple[str, ...], on_error: Callable[[str], None], **kwargs: Any
    ) -> None:
        super().__init__(" ".join(argv), **kwargs)
        self.argv = argv
        self.on_error = on_error
        self._errors = bytearray()
        self._stderr_task: asyncio.Task[None] | None = None
        self._stopping: asyncio.Future[None] | None = None

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Any:
        environment = self._build_environment(width=width, height=height)
        self._process = process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=environment,
        )
        assert process.stdin is not None and process.stderr is not None
        self._stdin = process.stdin
        self._stderr_task = asyncio.create_task(self._keep_errors(process.stderr))
        done = asyncio.StreamReader()
        done.feed_eof()
        process.stderr = done  # textual-serve would echo it raw
        return process

    async def _keep_errors(self, stream: asyncio.StreamReader) -> None:
        while data := await stream.read(65536):
            room = STDERR_LIMIT - len(self._errors)
            self._errors += data[: max(room, 0)]

    async def stop(self) -> None:
        """Ask the app to quit, kill it if it will not, and reap it. Once, whoever asks (the
        connection's end, the server's shutdown), and to the end even if the asker is
        cancelled: no process outlives the server."""
        if self._stopping is None:
            self._stopping = asyncio.ensure_future(self._stop())
        await asyncio.shield(self._stopping)

    async def _stop(self) -> None:
        process = self._process
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(super().stop(), STOP_SECONDS)
        if process is not None:
            try:
                await asyncio.wait_for(process.wait(), STOP_SECONDS)
            except TimeoutError:
                process.kill()
                await process.wait()
        if self._stderr_task is not None:
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(self._stderr_task, STOP_SECONDS)
        code = None if process is None else process.returncode
        if self._errors.strip() or code not in (None, 0):
            self.on_error(self._errors.decode("utf-8", "replace"))

    async def on_meta(self, data: bytes) -> None:
        if b'"open_url"' not in data:
            await super().on_meta(data)


class Served:
    """The aiohttp handlers of one served workbench."""

    def __init__(
        self,
        settings: ServeSettings,
        guard: Guard,
        on_error: Callable[[str], None] = lambda text: None,
    ) -> None:
        self.settings = settings
        self.guard = guard
        self.on_error = on_error
        self.downloads = DownloadManager()
        self.live: set[AppProcess] = set()
        self.sessions = 0
        self.page = Template((_STATIC / "page.html").read_text(encoding="utf-8"))

    # -- the guard ----------------------------------------------------------------------------

    @web.middleware
    async def middleware(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        """Every request names this server (Host) and, but for the token's exchange, carries
        the cookie; the WebSocket and downloads come from the served origin."""
        if not self.guard.host_ok(request.headers.get("Host")):
            return _refuse(403, "unknown Host: this server answers only to the hosts it serves")
        if request.path == "/" and "token" in request.query:
            return self._exchange(request.query.get("token"))
        if not self.guard.cookie_ok(request.cookies.get(self.guard.cookie_name)):
            return _refuse(403, "open the URL that harness-tui serve printed (it has the token)")
        if request.path == "/ws" or request.path.startswith("/download/"):
            why = self.guard.same_origin(
                request.headers.get("Host"),
                request.headers.get("Origin"),
                request.headers.get("Sec-Fetch-Site"),
                websocket=request.path == "/ws",
            )
            if why is not None:
                return _refuse(403, f"refused: {why}")
        response = await handler(request)
        if not response.prepared:
            response.headers.update(COMMON_HEADERS)
        return response

    def _exchange(self, token: str | None) -> web.StreamResponse:
        """The token buys the cookie; the address bar and history keep no token."""
        if not self.guard.token_ok(token):
            return _refuse(403, "wrong token: open the URL that harness-tui serve printed")
        response = _see_other()
        response.headers["Set-Cookie"] = self.guard.set_cookie_header()
        response.headers.update(COMMON_HEADERS)
        return response

    # -- the page and its assets ---------------------------------------------------------------

    async def index(self, request: web.Request) -> web.StreamResponse:
        if request.query_string:
            return _see_other()  # nothing from a link reaches the page's script
        # No "busy" page here: on a reload the old tab's WebSocket closes only once this page
        # has arrived; the WebSocket says busy (and the page then shows why it may have ended).
        host = request.headers["Host"]
        text = self.page.substitute(
            title=html.escape(self.settings.title, quote=True),
            websocket=html.escape(f"ws://{host}/ws", quote=True),
            font_size=16,
            sessions=self.settings.max_sessions,
        )
        response = web.Response(text=text, content_type="text/html")
        response.headers["Content-Security-Policy"] = content_policy(host)
        return response

    async def asset(self, request: web.Request) -> web.StreamResponse:
        found = ASSETS.get(request.match_info["name"])
        if found is None:
            raise web.HTTPNotFound()
        path, kind = found
        return web.Response(body=path.read_bytes(), content_type=kind)

    # -- the app ------------------------------------------------------------------------------

    async def websocket(self, request: web.Request) -> web.StreamResponse:
        """Runs one app for this connection, if there is room. The room is free again as soon
        as the tab is gone, while its app is still quitting (a reload must find it free)."""
        if self.sessions >= self.settings.max_sessions:
            return _refuse(503, "busy: the workbench is open in another tab (--max-sessions)")
        self.sessions += 1
        held = True
        try:
            socket_ = web.WebSocketResponse(heartbeat=15, max_msg_size=1024 * 1024)
            await socket_.prepare(request)
            app = AppProcess(
                self.settings.command,
                self.on_error,
                write_bytes=socket_.send_bytes,
                write_str=socket_.send_str,
                close=socket_.close,
                download_manager=self.downloads,
            )
            self.live.add(app)
            try:
                width = _size(request.query.get("width"), 80)
                await app.start(width, _size(request.query.get("height"), 24))
                await _pump(socket_, app)
            finally:
                self.sessions, held = self.sessions - 1, False
                await app.stop()
                self.live.discard(app)
            return socket_
        finally:
            if held:
                self.sessions -= 1

    async def download(self, request: web.Request) -> web.StreamResponse:
        """An export or report the app delivers: always an attachment, never a page of ours."""
        key = request.match_info["key"]
        try:
            meta = await self.downloads.get_download_metadata(key)
        except KeyError:
            raise web.HTTPNotFound() from None
        response = web.StreamResponse()
        response.headers.update(COMMON_HEADERS)
        response.headers["Content-Type"] = "application/octet-stream"
        response.headers["Content-Security-Policy"] = "sandbox; default-src 'none'"
        name = meta.file_name
        plain = "".join(c if (c.isascii() and c.isalnum()) or c in "._-" else "_" for c in name)
        response.headers["Content-Disposition"] = (
            f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(name, safe='')}"
        )
        await response.prepare(request)
        async for chunk in self.downloads.download(key):
            await response.write(chunk)
        await response.write_eof()
        return response

    async def close(self, app: web.Application) -> None:
        """On shutdown every app is asked to quit (and killed if it will not)."""
        await asyncio.gather(*(process.stop() for process in list(self.live)))


async def _pump(socket_: web.WebSocketResponse, app: AppProcess) -> None:
    """The browser's messages to the app (textual-serve's envelope: keys, resize, focus)."""
    async for message in socket_:
        if message.type != web.WSMsgType.TEXT:
            continue
        try:
            envelope = message.json()
            kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None
        except (ValueError, TypeError, IndexError, KeyError):
            continue
        if kind == "stdin" and isinstance(data, str):
            await app.send_bytes(data.encode("utf-8"))
        elif kind == "resize" and isinstance(data, dict):
            await app.set_terminal_size(_size(data.get("width"), 80), _size(data.get("height"), 24))
        elif kind == "ping":
            await socket_.send_json(["pong", data])
        elif kind == "blur":
            await app.blur()
        elif kind == "focus":
            await app.focus()


def _size(value: object, default: int) -> int:
    """A terminal dimension from the browser, kept sane (1 to 1000 cells)."""
    try:
        number = int(str(value))
    except ValueError:
        return default
    return min(max(number, 1), 1000)


def _see_other() -> web.Response:
    response = web.Response(status=303, headers={"Location": "/"})
    response.headers.update(COMMON_HEADERS)
    return response


def _refuse(status: int, text: str) -> web.Response:
    response = web.Response(status=status, text=text + "\n")
    response.headers.update(COMMON_HEADERS)
    return response


def create_web_app(served: Served) -> web.Application:
    """The aiohttp application of ``served`` (tests run it on a test server)."""
    app = web.Application(middlewares=[served.middleware], client_max_size=64 * 1024)
    app.add_routes(
        [
            web.get("/", served.index),
            web.get("/ws", served.websocket),
            web.get("/download/{key}", served.download),
            web.get("/static/{name:.+}", served.asset),
        ]
    )
    app.on_shutdown.append(served.close)
    return app


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port`` (0: a free port). Raises OSError."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host.strip("[]"), port), family=family, reuse_port=False)


def serve(
    settings: ServeSettings,
    listening: socket.socket,
    allowed_hosts: list[str],
    announce: Callable[[str], None],
    on_error: Callable[[str], None],
) -> None:
    """Serve until SIGINT or SIGTERM; ``announce`` gets the one URL (with its token)."""
    host, port = listening.getsockname()[:2]
    guard = Guard(default_hosts(host, port, allowed_hosts), port)
    served = Served(settings, guard, on_error)
    url = f"http://{public_host(host, port, allowed_hosts)}/?token={guard.token}"
    asyncio.run(_serve(create_web_app(served), listening, lambda: announce(url)))


def public_host(bound: str, port: int, allowed_hosts: list[str]) -> str:
    """The ``host:port`` of the printed URL: the first ``--allow-host``, else the bound
    address (127.0.0.1 for every address)."""
    if allowed_hosts:
        return parse_host(allowed_hosts[0], port)
    return parse_host("127.0.0.1" if bound in ("0.0.0.0", "::") else bound, port)


async def _serve(
    app: web.Application, listening: socket.socket, started: Callable[[], None]
) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    try:
        await web.SockSite(runner, listening).start()
        started()
        await stop.wait()
    finally:
        await runner.cleanup()
        listening.close()
