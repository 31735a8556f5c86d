"""Every CLI command over the hostile corpus with a terminal on stdout and stderr (a pty), as
a person runs them: the paths taken only on a terminal (tables, colours, the progress bar)
print no byte a terminal would obey from data. What remains after removing the sequences Rich
draws with (colours, the progress bar's cursor moves) must hold no control character."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import re
import struct
import sys
import termios
import threading
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from harness_tui.cli import cli

from .commands import commands, with_run_id
from .corpus import OBEYED, SHOWN, Corpus, build
from .test_cli_corpus import NAMES

# Ours: SGR colours and styles, and the cursor moves of a transient progress bar.
RICH_DRAWING = re.compile(r"\x1b\[[0-9;]*m|\x1b\[\?25[lh]|\x1b\[2K|\x1b\[[0-9]*[AG]|\r(?!\n)")
END = "\n--- command ended ---\n"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    made = build(tmp_path_factory.mktemp("hostile-pty"))
    with contextlib.chdir(made.folder):
        CliRunner().invoke(cli, commands(made)["run-stored"][0])
    return made


@contextlib.contextmanager
def terminal(columns: int = 120) -> Iterator[list[bytes]]:
    """File descriptors 1 and 2 (and ``sys.stdout``, ``sys.stderr``) on one new pty for the
    block; what the terminal received is in the list once the block ends."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    received: list[bytes] = []
    ended = threading.Event()

    def read() -> None:  # drains the pty while the command writes, so a write never blocks
        seen = b""
        while not seen.endswith(END.replace("\n", "\r\n").encode()):
            chunk = os.read(master, 65536)
            received.append(chunk)
            seen = seen[-64:] + chunk
        ended.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    saved = os.dup(1), os.dup(2)
    stream = open(os.dup(slave), "w", encoding="utf-8", errors="replace", buffering=1)  # noqa: SIM115
    old = sys.stdout, sys.stderr
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(slave, 1)
        os.dup2(slave, 2)
        sys.stdout = sys.stderr = stream
        yield received
    finally:
        stream.flush()
        sys.stdout, sys.stderr = old
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.write(slave, END.encode())
        assert ended.wait(60), "the terminal's reader never saw the end of the output"
        for fd in (*saved, slave, master):
            os.close(fd)
        stream.close()


def on_a_terminal(corpus: Corpus, name: str) -> tuple[int, str]:
    args = with_run_id(commands(corpus)[name][0], corpus.folder)
    code = 0
    with contextlib.chdir(corpus.folder), terminal() as received:
        try:
            cli.main(args, prog_name="harness-tui", standalone_mode=True)
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else 1
    text = b"".join(received).decode("utf-8", "replace").replace("\r\n", "\n")
    return code, text.removesuffix(END)


@pytest.fixture(autouse=True)
def a_colour_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm-256color")
    for name in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("name", NAMES)
def test_no_data_escape_reaches_a_real_terminal(corpus: Corpus, name: str) -> None:
    code, text = on_a_terminal(corpus, name)
    assert code == commands(corpus)[name][1], text[-3000:]
    raw = OBEYED.findall(RICH_DRAWING.sub("", text))
    assert not raw, f"{name}: {raw[:5]} in {text[:3000]!r}"


def test_the_terminal_paths_were_taken(corpus: Corpus) -> None:
    _, text = on_a_terminal(corpus, "diff")
    assert "\x1b[" in text  # Rich drew in colour: this was a terminal
    flat = text.replace("\n", "")  # lines wrap at the terminal's width
    assert f"description: {SHOWN}" in flat and f"-> v2 {SHOWN}" in flat
    _, text = on_a_terminal(corpus, "plan")
    assert "┃" in text or "│" in text  # the table, not the tab-separated lines for pipes


def test_the_drawing_allowed_is_not_what_the_corpus_sends() -> None:
    from .corpus import HOSTILE

    assert OBEYED.findall(RICH_DRAWING.sub("", HOSTILE))
