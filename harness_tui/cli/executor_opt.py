"""``--executor threads|dask|dask=tcp://HOST:PORT`` for the commands that run tasks."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from ..workflow.cluster import DaskExecutor

__all__ = ["cluster_executor", "executor_option"]

executor_option = click.option(
    "--executor",
    "executor_spec",
    metavar="threads|dask|dask=tcp://HOST:PORT",
    default="threads",
    show_default=True,
    help="Where attempts run: threads of this process; dask: a Dask LocalCluster started for "
    "the run (one worker process per core); dask=ADDRESS: an existing Dask cluster. "
    "Without --workers a Dask run keeps every worker thread busy.",
)


def cluster_executor(spec: str, workers: int) -> tuple[DaskExecutor | None, int]:
    """The Dask executor ``spec`` asks for (None for threads) and the pool size to use: the
    cluster's worker threads when ``--workers`` was not given. A cluster started here is
    closed when the command ends.

    Raises:
        DaskError: an invalid spec, Dask not installed, or an unreachable scheduler.
    """
    from ..workflow.cluster import DaskCluster, DaskExecutor, parse_executor

    address = parse_executor(spec)
    if address is None:
        return None, workers
    cluster = DaskCluster(address or None)
    context = click.get_current_context()
    context.call_on_close(cluster.close)
    if context.get_parameter_source("workers") is click.core.ParameterSource.DEFAULT:
        workers = cluster.threads
    return DaskExecutor(cluster), workers
