"""The ``harness-tui`` command group and the workflow-file commands."""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import sys
import threading
from typing import NoReturn

import click
from click.shell_completion import CompletionItem

from ..config import Config
from ..engine.errors import HarnessError
from ..engine.untrusted import quoted, shown
from ..version import __version__
from .collector import tune_collector
from .common import (
    EXIT_INVALID,
    data_table,
    die,
    die_interrupted_loading,
    echo,
    echo_error_line,
    echo_json,
    exit_with_error,
    load_or_die,
    parse_payload,
    payload_option,
    table_console,
    use_glyphs,
)
from .completion import WORKFLOW, complete_files

# Command name -> the module (in this package) that registers it on `cli` when imported:
# a command's module, and what it imports, loads only when that command runs or `--help`
# lists them all. The commands defined in this module are always there.
LAZY_COMMANDS = {
    "config": "config_cmd",
    "diff": "diff_cmd",
    "examples": "examples_cmd",
    "export": "records_cmds",
    "golden": "check_cmds",
    "open": "tui_cmds",
    "replay": "records_cmds",
    "report": "report_cmd",
    "rerun": "rerun_cmd",
    "resume": "records_cmds",
    "run": "records_cmds",
    "runs": "records_cmds",
    "serve": "serve_cmd",
    "show": "tui_cmds",
    "verify": "check_cmds",
}


