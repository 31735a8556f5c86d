"""Task output captured per attempt: stdout, stderr, ``logging``, threads, bounds (issue 12)."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from harness_tui.engine.capture import DEFAULT_LOG_LIMIT, AttemptLog, truncation_mark
from harness_tui.engine.clock import FakeClock
from harness_tui.engine.graph import TaskGraph, TaskNode
from harness_tui.engine.orchestrator import RetiredStep, Run, TaskOrchestrator
from harness_tui.executors.threads import ThreadExecutor

Fn = Callable[[Mapping[str, Any]], Any]


def run_of(*nodes: TaskNode, **kwargs: Any) -> Run:
    kwargs.setdefault("clock", FakeClock())
    return TaskOrchestrator(TaskGraph.from_nodes(list(nodes)), **kwargs).start({}).run_to_end()


def chatty(inputs: Mapping[str, Any]) -> int:
    print("to stdout")
    print("to stderr", file=sys.stderr)
    return 1


def logs_at_levels(inputs: Mapping[str, Any]) -> int:
    log = logging.getLogger("tasks.levels")
    log.setLevel(logging.DEBUG)
    log.debug("a detail")
    log.info("some news")
    log.warning("a warning")
    log.error("an error")
    return 2


def with_thread(inputs: Mapping[str, Any]) -> int:
    worker = threading.Thread(target=lambda: print("from the task's thread"))
    worker.start()
    worker.join()
    return 3


def test_stdout_and_stderr_go_to_the_attempt_not_the_terminal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    run = run_of(TaskNode("a", chatty))
    assert run.log("a", 1) == AttemptLog("to stdout\nto stderr\n", False)
    out, err = capsys.readouterr()
    assert "to stdout" not in out and "to stderr" not in err


def test_logging_records_at_several_levels_are_captured() -> None:
    text = run_of(TaskNode("a", logs_at_levels)).log("a", 1)
    assert text is not None
    assert text.text.splitlines() == [
        "DEBUG tasks.levels: a detail",
        "INFO tasks.levels: some news",
        "WARNING tasks.levels: a warning",
        "ERROR tasks.levels: an error",
    ]


@pytest.mark.parametrize(
    "executor",
    [ThreadExecutor(), ThreadExecutor(isolate=True), ThreadExecutor(timeouts="thread")],
    ids=["direct", "worker", "thread-timeout"],
)
def test_a_thread_the_task_starts_is_attributed_to_its_attempt(executor: ThreadExecutor) -> None:
    run = run_of(TaskNode("a", with_thread, timeout_seconds=30.0), executor=executor)
    assert run.log("a", 1) == AttemptLog("from the task's thread\n", False)


def test_each_attempt_has_its_own_log_and_the_fallback_too() -> None:
    calls = []

    def flaky(inputs: Mapping[str, Any]) -> int:
        calls.append(1)
        print(f"try {len(calls)}")
        raise RuntimeError("no")

    def fallback(inputs: Mapping[str, Any]) -> int:
        print("falling back")
        return 0

    run = run_of(TaskNode("a", flaky, max_retries=1, fallback=fallback))
    assert run.logs() == {
        ("a", 1): AttemptLog("try 1\n"),
        ("a", 2): AttemptLog("try 2\n"),
        ("a", 3): AttemptLog("falling back\n"),
    }


def test_a_10_mb_print_is_cut_at_the_limit_with_a_mark() -> None:
    def huge(inputs: Mapping[str, Any]) -> int:
        print("x" * 10_000_000)
        print("never kept")
        return 1

    log = run_of(TaskNode("a", huge)).log("a", 1)
    assert log is not None and log.truncated
    assert log.text == "x" * DEFAULT_LOG_LIMIT + truncation_mark(DEFAULT_LOG_LIMIT)


def test_the_limit_is_configurable() -> None:
    log = run_of(TaskNode("a", chatty), log_limit=5).log("a", 1)
    assert log == AttemptLog("to st" + truncation_mark(5), True)


def test_without_capture_output_goes_where_it_would(capsys: pytest.CaptureFixture[str]) -> None:
    run = run_of(TaskNode("a", chatty), log_limit=None)
    assert run.log("a", 1) is None and run.logs() == {}
    out, err = capsys.readouterr()
    assert out == "to stdout\n" and err == "to stderr\n"


def test_a_thread_that_outlives_its_attempt_writes_to_the_unattributed_log() -> None:
    go_on = threading.Event()
    wrote = threading.Event()

    def leaves_a_thread(inputs: Mapping[str, Any]) -> int:
        def late() -> None:
            go_on.wait(5)
            print("after the attempt")
            wrote.set()

        threading.Thread(target=late, daemon=True).start()
        return 1

    run = run_of(TaskNode("a", leaves_a_thread))
    go_on.set()
    assert wrote.wait(5)
    assert run.log("a", 1) == AttemptLog("")
    assert run.unattributed_log().text == "after the attempt\n"


def test_output_outside_attempts_is_left_alone(capsys: pytest.CaptureFixture[str]) -> None:
    run_of(TaskNode("a", chatty))
    print("the caller's own line")
    assert capsys.readouterr().out == "the caller's own line\n"


def test_what_tasks_print_changes_no_digest() -> None:
    def quiet(inputs: Mapping[str, Any]) -> int:
        return 1

    def loud(inputs: Mapping[str, Any]) -> int:
        print("something only this run says")
        logging.getLogger("tasks").warning("and logs")
        return 1

    first, second = run_of(TaskNode("a", quiet)), run_of(TaskNode("a", loud))
    assert first.logs() == {} and second.logs() != {}
    assert first.digests() == second.digests()
    assert first.canonical_trace() == second.canonical_trace()


def test_retired_steps_carry_their_attempt_logs() -> None:
    retired: list[RetiredStep] = []
    orchestrator = TaskOrchestrator(
        TaskGraph.from_nodes([TaskNode("a", chatty), TaskNode("b", lambda i: 1, ["a"])]),
        clock=FakeClock(),
    )
    run = orchestrator.start({})
    run.on_retire(retired.append)
    run.run_to_end()
    assert [(r.step.task, r.logs) for r in retired] == [
        ("a", ((1, AttemptLog("to stdout\nto stderr\n")),)),
        ("b", ()),
    ]


def test_a_listener_sees_output_as_it_is_written() -> None:
    seen: list[tuple[str, int, str]] = []
    run = TaskOrchestrator(TaskGraph.from_nodes([TaskNode("a", chatty)])).start({})
    run.add_log_listener(lambda task, attempt, text: seen.append((task, attempt, text)))
    run.run_to_end()
    assert "".join(text for _, _, text in seen) == "to stdout\nto stderr\n"
    assert {(task, attempt) for task, attempt, _ in seen} == {("a", 1)}


_OLD_NUMBER = """
import os, sys
from pathlib import Path
from harness_tui.engine import capture

