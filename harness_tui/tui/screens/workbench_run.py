"""The workbench's run keys, and what a drive's updates look like on screen.

Keys go to the :class:`~harness_tui.tui.controller.RunController` (intents queue, signals act
at once); its updates arrive as one message the screen hands to :meth:`RunActions.show`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...engine.canonical import loads
from ...engine.driver import StopReason
from ...engine.errors import HarnessError
from ...engine.events import FAILURE_STATUSES, RunStatus, TraceEvent
from ...engine.exchanges import Exchange
from ...engine.graph import TaskNode
from ...engine.recorded_calls import CallMode
from ...records.export.overrides import Override
from ..call_text import response_bytes
from ..controller import (
    Crashed,
    DriveStarted,
    EventsRecorded,
    Finished,
    Go,
    Held,
    Paused,
    RunUpdate,
    Ticked,
)
from ..modals.confirm import ConfirmModal
from ..modals.output import OutputModal
from ..modals.rerun import RerunModal
from ..sanitize import shown, visible
from ..session import Session
from .calls import AnswerEdit
from .diff import record_diff_screen
from .workbench_host import Workbench

ANSWERED = {
    CallMode.OFFLINE: "; calls answered from the recording, nothing sent",
    CallMode.FILL: "; calls answered from the recording, the rest sent",
}
"""What a re-run's notification adds when the recording answers it."""


