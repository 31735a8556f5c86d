"""The options of every command that runs code (``open``, ``run``, ``resume``, ``rerun``,
``verify``), in one place, and the one :class:`RunSettings` built from them.

The options keep their values in the command's context instead of its signature:
:func:`run_settings` reads them once, starts the executor they ask for and turns them into
the settings the run service and the workbench take as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from .calls_opt import intercept, session_options
from .common import die

if TYPE_CHECKING:
    from ..engine.attempt import Executor
    from ..engine.clock import Clock
    from ..records.runs.settings import RunSettings
    from ..records.store import RunStore

__all__ = ["chosen_executor", "record_option", "run_options", "run_settings"]

F = TypeVar("F", bound=Callable[..., Any])


def _keep(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    ctx.meta[f"run.{param.name}"] = value


workers_option = click.option(
    "--workers",
    type=click.IntRange(1, 256),
    default=1,
    show_default=True,
    expose_value=False,
    callback=_keep,
    help="Tasks run at once, in threads; the trace and digests are the serial run's.",
)
isolation_option = click.option(
    "--isolation",
    type=click.Choice(["in-process", "process"]),
    default=None,
    expose_value=False,
    callback=_keep,
    help="process: every task in a child process (contains os._exit, closed descriptors, "
    "blocked signals, hangs); in-process: none; default: as each task's workflow says.",
)
EXECUTOR = "threads"
executor_option = click.option(
    "--executor",
    "executor_spec",
    metavar="NAME[=ARG]",
    default=EXECUTOR,
    show_default=True,
    expose_value=False,
    callback=_keep,
    help="Where attempts run: threads of this process; dask: a Dask LocalCluster started for "
    "the run (one worker process per core); dask=ADDRESS: an existing Dask cluster; or an "
    "executor installed under the entry-point group harness_tui.executors. Without --workers, "
    "an executor that runs several attempts at once (Dask) keeps them all busy.",
)


def run_options(fn: F) -> F:
    """``--isolation``, ``--workers`` and ``--executor``: where and how many attempts run."""
    return isolation_option(workers_option(executor_option(fn)))


def record_option(fn: F) -> F:
    """``--record`` (with ``--volatile`` and ``--secret-header``): record what HTTP services
    and ``io.call`` answer each attempt."""
    fn = session_options(fn)
    return click.option(
        "--record",
        is_flag=True,
        expose_value=False,
        callback=_keep,
        help="Record what HTTP services and io.call answer each attempt, kept in the store "
        "and the export (docs/recording.md).",
    )(fn)


def run_settings(store: RunStore | None = None, clock: Clock | None = None) -> RunSettings:
    """The run settings this command's options ask for, with ``store`` and ``clock``; the
    executor asked for is started now (and closed when the command ends), and a recording
    starts intercepting HTTP.

    Exits with one line (status 2) for an executor that cannot start or a bad ``--volatile``.
    """
    from ..records.runs.settings import Recording, RunSettings

    meta = click.get_current_context().meta
    executor, workers = chosen_executor(
        meta.get("run.executor_spec", EXECUTOR), meta.get("run.workers", 1)
    )
    volatile = tuple(meta.get("calls.volatile", ()))
    secret = tuple(meta.get("calls.secret_headers", ()))
    recording = None
    if meta.get("run.record"):
        recording = Recording(volatile, secret)
        try:
            recording.session()  # its paths are checked now, in one line
        except ValueError as exc:
            die(f"--volatile: {exc}")
        intercept()
    elif "run.record" in meta and (volatile or secret):  # a command that records, not asked
        die("--volatile and --secret-header apply to a recording: add --record")
    return RunSettings(
        clock=clock,
        store=store,
        workers=workers,
        executor=executor,
        isolation=meta.get("run.isolation"),
        recording=recording,
    )


def chosen_executor(spec: str, workers: int) -> tuple[Executor | None, int]:
    """The executor ``spec`` asks for, started (None for the default, which each front end
    picks for itself), and the worker count to use: the executor's capacity when
    ``--workers`` was not given. The executor is closed when the command ends.

    Raises:
        ExecutorError: an unknown name, a refused argument, or an executor that cannot start.
    """
    if spec == EXECUTOR:
        return None, workers
    from ..executors.registry import executor_from_option

    executor = executor_from_option(spec)
    executor.start()
    context = click.get_current_context()
    context.call_on_close(lambda: _close(executor))
    if context.get_parameter_source("workers") is click.core.ParameterSource.DEFAULT:
        workers = executor.capacity() or workers
    return executor, workers


def _close(executor: Executor) -> None:
    """Close the executor as the command ends (a Dask cluster gives a busy worker seconds to
    stop): a Ctrl+C meanwhile leaves at once."""
    from .children import leaving_on_ctrl_c

    with leaving_on_ctrl_c():
        executor.close()
