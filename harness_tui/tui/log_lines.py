"""A log's lines as the logs view filters and searches them (no Textual here).

A captured log interleaves what a task printed with its ``logging`` records, which the capture
writes as ``LEVEL logger: message`` (:mod:`harness_tui.engine.capture`). The level filter
keeps the records at a level and above; printed lines carry no level and show only when no
level is chosen. The search is case-insensitive and runs over one lower-cased copy of the
shown lines, kept up to date as lines are appended (a log only grows), so finding the next
match in a log at the 1 MiB cap is one ``str.find`` and a bisection
(``benchmarks/bench_log_search.py``).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

__all__ = ["LEVELS", "LineSearch", "keeps", "line_level"]

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
"""The levels a filter offers, lowest first."""

_RANK = {name: rank for rank, name in enumerate(LEVELS)}


def line_level(line: str) -> int | None:
    """The rank in :data:`LEVELS` of a logging record's line, None for a printed line."""
    word, _, rest = line.partition(" ")
    return _RANK.get(word) if rest else None


def keeps(line: str, minimum: str | None) -> bool:
    """Whether the filter at ``minimum`` (None: no filter) shows ``line``."""
    if minimum is None:
        return True
    rank = line_level(line)
    return rank is not None and rank >= _RANK[minimum]


class LineSearch:
    """Finds lines that contain a text, over lines that are only ever appended to."""

    def __init__(self) -> None:
        self._indexed = 0  # lines in the lower-cased copy
        self._text = ""
        self._starts: list[int] = []  # where each line starts in the copy

    def reset(self) -> None:
        """Forget every line (the view shows another attempt or filter)."""
        self._indexed, self._text, self._starts = 0, "", []

    def _catch_up(self, lines: Sequence[str]) -> str:
        """The lower-cased copy of ``lines``, extended by the lines appended since."""
        if len(lines) < self._indexed:
            self.reset()
        # Lower-cased line by line: a few characters change length (İ), so the offsets are
        # those of the lower-cased lines.
        fresh = [line.lower() for line in lines[self._indexed :]]
        if fresh:
            offset = len(self._text)
            starts = self._starts
            for line in fresh:
                starts.append(offset)
                offset += len(line) + 1
            self._text += "\n".join(fresh) + "\n"
            self._indexed = len(lines)
        return self._text

    def find(
        self, lines: Sequence[str], query: str, after: int, backwards: bool = False
    ) -> int | None:
        """The index of the next line after ``after`` (before it, ``backwards``) that
        contains ``query``, wrapping around; None when no line does."""
        text = self._catch_up(lines)
        needle = query.lower()
        if not needle or not lines or "\n" in needle:
            return None
        starts = self._starts
        if backwards:
            end = starts[after] if 0 <= after < len(starts) else len(text)
            found = text.rfind(needle, 0, max(end - 1, 0))
            if found < 0:
                found = text.rfind(needle)
        else:
            start = starts[after + 1] if 0 <= after + 1 < len(starts) else len(text)
            found = text.find(needle, start if after >= 0 else 0)
            if found < 0:
                found = text.find(needle)
        return None if found < 0 else bisect_right(starts, found) - 1

    def count(self, lines: Sequence[str], query: str) -> int:
        """How many times ``query`` occurs in the lines."""
        needle = query.lower()
        return self._catch_up(lines).count(needle) if needle and "\n" not in needle else 0
