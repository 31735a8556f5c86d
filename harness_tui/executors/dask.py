"""``--executor dask[=ADDRESS]``: attempts run on a Dask cluster (docs/executors.md).

The run's parallel pool dispatches as with threads; each pool worker submits its attempt to
Dask as one task (``retries=0``) and waits for it, so retries, timeouts, fallbacks and the
trace stay the harness's own, and the digests are the serial run's. A Dask worker imports the
task by its ``module:function`` reference, as ``isolation: process`` does: the task's folder
(the workflow file's, or the folder its module is imported from) is uploaded to every worker
by a worker plugin, so workers need harness-tui and the tasks' third-party packages
installed, but no shared filesystem. A task with no reference (a lambda, a closure, a function
of ``__main__``) is refused before the run starts (the executor :attr:`~DaskExecutor.pickles`).
Dask is imported only when a cluster starts: choosing another executor never pays for it.

The worker times the attempt from its start there (time queued for a free worker is not the
task's); a timed-out call cannot be killed in the worker's process and goes on in a daemon
thread, its result discarded, while the worker takes the next attempt. A stop, or no answer
well past the timeout (a lost worker), cancels the Dask future. The attempt's ``worker`` is
the Dask worker that ran it, numbered from 1 in the order the cluster client first met each
address (shown on the timeline; never in the canonical trace).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..engine.attempt import (
    CANCELLED,
    ERROR,
    OK,
    TIMEOUT,
    Attempt,
    Executor,
    ExecutorError,
    Outcome,
    reference_of,
    request_of,
)
from ..engine.canonical import loads
from ..engine.untrusted import quoted

__all__ = ["DaskCluster", "DaskError", "DaskExecutor", "quiet_dask_logging", "scratch_folder"]

UPLOAD_LIMIT = 64 * 1024 * 1024
"""Bytes of a task folder's Python files uploaded to the workers, at most."""
GRACE = 5.0
"""Seconds beyond a task's timeout (or the timeout again, if longer) that the run waits for a
Dask attempt before it gives up on it as timed out."""
_SKIPPED = {"__pycache__", "node_modules", "site-packages"}


class DaskError(ExecutorError):
    """The cluster cannot be used for this run (one line says why)."""


def _python_files(base: Path) -> Iterator[tuple[str, Path]]:
    for folder, names, files in os.walk(base):
        names[:] = sorted(n for n in names if n not in _SKIPPED and not n.startswith("."))
        for file in sorted(files):
            if file.endswith(".py"):
                path = Path(folder) / file
                yield path.relative_to(base).as_posix(), path


def folder_files(base: Path) -> dict[str, bytes]:
    """The Python files under ``base`` (hidden folders and caches left out).

    Raises:
        DaskError: more than :data:`UPLOAD_LIMIT` bytes of them.
    """
    files: dict[str, bytes] = {}
    size = 0
    for relative, path in _python_files(base):
        data = path.read_bytes()
        size += len(data)
        if size > UPLOAD_LIMIT:
            raise DaskError(
                f"the tasks' folder {quoted(str(base))} holds more than "
                f"{UPLOAD_LIMIT // 2**20} MiB of Python files: install the tasks as a package"
            )
        files[relative] = data
    return files


# -- the cluster -------------------------------------------------------------------------------


def _client(client: Any, address: str) -> Any:
    """A Dask ``Client`` of the scheduler at ``address`` as a person typed it.

    Raises:
        DaskError: an address Dask cannot read (``foo``, ``http://...``, a TLS one without
            its context); one line, not Dask's traceback.
        OSError, TimeoutError: no scheduler answers there.
    """

    def refused(why: object) -> DaskError:
        return DaskError(
            f"--executor dask={quoted(address)}: not a scheduler address Dask can use "
            f"(tcp://HOST:PORT): {why}"
        )

    if address.lower().startswith(_SECURE_SCHEMES):
        # Dask finds out only once its client's event loop runs (seconds, or a failed start
        # on a loaded machine): the option carries no TLS context, so say so at once.
        raise refused("a secure address needs a TLS context, which --executor cannot give")
    try:
        return client(address, timeout="10s")
    except (ValueError, TypeError) as exc:  # Dask's parsing of the address, raised as these
        raise refused(exc) from None
    except AssertionError:  # Dask's own check that its event loop thread started in 10 s
        raise DaskError(
            f"--executor dask={quoted(address)}: Dask's client could not start its event "
            "loop within 10 s (is the machine overloaded?)"
        ) from None


