"""The workbench's run control: intents queued one at a time, signals at once, live state.

Step, continue, restart, reload and payload changes go through one :class:`IntentQueue`, so a
burst of keys never puts two drives on one run or restarts a run under a drive. Pause and stop
are signals. While a drive is in progress a 10 Hz tick shows every new event, so an attempt is
marked running (with its elapsed time) as soon as it starts. A mixin of
:class:`~harness_tui.tui.screens.workbench.WorkbenchScreen`, kept apart to stay readable.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events, work
from textual.screen import Screen
from textual.timer import Timer
from textual.worker import Worker

from ...engine.errors import HarnessError
from ...engine.events import RunStatus
from ..intents import Intent, IntentQueue
from ..messages import RunCompleted, RunHeld, RunPaused, StepFinished
from ..sanitize import visible
from ..session import Session
from ..widgets.dag_view import DagView
from ..widgets.run_header import RunHeader
from ..widgets.trace_panel import TracePanel

TICK_SECONDS = 0.1

WHY_NOT = {
    "step": "the run is finished: r starts it over",
    "continue": "the run is finished: r starts it over",
    "pause": "nothing is running",
    "stop": "nothing is running",
    "export": "nothing to export yet: step first (n)",
    "back": "already at the start of the trace",
    "forward": "already at the live end of the trace",
}
"""Why an action greyed out in the footer does nothing, said when its key is pressed anyway."""


class RunControl(Screen[None]):
    """Intents, signals and live state. Expects the workbench's attributes and helpers."""

    session: Session | None
    selected: str | None
    _run_active: bool
    _intents: IntentQueue
    _ticker: Timer | None

    if TYPE_CHECKING:

        def _refresh_markers(self, tasks: set[str]) -> None: ...
        def _refresh_bindings_if_changed(self) -> None: ...
        def _select(self, task: str) -> None: ...
        def _show_session(self) -> None: ...
        def _next_task(self) -> str | None: ...

    # -- intents ----------------------------------------------------------------------------

    def submit(self, name: str, start: Callable[[], bool]) -> None:
        """Queue an intent (it starts at once if nothing is in progress)."""
        if self._intents.submit(Intent(name, start)) and name not in ("step", "continue"):
            self.notify(f"{name}: queued until the run pauses")

    def action_step(self) -> None:
        if self.session is not None and self.session.release(single=True):
            self.notify("finishing this task", title="Held run")
            return
        self.submit("step", lambda: self._begin_drive(single=True))

    def action_continue(self) -> None:
        if self.session is not None and self.session.release(single=False):
            self.notify("continuing", title="Held run")
            return
        self.submit("continue", lambda: self._begin_drive(single=False))

    def action_restart(self) -> None:
        self._replace_run("restart", self._restart_now)

    def _restart_now(self) -> bool:
        if self.session is None:
            return False
        self.session.restart()
        self._show_session()
        self.notify("restarted")
        return False

    def action_rerun_from(self) -> None:
        task = self.selected
        if self.session is None:
            return
        if task is None:
            self.notify("select a task first (arrows, or / to find one)")
            return
        if not self.session.replay:
            self._replace_run(f"re-run from {task}", lambda: self._rerun_now(task))
            return
        # A replay runs no code; a re-run does, the code this export names: ask first.
        from ..modals.confirm import ConfirmModal

        def answered(yes: bool | None) -> None:
            if yes:
                self._replace_run(f"re-run from {task}", lambda: self._rerun_now(task))

        folder = Path(self.session.workflow.path).parent
        question = (
            f"Re-running from {task} runs task code: the modules this export names, imported "
            f"from beside the export, else from {folder}, and your Python path. Run it?"
        )
        self.app.push_screen(ConfirmModal(question, "Run the code"), answered)

    def _rerun_now(self, task: str) -> bool:
        """Fork the run on screen at ``task`` (a new, live run); it waits for a step."""
        if self.session is None:
            return False
        try:
            fork = self.session.rerun_from(task)
        except HarnessError as exc:
            self.notify(str(exc), title="Cannot re-run", severity="error")
            return False
        self._show_session()
        kept = len(fork.kept)
        keeps = "1 task keeps what it" if kept == 1 else f"{kept} tasks keep what they"
        found = f"; task code from {fork.code_folder}" if fork.code_folder is not None else ""
        self.notify(f"re-running from {task}: {keeps} did{found}; step or continue")
        return False

    def _replace_run(self, name: str, start: Callable[[], bool]) -> None:
        """An intent that throws the current run away: asked first if a run is executing."""
        if not self._run_active:
            self.submit(name, start)
            return
        from ..modals.confirm import ConfirmModal

        def answered(yes: bool | None) -> None:
            if yes:
                self._signal_stop()
                self.submit(name, start)

        self.app.push_screen(
            ConfirmModal(f"A run is executing. Stop it and {name}?", f"Stop and {name}"),
            answered,
        )

    def _begin_drive(self, single: bool) -> bool:
        session = self.session
        if session is None or session.run.finished:
            return False
        session.go_live()
        self._run_active = True
        self._refresh_bindings_if_changed()
        self.query_one(RunHeader).update_from(session, running=True)
        if self._ticker is None:
            self._ticker = self.set_interval(TICK_SECONDS, self._tick)
        else:
            self._ticker.resume()
        self._drive(single)
        return True

    @work(thread=True, group="run", exit_on_error=False)
    def _drive(self, single: bool) -> None:
        # Not exclusive: a thread cannot be stopped, so a second worker would step the same
        # run at once. The intent queue starts one drive at a time; the driver refuses two.
        session = self.session
        assert session is not None
        stop = session.drive(
            single,
            lambda batch: self.post_message(StepFinished(batch)),
            lambda event: self.post_message(RunHeld(event)),
        )
        if session.run.finished:
            self.post_message(RunCompleted(session.run.status.value))
        else:
            self.post_message(RunPaused(stop.reason.value, stop.task))

    def _drive_ended(self) -> None:
        self._run_active = False
        if self.session is not None:
            self.session.look_in_flight()
        self._pause_ticker_when_idle()
        self._catch_up()
        self._refresh_bindings_if_changed()
        self._refresh_markers(set())
        self._intents.done()

    # -- signals ----------------------------------------------------------------------------

    def action_pause(self) -> None:
        session = self.session
        if session is None:
            return
        dropped = self._intents.drop_run_intents()
        session.pause()
        running = session.running_attempt()
        where = f" after {running.task}" if running is not None else ""
        extra = f" ({dropped} queued steps dropped)" if dropped else ""
        self.notify(f"pausing{where}{extra}", title="Run")

    def action_stop(self) -> None:
        if self.session is None or not self._run_active:
            self.notify(WHY_NOT["stop"])
            return
        running = self.session.running_attempt()
        self._signal_stop()
        self.notify(f"stopping{' ' + running.task if running else ''}", title="Run")

    def _signal_stop(self) -> None:
        self._intents.drop_run_intents()
        if self.session is not None:
            self.session.cancel()

    # -- live state -------------------------------------------------------------------------

    def _tick(self) -> None:
        """While a drive is in progress: show new events and the running attempt's time."""
        if self.session is None:
            return
        changed = set(self.session.look_in_flight())  # tasks running ahead (workers)
        if not self._catch_up():
            self.query_one(RunHeader).update_from(self.session, running=self._run_active)
            running = self.session.running_attempt()
            if running is not None:
                changed.add(running.task)
            if changed:
                self._refresh_markers(changed)
        self._pause_ticker_when_idle()

    def _pause_ticker_when_idle(self) -> None:
        """Tick while a drive goes on, or while tasks that ran ahead of a pause still run
        (their marks clear when they end)."""
        idle = not self._run_active and not (self.session and self.session.in_flight)
        if idle and self._ticker is not None:
            self._ticker.pause()

    def _catch_up(self) -> bool:
        """Show every event recorded but not shown yet; False if there was none."""
        session = self.session
        if session is None:
            return False
        events = session.run.events
        total, shown = len(events), session.delivered
        if total <= shown:
            return False
        tasks = {events[i].task for i in range(shown, total)}
        session.delivered = total
        trace = self.query_one(TracePanel)
        trace.append(total - shown)
        if session.view_seq is None:
            trace.follow()
        self._refresh_markers(tasks)
        return True

    def on_step_finished(self, message: StepFinished) -> None:
        self._catch_up()

    def on_run_held(self, message: RunHeld) -> None:
        self._catch_up()
        event = message.event
        self._select(event.task)
        error = event.error or {}
        # The error text comes from the task: shown, never interpreted.
        what = visible(f"{error.get('type', '')}: {error.get('message', '')}")
        self.notify(
            f"{event.task}: attempt {event.attempt} {event.status.value}: {what}\n"
            "n: finish this task · c: continue · s: stop",
            title="Held at a failed attempt",
            severity="warning",
            timeout=10,
        )

    def on_run_paused(self, message: RunPaused) -> None:
        self._drive_ended()
        if message.reason == "breakpoint" and message.task:
            self.notify(f"breakpoint: before {message.task}", title="Paused")
            self._select(message.task)
        elif message.reason == "failure" and message.task:
            self.notify(f"{message.task} failed", title="Paused on failure", severity="warning")
            self._select(message.task)
        elif message.reason == "paused":
            self.notify("paused", title="Run")
        self.query_one(DagView).reveal(self._next_task())

    def on_run_completed(self, message: RunCompleted) -> None:
        self._intents.drop_run_intents()
        self._drive_ended()
        if self.session is not None and self.session.store_problem:
            self.notify(self.session.store_problem, title="Run store", severity="warning")
        failed = message.status != RunStatus.SUCCEEDED
        self.notify(
            f"run {message.status}",
            title="Run finished",
            severity="error" if failed else "information",
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "run" and event.worker.error is not None:
            self._drive_ended()
            self.notify(
                f"run stopped by an internal error: {event.worker.error!r}", severity="error"
            )

    # -- saying why -------------------------------------------------------------------------

    def on_key(self, event: events.Key) -> None:
        """A key whose action is greyed out arrives here: say why it does nothing."""
        active = self.active_bindings.get(event.key)
        if active is None or active.enabled:
            return
        reason = WHY_NOT.get(active.binding.action)
        if reason is None and self.session is None:
            reason = "nothing is open: o opens a workflow or an export"
        if reason:
            self.notify(reason)
            event.stop()
