"""TraceEvent.from_dicts with its status lookup (issue 41) refuses a status that is no status
as Status(text) did: a ValueError naming the value (a golden file's or a damaged store's
one-line error quotes it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness_tui.engine.events import TraceEvent
from tests.conftest import invoke

ROOT = Path(__file__).resolve().parents[2]
EVENT = {"seq": 0, "task": "a", "task_id": "0" * 16, "attempt": 1}


@pytest.mark.parametrize("status", [["succeeded"], {"a": 1}])
def test_an_unhashable_status_is_refused_as_no_valid_status(status: Any) -> None:
    """``_STATUSES.get(status)`` raises TypeError 'unhashable type' for a list or an object
    before ``Status(status)`` can say it is not a valid Status."""
    with pytest.raises(ValueError, match="is not a valid Status"):
        TraceEvent.from_dicts({**EVENT, "status": status})


def test_a_golden_file_with_a_list_for_a_status_names_it(tmp_path: Path) -> None:
    workflow = str(ROOT / "workflows" / "user_profile.yaml")
    golden = tmp_path / "golden.json"
    assert invoke("golden", workflow, str(golden), "--update")[0] == 0
    pinned = json.loads(golden.read_text(encoding="utf-8"))
    pinned["trace"][0]["status"] = ["succeeded"]
    golden.write_text(json.dumps(pinned), encoding="utf-8")
    code, _, err = invoke("golden", workflow, str(golden))
    assert code == 2
    assert "['succeeded'] is not a valid Status" in err
