"""The intent queue: one thing at a time, in order; signals drop queued steps."""

from __future__ import annotations

from harness_tui.tui.intents import Intent, IntentQueue


def test_intents_run_one_at_a_time_in_order() -> None:
    queue = IntentQueue()
    started: list[str] = []

    def long(name: str) -> Intent:
        return Intent(name, lambda: started.append(name) or True)

    def quick(name: str) -> Intent:
        return Intent(name, lambda: started.append(name) or False)

    assert queue.submit(long("step")) is False  # started at once
    assert queue.submit(long("step")) is True  # waits behind the first
    assert queue.submit(quick("restart")) is True
    assert queue.submit(long("continue")) is True
    assert started == ["step"] and queue.pending() == 3
    queue.done()  # the first drive ended: the second step starts
    assert started == ["step", "step"]
    queue.done()  # restart runs and finishes at once, then continue starts
    assert started == ["step", "step", "restart", "continue"] and queue.busy
    queue.done()
    assert not queue.busy and queue.pending() == 0


def test_a_pause_drops_queued_steps_and_continues_but_not_other_intents() -> None:
    queue = IntentQueue()
    for name in ("step", "step", "continue", "reload", "step"):
        queue.submit(Intent(name, lambda: True))
    assert queue.drop_run_intents() == 3
    assert queue.pending() == 1 and queue.pending("reload") == 1
    queue.done()
    assert queue.current is not None and queue.current.name == "reload"
