"""The served workbench over real HTTP on 127.0.0.1: the token buys the cookie, the cookie
buys the page, and the WebSocket (which runs the app) and downloads answer only to the served
origin. Every request here goes to the loopback address the server is bound to."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from textual_serve.download_manager import DownloadManager

from harness_tui.serve.command import Target, app_command
from harness_tui.serve.guard import Guard, default_hosts
from harness_tui.serve.server import (
    AppProcess,
    Served,
    ServeSettings,
    bind,
    create_web_app,
)

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "workflows" / "etl_fanout.yaml"


@dataclass
class Running:
    port: int
    guard: Guard
    served: Served

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def cookie(self) -> dict[str, str]:
        return {"Cookie": f"{self.guard.cookie_name}={self.guard.secret}"}

    @property
    def origin(self) -> str:
        return self.base


@asynccontextmanager
async def running(command: list[str] | None = None) -> AsyncIterator[Running]:
    """The server as ``harness-tui serve`` runs it, on a free port of 127.0.0.1."""
    listening = bind("127.0.0.1", 0)
    host, port = listening.getsockname()[:2]
    assert host == "127.0.0.1"  # nothing listens beyond loopback
    guard = Guard(default_hosts(host, port, []), port)
    target = Target(file=str(WORKFLOW), no_store=True)
    settings = ServeSettings(tuple(command or app_command(target)), "t", max_sessions=1)
    served = Served(settings, guard)
    runner = web.AppRunner(create_web_app(served), access_log=None, handle_signals=False)
    await runner.setup()
    await web.SockSite(runner, listening).start()
    try:
        yield Running(port, guard, served)
    finally:
        await runner.cleanup()
        listening.close()


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    # No cookie jar: each request carries exactly the headers a test gives it.
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as session:
        yield session


async def test_without_the_token_everything_is_refused(http: aiohttp.ClientSession) -> None:
    async with running() as server:
        for path in ("/", "/static/textual.js", "/download/x", "/ws", "/?token=wrong"):
            async with http.get(server.base + path, allow_redirects=False) as response:
                assert response.status == 403, path
                assert "Set-Cookie" not in response.headers
        wrong_cookie = {"Cookie": f"{server.guard.cookie_name}={server.guard.token}"}
        async with http.get(server.base + "/", headers=wrong_cookie) as response:
            assert response.status == 403  # the token is not the cookie


async def test_the_token_buys_a_strict_httponly_cookie_that_buys_the_page(
    http: aiohttp.ClientSession,
) -> None:
    async with running() as server:
        url = f"{server.base}/?token={server.guard.token}"
        async with http.get(url, allow_redirects=False) as response:
            assert response.status == 303
            assert response.headers["Location"] == "/"  # no token left in the address bar
            cookie = response.headers["Set-Cookie"]
        name, _, rest = cookie.partition("=")
        value, *flags = (part.strip() for part in rest.split(";"))
        assert name == f"harness-tui-{server.port}"  # cookies do not separate ports: ours is named
        assert {"HttpOnly", "SameSite=Strict", "Path=/"} <= set(flags)
        headers = {"Cookie": f"{name}={value}"}
        async with http.get(server.base + "/", headers=headers) as response:
            assert response.status == 200
            page = await response.text()
            policy = response.headers["Content-Security-Policy"]
        assert f'data-session-websocket-url="ws://127.0.0.1:{server.port}/ws"' in page
        assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy
        assert f"connect-src 'self' ws://127.0.0.1:{server.port};" in policy


async def test_a_foreign_host_is_refused_even_with_token_and_cookie(
    http: aiohttp.ClientSession,
) -> None:
    # DNS rebinding: the attacker's name resolves to 127.0.0.1, the browser sends its Host.
    async with running() as server:
        rebound = {"Host": f"attacker.example:{server.port}"}
        url = f"{server.base}/?token={server.guard.token}"
        async with http.get(url, headers=rebound, allow_redirects=False) as response:
            assert response.status == 403
            assert "Set-Cookie" not in response.headers
        async with http.get(server.base + "/", headers={**server.cookie, **rebound}) as response:
            assert response.status == 403
        other_port = {"Host": f"127.0.0.1:{server.port + 1}"}
        async with http.get(server.base + "/", headers={**server.cookie, **other_port}) as r:
            assert r.status == 403
        for host in (f"localhost:{server.port}", f"[::1]:{server.port}"):
            async with http.get(server.base + "/", headers={**server.cookie, "Host": host}) as r:
                assert r.status == 200, host


@pytest.mark.parametrize(
    ("origin", "host"),
    [
        (None, None),  # no Origin at all
        ("http://attacker.example", None),
        ("http://127.0.0.1:{other}", None),  # another port of 127.0.0.1: same site, not origin
        ("http://localhost:{port}", None),  # another origin for the same server
        ("null", None),
        ("http://attacker.example:{port}", "attacker.example:{port}"),  # rebinding
    ],
)
async def test_the_websocket_refuses_every_other_origin(
    http: aiohttp.ClientSession, origin: str | None, host: str | None
) -> None:
    async with running([sys.executable, "-c", "raise SystemExit('must not start')"]) as server:
        values = {"port": server.port, "other": server.port + 1}
        headers = dict(server.cookie)
        if origin is not None:
            headers["Origin"] = origin.format(**values)
        if host is not None:
            headers["Host"] = host.format(**values)
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await http.ws_connect(server.base + "/ws", headers=headers)
        assert refused.value.status == 403
        assert server.served.sessions == 0 and not server.served.live


async def test_the_served_origin_runs_the_app_one_session_at_a_time(
    http: aiohttp.ClientSession,
) -> None:
    async with running() as server:
        headers = {**server.cookie, "Origin": server.origin}
        async with http.ws_connect(server.base + "/ws?width=100&height=30", headers=headers) as ws:
            screen = await _first_screen(ws)
            assert b"etl_fanout" in screen  # the workbench drew the workflow
            # A second tab would run the workflow again: refused (its page says why it ended).
            with pytest.raises(aiohttp.WSServerHandshakeError) as busy:
                await http.ws_connect(server.base + "/ws", headers=headers)
            assert busy.value.status == 503
            async with http.get(server.base + "/", headers=server.cookie) as response:
                assert "--max-sessions" in await response.text()
            await ws.send_json(["stdin", "\x11"])  # ctrl+q: the app quits, the socket closes
            while not ws.closed and (await ws.receive()).type != aiohttp.WSMsgType.CLOSED:
                pass
        async with asyncio.timeout(10):
            while server.served.sessions:
                await asyncio.sleep(0.05)
        async with http.ws_connect(server.base + "/ws", headers=headers) as again:
            assert b"etl_fanout" in await _first_screen(again)  # room again


async def _first_screen(ws: aiohttp.ClientWebSocketResponse) -> bytes:
    """What the app drew until its header appears (bounded in time)."""
    seen = b""
    async with asyncio.timeout(30):
        while b"etl_fanout" not in seen:
            message = await ws.receive()
            assert message.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT), message
            if message.type == aiohttp.WSMsgType.BINARY:
                seen += message.data
    return seen


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Sec-Fetch-Site": "same-origin"}, 404),  # passes the guard; no such download
        ({"Origin": "{base}"}, 404),
        ({"Sec-Fetch-Site": "same-site"}, 403),  # a page on another port of 127.0.0.1
        ({"Sec-Fetch-Site": "cross-site"}, 403),
        ({"Origin": "http://127.0.0.1:{other}", "Sec-Fetch-Site": "same-origin"}, 403),
        ({}, 403),  # nothing vouches for it
    ],
)
async def test_downloads_answer_only_the_served_origin(
    http: aiohttp.ClientSession, headers: dict[str, str], status: int
) -> None:
    async with running() as server:
        values = {"base": server.base, "other": server.port + 1}
        sent = {k: v.format(**values) for k, v in headers.items()}
        async with http.get(server.base + "/download/abc", headers={**server.cookie, **sent}) as r:
            assert r.status == status


URL_IN_HTML = re.compile(r"""(?:src|href)\s*=\s*["']([^"']*)["']""", re.IGNORECASE)
URL_IN_CSS = re.compile(r"""url\(\s*["']?([^"')]*)["']?\s*\)|@import\s+["']([^"']*)["']""")
CSS_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)


async def test_the_page_and_its_assets_need_nothing_from_the_network(
    http: aiohttp.ClientSession,
) -> None:
    async with running() as server:
        async with http.get(server.base + "/", headers=server.cookie) as response:
            page = await response.text()
        wanted = URL_IN_HTML.findall(page)
        assert {"/static/textual.js", "/static/xterm.css", "/static/serve.css"} <= set(wanted)
        seen: set[str] = set()
        while wanted:
            url = wanted.pop()
            if url in seen:
                continue
            seen.add(url)
            # Same origin: a path on this server, never a scheme or //host.
            assert url.startswith("/") and not url.startswith("//"), url
            async with http.get(server.base + url, headers=server.cookie) as response:
                assert response.status == 200, url
                body = await response.read()
            if url.endswith(".css"):
                text = CSS_COMMENT.sub("", body.decode())
                wanted += [a or b for a, b in URL_IN_CSS.findall(text)]
            elif url.endswith(".js"):
                assert b"://" not in body, url  # no absolute URL anywhere in the script
        assert any(url.endswith(".ttf") for url in seen)  # the font is served here
        async with http.get(server.base + "/static/", headers=server.cookie) as response:
            assert response.status == 404  # no directory listing, nothing but the assets


async def test_the_app_cannot_make_the_browser_open_a_url() -> None:
    sent: list[str] = []

    async def write_str(text: str) -> None:
        sent.append(text)

    async def nothing(*args: object) -> None:
        return None

    app = AppProcess(
        ("unused",),
        lambda text: None,
        write_bytes=nothing,
        write_str=write_str,
        close=nothing,
        download_manager=DownloadManager(),
    )
    await app.on_meta(b'{"type": "open_url", "url": "https://example.org/", "new_tab": true}')
    assert sent == []
    await app.on_meta(
        b'{"type": "deliver_file_start", "key": "k1", "path": "run.json", '
        b'"open_method": "download", "mime_type": "application/json", "encoding": null}'
    )
    assert sent == ['["deliver_file_start", "k1"]']  # what downloads need still passes
