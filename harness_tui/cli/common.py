"""Helpers shared by the commands: input parsing and the one-line error convention."""

from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NoReturn, cast

import click

from ..engine.errors import HarnessError
from ..engine.untrusted import json_visible, shorten, terminal_text, visible
from ..workflow.limits import LINE_CHARS

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from ..workflow.loader import Workflow

EXIT_OK, EXIT_FAILED, EXIT_INVALID, EXIT_INTERRUPTED = 0, 1, 2, 130


_ascii_only = False  # see use_glyphs


def use_glyphs(glyphs: str) -> None:
    """Decide, once at start-up, whether what the commands print keeps its glyphs
    (``"unicode"``) or shows their ASCII stand-ins (``"ascii"``, from ``config.toml``)."""
    global _ascii_only
    _ascii_only = glyphs == "ascii"


def _to_ascii(text: str) -> str:
    # Imported only when asked for: the glyph table lives with the workbench's glyphs, and
    # validate and plan load nothing of the workbench.
    from ..tui.glyphs import to_ascii

    return to_ascii(text)


class _AsciiStream:
    """A text stream that writes every glyph as its ASCII stand-in (Rich's tables and bars)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return int(self._stream.write(_to_ascii(text)))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def echo(text: str, err: bool = False, nl: bool = True) -> None:
    """The one way the commands print text: untrusted values inside it (task names, errors,
    file names, logs) cannot drive the terminal, whatever path they took to get here."""
    text = terminal_text(text)
    click.echo(_to_ascii(text) if _ascii_only else text, err=err, nl=nl)


def echo_json(value: Any, err: bool = False, sort_keys: bool = False) -> None:
    """Print ``value`` as indented JSON, with nothing in it that a terminal obeys."""
    echo_json_text(json.dumps(value, indent=2, ensure_ascii=False, sort_keys=sort_keys), err)


def echo_json_text(text: str, err: bool = False, nl: bool = True) -> None:
    """Print JSON text (an export, a trace) as the same JSON value, with the controls that
    JSON leaves raw (DEL, C1, bidi) escaped."""
    click.echo(json_visible(text), err=err, nl=nl)


def echo_error_line(line: str) -> None:
    """One line of an error on stderr: shortened with a marker if it is huge, and visible
    (a line break from a file name or a value is shown as ``\\n``: it stays one line)."""
    click.echo(visible(shorten(line, LINE_CHARS)), err=True)


def die(message: str, code: int = EXIT_INVALID) -> NoReturn:
    """Print one clear line to stderr and exit."""
    echo_error_line(f"error: {message}")
    sys.exit(code)


def load_or_die(path: str) -> Workflow:
    """Load a workflow; its problems reach the user through :func:`exit_with_error`."""
    # Deferred: the loader brings pydantic, PyYAML and JMESPath (about 110 ms), which
    # `--help`, `runs` and `replay` of a broken path do not need.
    from ..workflow.sources import load_any

    try:
        return load_any(path)
    except KeyboardInterrupt:
        die_interrupted_loading()


def die_interrupted_loading() -> NoReturn:
    """Ctrl+C (or a ``KeyboardInterrupt`` raised) while a Python workflow's module or factory
    ran: an interruption, exit 130, not click's ``Aborted!`` and exit 1."""
    die("interrupted while loading the workflow", EXIT_INTERRUPTED)


def exit_with_error(error: HarnessError) -> NoReturn:
    """The one place an error reaches the user: a workflow's problems one
    ``file:line:col: message`` line each, anything else one ``error:`` line; exit 2."""
    from ..workflow.errors import WorkflowError

    lines = getattr(error, "lines", None)  # a file the workbench could not open
    if isinstance(error, WorkflowError):
        for problem in error.problems:
            echo_error_line(str(problem))
    elif isinstance(lines, list):
        for line in lines:
            echo_error_line(str(line))
    else:
        echo_error_line(f"error: {error}")
    sys.exit(EXIT_INVALID)


