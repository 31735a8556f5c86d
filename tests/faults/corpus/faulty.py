"""Faulty tasks: each misbehaves in one way a task can. None of them is an example to follow."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any


def ok(inputs: Mapping[str, Any]) -> str:
    return "ok"


def gate(inputs: Mapping[str, Any]) -> str:
    """With ``FAULT_GATE`` set (a file name), say so in that file and wait to be killed: the
    test resumes the run, so that the fault happens in ``resume``."""
    marker = os.environ.get("FAULT_GATE")
    if marker:
        with open(marker, "w", encoding="utf-8") as handle:
            handle.write("started")
        time.sleep(60)
    return "ok"


def cleanup(inputs: Mapping[str, Any]) -> str:
    return "cleaned"


def exit_zero(inputs: Mapping[str, Any]) -> None:
    sys.exit(0)


def exit_three(inputs: Mapping[str, Any]) -> None:
    raise SystemExit(3)


def base_exception(inputs: Mapping[str, Any]) -> None:
    raise BaseException("bare base exception")


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("__str__ fails too")


def unprintable(inputs: Mapping[str, Any]) -> None:
    raise _Unprintable


def lone_surrogate(inputs: Mapping[str, Any]) -> str:
    print("printed \ud800 surrogate")
    return "returned \udfff surrogate"


def swallow_timeout(inputs: Mapping[str, Any]) -> str:
    try:
        time.sleep(30)
    except BaseException:
        time.sleep(30)
    return "late"


def block_alarm(inputs: Mapping[str, Any]) -> str:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    time.sleep(float(inputs["params"].get("seconds", 30)))
    return "late"


def hang(inputs: Mapping[str, Any]) -> str:
    while True:
        with contextlib.suppress(BaseException):
            time.sleep(30)


def stray_thread(inputs: Mapping[str, Any]) -> str:
    threading.Thread(target=time.sleep, args=(60,), name="stray", daemon=False).start()
    return "left a thread behind"


def hard_exit(inputs: Mapping[str, Any]) -> None:
    os._exit(7)


def close_fds(inputs: Mapping[str, Any]) -> str:
    os.close(1)
    os.close(2)
    return "closed"


def keyboard_interrupt(inputs: Mapping[str, Any]) -> None:
    raise KeyboardInterrupt


def wait_for_sigint(inputs: Mapping[str, Any]) -> str:
    marker = inputs["params"]["marker"]
    with open(marker, "w", encoding="utf-8") as handle:
        handle.write("started")
    time.sleep(30)
    return "not stopped"


def chdir_away(inputs: Mapping[str, Any]) -> str:
    os.chdir(inputs["params"]["to"])
    return "moved"


def where(inputs: Mapping[str, Any]) -> int:
    """Note that this task ran; return the pid of the process that started this one."""
    with open(inputs["params"]["log"], "a", encoding="utf-8") as handle:
        handle.write(inputs["task"]["name"] + "\n")
    return os.getppid()


def close_stdout(inputs: Mapping[str, Any]) -> str:
    print("before closing")
    sys.stdout.close()
    return "closed"


def stdout_none(inputs: Mapping[str, Any]) -> str:
    sys.stdout = None  # type: ignore[assignment]
    sys.stderr = None  # type: ignore[assignment]
    return "gone"


def excepthook_none(inputs: Mapping[str, Any]) -> str:
    threading.excepthook = None  # type: ignore[assignment]
    return "no hook"


def fork_and_leave(inputs: Mapping[str, Any]) -> str:
    """A child (and a grandchild it orphans) left running; their pids in the marker file."""
    marker = inputs["params"]["marker"]
    child = os.fork()
    if child == 0:
        grandchild = os.fork()
        if grandchild == 0:
            time.sleep(60)
            os._exit(0)
        with open(marker, "w", encoding="ascii") as out:
            out.write(f"{os.getpid()} {grandchild}\n")
        os._exit(0)  # the grandchild is orphaned
    os.waitpid(child, 0)
    return "forked"


def spawn_and_leave(inputs: Mapping[str, Any]) -> str:
    import subprocess

    process = subprocess.Popen(["sleep", "60"])
    with open(inputs["params"]["marker"], "w", encoding="ascii") as out:
        out.write(f"{process.pid}\n")
    return "spawned"
