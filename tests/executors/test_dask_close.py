"""How a Dask executor closes, without Dask: the order of its steps (the fix of a shutdown
race) and what it keeps off the terminal. Dask end to end is in tests/workflow/test_dask.py
and tests/faults/test_dask_faults.py (slow tier)."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from harness_tui.engine.attempt import CANCELLED, Attempt, Outcome
from harness_tui.executors.dask import (
    DaskCluster,
    DaskExecutor,
    _quiet_filter,
    quiet_dask_logging,
    scratch_folder,
)


def task(inputs: Mapping[str, Any]) -> str:
    return "never run here"


class _Future:
    def __init__(self, steps: list[str]) -> None:
        self.steps = steps

    def add_done_callback(self, callback: Callable[[Any], None]) -> None:
        pass  # never done: only a cancel or the close ends the wait

    def cancel(self) -> None:
        self.steps.append("cancel the future")


class _Client:
    def __init__(self, steps: list[str], error: BaseException | None) -> None:
        self.steps = steps
        self.error = error
        self.submitted = threading.Event()

    def register_plugin(self, *args: object, **kwargs: object) -> None:
        pass  # the task's folder, uploaded to no worker

    def submit(self, *args: object, **kwargs: object) -> _Future:
        self.submitted.set()
        return _Future(self.steps)

    def close(self) -> None:
        self.steps.append("close the client")
        if self.error is not None:
            raise self.error


class _LocalCluster:
    def __init__(self, steps: list[str], error: BaseException | None) -> None:
        self.steps = steps
        self.error = error

    def close(self) -> None:
        self.steps.append("close the cluster")
        if self.error is not None:
            raise self.error


def _cluster(steps: list[str], scratch: Path, error: BaseException | None = None) -> DaskCluster:
    """A DaskCluster around stand-ins for Dask's client and LocalCluster."""
    cluster = object.__new__(DaskCluster)
    cluster.client = _Client(steps, error)
    cluster.cluster = _LocalCluster(steps, error)  # each step fails, if one does
    cluster._scratch = str(scratch)
    cluster.remote = None
    cluster._plugin = lambda name, files: None
    cluster._numbers = {}
    cluster._folders = {}
    cluster._lock = threading.Lock()
    return cluster


@pytest.mark.parametrize(
    "error",
    [
        None,
        OSError("stands for CommClosedError"),
        # LocalCluster.close() raises this when a worker that died and was restarted is
        # reported gone as the cluster closes (its status watcher meets an unknown address).
        KeyError("tcp://127.0.0.1:40225"),
    ],
    ids=["clean", "comm-closed", "unknown-worker"],
)
def test_close_cancels_what_is_submitted_then_closes_client_then_cluster(
    tmp_path: Path, error: BaseException | None
) -> None:
    """An attempt still waiting when the command closes the executor (abandoned by a stop):
    its future is cancelled while the client is open, then the client closes, then the
    cluster; the attempt's thread wakes up to a closed executor and leaves the client alone.
    A connection Dask finds closed on the way out stops nothing and reaches no one."""
    steps: list[str] = []
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    cluster = _cluster(steps, scratch, error)
    executor = DaskExecutor(cluster)
    executor._own = True  # as if it had started the cluster itself
    outcomes: list[Outcome] = []
    inputs = {"payload": {}, "context": {"results": {}}, "params": {}, "task": {"name": "t"}}
    attempt = Attempt("t", 1, "task", task, inputs, None)
    thread = threading.Thread(target=lambda: outcomes.append(executor.run(attempt)))
    thread.start()
    assert cluster.client.submitted.wait(10)
    executor.close()  # takes the lock the attempt holds until its future is registered
    thread.join(10)
    assert not thread.is_alive()
    assert steps == ["cancel the future", "close the client", "close the cluster"]
    assert [o.kind for o in outcomes] == [CANCELLED]
    assert not scratch.exists()
    assert executor.run(attempt).kind == CANCELLED  # a late attempt starts no new cluster
    assert steps == ["cancel the future", "close the client", "close the cluster"]


@pytest.fixture
def dask_handler() -> Iterator[io.StringIO]:
    """A handler on the ``distributed`` and the ``tornado`` logger, as Dask installs them;
    the filters the test adds are taken off again."""
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    loggers = [logging.getLogger("distributed"), logging.getLogger("tornado")]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        yield out
    finally:
        for logger in loggers:
            logger.removeHandler(handler)
        for target in [*logging.getLogger().handlers, logging.lastResort]:
            if target is not None:
                target.removeFilter(_quiet_filter)
        logging.getLogger("asyncio").removeFilter(_quiet_filter)


def test_dask_records_are_kept_off_the_terminal_and_others_are_not(
    dask_handler: io.StringIO,
) -> None:
    quiet_dask_logging()
    quiet_dask_logging()  # once is enough: no second filter
    assert logging.getLogger("asyncio").filters.count(_quiet_filter) == 1
    logging.getLogger("distributed.nanny").warning("Restarting worker")
    logging.getLogger("tornado.application").error("Exception in callback")
    assert dask_handler.getvalue() == ""

    def record(name: str, thread: str, error: BaseException | None = None) -> logging.LogRecord:
        made = logging.LogRecord(name, logging.ERROR, __file__, 1, "message", None, None)
        made.threadName = thread
        if error is not None:
            made.exc_info = (type(error), error, None)
        return made

    closed = type("CommClosedError", (OSError,), {"__module__": "distributed.comm.core"})
    assert not _quiet_filter.filter(record("asyncio", "IO loop"))
    assert not _quiet_filter.filter(record("asyncio", "MainThread", closed()))
    assert not _quiet_filter.filter(record("tornado.application", "MainThread"))
    assert _quiet_filter.filter(record("asyncio", "MainThread", ValueError()))
    assert _quiet_filter.filter(record("harness", "MainThread"))


def test_a_cluster_left_without_closing_leaves_no_folder_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A command that left at once (a Ctrl+C) could not remove its workers' folder: the next
    cluster removes the folders of processes that are gone, and no other."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    left = tmp_path / f"harness-dask-{gone.stdout.strip()}-abc"
    (left / "dask-scratch-space").mkdir(parents=True)
    ours = tmp_path / f"harness-dask-{os.getpid()}-def"
    ours.mkdir()
    other = tmp_path / "harness-dask-notapid"
    other.mkdir()
    made = Path(scratch_folder())
    assert made.parent == tmp_path and made.name.startswith(f"harness-dask-{os.getpid()}-")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([made.name, ours.name, other.name])
