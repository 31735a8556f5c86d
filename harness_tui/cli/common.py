"""Helpers shared by the commands: input parsing and the one-line error convention."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, NoReturn

import click

from ..engine.errors import HarnessError
from ..engine.untrusted import json_visible, shorten, terminal_text, visible

if TYPE_CHECKING:
    from rich.console import Console

    from ..workflow.loader import Workflow

EXIT_OK, EXIT_FAILED, EXIT_INVALID, EXIT_INTERRUPTED = 0, 1, 2, 130


# One line of an error never runs longer than this, whatever value it quotes.
ERROR_LINE_LIMIT = 2_000


def echo(text: str, err: bool = False, nl: bool = True) -> None:
    """The one way the commands print text: untrusted values inside it (task names, errors,
    file names, logs) cannot drive the terminal, whatever path they took to get here."""
    click.echo(terminal_text(text), err=err, nl=nl)


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
    click.echo(visible(shorten(line, ERROR_LINE_LIMIT)), err=True)


def die(message: str, code: int = EXIT_INVALID) -> NoReturn:
    """Print one clear line to stderr and exit."""
    echo_error_line(f"error: {message}")
    sys.exit(code)


def load_or_die(path: str) -> Workflow:
    """Load a workflow; its problems reach the user through :func:`exit_with_error`."""
    # Deferred: the loader brings pydantic, PyYAML and JMESPath (about 110 ms), which
    # `--help`, `runs` and `replay` of a broken path do not need.
    from ..workflow.sources import load_any

    return load_any(path)


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


def table_console() -> Console:
    """A console for tables on stdout: the terminal's width, or unbounded when piped, so a
    script or a log sees whole ids and statuses instead of ones cut to 80 columns."""
    from rich.console import Console

    # Markup off: cells and lines hold data (`[/]` in a value is text, not a closing tag).
    if sys.stdout.isatty():
        return Console(markup=False)
    return Console(width=10_000, markup=False)


workers_option = click.option(
    "--workers",
    type=click.IntRange(1, 256),
    default=1,
    show_default=True,
    help="Tasks run at once, in threads; the trace and digests are the serial run's.",
)

payload_option = click.option(
    "--payload",
    metavar="JSON|@FILE",
    help="Input payload as JSON text or @file.json (default: the workflow's own).",
)
