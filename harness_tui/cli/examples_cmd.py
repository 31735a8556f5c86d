"""``harness-tui examples DIR``: copy the shipped workflows (and their task modules) to DIR."""

from __future__ import annotations

import shutil
from pathlib import Path

import click

from ..engine.untrusted import shown
from .app import cli
from .common import die, echo

__all__ = ["shipped_examples"]

_PACKAGE = Path(__file__).resolve().parent.parent


def shipped_examples() -> Path:
    """The folder of shipped workflows: ``harness_tui/examples`` in an installed wheel (the
    build copies ``workflows/`` there), else the checkout's own ``workflows/``."""
    for folder in (_PACKAGE / "examples", _PACKAGE.parent / "workflows"):
        if (folder / "user_profile.yaml").is_file():
            return folder
    die("the shipped workflows are missing from this installation (reinstall harness-tui)")


def _files(root: Path) -> list[Path]:
    """The example files under ``root``, relative to it, in a stable order (no caches)."""
    return sorted(
        path.relative_to(root)
        for path in root.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix in (".yaml", ".py")
    )


@cli.command()
@click.argument("folder", type=click.Path(file_okay=False))
def examples(folder: str) -> None:
    """Copy the shipped example workflows and their task modules into FOLDER (new or empty),
    then open one with `harness-tui FOLDER/user_profile.yaml`."""
    source = shipped_examples()
    target = Path(folder)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        die(f"{shown(folder)}: not an empty folder; name a new one (nothing is overwritten)")
    files = _files(source)
    try:
        for relative in files:
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / relative, target / relative)
    except OSError as exc:
        die(f"{shown(folder)}: cannot copy the examples: {exc.strerror}")
    echo(f"copied {len(files)} files to {shown(folder)}")
    echo(f"open one:  harness-tui {shown(str(target / 'user_profile.yaml'))}")
