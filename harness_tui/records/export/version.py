"""The export format's name and versions: a leaf, so that writing an export does not load the
schema's pydantic models (:mod:`.model`), which only reading one needs."""

from __future__ import annotations

__all__ = ["FORMAT", "FORMAT_VERSION", "FORMAT_VERSION_IO", "FORMAT_VERSION_OVERRIDES"]

FORMAT = "harness-run"
FORMAT_VERSION = "1.1"
"""1.1 adds ``attempts``, ``forked_from``, ``redaction``, ``spec`` and ``unattributed_log``
beside the trace; a 1.1 reader reads 1.0 files (those fields are then absent). An export
without recorded calls is written as 1.1."""
FORMAT_VERSION_IO = "1.2"
"""1.2 adds ``attempts[].io`` and ``unattributed_io``: what the outside world answered each
attempt (docs/recording.md). Written only by a run that recorded calls; readers of 1.2 read 1.0
and 1.1 (no recordings)."""
FORMAT_VERSION_OVERRIDES = "1.3"
"""1.3 adds ``forked_from.overrides``: the what-if changes of a re-run (an output, a recorded
answer, a parameter). Written only by such a re-run; readers of 1.3 read 1.0 to 1.2."""