secret = Path(sys.argv[1])
secret.write_bytes(b"SQLite format 3\\x00 not a log")
with capture.descriptors():
    reader = capture._capture[0]
    number = reader.read
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)  # the pipe's last writer is gone: its reader sees the end
    finally:
        os.close(null)
    assert reader.thread is not None
    reader.thread.join(timeout=30)
    assert not reader.thread.is_alive(), "the reader never saw the end of its pipe"
    other = os.open(secret, os.O_RDONLY)
    try:
        if other != number:
            os.dup2(other, number)  # the number is free again: a new file takes it
        assert reader.drain() is False
        assert os.lseek(number, 0, os.SEEK_CUR) == 0  # not a byte of it was read
    finally:
        os.close(other)
        if other != number:
            os.close(number)
"""


def test_a_pipe_whose_writers_all_closed_is_never_read_again_by_its_old_number(
    tmp_path: Path,
) -> None:
    """Something put other files on descriptors 1 and 2 while the capture ran, so its pipe
    ended; a later drain must not read whatever file now has the pipe's old number (a store's
    SQLite bytes once went into an attempt's log that way, and a blocking one hung the run).
    In a fresh interpreter: a process another test started in this one could hold a copy of
    the pipe's write end, and the pipe would never end."""
    result = subprocess.run(
        [sys.executable, "-c", _OLD_NUMBER, str(tmp_path / "other.bin")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr


class Kept(logging.Handler):
    """A handler a user installed: keeps what it receives."""

    def __init__(self, level: int = logging.NOTSET) -> None:
        super().__init__(level)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def logs_news(inputs: Mapping[str, Any]) -> int:
    log = logging.getLogger("tasks.news")  # no level of its own: the root's WARNING decides
    log.debug("a detail")
    log.info("some news")
    log.warning("a warning")
    return 4


def test_info_is_captured_by_default_and_other_handlers_receive_what_they_did() -> None:
    from harness_tui.engine import capture

    root = logging.getLogger()
    assert root.getEffectiveLevel() == logging.WARNING  # Python's default
    at_warning, unleveled = Kept(logging.WARNING), Kept()
    root.addHandler(at_warning)
    root.addHandler(unleveled)
    try:
        log = run_of(TaskNode("a", logs_news)).log("a", 1)
        capture.set_level(logging.WARNING)
        quieter = run_of(TaskNode("a", logs_news)).log("a", 1)
    finally:
        capture.set_level(capture.DEFAULT_LEVEL)
        root.removeHandler(at_warning)
        root.removeHandler(unleveled)
    assert log is not None and log.text == (
        "INFO tasks.news: some news\nWARNING tasks.news: a warning\n"
    )
    assert quieter is not None and quieter.text == "WARNING tasks.news: a warning\n"
    # The user's handlers, leveled or not, saw only what logging lets through: no INFO.
    for handler in (at_warning, unleveled):
        assert [r.getMessage() for r in handler.records] == ["a warning", "a warning"]
    assert not logging.getLogger("tasks.news").isEnabledFor(logging.INFO)  # outside attempts
