"""The command line: the only place that prints and picks exit codes.

Exit codes: 0 success, 1 a failed run, 2 invalid input.
"""

from __future__ import annotations

import click

from . import __version__


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="harness-tui")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """A deterministic workflow harness with a terminal workbench."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


def main() -> None:
    """Console entry point."""
    cli()
