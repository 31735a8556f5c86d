"""Leases: which process is running a stored run, until when, and whether it still is.

A run's lease is held as ``host:pid:start`` and renewed as tasks retire; on the holder's own
host its process is checked directly, so a long task keeps its run, and a dead one frees it
at once (its run reads ``interrupted``, resumable).
"""

from __future__ import annotations

import os
import socket
import time

from .statuses import StoredStatus

__all__ = ["LEASE_SECONDS", "effective_status", "holder", "lease_live", "lease_owner"]

LEASE_SECONDS = 120.0
"""How long a run's lease lasts without renewal (renewed as tasks retire). On the lease
holder's own host the holder's process is checked directly, so a long task keeps its run."""


def process_start(pid: int) -> str:
    """When process ``pid`` started, in clock ticks since boot (field 22 of
    ``/proc/<pid>/stat``), or ``""`` where there is no such file to read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return ""
    # Field 2, the command name in parentheses, may hold spaces and ")": count from the last.
    fields = data[data.rfind(b")") + 1 :].split()
    return fields[19].decode("ascii", "replace") if len(fields) > 19 else ""


def lease_owner() -> str:
    """This process, as a lease holder: ``host:pid:start``, with the process start time so
    that another process given the same pid later is not taken for this one."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{process_start(pid)}"


def owner_parts(owner: str) -> tuple[str, str, str]:
    """``(host, pid, start)`` of a lease owner; owners written before the start time was
    recorded are ``host:pid`` and get an empty start."""
    parts = owner.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit() and (parts[2].isdigit() or not parts[2]):
        return parts[0], parts[1], parts[2]
    host, _, pid = owner.rpartition(":")
    return host, pid, ""


def process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    return True


def lease_live(owner: str | None, until: float | None) -> bool:
    """Whether a lease still holds: on this host, its process exists and (when the start
    time was recorded and can be read) is the same process; elsewhere, until it expires."""
    if not owner:
        return False
    host, pid, start = owner_parts(owner)
    if host == socket.gethostname() and pid.isdigit():
        if not process_exists(int(pid)):
            return False
        return not start or process_start(int(pid)) in (start, "")
    return until is not None and until > time.time()


def holder(owner: str | None) -> str:
    """A lease owner as people read it: ``process 1234 on host``."""
    if not owner:
        return "another process"
    host, pid, _ = owner_parts(owner)
    return f"process {pid} on {host}"


def effective_status(status: str, owner: str | None, until: float | None) -> str:
    """A stored status as people should read it: ``running`` without a live lease is
    ``interrupted``."""
    if status == StoredStatus.RUNNING and not lease_live(owner, until):
        return StoredStatus.INTERRUPTED
    return status
