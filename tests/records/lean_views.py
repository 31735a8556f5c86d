"""What a lean read must make of an export: the views the whole-document reader makes."""

from __future__ import annotations

from harness_tui.records.export import RunRecord
from harness_tui.records.export.streamed import Lean


def assert_same_views(lean: Lean, whole: RunRecord) -> None:
    """``lean`` (the streamed reader's) holds what ``whole`` (read whole, arrays let go) does,
    in the same order."""
    assert lean.document == whole.document
    assert lean.events == whole.events
    assert list(lean.logs.items()) == list(whole.logs.items())
    assert lean.plan == whole.plan
    assert list(lean.outputs.items()) == list(whole.outputs.items())
    assert lean.claim == whole._array_claim
