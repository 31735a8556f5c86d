"""Every CLI command over the hostile corpus, with the exit code each must end with."""

from __future__ import annotations

from pathlib import Path

from .corpus import HOSTILE, Corpus

STORE = "runs.sqlite3"
RUN_ID = "<the stored run's id>"


def commands(c: Corpus) -> dict[str, tuple[list[str], int]]:
    """Name -> (arguments, expected exit code); file names relative to the corpus folder,
    where the commands run, so outputs do not depend on where it is."""
    wf, v2 = c.workflow.name, c.changed.name
    return {
        "validate-invalid": (["validate", c.invalid.name], 2),
        "validate-huge": (["validate", c.huge.name], 2),
        "validate-file-name": (["validate", c.hostile_file_name.name], 0),
        "validate-missing-file-name": (["validate", HOSTILE], 2),
        "plan": (["plan", wf], 0),
        "plan-python": (["plan", "hostile_harness.py:build"], 0),
        "plan-python-fails": (["plan", "hostile_harness.py:boom"], 2),
        "run-python": (["run", "hostile_harness.py:build", "--no-store"], 1),
        "plan-json": (["plan", wf, "--json"], 0),
        "plan-file-name": (["plan", c.hostile_file_name.name], 0),
        "plan-invalid": (["plan", c.invalid.name], 2),
        "plan-invalid-file-name": (["plan", c.invalid_file_name.name], 2),
        "plan-payload": (["plan", wf, "--payload", '{"\\u001b]0;t\\u0007": 1}'], 0),
        "plan-bad-payload": (["plan", wf, "--payload", HOSTILE], 2),
        "run": (["run", wf, "--no-store"], 1),
        "run-logs": (["run", wf, "--no-store", "--logs"], 1),
        "run-export-stdout": (["run", wf, "--no-store", "-q", "--export", "-"], 1),
        "run-chrome": (
            ["run", wf, "--no-store", "-q", "--export", "-", "--format", "chrome-trace"],
            1,
        ),
        "run-file-name": (["run", c.hostile_file_name.name, "--no-store", "-q"], 1),
        "run-stored": (["run", wf, "--store", STORE], 1),
        "runs-table": (["runs", "--store", STORE], 0),
        "runs": (["runs", "--store", STORE], 0),
        "runs-json": (["runs", "--json", "--store", STORE], 0),
        "export-missing": (["export", HOSTILE, "-", "--store", STORE], 2),
        "export-stored": (["export", RUN_ID, "-", "--store", STORE], 0),
        "export-stored-redacted": (
            ["export", RUN_ID, "-", "--store", STORE, "--redact", "ticket"],
            0,
        ),
        "report-stored": (["report", RUN_ID, "--store", STORE], 0),
        "resume-missing": (["resume", HOSTILE, "--store", STORE], 2),
        "rerun": (["rerun", c.export.name, "--from", "shout", "--no-store"], 1),
        "rerun-missing-task": (["rerun", c.export.name, "--from", HOSTILE, "--no-store"], 2),
        "replay": (["replay", c.export.name], 0),
        "replay-json": (["replay", c.export.name, "--json"], 0),
        "replay-forged": (["replay", c.forged_export.name], 0),
        "replay-bad": (["replay", c.bad_export.name], 2),
        "replay-workflow": (["replay", wf], 2),
        "report": (["report", c.export.name], 0),
        "report-html": (["report", c.export.name, "--format", "html"], 0),
        "report-bad": (["report", c.bad_export.name], 2),
        "verify": (["verify", wf], 0),
        "verify-against": (["verify", wf, "--against", c.changed_export.name], 1),
        "verify-against-bad": (["verify", wf, "--against", c.bad_export.name], 2),
        "diff": (["diff", wf, v2], 0),
        "diff-json": (["diff", wf, v2, "--json"], 0),
        "diff-exports": (["diff", c.export.name, c.changed_export.name], 0),
        "diff-exports-json": (["diff", c.export.name, c.changed_export.name, "--json"], 0),
        "diff-mixed": (["diff", c.export.name, v2], 2),
        "diff-invalid": (["diff", wf, c.invalid.name], 2),
        "golden-mismatch": (["golden", wf, c.golden.name], 1),
        "golden-bad": (["golden", wf, c.bad_export.name], 2),
        "golden-not-json": (["golden", wf, c.workflow.name], 2),
        "generate": (["generate", "--tasks", "2", "--name", HOSTILE], 2),
        "show-workflow": (["show", wf], 2),
        "open-bad": (["open", c.bad_export.name], 2),
        "open-invalid": (["open", c.invalid.name], 2),
        "show-bad": (["show", c.bad_export.name], 2),
        "schema": (["schema", "run"], 0),
    }


def with_run_id(args: list[str], folder: Path) -> list[str]:
    """``args`` with :data:`RUN_ID` replaced by the id of the first run in the corpus's store."""
    if RUN_ID not in args:
        return args
    from harness_tui.records.store import RunStore

    with RunStore(folder / STORE, create=False) as store:
        run_id = store.runs()[0]["id"]
    return [run_id if arg == RUN_ID else arg for arg in args]
