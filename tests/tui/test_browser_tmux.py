"""The run browser in a real terminal (tmux) at 80x24: a store's four kinds of run listed,
filtered by status, each opened in its mode, two compared."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from ..records.mixed_store import mixed_store
from .conftest import ROOT
from .test_tmux import tmux, wait_for

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def keys(session: str, *pressed: str) -> None:
    for key in pressed:  # one at a time, as a person types
        tmux("send-keys", "-t", session, key)
        time.sleep(0.15)


def test_list_filter_open_each_and_compare_at_80x24(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite3"
    ids = mixed_store(store)
    session = f"harness-browse-{uuid.uuid4().hex[:8]}"
    env = f"PYTHONPATH={shlex.quote(str(ROOT))} HARNESS_TUI_CONFIG= HARNESS_TUI_STATE="
    command = f"cd {tmp_path} && {env} {sys.executable} -m harness_tui --store {store}"
    tmux("new-session", "-d", "-s", session, "-x", "80", "-y", "24", command)
    try:
        wait_for(session, "4 of 4")
        for status in ("succeeded", "failed", "interrupted", "abandoned"):
            wait_for(session, status)  # the rows may come a frame after the header
        keys(session, "f", "f")  # running (none), then interrupted
        screen = wait_for(session, "1 of 1 · interrupted")
        assert "succeeded" not in screen.split("\n", 1)[1]
        keys(session, *["f"] * 5)  # every status again
        wait_for(session, "4 of 4 · all statuses")
        keys(session, "Down", "Down", "Enter")  # the failed run: replayed
        wait_for(session, "REPLAY")
        keys(session, "g")
        wait_for(session, "4 of 4")
        keys(session, "m", "m", "c")  # the failed and the succeeded run
        wait_for(session, "DIFF")
        keys(session, "Escape")
        wait_for(session, "2 marked")
        keys(session, "Up", "Up", "Up", "Enter")  # the abandoned run: asked, then resumed
        wait_for(session, "Resume")
        keys(session, "y")
        wait_for(session, "paused")
        keys(session, "c")
        wait_for(session, "succeeded  3/3")
        keys(session, "g")
        wait_for(session, "4 of 4")
        keys(session, "C-q")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False, capture_output=True)
    assert ids["abandoned"] and os.path.exists(store)
