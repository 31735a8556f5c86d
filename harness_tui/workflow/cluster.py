"""``--executor dask``: attempts run on a Dask cluster (docs/parallel.md, "Dask").

The run's parallel pool dispatches as with threads; each pool worker submits its attempt to
Dask as one task (``retries=0``) and waits for it, so retries, timeouts, fallbacks and the
trace stay the harness's own, and the digests are the serial run's. A Dask worker imports the
task by its ``module:function`` reference, as ``isolation: process`` does: the task's folder
(the workflow file's, or the folder its module is imported from) is uploaded to every worker
by a worker plugin, so workers need harness-tui and the tasks' third-party packages
installed, but no shared filesystem. A task with no reference (a lambda, a closure, a function
of ``__main__``) is refused before the run starts.

The worker times the attempt from its start there (time queued for a free worker is not the
task's); a timed-out call cannot be killed in the worker's process and goes on in a daemon
thread, its result discarded, while the worker takes the next attempt. A stop, or no answer
well past the timeout (a lost worker), cancels the Dask future. The attempt's ``worker`` is
the Dask worker that ran it, numbered from 1 in the order the cluster client first met each
address (shown on the timeline; never in the canonical trace).
"""

from __future__ import annotations

import hashlib
import os
import sys
import sysconfig
import threading
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ..engine.canonical import loads
from ..engine.clock import Clock
from ..engine.errors import HarnessError
from ..engine.executors import AttemptCall, Outcome
from ..engine.graph import TaskGraph
from ..engine.isolation import request_of
from ..engine.untrusted import quoted

__all__ = ["DaskCluster", "DaskError", "DaskExecutor", "parse_executor", "reference_of"]

DASK = "dask"
UPLOAD_LIMIT = 64 * 1024 * 1024
"""Bytes of a task folder's Python files uploaded to the workers, at most."""
GRACE = 5.0
"""Seconds beyond a task's timeout (or the timeout again, if longer) that the run waits for a
Dask attempt before it gives up on it as timed out."""
_SKIPPED = {"__pycache__", "node_modules", "site-packages"}


class DaskError(HarnessError):
    """The cluster cannot be used for this run (one line says why)."""


def parse_executor(text: str) -> str | None:
    """``threads`` -> None; ``dask`` -> ``""`` (a LocalCluster); ``dask=ADDRESS`` -> the address.

    Raises:
        DaskError: anything else.
    """
    if text == "threads":
        return None
    name, sep, address = text.partition("=")
    if name != DASK or (sep and not address):
        raise DaskError(
            f"invalid executor {quoted(text)}: write threads, dask or dask=tcp://HOST:PORT"
        )
    return address


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


# -- references --------------------------------------------------------------------------------


def _installed(path: Path) -> bool:
    paths = sysconfig.get_paths()
    roots = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    return any(path.is_relative_to(root) for root in roots)


def reference_of(fn: Any) -> tuple[str, Path | None] | None:
    """``(module:function, folder to upload)`` for a task callable, or None when a worker
    cannot import it (a lambda, a closure, a function of ``__main__`` or of no file)."""
    ref = getattr(fn, "ref", None)
    if isinstance(ref, str):  # a workflow's reference
        base = getattr(fn, "base", None)
        return ref, base if isinstance(base, Path) else None
    module_name = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None)
    if not module_name or not qualname or module_name == "__main__" or "<" in qualname:
        return None
    module = sys.modules.get(module_name)
    file = getattr(module, "__file__", None)
    if file is None:
        return None
    path = Path(file).resolve()
    depth = module_name.count(".") + (2 if path.name == "__init__.py" else 1)
    base = path.parents[depth - 1]
    return f"{module_name}:{qualname}", None if _installed(path) else base


# -- the cluster -------------------------------------------------------------------------------


