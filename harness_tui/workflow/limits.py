"""Every cap on reading untrusted input, in one place (I6: reading is bounded).

A workflow file, a ``--payload`` and a run export come from people and tools we do not
control; each cap below turns a hostile or accidental input into one clear line instead of
gigabytes of memory or minutes of CPU. The defaults admit ``generate --tasks 100000`` and the
export of its run.

Each cap can be changed for one process with an environment variable, for instance::

    HARNESS_TUI_LIMITS="payload_bytes=4194304,tasks=200000" harness-tui run big.yaml

======================  ===========  ===========================================================
name                    default      what it bounds
======================  ===========  ===========================================================
``file_bytes``          32 MiB       size of a workflow file (and of one read from git)
``tasks``               100,000      tasks in one workflow
``depth``               100          nesting of mappings and lists in a workflow file, and
                                     of a ``when:`` expression
``alias_nodes``         100,000      values reached through YAML aliases (``*name``), counted
                                     with everything inside them
``alias_bytes``         16 MiB       bytes that YAML aliases add, counted as the JSON of what
                                     each one stands for (one long string aliased a thousand
                                     times is few values but gigabytes)
``int_digits``          1,000        digits of one integer in a workflow file or an export
``string_chars``        1 Mi         characters of one YAML scalar
``payload_bytes``       1 MiB        canonical JSON of a payload: the workflow's or
                                     ``--payload``; planning costs tasks x payload bytes (I1)
``export_bytes``        256 MiB      size of a run export
``export_depth``        200          nesting of a run export's JSON
======================  ===========  ===========================================================

What is shown is bounded too: one line of text from outside (an error line, a notification,
a problem in a file) is cut at :data:`LINE_CHARS` characters wherever it is printed or drawn.

Timeouts and retry intervals are bounded by the workflow format itself (they are part of its
JSON Schema, so not adjustable): ``timeout_seconds`` at most :data:`MAX_TIMEOUT_SECONDS`,
``retry_interval`` at most :data:`MAX_RETRY_INTERVAL_SECONDS`, both finite.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

from ..engine.errors import HarnessError
from ..engine.graph import MAX_RETRY_INTERVAL_SECONDS, MAX_TIMEOUT_SECONDS

__all__ = [
    "ENV_VAR",
    "LINE_CHARS",
    "MAX_RETRY_INTERVAL_SECONDS",
    "MAX_TIMEOUT_SECONDS",
    "Limits",
    "LimitsError",
    "current",
]

LINE_CHARS = 2_000
"""Characters of one line of text from outside shown on a terminal or a page (the rest is
cut, with a mark saying so)."""

ENV_VAR = "HARNESS_TUI_LIMITS"

MiB = 1024 * 1024


class LimitsError(HarnessError, ValueError):
    """``HARNESS_TUI_LIMITS`` does not parse; the message says why."""


@dataclass(frozen=True, slots=True)
class Limits:
    """The caps on reading input (see the module docstring for each)."""

    file_bytes: int = 32 * MiB
    tasks: int = 100_000
    depth: int = 100
    alias_nodes: int = 100_000
    alias_bytes: int = 16 * MiB
    int_digits: int = 1_000
    string_chars: int = 1 * MiB
    payload_bytes: int = 1 * MiB
    export_bytes: int = 256 * MiB
    export_depth: int = 200

    @classmethod
    def parse(cls, text: str) -> Limits:
        """``"name=value,name=value"`` over the defaults.

        Raises:
            LimitsError: an unknown name or a value that is not a positive integer.
        """
        names = {field.name for field in dataclasses.fields(cls)}
        values: dict[str, int] = {}
        for item in filter(None, (part.strip() for part in text.split(","))):
            name, sep, raw = item.partition("=")
            name = name.strip()
            if not sep or name not in names:
                known = ", ".join(sorted(names))
                raise LimitsError(f"{ENV_VAR}: unknown limit {name!r} (known: {known})")
            raw = raw.strip().replace("_", "")
            if not raw.isdigit() or len(raw) > 18 or int(raw) < 1:
                raise LimitsError(f"{ENV_VAR}: {name} must be a positive integer, not {raw!r}")
            values[name] = int(raw)
        return cls(**values)


_cache: tuple[str, Limits] | None = None


def current() -> Limits:
    """The limits of this process: the defaults, changed by ``HARNESS_TUI_LIMITS``.

    Raises:
        LimitsError: the variable does not parse.
    """
    global _cache
    text = os.environ.get(ENV_VAR, "")
    if _cache is None or _cache[0] != text:
        _cache = (text, Limits.parse(text))
    return _cache[1]
