"""``--executor NAME[=ARG]`` for the commands that run tasks (docs/executors.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from ..engine.attempt import Executor

__all__ = ["chosen_executor", "executor_option"]

DEFAULT = "threads"

executor_option = click.option(
    "--executor",
    "executor_spec",
    metavar="NAME[=ARG]",
    default=DEFAULT,
    show_default=True,
    help="Where attempts run: threads of this process; dask: a Dask LocalCluster started for "
    "the run (one worker process per core); dask=ADDRESS: an existing Dask cluster; or an "
    "executor installed under the entry-point group harness_tui.executors. Without --workers, "
    "an executor that runs several attempts at once (Dask) keeps them all busy.",
)


def chosen_executor(spec: str, workers: int) -> tuple[Executor | None, int]:
    """The executor ``spec`` asks for, started (None for the default, which each front end
    picks for itself), and the worker count to use: the executor's capacity when
    ``--workers`` was not given. The executor is closed when the command ends.

    Raises:
        ExecutorError: an unknown name, a refused argument, or an executor that cannot start.
    """
    if spec == DEFAULT:
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
