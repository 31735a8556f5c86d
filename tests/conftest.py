from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / "workflows"


@pytest.fixture
def workflows() -> Path:
    return WORKFLOWS
