"""``harness-tui serve``: the workbench in a browser (docs/serve.md). Needs the ``web`` extra."""

from __future__ import annotations

import click

from .app import cli
from .common import EXIT_INVALID, die, echo, echo_error_line, workbench_store_option
from .completion import WORKFLOW


@cli.command()
@click.argument("file", required=False, type=WORKFLOW)
@click.option(
    "--replay",
    is_flag=True,
    help="FILE is a run export: open it read-only; nothing that runs or imports code can act.",
)
@workbench_store_option
@click.option("--no-store", is_flag=True, help="Do not record live runs.")
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8000,
    show_default=True,
    help="The port (0: any free one).",
)
@click.option(
    "--expose",
    is_flag=True,
    help="Allow a --host that is not loopback (plain HTTP on the network: see docs/serve.md).",
)
@click.option(
    "--allow-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME[:PORT]",
    help="Also answer to this Host (a tunnel's or proxy's name); the first names the URL.",
)
@click.option(
    "--max-sessions",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="Browser tabs at once: each runs its own workbench, and so its own run.",
)
def serve(
    file: str | None,
    replay: bool,
    store_path: str | None,
    no_store: bool,
    host: str,
    port: int,
    expose: bool,
    allowed_hosts: tuple[str, ...],
    max_sessions: int,
) -> None:
    """Serve the workbench to a browser: on loopback, behind the token of the URL it prints.

    Each browser tab runs its own workbench on FILE (a workflow or a run export; none: what
    harness-tui opens with no file). Exports and reports arrive as downloads. Stop with Ctrl+C.
    """
    try:
        from ..serve.command import Target, app_command
        from ..serve.guard import HostError, is_loopback, parse_host
        from ..serve.server import ServeSettings, bind
        from ..serve.server import serve as run_server
    except ImportError as exc:
        die(f"harness-tui serve needs the web extra ({exc.name} is missing): "
            "pip install 'harness-tui[web]'")  # fmt: skip
    if replay and file is None:
        die("--replay needs a run export: harness-tui serve --replay RUN.json")
    if not is_loopback(host):
        if not expose:
            die(
                f"--host {host} is not loopback: anyone who can reach it could run workflows "
                "here. Prefer an SSH tunnel (docs/serve.md), or add --expose"
            )
        echo_error_line(
            f"warning: serving on {host} over plain HTTP: the token and the session travel "
            "unencrypted; anyone on the network who sees them can run workflows here"
        )
    for value in allowed_hosts:
        try:
            parse_host(value, port or 1)
        except HostError as exc:
            die(f"--allow-host {exc}")
    if file is not None:
        _check(file, replay)
    target = Target(file=file, store=store_path, no_store=no_store, replay=replay)
    title = "harness-tui" if file is None else f"harness-tui: {file}"
    settings = ServeSettings(tuple(app_command(target)), title, max_sessions)
    try:
        listening = bind(host, port)
    except OSError as exc:
        die(f"cannot listen on {host}:{port}: {exc.strerror or exc} (--port 0 picks a free one)")

    def announce(url: str) -> None:
        echo(f"harness-tui serve: open {url}")
        echo("(the token is exchanged for a cookie; share the URL only through a tunnel)")

    def app_error(text: str) -> None:
        for line in text.strip().splitlines()[-20:]:
            echo_error_line(f"app: {line}")

    run_server(settings, listening, list(allowed_hosts), announce, app_error)


def _check(file: str, replay: bool) -> None:
    """FILE opens (one clear line and exit 2 if not) before anyone is invited to open it;
    a Python harness is left to the app, since checking it would import its code here."""
    from ..files import FileKind, file_kind
    from ..records.export import RunRecord
    from ..workflow.sources import is_python_ref, load_any

    if is_python_ref(file):
        if replay:
            die(f"{file}: --replay needs a run export, not a Python harness")
        return
    kind = file_kind(file)
    if kind is FileKind.EXPORT:
        RunRecord.read(file)  # a RecordError is one line and exit 2 (see cli.app)
    elif replay:
        die(f"{file}: --replay needs a run export, not a workflow file", EXIT_INVALID)
    else:
        load_any(file)
