"""Helpers shared by the commands: input parsing and the one-line error convention."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, NoReturn

import click

from ..engine.errors import HarnessError

if TYPE_CHECKING:
    from rich.console import Console

    from ..workflow.loader import Workflow

EXIT_OK, EXIT_FAILED, EXIT_INVALID, EXIT_INTERRUPTED = 0, 1, 2, 130


def die(message: str, code: int = EXIT_INVALID) -> NoReturn:
    """Print one clear line to stderr and exit."""
    click.echo(f"error: {message}", err=True)
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
            click.echo(str(problem), err=True)
    elif isinstance(lines, list):
        for line in lines:
            click.echo(str(line), err=True)
    else:
        click.echo(f"error: {error}", err=True)
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

    return Console() if sys.stdout.isatty() else Console(width=10_000)


payload_option = click.option(
    "--payload",
    metavar="JSON|@FILE",
    help="Input payload as JSON text or @file.json (default: the workflow's own).",
)
