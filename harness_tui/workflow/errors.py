"""Workflow-file errors: every problem at once, each with ``file:line:col``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..engine.errors import HarnessError

__all__ = ["Problem", "WorkflowError"]


@dataclass(frozen=True, slots=True, order=True)
class Problem:
    """One thing wrong with a workflow file.

    Attributes:
        path: the file, as the user named it.
        line: 1-based line (0 when the problem is about the whole file).
        column: 1-based column.
        message: what is wrong, in words a person can act on.
    """

    path: str
    line: int
    column: int
    message: str

    def __str__(self) -> str:
        if self.line:
            return f"{self.path}:{self.line}:{self.column}: {self.message}"
        return f"{self.path}: {self.message}"


class WorkflowError(HarnessError, ValueError):
    """A workflow file is invalid; ``problems`` lists each problem, sorted by position."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(sorted(problems))
        super().__init__("\n".join(str(p) for p in self.problems))
