"""Where workflow text comes from: a file, or ``path@REV`` read from git."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .errors import Problem, WorkflowError
from .limits import current
from .refs import is_python_ref

if TYPE_CHECKING:
    from .loader import Workflow

__all__ = ["is_python_ref", "load_any", "load_source", "split_revision"]


def load_any(path: str) -> Workflow:
    """A workflow file, or a Python-defined workflow (``file.py:factory``, which imports the
    user's module: see :mod:`.python_source`).

    Raises:
        WorkflowError: every problem of the file, or one line for a Python workflow.
    """
    if is_python_ref(path):
        from .python_source import load_python

        return load_python(path)
    from .loader import load_workflow

    return load_workflow(path)


def split_revision(spec: str) -> tuple[str, str | None]:
    """``workflows/x.yaml@HEAD~1`` -> (path, rev); a plain existing path has no revision."""
    if Path(spec).exists() or "@" not in spec:
        return spec, None
    path, _, rev = spec.rpartition("@")
    return path, rev or None


def load_source(spec: str, *, relative_to: str | None = None) -> Workflow:
    """Load a workflow from a file or from git (``path@REV``; ``@REV`` means ``relative_to``).

    Raises:
        WorkflowError: the file, the repository or the revision is missing, or the text is
            invalid; one clear line each.
    """
    if is_python_ref(spec):
        from .python_source import load_python

        return load_python(spec)  # a revision is refused there, in one line
    path, rev = split_revision(spec)
    if not path and relative_to:
        path = relative_to
    if rev is None:
        from .loader import load_workflow

        return load_workflow(path)
    from .loader import parse_workflow

    text = _git_show(path, rev, spec)
    return parse_workflow(text, spec, base=Path(path).resolve().parent)


def _git_show(path: str, rev: str, spec: str) -> str:
    import subprocess

    file = Path(path).resolve()
    folder = file.parent if file.parent.exists() else Path.cwd()

    def fail(message: str) -> WorkflowError:
        return WorkflowError([Problem(spec, 0, 0, message)])

    try:
        top = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "--show-toplevel"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
    except FileNotFoundError:
        raise fail("git is not installed") from None
    if top.returncode != 0:
        raise fail(f"{folder} is not in a git repository")
    root = Path(top.stdout.strip())
    try:
        relative = file.relative_to(root.resolve())
    except ValueError:
        raise fail(f"{path} is outside the repository at {root}") from None
    verify = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if verify.returncode != 0:
        raise fail(f"unknown git revision {rev!r}")
    shown = subprocess.run(
        ["git", "-C", str(root), "show", f"{rev}:{relative.as_posix()}"],
        capture_output=True, check=False,
    )  # fmt: skip
    if shown.returncode != 0:
        raise fail(f"{relative.as_posix()} does not exist at revision {rev!r}")
    limit = current().file_bytes
    if len(shown.stdout) > limit:
        raise fail(f"file at {rev!r} is over {limit:,} bytes")
    try:
        return shown.stdout.decode("utf-8")
    except UnicodeDecodeError:
        raise fail(f"file at {rev!r} is not UTF-8 text") from None