class DaskCluster:
    """A Dask client for one or more runs: its own LocalCluster, or an existing scheduler.

    Args:
        address: ``tcp://HOST:PORT`` of a running scheduler; empty or None starts a
            LocalCluster (processes, one single-threaded worker per core).
        workers: the LocalCluster's worker processes (default: one per core).

    Raises:
        DaskError: distributed is not installed, or the scheduler cannot be reached.
    """

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        try:
            import dask
            from distributed import Client, LocalCluster

            from .cluster_worker import FolderPlugin, remote_attempt
        except ImportError:
            raise DaskError("--executor dask needs Dask: pip install 'harness-tui[dask]'") from None
        self.cluster: Any = None
        try:
            if address:
                self.client: Any = Client(address, timeout="10s")
            else:
                # A task that kills its worker fails its attempt at once; Dask does not try it
                # again on another worker (retries are the harness's).
                with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
                    self.cluster = LocalCluster(
                        n_workers=workers or os.cpu_count() or 1,
                        threads_per_worker=1,
                        processes=True,
                        dashboard_address=None,
                        scheduler_kwargs={"dashboard": False},
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
        """Close the client, and the LocalCluster if this started one."""
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def _callables(graph: TaskGraph) -> Iterable[tuple[str, Any]]:
    for node in graph.nodes.values():
        for fn in (node.fn, node.fallback):
            if fn is not None:
                yield node.name, fn


class DaskExecutor:
    """Runs each attempt as one Dask task (see the module's docs); one per pool worker.

    Args:
        cluster: the cluster (shared by every copy of this executor).
    """

    def __init__(self, cluster: DaskCluster) -> None:
        self.cluster = cluster
        self._refs: dict[int, tuple[str, str]] = {}
        self._future: Any = None
        self._cancelled = threading.Event()
        self._done = threading.Event()
        self._lock = threading.Lock()

    def for_thread(self) -> DaskExecutor:
        """A copy for one worker thread of the run's pool (each waits for its own future)."""
        return DaskExecutor(self.cluster)

    def admit(self, graph: TaskGraph) -> None:
        """Check every task can be imported by a worker, and upload the tasks' folders.

        Raises:
            DaskError: a task has no ``module:function`` reference.
        """
        for task, fn in _callables(graph):
            found = reference_of(fn)
            if found is None:
                raise DaskError(
                    f"task {quoted(task)} cannot run on Dask: its callable "
                    f"{quoted(repr(fn))} has no module:function reference a worker can import"
                )
            self.cluster.folder(found[1])

    def _reference(self, fn: Any) -> tuple[str, str]:
        known = self._refs.get(id(fn))
        if known is None:
            found = reference_of(fn)
            if found is None:
                raise DaskError(f"{quoted(repr(fn))} has no module:function reference")
            known = self._refs[id(fn)] = (found[0], self.cluster.folder(found[1]))
        return known

    def execute(self, call: AttemptCall, clock: Clock) -> Outcome:
        """Submit the attempt and wait for it. The worker times the attempt; here the wait
        ends :data:`GRACE` later (the time to reach a free worker and back), cancelling the
        future, so a lost worker or a full cluster cannot hold the run."""
        ref, folder = self._reference(call.fn)
        limit = call.log.limit if call.log is not None else 0
        done = threading.Event()
        with self._lock:
            self._cancelled.clear()
            self._done = done
            future = self._future = self.cluster.client.submit(
                self.cluster.remote, ref, folder, request_of(call.inputs), limit, call.timeout,
                pure=False, retries=0, key=f"{call.task}-{call.attempt}-{os.urandom(8).hex()}",
            )  # fmt: skip
        future.add_done_callback(lambda _: done.set())
        limit_s = None if call.timeout is None else call.timeout + max(GRACE, call.timeout)
        finished = clock.wait(done, limit_s) and not self._cancelled.is_set()
        with self._lock:
            self._future = None
        if not finished:
            future.cancel()
            return Outcome("cancelled") if self._cancelled.is_set() else Outcome("timeout")
        return self._outcome(future, call)

    def _outcome(self, future: Any, call: AttemptCall) -> Outcome:
        try:
            reply: Mapping[str, Any] = future.result()
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # the worker died, Dask gave up on it, or cancelled it
            return _lost(exc)
        if call.log is not None and reply.get("log") is not None:
            call.log.load(reply["log"])
        worker = self.cluster.number(str(reply.get("worker", "")))
        kind = reply.get("kind")
        if kind == "ok":
            return Outcome("ok", loads(reply["text"]), worker=worker)
        if kind == "cancelled":
            return Outcome("cancelled", error=reply.get("error"), worker=worker)
        if kind == "timeout":
            return Outcome("timeout", worker=worker)
        return Outcome("error", error=reply["error"], traceback=reply.get("traceback"),
                       worker=worker)  # fmt: skip

    def cancel(self) -> None:
        """Stop waiting for the attempt in flight; its Dask future is cancelled."""
        with self._lock:
            self._cancelled.set()
            self._done.set()
            future = self._future
        if future is not None:
            future.cancel()


def _lost(exc: BaseException) -> Outcome:
    """An attempt Dask could not bring back. The error enters the canonical trace, so it
    names no worker address or task key (those go to the traceback, kept beside it)."""
    kind = type(exc).__name__
    if kind == "KilledWorker":
        message = "the Dask worker running the attempt died (or was killed)"
    else:
        message = f"Dask could not run the attempt ({kind})"
    return Outcome("error", error={"type": "DaskError", "message": message}, traceback=f"{exc}")
