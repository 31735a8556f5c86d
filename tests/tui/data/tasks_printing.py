"""Tasks that print, write to stderr, log, start a thread and retry: for the task-log tests
of the CLI and the logs view."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Mapping
from typing import Any


def chatty(inputs: Mapping[str, Any]) -> dict[str, int]:
    for number in range(1, 4):
        print(f"loading batch {number} of 3")
    print("\x1b[31mnot red\x1b[0m [bold]not bold[/bold]")
    print("a line on stderr", file=sys.stderr)
    log = logging.getLogger("tasks.chatty")
    log.setLevel(logging.INFO)
    log.info("an info record")
    log.warning("quota at 80%")
    worker = threading.Thread(target=lambda: print("from chatty's thread"))
    worker.start()
    worker.join()
    return {"rows": 3}


def flaky(inputs: Mapping[str, Any]) -> dict[str, int]:
    attempt = inputs["task"]["attempt"]
    print(f"flaky attempt {attempt}")
    if attempt < 2:
        raise RuntimeError("not yet")
    return {"ok": attempt}
