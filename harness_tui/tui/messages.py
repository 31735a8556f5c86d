"""App-wide facts (past tense): the one channel from the run controller to the screen."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from .controller import RunUpdate


@dataclass
class RunUpdated(Message):
    """The run controller published ``update`` (from any thread); the screen renders it."""

    update: RunUpdate