_SECURE_SCHEMES = ("tls://", "wss://")
"""Scheduler addresses that need a TLS context (``Security``), which the option has none of."""


class DaskCluster:
    """A Dask client for one or more runs: its own LocalCluster, or an existing scheduler.

    Args:
        address: ``tcp://HOST:PORT`` of a running scheduler; empty or None starts a
            LocalCluster (processes, one single-threaded worker per core).
        workers: the LocalCluster's worker processes (default: one per core).
        quiet: Dask's logging, and the LocalCluster workers' output, never reach this
            process's terminal (for the command line, where a task's failure is its one line).

    Raises:
        DaskError: distributed is not installed, or the scheduler cannot be reached.
    """

    def __init__(
        self, address: str | None = None, workers: int | None = None, quiet: bool = False
    ) -> None:
        try:
            import dask
            from distributed import Client, LocalCluster

            from .dask_worker import FolderPlugin, remote_attempt
        except ImportError:
            raise DaskError("--executor dask needs Dask: pip install 'harness-tui[dask]'") from None
        if quiet:
            quiet_dask_logging()
        self.cluster: Any = None
        self._scratch: str | None = None
        try:
            if address:
                self.client: Any = _client(Client, address)
            else:
                # The workers' folders in one of the cluster's own: in the folder all clusters
                # share by default, a cluster starting elsewhere purges the folder of a worker
                # that is closing (its lock just released) while the worker removes it too.
                self._scratch = scratch_folder()
                # A task that kills its worker fails its attempt at once; Dask does not try it
                # again on another worker (retries are the harness's).
                with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
                    self.cluster = LocalCluster(
                        n_workers=workers or os.cpu_count() or 1,
                        threads_per_worker=1,
                        processes=True,
                        dashboard_address=None,
                        # Any free port for the scheduler's HTTP routes: a fixed one taken by
                        # another cluster is a warning on the terminal.
                        scheduler_kwargs={"dashboard": False, "dashboard_address": ":0"},
                        local_directory=self._scratch,
                        **_quiet_workers(quiet),
                    )
                self.client = Client(self.cluster)
        except (OSError, TimeoutError) as exc:
            where = quoted(address or "")
            raise DaskError(f"cannot reach the Dask scheduler {where}: {exc}") from None
        self.remote = remote_attempt
        self._plugin = FolderPlugin
        self._numbers: dict[str, int] = {}
        self._folders: dict[Path, str] = {}
        self._lock = threading.Lock()

    @property
    def address(self) -> str:
        """The scheduler's address."""
        return str(self.client.scheduler.address)

    @property
    def threads(self) -> int:
        """Worker threads in the cluster now (at least 1)."""
        workers = self.client.scheduler_info().get("workers", {})
        return max(1, sum(int(w.get("nthreads", 1)) for w in workers.values()))

    def number(self, address: str) -> int:
        """A small number for a worker address, in the order of first use (from 1)."""
        with self._lock:
            return self._numbers.setdefault(address, len(self._numbers) + 1)

    def folder(self, base: Path | None) -> str:
        """The name under which ``base`` is on every worker (uploaded on first use)."""
        if base is None:
            return ""
        with self._lock:
            name = self._folders.get(base)
            if name is None:
                files = folder_files(base)
                digest = hashlib.sha256()
                for relative, data in sorted(files.items()):
                    digest.update(relative.encode() + b"\0" + hashlib.sha256(data).digest())
                name = f"harness-tasks-{digest.hexdigest()[:16]}"
                self.client.register_plugin(self._plugin(name, files), name=name)
                self._folders[base] = name
            return name

    def close(self) -> None:
        """Close the client, then the LocalCluster if this started one (its workers, then its
        scheduler), then remove the workers' folder. Each step runs whatever the one before
        raised: the run is recorded by then, and a connection Dask finds closed on its way
        out (``CommClosedError``) is not the command's to report."""
        steps = [self.client.close]
        if self.cluster is not None:
            steps.append(self.cluster.close)
        for step in steps:
            with contextlib.suppress(Exception):  # Dask's types for "closed" vary by step
                step()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)


def scratch_folder() -> str:
    """A new folder for a LocalCluster's workers, named for this process. The folders of
    clusters whose process is gone (one that left at once, on a Ctrl+C or a kill, before
    its cluster closed) are removed first."""
    for old in Path(tempfile.gettempdir()).glob("harness-dask-*-*"):
        pid = old.name.split("-")[2]
        if pid.isdigit() and not _running(int(pid)):
            shutil.rmtree(old, ignore_errors=True)
    return tempfile.mkdtemp(prefix=f"harness-dask-{os.getpid()}-")


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


