"""Commands that open the Textual workbench. Textual is imported only here, on demand."""

from __future__ import annotations

import click

from .app import cli
from .common import payload_option


def open_workbench(file: str | None, payload: str | None, replay: bool = False) -> None:
    """Start the app (imports Textual, about 0.3 s, only when the UI is wanted)."""
    from ..tui.app import create_app

    app = create_app(file, payload=payload, replay=replay)
    app.run()


@cli.command("open")
@click.argument("file", required=False, type=click.Path(dir_okay=False))
@payload_option
def open_(file: str | None, payload: str | None) -> None:
    """Open the workbench on a workflow file (or a run export)."""
    open_workbench(file, payload)


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False))
def show(file: str) -> None:
    """Open an exported run in replay mode: step through it, no user code runs."""
    open_workbench(file, None, replay=True)
