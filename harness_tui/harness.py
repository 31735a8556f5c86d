"""``harness_tui.Harness``: the engine's facade (the seed article's API), which also records
the HTTP of its attempts when it is asked to record (docs/recording.md)."""

from __future__ import annotations

from .engine.harness import Harness as EngineHarness

__all__ = ["Harness"]


class Harness(EngineHarness):
    __doc__ = EngineHarness.__doc__

    def intercept_http(self) -> None:
        from .interception import install  # patches the HTTP clients that are installed

        install()