def _quiet_workers(quiet: bool) -> dict[str, Any]:
    """LocalCluster options that keep its worker processes off the terminal: their output
    goes nowhere once they start (:func:`.dask_worker.dask_setup`), and no logging handler
    lets anything through before that."""
    if not quiet:
        return {}
    return {"silence_logs": logging.CRITICAL + 1, "preload": ["harness_tui.executors.dask_worker"]}


class _NotDask(logging.Filter):
    """Drops the records of Dask's machinery: its loggers (``distributed``, and ``tornado``
    under it), and whatever its event loop's thread reports through ``asyncio``."""

    def filter(self, record: logging.LogRecord) -> bool:
        name = record.name
        if name.startswith(("distributed", "tornado")):
            return False
        if record.threadName == "IO loop":
            return False
        error = record.exc_info[1] if record.exc_info else None
        return not type(error).__module__.startswith(("distributed", "tornado"))


_quiet_filter = _NotDask()


def quiet_dask_logging() -> None:
    """Dask's logging never reaches this process's terminal (the command line's clusters):
    the task's failure is in the run's trace, and one line says so. Distributed and
    tornado log to their own handlers, asyncio (its event loop) to the root logger's and to
    logging's last resort; each of them gets the filter, once."""
    for name in ("distributed", "tornado", ""):
        for handler in logging.getLogger(name).handlers:
            if _quiet_filter not in handler.filters:
                handler.addFilter(_quiet_filter)
    last = logging.lastResort
    if last is not None and _quiet_filter not in last.filters:
        last.addFilter(_quiet_filter)
    asyncio = logging.getLogger("asyncio")  # whatever handlers the root logger gets later
    if _quiet_filter not in asyncio.filters:
        asyncio.addFilter(_quiet_filter)


