"""The real app in a real terminal (tmux) over the hostile corpus: opened, stepped, inspected,
its logs, open dialog, diff screen and error panel shown. The terminal must end as it began:
the pane title unchanged, no clipboard write, and every data escape on screen as visible text.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from .corpus import Corpus, build

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

TITLE = "harness-hostile-test"
SGR = re.compile(r"\x1b\[[0-9;:]*m")


class Terminal:
    """One tmux server of our own (its own socket, no user config) and one pane in it."""

    def __init__(self, folder: Path) -> None:
        self.socket = f"harness-hostile-{uuid.uuid4().hex[:8]}"
        self.folder = folder
        self.screens: list[str] = []

    def tmux(self, *args: str) -> str:
        command = ["tmux", "-L", self.socket, "-f", "/dev/null", *args]
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout

    def start(self, *args: str) -> None:
        script = self.folder / f"start-{uuid.uuid4().hex[:6]}.sh"
        quoted = " ".join(f"'{a}'" for a in args)
        # COLUMNS and LINES (a test runner may set them) would override the pane's size.
        script.write_text(
            f"unset COLUMNS LINES; cd '{self.folder}' && "
            f"exec '{sys.executable}' -m harness_tui {quoted}\n"
        )
        self.tmux("new-session", "-d", "-s", "t", "-x", "160", "-y", "48", f"sh {script}")
        self.tmux("set-option", "-g", "set-clipboard", "on")  # OSC 52 would fill a buffer
        self.tmux("set-option", "-g", "remain-on-exit", "on")
        self.tmux("select-pane", "-t", "t", "-T", TITLE)

    def keys(self, *keys: str) -> None:
        for key in keys:
            self.tmux("send-keys", "-t", "t", key)
            time.sleep(0.15)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-e", "-p", "-t", "t")

    def wait_for(self, text: str, seconds: float = 30) -> str:
        deadline = time.monotonic() + seconds
        while True:
            screen = self.screen()
            if text in SGR.sub("", screen):
                self.check(screen)
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never appeared; the screen was:\n{screen}")
            time.sleep(0.1)

    def wait_gone(self, text: str, seconds: float = 30) -> None:
        """Wait until a modal showing ``text`` has closed, so the next key reaches the screen."""
        deadline = time.monotonic() + seconds
        while text in SGR.sub("", self.screen()):
            assert time.monotonic() < deadline, f"{text!r} never went away"
            time.sleep(0.1)

    def check(self, screen: str) -> None:
        """Nothing from the data changed the terminal: title, clipboard, screen content."""
        assert self.tmux("display", "-p", "-t", "t", "#{pane_title}").strip() == TITLE
        assert self.tmux("list-buffers") == "", "a clipboard write (OSC 52) got through"
        # capture-pane -e writes only colours (SGR): any other escape came from the data.
        assert "\x1b" not in SGR.sub("", screen)
        self.screens.append(SGR.sub("", screen))

    def stop(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, check=False)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    return build(tmp_path_factory.mktemp("hostile-tmux"))


@pytest.fixture
def terminal(corpus: Corpus) -> Iterator[Terminal]:
    term = Terminal(corpus.folder)
    try:
        yield term
    finally:
        term.stop()


def seen(terminal: Terminal) -> str:
    return "\n".join(terminal.screens)


def test_a_hostile_workflow_opened_run_and_inspected(terminal: Terminal) -> None:
    terminal.start("hostile.yaml", "--no-store")
    terminal.wait_for("Step")
    terminal.keys("c")
    terminal.wait_for("failed")
    for task in ("explode", "echo", "shout"):  # each in the inspector; shout printed
        terminal.keys("/")
        terminal.wait_for("Find a task")
        terminal.keys(task, "Enter")
        terminal.wait_for(f'name: "{task}"')
    terminal.keys("l")
    terminal.wait_for("log ")
    terminal.keys("Escape")
    terminal.wait_gone("escape close")
    terminal.keys("o")
    terminal.wait_for("Open a workflow")
    terminal.keys("Escape")
    terminal.wait_gone("Open a workflow")
    terminal.keys("d")
    terminal.wait_for("Compare with")
    terminal.keys("C-u", "hostile_v2.yaml", "Enter")
    terminal.wait_for("1 changed")
    terminal.keys("n")  # the changed task, its with: values in the inspector
    terminal.wait_for("multi: ")
    terminal.keys("Escape", "C-q")
    text = seen(terminal)
    assert "\\x1b]0;pwned" in text and "\\x9b31m" in text
    assert "[link=https://evil.example]" in text  # markup shown as text


def test_a_forged_export_shown_and_stepped(terminal: Terminal) -> None:
    terminal.start("show", "forged.json")
    terminal.wait_for("Step")
    terminal.keys("n", "n", "n", "n", "Down", "Down", "Down")
    terminal.keys("[", "[")  # back in time, the inspector follows
    terminal.check(terminal.screen())
    terminal.keys("C-q")
    assert "\\x1b" in seen(terminal)


def test_an_invalid_workflow_in_the_error_panel(terminal: Terminal) -> None:
    terminal.start("--no-store")  # nothing open (without it, the run browser of the store)
    terminal.wait_for("Nothing open")
    terminal.keys("o")
    terminal.wait_for("Open a workflow")
    terminal.keys("C-u", "invalid.yaml", "Enter")  # C-u: the filter starts empty
    terminal.wait_for("Cannot open")
    terminal.wait_for("invalid task name")  # the panel's lines may come a frame later
    terminal.keys("C-q")
    assert "invalid task name '\\x1b[2J" in seen(terminal)
