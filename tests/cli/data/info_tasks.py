"""A task that logs INFO through a logger with no level of its own, in a program whose
logging the user configured at WARNING (the handler prints to the real standard error)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from typing import Any

# The user's own configuration, as a script would have it: a handler at WARNING.
_user = logging.StreamHandler(sys.__stderr__)
_user.setLevel(logging.WARNING)
_user.setFormatter(logging.Formatter("USER-HANDLER %(levelname)s %(message)s"))
logging.getLogger().addHandler(_user)


def news(inputs: Mapping[str, Any]) -> int:
    log = logging.getLogger("tasks.news")
    log.info("fetched 3 rows")
    log.warning("quota at 80%")
    return 3
