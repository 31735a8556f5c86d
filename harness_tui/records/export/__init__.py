"""The export format: a run as one JSON file anyone can open, step through and replay.

``model`` is its schema, ``document`` makes a document from a run, ``writing`` its text,
``reading`` turns text back into a checked document, ``record`` is :class:`RunRecord` (a run at
rest, with its consistency checks and views), ``redaction`` and ``io_redaction`` take secrets
out, ``jsonl`` and ``chrome`` are the other shapes a run is written in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports

if TYPE_CHECKING:
    from .document import export_name
    from .record import RunRecord

_LAZY = {"RunRecord": ".record", "export_name": ".document"}

__all__ = ["RunRecord", "export_name"]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, [])
