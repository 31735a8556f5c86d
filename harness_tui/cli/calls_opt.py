"""``run --record`` and ``verify --calls offline|fill|live`` (``--offline``): the recorded-calls
session a command hands its run (docs/recording.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from .common import die

if TYPE_CHECKING:
    from ..engine.recorded_calls import CallSession
    from ..records.export import RunRecord

__all__ = ["calls_options", "recording_session", "replaying_session"]

F = TypeVar("F", bound=Callable[..., Any])

MODES = ("offline", "fill", "live")


def calls_options(fn: F) -> F:
    """``--calls MODE`` and its short form ``--offline``."""
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


def _intercept() -> None:
    from ..interception import install

    install()


def recording_session(record: bool, isolation: str | None, executor: str) -> CallSession | None:
    """The session of ``run --record`` (None without it)."""
    if not record:
        return None
    if isolation == "process" or executor.split("=")[0] != "threads":
        die(
            "--record records attempts that run in this process: not yet with "
            "--isolation process or another executor"
        )
    from ..engine.recorded_calls import CallMode, CallSession

    _intercept()
    return CallSession(CallMode.LIVE)


def replaying_session(
    record: RunRecord, calls_mode: str | None, offline: bool, keep: bool = False
) -> CallSession | None:
    """The session of a re-execution against ``record``: answers from its recordings in
    ``offline`` and ``fill`` mode; None for ``live``. ``keep``: the new run records what it
    was answered (a re-run's export)."""
    from ..engine.recorded_calls import CallMode, CallSession

    if offline and calls_mode not in (None, "offline"):
        die(f"--offline and --calls {calls_mode} contradict each other")
    recordings = record.recordings
    mode = "offline" if offline else calls_mode or ("offline" if recordings else "live")
    if mode == "live":
        return None
    _intercept()
    return CallSession(CallMode(mode), recordings, record=keep, redact=record.redacted)
