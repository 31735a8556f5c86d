"""The served workbench's policy without a server: hosts, origins, token and cookie."""

from __future__ import annotations

import pytest

from harness_tui.serve.guard import Guard, HostError, default_hosts, is_loopback, origin_host
from harness_tui.serve.guard import parse_host as host


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("127.0.0.1", "127.0.0.1:8000"),
        ("LocalHost", "localhost:8000"),
        ("box.example:9000", "box.example:9000"),
        ("::1", "[::1]:8000"),
        ("[::1]:9000", "[::1]:9000"),
        ("[::1]", "[::1]:8000"),
    ],
)
def test_hosts_are_written_as_a_browser_sends_them(value: str, expected: str) -> None:
    assert host(value, 8000) == expected


@pytest.mark.parametrize(
    "value", ["", "a/b", "a:b", "a:0", "a:70000", "[::1", "[::1]x", "user@box", ":80", "1:2:zz"]
)
def test_a_host_that_is_not_one_is_refused_with_a_reason(value: str) -> None:
    with pytest.raises(HostError, match=r"host|port|IPv6|address"):
        host(value, 8000)


@pytest.mark.parametrize(
    ("name", "loopback"),
    [("127.0.0.1", True), ("127.1.2.3", True), ("localhost", True), ("::1", True),
     ("[::1]", True), ("0.0.0.0", False), ("192.0.2.1", False), ("box.example", False)],
)  # fmt: skip
def test_loopback(name: str, loopback: bool) -> None:
    assert is_loopback(name) is loopback


def test_origins_name_scheme_host_and_port() -> None:
    assert origin_host("http://127.0.0.1:8000") == "127.0.0.1:8000"
    assert origin_host("http://LOCALHOST") == "localhost:80"
    assert origin_host("https://box.example") == "box.example:443"
    assert origin_host("http://[::1]:8000") == "[::1]:8000"
    for bad in ("null", "file://", "ws://127.0.0.1:8000", "http://127.0.0.1:8000/x", "http://:1"):
        assert origin_host(bad) is None, bad


def test_a_loopback_server_answers_to_its_loopback_names_and_the_hosts_allowed() -> None:
    assert default_hosts("127.0.0.1", 8000, []) == {
        "127.0.0.1:8000", "localhost:8000", "[::1]:8000"
    }  # fmt: skip
    exposed = default_hosts("192.0.2.7", 8000, ["box.example"])
    assert exposed == {"192.0.2.7:8000", "box.example:8000"}  # no loopback name: not bound there
    assert "127.0.0.1:8000" in default_hosts("0.0.0.0", 8000, [])


def test_same_origin_means_the_requests_own_host_and_port() -> None:
    guard = Guard(default_hosts("127.0.0.1", 8000, []), 8000)
    ok = guard.same_origin
    assert ok("127.0.0.1:8000", "http://127.0.0.1:8000", websocket=True) is None
    assert ok("localhost:8000", "http://localhost:8000", websocket=True) is None
    assert ok("127.0.0.1:8000", "http://localhost:8000", websocket=True) == "foreign Origin"
    assert ok("127.0.0.1:8000", "http://127.0.0.1:8001", websocket=True) == "foreign Origin"
    assert ok("127.0.0.1:8000", None, websocket=True) == "no Origin"
    assert ok("evil.example:8000", "http://evil.example:8000", websocket=True) == "unknown Host"
    assert ok("127.0.0.1:8000", None, "same-origin") is None  # a download in a new tab
    assert ok("127.0.0.1:8000", None, "same-site") is not None
    assert ok("127.0.0.1:8000", None, "same-origin", websocket=True) == "no Origin"


def test_token_and_cookie_are_distinct_random_secrets_compared_whole() -> None:
    one, two = (Guard(frozenset(), 8000) for _ in range(2))
    assert len({one.token, one.secret, two.token, two.secret}) == 4
    assert len(one.token) >= 43  # 32 random bytes
    assert one.token_ok(one.token) and not one.token_ok(one.token[:-1])
    assert not one.token_ok(None) and not one.token_ok(one.secret)
    assert one.cookie_ok(one.secret) and not one.cookie_ok(one.token)
    assert one.set_cookie_header() == (
        f"harness-tui-8000={one.secret}; HttpOnly; SameSite=Strict; Path=/"
    )
