"""``verify --calls offline|fill|live`` (``--offline``): the recorded-calls
session a command hands its run (docs/recording.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from .common import die

if TYPE_CHECKING:
    from ..engine.recorded_calls import CallSession
    from ..records.export import RunRecord

__all__ = [
    "calls_options",
    "intercept",
    "replaying_session",
    "session_options",
]

F = TypeVar("F", bound=Callable[..., Any])

MODES = ("offline", "fill", "live")


def _keep(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> None:
    ctx.meta[f"calls.{param.name}"] = value


def session_options(fn: F) -> F:
    """``--volatile PATH`` and ``--secret-header NAME`` (both repeatable), read by
    :func:`~.options.run_settings` and :func:`replaying_session`."""
    fn = click.option(
        "--volatile",
        multiple=True,
        metavar="PATH",
        expose_value=False,
        callback=_keep,
        help="A JSON path of request bodies left out of matching ('$.metadata.request_id', "
        "'$.messages[*].id'); repeatable.",
    )(fn)
    return click.option(
        "--secret-header",
        "secret_headers",
        multiple=True,
        metavar="NAME",
        expose_value=False,
        callback=_keep,
        help="A header never recorded, beside authorization, cookie, x-api-key and the like; "
        "repeatable.",
    )(fn)


def _session(mode: str, **kwargs: Any) -> CallSession:
    """The session with this command's ``--volatile`` and ``--secret-header``."""
    from ..engine.recorded_calls import CallMode, CallSession

    meta = click.get_current_context().meta
    try:
        return CallSession(
            CallMode(mode),
            volatile=meta.get("calls.volatile", ()),
            secret_headers=meta.get("calls.secret_headers", ()),
            **kwargs,
        )
    except ValueError as exc:
        die(f"--volatile: {exc}")


def calls_options(fn: F) -> F:
    """``--calls MODE`` and its short form ``--offline`` (and :func:`session_options`)."""
    fn = session_options(fn)
    fn = click.option(
        "--offline",
        is_flag=True,
        help="Short for --calls offline: answer every request from the export, send nothing.",
    )(fn)
    return click.option(
        "--calls",
        "calls_mode",
        type=click.Choice(MODES),
        default=None,
        help="How re-run tasks reach models and APIs: offline (from the export's recording), "
        "fill (recorded answers, the rest sent), live. Default: offline when the export "
        "holds recordings, else live.",
    )(fn)


def intercept() -> None:
    """Send the HTTP of this process's attempts to their recorders."""
    from ..interception import install

    install()


def replaying_session(
    record: RunRecord, calls_mode: str | None, offline: bool, keep: bool = False
) -> CallSession | None:
    """The session of a re-execution against ``record``: answers from its recordings in
    ``offline`` and ``fill`` mode; None for ``live``. ``keep``: the new run records what it
    was answered (a re-run's export)."""
    if offline and calls_mode not in (None, "offline"):
        die(f"--offline and --calls {calls_mode} contradict each other")
    recordings = record.recordings
    mode = "offline" if offline else calls_mode or ("offline" if recordings else "live")
    if mode == "live":
        return None
    session = _session(mode, recording=recordings, record=keep, redact=record.redacted)
    intercept()
    return session
