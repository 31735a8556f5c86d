"""End to end in a real browser: ``harness-tui serve`` driven by Playwright in the system
Chromium. It opens the printed URL, runs a workflow whose task writes raw bytes to file
descriptor 1 (which must not reach the protocol stream and freeze the page), sees the run
finish, downloads the export, and ``harness-tui replay`` accepts it. Every request the browser
makes goes to the served address."""

from __future__ import annotations

import json
import os
import re
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TASKS = """\
import os
def noisy(inputs):
    # A packet header of textual-serve's protocol, then junk: were it on the protocol stream,
    # the server would read a 4 GiB packet and the page would freeze.
    os.write(1, b"D\\xff\\xff\\xff\\xffnot a packet\\n")
    print("printed", flush=True)
    return {"n": 1}
def after(inputs):
    os.write(1, b"after\\n")
    return inputs["context"]["results"]["noisy"]["n"] + 1
"""
WORKFLOW = """\
name: noisy
tasks:
  noisy: {run: 'noisy_tasks:noisy'}
  after: {run: 'noisy_tasks:after', depends_on: [noisy]}
"""
ANSI = re.compile(r"\x1b\[[0-9;?<>=]*[A-Za-z~]")


def _browser_or_skip() -> Any:
    """Playwright's sync API, or a skip saying what is missing (under CI: a failure)."""
    missing = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing = "the Python package playwright is not installed (pip install -e '.[test]')"
    if missing is None and not CHROMIUM.exists():
        missing = f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium)"
    if missing is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the browser test must run under CI: {missing}")
        pytest.skip(missing)
    return sync_playwright


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """``harness-tui serve`` on the noisy workflow; yields the URL it printed."""
    (tmp_path / "noisy_tasks.py").write_text(TASKS)
    (tmp_path / "noisy.yaml").write_text(WORKFLOW)
    server = subprocess.Popen(
        [sys.executable, "-m", "harness_tui", "serve", "noisy.yaml", "--port", "0", "--no-store"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert server.stdout is not None
    try:
        selector = selectors.DefaultSelector()
        selector.register(server.stdout, selectors.EVENT_READ)
        assert selector.select(timeout=30), "serve printed no URL"
        line = server.stdout.readline().decode()
        found = re.search(r"http://127\.0\.0\.1:\d+/\?token=\S+", line)
        assert found, line
        yield found.group()
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            raise
        assert server.stderr is not None
        errors = server.stderr.read().decode()
        assert "Traceback" not in errors, errors


@pytest.mark.slow
def test_a_browser_runs_the_workflow_and_downloads_an_export(served: str, tmp_path: Path) -> None:
    sync_playwright = _browser_or_skip()
    served_at = urlsplit(served).netloc
    requests: list[str] = []
    screen: list[bytes] = []
    downloads: list[Any] = []

    def shown() -> str:
        return ANSI.sub("", b"".join(screen).decode("utf-8", "replace"))

    def wait_for(text: str, page: Any, seconds: float = 20) -> None:
        deadline = time.monotonic() + seconds
        while text not in shown():
            assert time.monotonic() < deadline, f"never shown: {text!r}"
            page.wait_for_timeout(50)  # lets Playwright deliver the frames it received

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        viewport = {"width": 1280, "height": 800}
        context = browser.new_context(accept_downloads=True, viewport=viewport)
        context.on("request", lambda request: requests.append(request.url))
        context.on("page", lambda tab: tab.on("download", lambda d: downloads.append(d)))
        page = context.new_page()
        # The screen as the app sends it (the page draws on a canvas, which has no text).
        page.on("websocket", lambda ws: ws.on("framereceived", lambda data: screen.append(
            data if isinstance(data, bytes) else b""
        )))  # fmt: skip
        page.goto(served)
        assert urlsplit(page.url).query == ""  # the token bought a cookie and left the URL
        page.wait_for_selector("body.-first-byte", timeout=30_000)
        wait_for("noisy", page)
        page.click("#terminal")
        page.keyboard.press("c")  # continue: run to the end
        wait_for("run succeeded", page)
        page.screenshot(path=str(tmp_path / "served.png"))

        page.keyboard.press("e")  # export: the name proposed, Enter sends it to the browser
        wait_for(".json", page)
        page.keyboard.press("Enter")
        deadline = time.monotonic() + 20
        while not downloads:
            assert time.monotonic() < deadline, "no download arrived"
            page.wait_for_timeout(50)
        export = tmp_path / "downloaded.json"
        downloads[0].save_as(export)
        assert downloads[0].suggested_filename.startswith("noisy-")

        screen.clear()  # a reload finds the one session free again: a fresh workbench
        page.reload()
        wait_for("noisy", page)
        browser.close()

    assert requests and all(urlsplit(url).netloc == served_at for url in requests), requests
    document = json.loads(export.read_text())
    logs = {attempt["task"]: attempt["log"] for attempt in document["attempts"]}
    assert logs["noisy"]["text"].startswith("D\\xff")  # fd 1 went to the attempt's log
    assert logs["after"]["text"] == "after\n"
    replayed = subprocess.run(
        [sys.executable, "-m", "harness_tui", "replay", str(export)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert replayed.returncode == 0, replayed.stderr


@pytest.mark.parametrize(("ci", "outcome"), [("true", "failed"), ("", "skipped")])
def test_a_missing_browser_skips_here_but_fails_under_ci(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, ci: str, outcome: str
) -> None:
    monkeypatch.setattr(sys.modules[__name__], "CHROMIUM", tmp_path / "no-chromium")
    monkeypatch.setenv("CI", ci)
    expected = pytest.fail.Exception if outcome == "failed" else pytest.skip.Exception
    with pytest.raises(expected, match=r"no Chromium at|playwright"):
        _browser_or_skip()
