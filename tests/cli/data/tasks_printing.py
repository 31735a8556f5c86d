"""Tasks that print, write to stderr, log and start a thread: for the task-log tests."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Mapping
from typing import Any


def chatty(inputs: Mapping[str, Any]) -> dict[str, int]:
    print("hello from chatty")
    print("a warning on stderr", file=sys.stderr)
    log = logging.getLogger("tasks.chatty")
    log.setLevel(logging.INFO)
    log.info("an info record")
    log.error("an error record")
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