def answer_value(exchange: Exchange) -> Any:
    """A recorded answer as the user edits it: a call's value; an HTTP answer's body as
    JSON when it is JSON, else as text (decoded as the client read it)."""
    if exchange.kind == "call":
        return exchange.value
    data, _ = response_bytes(exchange)
    text = data.decode("utf-8", "replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


def _names(tasks: list[str]) -> str:
    """``a, b, c`` (the first eight), or ``nothing``."""
    if not tasks:
        return "nothing"
    return ", ".join(tasks[:8]) + (f" and {len(tasks) - 8} more" if len(tasks) > 8 else "")


def held_hint(event: TraceEvent, node: TaskNode) -> str:
    """What ``n`` and ``c`` do at the failed attempt ``event`` of ``node`` (both let the
    task go on; ``n`` pauses once it ends)."""
    attempts = node.max_retries + 1
    if event.attempt < attempts:
        then = f"attempt {event.attempt + 1} of {attempts} (held again if it fails)"
    elif node.fallback is not None or node.fallback_ref:
        then = "its fallback runs"
    else:
        then = "it ends failed"
    return f"n: {then}, then pause · c: the same, then go on · s: stop the run"


def code_source(session: Session) -> str:
    """Where a re-run of the replayed run on screen imports its task code from, as a clause:
    beside the export it was opened from, else the folder it was recorded in (a stored run
    has no export: it is not mentioned), and the Python path."""
    folder = Path(session.workflow.path).parent
    if session.source_path:
        return (
            "the modules this export names, imported from beside the export, else from "
            f"{folder}, and your Python path"
        )
    if session.workflow.path == "<string>":  # recorded from no file: no folder to name
        return "the modules this run names, imported from your Python path"
    return (
        f"the modules this run names, imported from {folder} (where it was recorded), and "
        "your Python path"
    )


class RunActions:
    """Step, continue, pause, stop, restart, re-run, breakpoints; and the drive's updates."""

    def __init__(self, screen: Workbench) -> None:
        self.screen = screen
        self.controller = screen.controller

    def handlers(self) -> dict[str, Callable[[], object]]:
        """What each of these actions' ids runs."""
        return {
            "run-step": lambda: self.go(single=True),
            "run-continue": lambda: self.go(single=False),
            "run-pause": self.pause,
            "stop-task": self.stop,
            "run-restart": lambda: self.replace_run("restart", self._restart_now),
            "rerun-from-task": self.rerun_from,
            "edit-output": self.edit_output,
            "edit-params": self.edit_params,
            "toggle-breakpoint": self.toggle_breakpoint,
            "toggle-break-on-failure": self.toggle_break_on_failure,
        }

    # -- intents ----------------------------------------------------------------------------

    def submit(self, name: str, start: Callable[[], bool]) -> None:
        """Queue an intent (it starts at once if nothing is in progress); one of a name
        at most waits (a key pressed twice never opens its dialog twice)."""
        key = f"queued {name}"
        if self.controller.pending(name):
            self.screen.notice(key, f"{name}: already queued until the run pauses")
            return

        def begin() -> bool:
            self.screen.forget(key)  # it waits no more
            return start()

        if self.controller.submit(name, begin):
            self.screen.notice(key, f"{name}: queued until the run pauses")

    def go(self, single: bool) -> None:
        held = self.controller.held
        go = self.controller.step() if single else self.controller.continue_()
        if go is Go.RELEASED and held is not None:
            self.screen.forget("held")
            then = "pausing after it" if single else "continuing"
            self.screen.notify(f"{held.task} goes on, {then}", title="Held run")

    def replace_run(self, name: str, start: Callable[[], bool]) -> None:
        """An intent that throws the current run away: asked first if a run is executing.
        A run still driven (executing, or held at a failed attempt) is first stopped as
        ``s`` stops it, and ends (its cleanups run) before ``start``."""
        controller = self.controller
        if not controller.driving:
            self.submit(name, start)
            return
        held = controller.held
        if held is not None:  # it waits for the user, who has just answered: no question
            self._stop_to_end()
            self.screen.notify(
                f"the run held at {held.task} stops first (its cleanups run)", title="Held run"
            )
            self.submit(name, start)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._stop_to_end()
                self.submit(name, start)

        self.screen.app.push_screen(
            ConfirmModal(f"A run is executing. Stop it and {name}?", f"Stop and {name}"),
            answered,
        )

    def _stop_to_end(self) -> None:
        """Stop the run on screen, to be replaced: it ends (cleanups run) compared with
        nothing (a what-if fork thrown away opens no diff)."""
        if self.controller.session is not None:
            self.controller.session.compared_with = None
        self.controller.stop_to_end()

    def _restart_now(self) -> bool:
        if self.controller.session is None:
            return False
        self.controller.session.restart()
        self.screen.show_session()
        self.screen.notify("restarted")
        return False

    def _picked(self) -> tuple[Session, str] | None:
        """The session and its selected task, or None (said when no task is selected)."""
        session, task = self.controller.session, self.screen.selected
        if session is None:
            return None
        if task is None:
            self.screen.notify("select a task first (arrows, or / to find one)")
            return None
        return session, task

    def rerun_from(self) -> None:
        picked = self._picked()
        if picked is None:
            return
        session, task = picked
        name = f"re-run from {task}"
        if not session.replay:
            self.replace_run(name, lambda: self._rerun_now(task))
            return
        # A replay runs no code; a re-run does, the code this run names: ask first, and
        # (when it recorded calls) how its tasks reach models and APIs: offline by default.
        self._ask_to_run_code(
            f"Re-running from {task} runs task code: {code_source(session)}.",
            lambda calls: self.replace_run(name, lambda: self._rerun_now(task, calls)),
        )

    def edit_output(self) -> None:
        """``E``: another output for the selected task; what follows from it re-runs (the
        plan shown first), then the diff screen compares the two runs. On a failed task it is
        "mark done and continue": the same fork, at that task."""
        picked = self._picked()
        if picked is None:
            return
        session, task = picked
        failed = session.status(task) in FAILURE_STATUSES
        title = f"Mark {task} done with this output and continue" if failed else (
            f"{task}: another output, then re-run what follows")  # fmt: skip
        text = session.run.output_text(task)
        self._what_if(
            Override("output", task, None),
            title,
            f"{task} is not called: its output is what you write.",
            loads(text) if text is not None else None,
            lambda value: (Override("output", task, value),),
        )

    def edit_params(self) -> None:
        """``W``: other ``with:`` parameters for the selected task; it and what follows
        re-run (the plan shown first), then the diff screen compares the two runs."""
        picked = self._picked()
        if picked is None:
            return
        session, task = picked
        params = dict(session.workflow.graph.nodes[task].params)
        if not params:
            self.screen.notify(f"{shown(task)} has no with: parameters to change")
            return

        def check(value: Any) -> str | None:
            if not isinstance(value, dict) or sorted(value) != sorted(params):
                return f"parameters: keep the keys {', '.join(sorted(params))}, change values"
            return None

        first = next(iter(params))
        self._what_if(
            Override("with", task, params[first], param=first),
            f"{task}: other parameters, then re-run it and what follows",
            f"{task} re-runs with these with: parameters (the workflow patched).",
            params,
            lambda value: tuple(
                Override("with", task, value[k], param=k) for k in params if value[k] != params[k]
            ),
            what="parameters",
            check=check,
        )

    def edit_answer(self, edit: AnswerEdit) -> None:
        """From the calls view: another answer for one recorded exchange; its task and what
        follows re-run, the other requests answered from the recording (the plan shown
        first), then the diff screen compares the two runs."""
        task, attempt, index = edit.task, edit.attempt, edit.index
        self._what_if(
            Override("answer", task, None, attempt=attempt, index=index),
            f"{task}: another recorded answer, then re-run what follows",
            f"Call #{index} of {task}'s attempt {attempt} answers with what you "
            "write; every other request of the re-run tasks is answered from the recording "
            "first.",
            answer_value(edit.exchange),
            lambda value: (Override("answer", task, value, attempt=attempt, index=index),),
            what="answer",
            calls=CallMode.FILL,  # this workbench's own run: what the recording lacks is sent
        )

    def _what_if(
        self,
        probe: Override,
        title: str,
        says: str,
        initial: Any,
        make: Callable[[Any], tuple[Override, ...]],
        *,
        what: str = "output",
        calls: CallMode = CallMode.LIVE,
        check: Callable[[Any], str | None] | None = None,
    ) -> None:
        """A what-if re-run: the plan of ``probe`` (what re-runs, what keeps its record) and
        the value to edit in a dialog; the overrides ``make`` gives for the value fork the
        run on screen (an export asks first, and how its tasks reach models and APIs)."""
        session = self.controller.session
        if session is None:
            return
        task = probe.task
        try:
            fork = session.plan_rerun(None, (probe,))
        except HarnessError as exc:
            self.screen.notify(str(exc), title="Cannot re-run", severity="error")
            return
        order = list(fork.workflow.graph.nodes)
        called = [t for t in order if t not in fork.kept]
        again = [t for t in called if not (t == task and probe.kind == "output")]
        kept = [t for t in order if t in fork.kept]
        plan = f"{says} Re-runs: {_names(again)}. Keep what they did: {_names(kept)}."

        def edited(value: object) -> None:
            if value is OutputModal.CANCELLED:
                return
            overrides = make(value)
            if not overrides:
                self.screen.notify("nothing changed: nothing re-runs")
                return
            name = f"what-if on {task}"
            if not session.replay:
                self.replace_run(name, lambda: self._what_if_now(overrides, calls))
                return
            question = f"Re-running {task} and what follows runs task code: {code_source(session)}."
            self._ask_to_run_code(question, lambda mode: self.replace_run(
                name, lambda: self._what_if_now(overrides, mode)))  # fmt: skip

        modal = OutputModal(title, plan, initial, what=what, check=check)
        self.screen.app.push_screen(modal, edited)

    def _ask_to_run_code(self, question: str, then: Callable[[CallMode], None]) -> None:
        """Ask before running an export's code, and (when it recorded calls) how its re-run
        tasks reach models and APIs: offline first; ``then`` gets the answer."""
        session = self.controller.session
        assert session is not None
        problem = session.recordings_problem()
        if problem is not None:
            question += f" Its recorded calls cannot be read ({problem}): every request is sent."
        recorded = sum(len(calls) for calls in session.recordings().values())

        def answered(mode: CallMode | bool | None) -> None:
            if mode:
                then(mode if isinstance(mode, CallMode) else CallMode.LIVE)

        modal = (
            RerunModal(question + " Run it?", recorded)
            if recorded
            else ConfirmModal(question + " Run it?", "Run the code")
        )
        self.screen.app.push_screen(modal, answered)

    def _what_if_now(
        self, overrides: tuple[Override, ...], calls: CallMode = CallMode.LIVE
    ) -> bool:
        """Fork the run on screen with ``overrides`` and continue it (then the diff opens)."""
        session = self.controller.session
        if session is None:
            return False
        try:
            session.rerun_from(None, calls, overrides)
        except HarnessError as exc:
            self.screen.notify(str(exc), title="Cannot re-run", severity="error")
            return False
        self.screen.show_session()
        said = {"output": "output set", "answer": "answer edited", "with": "parameters set"}
        what = said[overrides[0].kind]
        self.screen.notify(f"{overrides[0].task}: {what}; re-running what follows, then comparing")
        self.go(single=False)  # queued: it starts once this intent returns
        return False

    def _rerun_now(self, task: str, calls: CallMode = CallMode.LIVE) -> bool:
        """Fork the run on screen at ``task`` (a new, live run); it waits for a step."""
        session = self.controller.session
        if session is None:
            return False
        try:
            fork = session.rerun_from(task, calls)
        except HarnessError as exc:
            self.screen.notify(str(exc), title="Cannot re-run", severity="error")
            return False
        self.screen.show_session()
        kept = len(fork.kept)
        keeps = "1 task keeps what it" if kept == 1 else f"{kept} tasks keep what they"
        found = f"; task code from {fork.code_folder}" if fork.code_folder is not None else ""
        said = ANSWERED.get(session.answering, "") if session.answering else ""
        self.screen.notify(f"re-running from {task}: {keeps} did{found}{said}; step or continue")
        return False

    # -- signals and settings ---------------------------------------------------------------

    def pause(self) -> None:
        dropped, running = self.controller.pause()
        where = f" after {running.task}" if running is not None else ""
        extra = f" ({dropped} queued steps dropped)" if dropped else ""
        self.screen.notify(f"pausing{where}{extra}", title="Run")

    def stop(self) -> None:
        running = self.controller.stop()
        self.screen.notify(f"stopping{' ' + running.task if running else ''}", title="Run")

    def toggle_breakpoint(self) -> None:
        session, task = self.controller.session, self.screen.selected
        if session is None or task is None:
            return
        on_now = session.toggle_breakpoint(task)
        self.screen.notify(f"breakpoint {'set on' if on_now else 'removed from'} {task}")
        self.screen.repaint({task})

    def toggle_break_on_failure(self) -> None:
        session = self.controller.session
        if session is None:
            return
        session.break_on_failure = not session.break_on_failure
        self.screen.notify(f"break on any failure: {'on' if session.break_on_failure else 'off'}")

    # -- the drive's updates ----------------------------------------------------------------

    def show(self, update: RunUpdate) -> None:
        """Render one update of the controller (the screen's one run message)."""
        screen, session = self.screen, self.controller.session
        if session is None:
            return
        if isinstance(update, DriveStarted):
            screen.refresh_bindings_if_changed()
            screen.header.update_from(session, running=True)
            return
        if self.controller.held is None:
            screen.forget("held")  # released, stopped or ended: its hint no longer applies
        if isinstance(update, Ticked):
            changed = set(session.look_in_flight())  # tasks running ahead (workers)
            tasks = screen.panes.catch_up(update.recorded)
            running = session.running_attempt()
            if running is not None:
                changed.add(running.task)  # its elapsed time goes on
            if changed or tasks:
                screen.repaint(changed | tasks)
            else:
                screen.header.update_from(session, running=self.controller.driving)
            return
        tasks = screen.panes.catch_up(update.recorded)
        if isinstance(update, EventsRecorded | Held):
            if tasks:
                screen.repaint(tasks)
            if isinstance(update, Held):
                self._held(update)
            return
        self.controller.drive_ended(update)
        session.look_in_flight()
        screen.repaint(tasks)
        screen.refresh_bindings_if_changed()
        self.controller.done()
        if isinstance(update, Paused):
            self._paused(update)
        elif isinstance(update, Finished):
            self._finished(update)
        elif isinstance(update, Crashed):
            screen.notify(f"run stopped by an internal error: {update.error!r}", severity="error")

    def _held(self, update: Held) -> None:
        event = update.event
        self.screen.panes.select(event.task)
        error = event.error or {}
        # The error text comes from the task: shown, never interpreted.
        what = visible(f"{error.get('type', '')}: {error.get('message', '')}")
        session = self.controller.session
        assert session is not None
        self.screen.repaint({event.task})  # the header and the next-task marker say held
        self.screen.notice(
            "held",
            f"{event.task}: attempt {event.attempt} {event.status.value}: {what}\n"
            + held_hint(event, session.workflow.graph[event.task]),
            title="Held at a failed attempt",
            severity="warning",
            timeout=30,
        )

    def _paused(self, update: Paused) -> None:
        screen, task = self.screen, update.task
        if update.reason is StopReason.BREAKPOINT and task:
            screen.notify(f"breakpoint: before {task}", title="Paused")
            screen.panes.select(task)
        elif update.reason is StopReason.FAILURE and task:
            screen.notify(f"{task} failed", title="Paused on failure", severity="warning")
            screen.panes.select(task)
        elif update.reason is StopReason.PAUSED:
            screen.notify("paused", title="Run")
        screen.panes.reveal_next()

    def _finished(self, update: Finished) -> None:
        if update.store_problem:
            self.screen.notify(update.store_problem, title="Run store", severity="warning")
        failed = update.status is not RunStatus.SUCCEEDED
        self.screen.notice(
            "finished",
            f"run {update.status.value}",
            title="Run finished",
            severity="error" if failed else "information",
        )
        session = self.controller.session
        # A what-if fork ended (not the run it replaced, whose end is said after the fork began).
        if session is not None and session.compared_with is not None and update.run is session.run:
            before, session.compared_with = session.compared_with, None
            try:
                diff = record_diff_screen(before, session.export_record())
            except HarnessError as exc:
                self.screen.notify(str(exc), title="Cannot compare", severity="error")
                return
            self.screen.app.push_screen(diff)