class DaskExecutor(Executor):
    """Runs each attempt as one Dask task (see the module's docs), from every worker thread
    of the run at once.

    Args:
        cluster: the cluster to use; None: :meth:`start` connects to ``address``.
        address: ``tcp://HOST:PORT`` of a running scheduler; empty: a LocalCluster.
        quiet: keep Dask's logging and its workers' output off this process's terminal.
    """

    name = "dask"
    pickles = True
    isolatable = False  # every attempt runs in a Dask worker's process already

    def __init__(
        self, cluster: DaskCluster | None = None, address: str = "", quiet: bool = False
    ) -> None:
        self._cluster = cluster
        self._own = False
        self.address = address
        self.quiet = quiet
        self._refs: dict[int, tuple[str, str]] = {}
        self._futures: dict[int, tuple[Any, threading.Event]] = {}  # by id(attempt)
        self._cancelled: set[int] = set()
        self._closed = False
        self._lock = threading.Lock()

    @classmethod
    def from_option(cls, arg: str | None) -> DaskExecutor:
        """``dask``: a LocalCluster for the command; ``dask=tcp://HOST:PORT``: a running one.
        Dask's logging stays off the command's terminal (:func:`quiet_dask_logging`)."""
        return cls(address=arg or "", quiet=True)

    @property
    def cluster(self) -> DaskCluster:
        """The cluster (started on first use)."""
        if self._cluster is None:
            self.start()
        assert self._cluster is not None
        return self._cluster

    def start(self) -> None:
        """Connect to the scheduler, or start a LocalCluster (once).

        Raises:
            DaskError: Dask is not installed, or the scheduler cannot be reached.
        """
        if self._cluster is None:
            self._cluster = DaskCluster(self.address or None, quiet=self.quiet)
            self._own = True
            self._closed = False

    def close(self) -> None:
        """Cancel the attempts still submitted, then close the client, and the cluster if
        this executor started it.

        The order is the fix of a race: an attempt abandoned by a stop (or timed out) cancels
        its future from its own thread when it wakes up, which could be while the client
        closes (Dask then raises ``CommClosedError`` or a closed-client error in that thread,
        a traceback on the terminal). Here every future is cancelled while the client is
        still open, under the lock those threads take to cancel, and a thread that wakes up
        later finds the executor closed and leaves the client alone."""
        with self._lock:
            self._closed = True
            futures = [future for future, _ in self._futures.values()]
            waiting = [done for _, done in self._futures.values()]
            self._cancelled.update(self._futures)
            for future in futures:
                _cancel(future)
        for done in waiting:
            done.set()  # nothing will answer them now
        if self._own and self._cluster is not None:
            self._cluster.close()
            self._cluster = None
            self._own = False

    def capacity(self) -> int:
        """The cluster's worker threads now."""
        return self.cluster.threads

    def option(self) -> str:
        """``dask=ADDRESS`` of the cluster in use, so fresh runs in other processes share it."""
        if self._cluster is None:
            return f"dask={self.address}" if self.address else "dask"
        return f"dask={self._cluster.address}"

    def _reference(self, fn: Any) -> tuple[str, str]:
        known = self._refs.get(id(fn))
        if known is None:
            found = reference_of(fn)
            if found is None:
                raise DaskError(f"{quoted(repr(fn))} has no module:function reference")
            known = self._refs[id(fn)] = (found[0], self.cluster.folder(found[1]))
        return known

    def run(self, attempt: Attempt) -> Outcome:
        """Submit the attempt and wait for it. The worker times the attempt; here the wait
        ends :data:`GRACE` later (the time to reach a free worker and back), cancelling the
        future, so a lost worker or a full cluster cannot hold the run."""
        if self._closed:  # an abandoned attempt's thread, after the command closed the cluster
            return Outcome(CANCELLED)
        cluster = self.cluster
        ref, folder = self._reference(attempt.fn)
        limit = attempt.log.limit if attempt.log is not None else 0
        key = id(attempt)
        done = threading.Event()
        with self._lock:
            self._cancelled.discard(key)
            future = cluster.client.submit(
                cluster.remote, ref, folder, request_of(attempt.inputs), limit, attempt.timeout,
                None if attempt.io is None else attempt.io.ticket(), pure=False, retries=0,
                key=f"{attempt.task}-{attempt.number}-{os.urandom(8).hex()}",
            )  # fmt: skip
            self._futures[key] = (future, done)
        future.add_done_callback(lambda _: done.set())
        timeout = attempt.timeout
        limit_s = None if timeout is None else timeout + max(GRACE, timeout)
        finished = attempt.clock.wait(done, limit_s)
        with self._lock:
            del self._futures[key]
            cancelled = key in self._cancelled
            self._cancelled.discard(key)
        if cancelled or not finished:
            with self._lock:  # never while close() closes the client (see there)
                if not self._closed:
                    _cancel(future)
            return Outcome(CANCELLED) if cancelled else Outcome(TIMEOUT)
        return self._outcome(future, attempt)

    def _outcome(self, future: Any, attempt: Attempt) -> Outcome:
        try:
            reply: Mapping[str, Any] = future.result()
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # the worker died, Dask gave up on it, or cancelled it
            return _lost(exc)
        if attempt.log is not None and reply.get("log") is not None:
            attempt.log.load(reply["log"])
        worker = self.cluster.number(str(reply.get("worker", "")))
        calls = reply.get("calls") if isinstance(reply.get("calls"), dict) else None
        kind = reply.get("kind")
        if kind == OK:
            return Outcome(OK, loads(reply["text"]), worker=worker, calls=calls)
        if kind == CANCELLED:
            return Outcome(CANCELLED, error=reply.get("error"), worker=worker, calls=calls)
        if kind == TIMEOUT:
            return Outcome(TIMEOUT, worker=worker, calls=calls)
        return Outcome(ERROR, error=reply["error"], traceback=reply.get("traceback"),
                       worker=worker, calls=calls)  # fmt: skip

    def cancel(self, attempt: Attempt) -> None:
        """Stop waiting for the attempt: the thread waiting for it wakes up and cancels its
        Dask future (not here: this may be a signal handler, on a thread that holds the
        client's attention already)."""
        key = id(attempt)
        with self._lock:
            found = self._futures.get(key)
            if found is None:
                return
            self._cancelled.add(key)
        found[1].set()


def _cancel(future: Any) -> None:
    """Cancel a Dask future; a client that is closing or gone has nothing left to cancel."""
    with contextlib.suppress(Exception):  # ClosedClientError, CommClosedError, a closed loop
        future.cancel()


def _lost(exc: BaseException) -> Outcome:
    """An attempt Dask could not bring back. The error enters the canonical trace, so it
    names no worker address or task key (those go to the traceback, kept beside it)."""
    kind = type(exc).__name__
    if kind == "KilledWorker":
        message = "the Dask worker running the attempt died (or was killed)"
    else:
        message = f"Dask could not run the attempt ({kind})"
    return Outcome(ERROR, error={"type": "DaskError", "message": message}, traceback=f"{exc}")