class _Group(click.Group):
    """Lets ``harness-tui FILE`` open the workbench, like ``harness-tui open FILE``, turns
    every :class:`HarnessError` of any command, and every misuse of a command's arguments
    and options, into one clear line and exit code 2, and imports a command's module only
    when the command is looked up (:data:`LAZY_COMMANDS`)."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except HarnessError as exc:
            exit_with_error(exc)
        except click.UsageError as exc:  # parsing a command's arguments: one line, not three
            name = exc.ctx.command_path if exc.ctx is not None else "harness-tui"
            die(f"{exc.format_message()} (see {name} --help)", exc.exit_code)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = LAZY_COMMANDS.get(cmd_name)
        if cmd_name not in self.commands and module is not None:
            importlib.import_module(f"{__package__}.{module}")  # registers it on `cli`
        return self.commands.get(cmd_name)

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        # `harness-tui FILE` opens FILE: the first word is a command or a file.
        return [*super().shell_complete(ctx, incomplete), *complete_files(incomplete)]

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        known = args and (args[0] in self.commands or args[0] in LAZY_COMMANDS)
        if args and not known and args[0] not in ("-h", "--help", "-V", "--version"):
            return super().resolve_command(ctx, ["open", *args])
        return super().resolve_command(ctx, args)


@click.group(
    cls=_Group,
    invoke_without_command=True,
    # Unknown options (harness-tui --no-store) are the workbench's: pass them on to `open`.
    context_settings={"help_option_names": ["-h", "--help"], "ignore_unknown_options": True},
)
@click.version_option(__version__, "-V", "--version", prog_name="harness-tui")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """A deterministic workflow harness with a terminal workbench.

    harness-tui FILE opens the workbench on a workflow; the commands below do the same work
    headless, for scripts and CI.
    """
    if ctx.invoked_subcommand is None:
        # The workbench with nothing open; `open` is registered by .tui_cmds, which imports
        # this module (so looking it up here, not importing it, keeps the two acyclic).
        command = cli.get_command(ctx, "open")
        assert command is not None
        ctx.invoke(command)


@cli.command()
@click.argument("files", nargs=-1, required=True, type=WORKFLOW)
@click.option(
    "--imports",
    is_flag=True,
    help="Also import every run: and fallback: reference (this runs the modules' code).",
)
def validate(files: tuple[str, ...], imports: bool) -> None:
    """Check workflow files; print 'ok' or every problem as file:line:col: message."""
    from ..workflow.errors import WorkflowError
    from ..workflow.sources import is_python_ref, load_any
    from ..workflow.yamlpos import yaml11_differences

    bad = False
    for path in files:
        try:
            workflow = load_any(path)
        except WorkflowError as exc:
            bad = True
            for problem in exc.problems:
                echo_error_line(str(problem))
            continue
        except KeyboardInterrupt:
            die_interrupted_loading()
        if not is_python_ref(path):
            for line, column, message in yaml11_differences(workflow.source):
                echo_error_line(f"{shown(path)}:{line}:{column}: warning: {message}")
        if imports:
            from ..workflow.imports import import_problems

            failed = import_problems(workflow)
            for problem in failed:
                echo_error_line(str(problem))
            if failed:
                bad = True
                continue
        count = len(workflow.graph)
        echo(f"ok: {shown(path)} ({count} task{'s' * (count != 1)})")
    sys.exit(EXIT_INVALID if bad else 0)


@cli.command()
@click.argument("file", type=WORKFLOW)
@payload_option
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
def plan(file: str, payload: str | None, as_json: bool) -> None:
    """Print the execution plan of a workflow for a payload."""
    from ..engine.canonical import digest
    from ..engine.scheduler import DeterministicScheduler

    workflow = load_or_die(file)
    value = parse_payload(payload, workflow.payload)
    the_plan = DeterministicScheduler(workflow.graph).plan(value)
    if as_json:
        document = {
            "workflow": workflow.name,
            "payload_digest": digest(value),
            "plan": the_plan.to_json(),
            "plan_digest": the_plan.digest,
        }
        echo_json(document)
        return
    graph = workflow.graph
    rows = (
        (
            str(step.index),
            step.task,
            step.task_id,
            str(step.level),
            ", ".join(graph[step.task].depends_on),
        )
        for step in the_plan
    )
    if not sys.stdout.isatty():
        # For cut, awk and grep (and as fast as --json): one header line, one line per task.
        lines = ["\t".join(PLAN_COLUMNS), *("\t".join(row) for row in rows)]
        echo("\n".join([*lines, f"plan digest: {the_plan.digest}"]))
        return
    table = data_table(title=f"{shown(workflow.name)}: {len(the_plan)} tasks", title_justify="left")
    for column in PLAN_COLUMNS:
        table.add_column(column, justify="right" if column in ("#", "level") else "left")
    for row in rows:
        table.add_row(*row)
    console = table_console()
    console.print(table)
    console.print(f"plan digest: {the_plan.digest}")


PLAN_COLUMNS = ("#", "task", "task_id", "level", "depends_on")


@cli.command()
@click.argument("kind", type=click.Choice(["workflow", "run"]))
def schema(kind: str) -> None:
    """Print the JSON Schema of workflow files or run exports."""
    from ..schemas import schema_text

    echo(schema_text(kind), nl=False)


@cli.command()
@click.option("--tasks", "count", type=click.IntRange(1, 100_000), required=True)
@click.option("--shape", type=click.Choice(["wide", "chain", "layered"]), default="wide")
@click.option("--name", default=None, help="Workflow name (default: synthetic_SHAPE_N).")
def generate(count: int, shape: str, name: str | None) -> None:
    """Print a synthetic workflow of trivial built-in tasks (for benchmarks)."""
    from ..engine.graph import NAME_PATTERN
    from ..workflow.generate import generate_workflow

    if name is not None and not NAME_PATTERN.fullmatch(name):
        die(
            f"--name {quoted(name)}: use letters, digits, '_' or '-', starting with a letter or '_'"
        )
    echo(generate_workflow(count, shape, name), nl=False)


def main() -> None:
    """Console entry point."""
    tune_collector()
    from .children import keep_children

    keep_children()
    try:
        settings = _settings(sys.argv[1:])
        if settings is not None:
            use_glyphs(settings.get("glyphs"))
            _capture_level(settings.get("log_level"))
        cli(
            standalone_mode=True,
            # The same variable however it was started (`python -m harness_tui` too).
            complete_var="_HARNESS_TUI_COMPLETE",
            default_map=_option_defaults(settings),
            obj=settings,  # the workbench reads its theme, glyphs and keymap from it
        )
    except KeyboardInterrupt:  # pragma: no cover - interactive
        echo("harness-tui: stopped by Ctrl+C", err=True)
        _exit(130)
    except SystemExit as done:
        if done.code is not None and not isinstance(done.code, int):
            raise
        _exit(done.code or 0)


# A setting of config.toml (or HARNESS_TUI_<KEY>) -> the option parameter it gives a default.
_OPTION_OF = {"store": "store_path", "workers": "workers", "executor": "executor_spec"}


def _settings(argv: list[str]) -> Config | None:
    """The user's settings (``config.toml``, ``HARNESS_TUI_<KEY>``). A broken config file
    stops every command with one line, except ``config``, which is how the user finds and
    fixes it (there: None)."""
    from ..config import ConfigError, load_config

    try:
        return load_config()
    except ConfigError as exc:
        if argv[:1] == ["config"]:
            return None
        exit_with_error(exc)


def _capture_level(name: str) -> None:
    """Tasks' logging records from ``name`` (``config.toml``'s ``log_level``) up join their
    logs, whatever the loggers' levels."""
    import logging

    from ..engine import capture

    capture.set_level(logging.getLevelNamesMapping()[name])


def _option_defaults(settings: Config | None) -> dict[str, dict[str, object]]:
    """Click's ``default_map``: each setting the user gave, as the default of the option it
    names, for every command that has that option (an option given on the line still wins)."""
    if settings is None:
        return {}
    given = {param: settings.get(key) for key, param in _OPTION_OF.items() if settings.given(key)}
    if not given:
        return {}
    return {name: dict(given) for name in [*LAZY_COMMANDS, *cli.commands]}


def _exit(code: int) -> NoReturn:
    """Exit now, even when a task left a non-daemon thread running: the run is recorded and
    its export written, and a task's thread does not get to hold the command open. The
    processes tasks left running end with it (a Ctrl+C now, the run recorded already, is not
    a traceback from the middle of that)."""
    import signal

    from .children import end_children

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    end_children()
    stray = [
        thread
        for thread in threading.enumerate()
        if not thread.daemon and thread is not threading.main_thread() and thread.is_alive()
    ]
    if not stray:
        if sys.getprofile() is not None or sys.gettrace() is not None:
            sys.exit(code)  # a profiler or a coverage tool writes what it saw as Python ends
        # What was registered to run at exit runs (log handlers, pools, temporary files);
        # then the process ends without freeing its objects one by one, which for a
        # 100,000-task run's millions took up to a second.
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
