"""Every CLI command over the hostile corpus: no byte a terminal would obey reaches stdout or
stderr, Rich markup in data is never parsed, huge values are shortened, and each command's
output matches its expected file (``HARNESS_UPDATE_GOLDEN=1`` rewrites them)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness_tui.cli import cli

from .commands import STORE, commands, with_run_id
from .corpus import OBEYED, SHOWN, Corpus, build

EXPECTED = Path(__file__).parent / "expected"
# Checked for raw bytes, not compared: outputs holding wall times, timings or run ids, the
# schema (no data in it; its own test pins it), and reports (they name the environment).
NOT_COMPARED = {
    "run-export-stdout", "run-chrome", "run-stored", "runs", "runs-json", "runs-table", "schema",
    "report", "report-html", "export-stored", "export-stored-redacted", "report-stored",
}  # fmt: skip
NAMES = list(commands(Corpus(*[Path("x")] * len(dataclasses.fields(Corpus)))))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    return build(tmp_path_factory.mktemp("hostile"))


def invoke(corpus: Corpus, name: str) -> tuple[int, str, str]:
    args, _ = commands(corpus)[name]
    if "--store" in args and not (corpus.folder / STORE).exists():
        with contextlib.chdir(corpus.folder):
            CliRunner().invoke(cli, commands(corpus)["run-stored"][0])
    args = with_run_id(args, corpus.folder)
    # color=True: click would strip CSI (only CSI) from output it thinks is not a terminal,
    # hiding exactly what this test looks for.
    with contextlib.chdir(corpus.folder):
        result = CliRunner().invoke(cli, args, color=True)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("name", NAMES)
def test_no_data_escape_reaches_the_terminal(corpus: Corpus, name: str) -> None:
    code, out, err = invoke(corpus, name)
    assert code == commands(corpus)[name][1], out + err
    for stream in (out, err):
        raw = OBEYED.findall(stream)
        assert not raw, f"{name}: {raw[:5]} in {stream[:2000]!r}"
    assert max(map(len, (out + err).splitlines() or [""])) <= 12_000, "a huge value was echoed"
    if name in NOT_COMPARED:
        return
    text = f"exit {code}\n--- stdout\n{out}--- stderr\n{err}"
    expected = EXPECTED / f"{name}.txt"
    if os.environ.get("HARNESS_UPDATE_GOLDEN"):
        expected.parent.mkdir(exist_ok=True)
        expected.write_text(text, encoding="utf-8")
    assert text == expected.read_text(encoding="utf-8")


def test_the_hostile_strings_are_shown_as_visible_escapes(corpus: Corpus) -> None:
    _, _, err = invoke(corpus, "run")
    assert f"explode: ValueError: {SHOWN}" in err
    _, out, _ = invoke(corpus, "diff")
    assert "[/] [link=https://evil.example]x[/link]" in out  # text, not a hyperlink
    _, _, err = invoke(corpus, "validate-huge")
    assert "more characters]" in err and len(err) < 2_000


# Ways to write to the terminal other than common.py's helpers and its console: a Rich
# console or table made elsewhere would print data raw.
OTHER_OUTPUT = re.compile(
    r"click\.s?echo\(|(?<![.\w])print\(|sys\.std(out|err)\.write|\bConsole\(|\bTable\("
)


def test_commands_print_only_through_the_sanitising_helpers() -> None:
    cli_dir = Path(__file__).resolve().parents[2] / "harness_tui" / "cli"
    offenders = [
        f"{path.name}:{number}"
        for path in sorted(cli_dir.glob("*.py"))
        if path.name != "common.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if OTHER_OUTPUT.search(line)
    ]
    assert offenders == []


def test_the_commands_console_refuses_what_it_cannot_make_safe() -> None:
    from rich.text import Text

    from harness_tui.cli.common import data_table, table_console

    console = table_console()
    with console.capture() as captured:
        console.print("a \x1b]52;c;x\x07 b")
        table = data_table("\x1b[2J", title="\x9b1m")
        table.add_row("\u202e", Text("\x1b[H"))
        console.print(table)
    out = captured.get()
    assert not OBEYED.findall(out) and "\\x1b]52" in out and "\\u202e" in out
    with pytest.raises(TypeError):
        console.print(Text("\x1b[2J"))
    with pytest.raises(TypeError):
        table.add_row(Text("x", spans=[]).append("y", style="bold"))
