"""Commands that open the Textual workbench. Textual is imported only here, on demand."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..config import Config, state_path
from .app import cli
from .common import echo, payload_option, workbench_store_option
from .completion import WORKFLOW
from .options import record_option, run_options, run_settings

if TYPE_CHECKING:
    from ..tui.app import HarnessApp


def open_workbench(
    file: str | None,
    payload: str | None,
    replay: bool = False,
    store_path: str | None = None,
    no_store: bool = False,
    browse: bool = False,
    read_only: bool = False,
) -> None:
    """Start the app (imports Textual, about 0.3 s, only when the UI is wanted) with the run
    settings of this command's options; without a file, ``browse`` starts on the run browser
    of the store."""
    from ..engine.capture import descriptors
    from ..records.store import default_store_path
    from ..tui.app import create_app
    from ..tui.preferences import Preferences
    from ..workflow.payload import parse_payload

    parsed = None if payload is None else parse_payload(payload, "--payload")
    store = None if no_store or replay else str(store_path or default_store_path())
    settings = run_settings()  # the store is opened (or made) by the app
    config = click.get_current_context().find_root().obj  # config.toml, see cli.app.main
    preferences = (
        Preferences(
            theme=config.get("theme"),
            glyphs=config.get("glyphs"),
            keymap=None if config.get("keymap") is None else Path(config.get("keymap")),
            state=state_path(),
        )
        if isinstance(config, Config)
        else Preferences(state=state_path())
    )
    # Before the app exists: Textual keeps the streams it finds, which must be the real ones.
    with descriptors(linger=True):
        app = create_app(
            file,
            payload=parsed,
            replay=replay,
            settings=settings,
            store_path=store,
            strict=True,
            preferences=preferences,
            browse=browse,
            read_only=read_only,
        )
        try:
            app.run()
            _outlived(app)
        finally:
            if app.store is not None:
                app.store.close()  # checkpoints the write-ahead log: no -wal/-shm files left


def _outlived(app: HarnessApp) -> None:
    """Threads a task started that outlive the workbench keep this process alive (Python waits
    for them at exit): wait for them here, still inside the descriptor capture, so that what
    they print joins the run's unattributed log (recorded again once they end), never the
    shell."""
    from ..engine.capture import drain, install

    install()  # Textual put back the streams it found: route what threads print again
    me = threading.current_thread()
    threads = [t for t in threading.enumerate() if t is not me and not t.daemon]
    if threads:
        count = "1 thread" if len(threads) == 1 else f"{len(threads)} threads"
        echo(f"harness-tui: waiting for {count} a task started to end", err=True)
        try:
            for thread in threads:
                thread.join()
        except KeyboardInterrupt:
            echo("harness-tui: stopped waiting; what they write now is not stored", err=True)
    drain()  # what they wrote to the descriptors is in the run's log before it is stored
    session = None if app.workbench is None else app.workbench.session
    if session is not None and not session.replay:
        session.live.record_stray_output()


@cli.command("open")
@click.argument("file", required=False, type=WORKFLOW)
@payload_option
@workbench_store_option
@click.option("--no-store", is_flag=True, help="Do not record live runs.")
@run_options
@record_option
def open_(file: str | None, payload: str | None, store_path: str | None, no_store: bool) -> None:
    """Open the workbench on a workflow file (or a run export); live runs are recorded in the
    run store as they happen, so `harness-tui resume` can finish a run after a crash. Without
    a file: the run browser, the list of the runs in the store."""
    open_workbench(
        file,
        payload,
        store_path=store_path,
        no_store=no_store,
        browse=file is None and not no_store,
    )


@cli.command()
@click.argument("file", type=WORKFLOW)
@click.option(
    "--read-only",
    is_flag=True,
    help="Refuse what could run or import code: opening another file, re-running, diffing.",
)
def show(file: str, read_only: bool) -> None:
    """Open an exported run in replay mode: step through it, no user code runs."""
    open_workbench(file, None, replay=True, read_only=read_only)