def parse_payload(option: str | None, default: Any, what: str = "--payload") -> Any:
    """``--payload '{"a": 1}'`` or ``--payload @file.json``; the workflow's default if None.

    Raises:
        PayloadError: one line saying what is wrong (reported by the command group).
    """
    from ..workflow.payload import parse_payload as parse

    return default if option is None else parse(option, what).value


def table_console(stderr: bool = False) -> Console:
    """The one Rich console of the commands, on stdout (or stderr, for a progress bar): the
    terminal's width, or unbounded when piped, so a script or a log sees whole ids and
    statuses instead of ones cut to 80 columns.

    Nothing it prints can carry a raw control character from data: it prints text (made
    :func:`~harness_tui.engine.untrusted.terminal_text`), tables made by :func:`data_table`
    (each title, header and cell made visible as it is added) and Rich's own cursor
    controls and line breaks, and refuses anything else.
    """
    console_class, _ = _data_classes()
    stream = sys.stderr if stderr else sys.stdout
    # Markup and emoji codes off: lines and cells hold data (`[/]` in a value is text, not a
    # closing tag; `:x:` stays three characters).
    file = cast("IO[str]", _AsciiStream(stream)) if _ascii_only else None
    if stream.isatty():
        return console_class(markup=False, emoji=False, stderr=stderr, file=file)
    return console_class(width=10_000, markup=False, emoji=False, stderr=stderr, file=file)


def data_table(*headers: str, **options: Any) -> Table:
    """A Rich table for :func:`table_console`: its title, headers and cells (text, or Rich
    ``Text`` without styled spans) are made visible as they are given."""
    _, table_class = _data_classes()
    return table_class(*headers, **options)


@functools.cache
def _data_classes() -> tuple[type[Console], type[Table]]:
    # Made on first use: Rich costs its import time only to the commands that draw.
    from rich.console import Console, NewLine
    from rich.control import Control
    from rich.table import Table
    from rich.text import Text

    def cell(value: object) -> str | Text:
        if isinstance(value, str):
            return visible(value)
        if isinstance(value, Text) and not value.spans:
            return Text(
                visible(value.plain),
                style=value.style,
                justify=value.justify,
                overflow=value.overflow,
                no_wrap=value.no_wrap,
            )
        raise TypeError(f"a data table holds text, not {type(value).__name__}")

    class DataTable(Table):
        def __init__(self, *headers: str, title: str | Text | None = None, **options: Any):
            super().__init__(*headers, title=None if title is None else cell(title), **options)

        def add_column(self, header: Any = "", *args: Any, **options: Any) -> None:
            super().add_column(cell(header), *args, **options)

        def add_row(self, *cells: Any, **options: Any) -> None:
            super().add_row(*(None if c is None else cell(c) for c in cells), **options)

    class DataConsole(Console):
        def print(self, *objects: Any, **options: Any) -> None:
            for thing in objects:
                if not isinstance(thing, str | DataTable | Control | NewLine):
                    raise TypeError(f"not printable as data: {type(thing).__name__}")
            safe = (terminal_text(o) if isinstance(o, str) else o for o in objects)
            super().print(*safe, **options)

    return DataConsole, DataTable


workers_option = click.option(
    "--workers",
    type=click.IntRange(1, 256),
    default=1,
    show_default=True,
    help="Tasks run at once, in threads; the trace and digests are the serial run's.",
)


def _store_file(context: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--store`` for the commands that open the store later (the workbench, the server):
    a folder is refused now, in the store's own one line."""
    if value is not None and os.path.isdir(value):
        from ..records.store import RunStore, StoreError

        try:
            RunStore.refuse_folder(Path(value))
        except StoreError as exc:
            exit_with_error(exc)
    return value


workbench_store_option = click.option(
    "--store", "store_path", type=click.Path(), callback=_store_file, help="The run store."
)

payload_option = click.option(
    "--payload",
    metavar="JSON|@FILE",
    help="Input payload as JSON text or @file.json (default: the workflow's own).",
)
