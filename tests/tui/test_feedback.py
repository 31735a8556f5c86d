"""Every key that cannot act says why; throwing a running run away is asked first."""

from __future__ import annotations

from pathlib import Path

from harness_tui.tui.modals.confirm import ConfirmModal

from .conftest import ROOT, make_app, settle, workbench
from .test_running_snapshot import GatedClock, running

USER_PROFILE = ROOT / "workflows/user_profile.yaml"


def messages(app: object) -> list[str]:
    return [n.message for n in app._notifications]  # type: ignore[attr-defined]


async def test_greyed_keys_say_why() -> None:
    app = make_app(USER_PROFILE)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("e")  # nothing to export before the first event
        await pilot.pause()
        assert "nothing to export yet: step first (n)" in messages(app)
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("n")  # the run is finished
        await pilot.pause()
        assert "the run is finished: r starts it over" in messages(app)


async def test_restart_during_a_run_asks_first_and_no_keeps_the_run() -> None:
    clock = GatedClock()
    app = make_app(Path("tests/tui/data/one_long_task.yaml").resolve(), clock=clock)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("c")
            await running(pilot, "crunch")
            await pilot.press("r")
            await pilot.pause()
            assert isinstance(app.screen, ConfirmModal)
            await pilot.press("escape")  # no: the run goes on
            await pilot.pause()
            screen = workbench(app)
            assert screen.session is not None and screen.controller.driving
            run = screen.session.run
            await pilot.press("r")
            await pilot.pause()
            await pilot.press("y")  # yes: the run is stopped, then restarted
            clock.gate.set()
            for _ in range(300):
                if not screen.controller.driving and screen.session.run is not run:
                    break
                await pilot.pause(0.01)
            assert run.status.value == "cancelled"
            assert screen.session.run is not run and not screen.session.run.events
    finally:
        clock.gate.set()
