from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness_tui.interception import install

from .fake_model import FakeModel


@pytest.fixture
def fake_model() -> Iterator[FakeModel]:
    install()
    server = FakeModel()
    try:
        yield server
    finally:
        server.stop()
