"""A value under a redacted key is gone from everything shared, wherever it was given (a
task's ``with:``, the payload, nested, in lists) and wherever it went (results under other
keys, error messages, tracebacks, logs): the export, both reports and ``export --redact``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness_tui.cli import cli

KEYS = "password,token,api_key"
STORE = ("--store", "runs.sqlite3")
SECRETS = {
    "with": "Wpass7e1f0c",
    "with-nested": "Wtok9a2b3c",
    "with-list": "Wlist5d6e7f",
    "payload": "Papi4b5c6d",
    "payload-nested": "Pdeep1a2b3c",
    "payload-list": "Plist8e9f0a",
    "number": "918273645",
}

TASKS = """
import logging


def everything(inputs):
    return {"params": inputs["params"], "payload": inputs["payload"]}


def leak(inputs):
    seen = repr(everything(inputs))
    print("log " + seen)
    logging.getLogger("leaky").warning("logged %s", seen)
    number = inputs["payload"]["api_key"][1]
    return {"text": "seen " + seen, "count": number, "counts": [number, 1]}


def boom(inputs):
    raise ValueError("failed with " + repr(everything(inputs)))
"""

WORKFLOW = f"""\
name: leaky
payload:
  account: {{api_key: {SECRETS["payload"]}, region: eu}}
  deep: [{{nested: {{token: {SECRETS["payload-nested"]}}}}}]
  api_key: [{SECRETS["payload-list"]}, {SECRETS["number"]}]
on_failure: continue
tasks:
  leak:
    run: redact_everywhere_tasks:leak
    with:
      password: {SECRETS["with"]}
      nested: {{deep: [{{token: {SECRETS["with-nested"]}}}]}}
      kept: visible
  fail:
    run: redact_everywhere_tasks:boom
    depends_on: [leak]
    with: {{token: [{SECRETS["with-list"]}, other{SECRETS["with-nested"]}]}}
"""


@pytest.fixture
def stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[CliRunner, Path]:
    (tmp_path / "redact_everywhere_tasks.py").write_text(TASKS, encoding="utf-8")
    (tmp_path / "leaky.yaml").write_text(WORKFLOW, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    plain = runner.invoke(cli, ["run", "leaky.yaml", "-q", *STORE])
    assert plain.exit_code == 1, plain.output
    return runner, tmp_path


def leaks(text: str) -> list[str]:
    return [name for name, secret in SECRETS.items() if secret in text]


def test_the_secrets_would_leak_without_redaction(stored: tuple[CliRunner, Path]) -> None:
    runner, _ = stored
    (run_id,) = [
        row["id"] for row in json.loads(runner.invoke(cli, ["runs", "--json", *STORE]).stdout)
    ]
    text = runner.invoke(cli, ["export", run_id, "-", *STORE]).stdout
    document = json.loads(text)
    everywhere = json.dumps(
        [document["results"], document["trace"], document["timings"], document["attempts"]]
    )
    assert leaks(everywhere) == list(SECRETS)  # in results, errors, tracebacks and logs


def test_no_secret_in_the_export_the_reports_or_export_redact(
    stored: tuple[CliRunner, Path],
) -> None:
    runner, folder = stored
    exported = runner.invoke(
        cli, ["run", "leaky.yaml", "-q", "--no-store", "--export", "red.json", "--redact", KEYS]
    )
    assert exported.exit_code == 1, exported.output
    text = (folder / "red.json").read_text(encoding="utf-8")
    assert leaks(text) == []
    document = json.loads(text)
    assert "'kept': 'visible'" in document["results"]["leak"]["text"]
    assert document["results"]["leak"]["counts"] == ["<redacted>", 1]
    assert "visible" in document["workflow"]["source"]
    assert any("Traceback" in (t.get("traceback") or "") for t in document["timings"])
    for fmt in ("markdown", "html"):
        report = runner.invoke(cli, ["report", "red.json", "--format", fmt])
        assert report.exit_code == 0, report.output
        assert "<redacted>" in report.stdout or "&lt;redacted&gt;" in report.stdout
        assert leaks(report.stdout) == [], fmt
    (run_id,) = [
        row["id"] for row in json.loads(runner.invoke(cli, ["runs", "--json", *STORE]).stdout)
    ]
    again = runner.invoke(cli, ["export", run_id, "-", "--redact", KEYS, *STORE])
    assert again.exit_code == 0, again.output
    assert leaks(again.stdout) == []
    assert json.loads(again.stdout)["redacted"] == sorted(KEYS.split(","))
    replayed = runner.invoke(cli, ["replay", "red.json"])
    assert replayed.exit_code == 0, replayed.output
