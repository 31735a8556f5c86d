"""What a user meets on installing: `-V`, `examples`, `config`, shell completion, and the
settings from config.toml and HARNESS_TUI_<KEY> reaching the options of every command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness_tui import __version__
from harness_tui.cli.completion import complete_files
from harness_tui.config import SETTINGS, ConfigError, load_config

from ..conftest import WORKFLOWS


def harness(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "HARNESS_TUI_CONFIG": "", **env}
    for setting in SETTINGS:
        if setting.env not in env:
            environ.pop(setting.env, None)
    return subprocess.run(
        [sys.executable, "-m", "harness_tui", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environ,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


def test_dash_v_prints_the_version() -> None:
    done = harness("-V")
    assert done.returncode == 0 and done.stdout.strip() == f"harness-tui, version {__version__}"


def test_examples_copy_the_shipped_workflows_that_then_validate_and_run(tmp_path: Path) -> None:
    target = tmp_path / "demo"
    done = harness("examples", str(target))
    assert done.returncode == 0, done.stderr
    shipped = sorted(p.name for p in WORKFLOWS.glob("*.yaml"))
    assert shipped and sorted(p.name for p in target.glob("*.yaml")) == shipped
    assert (target / "tasks" / "user_profile.py").is_file()
    assert not list(target.rglob("__pycache__"))
    # From another folder, the copy runs with its own task modules.
    assert harness("validate", *(str(p) for p in target.glob("*.yaml"))).returncode == 0
    ran = harness("run", str(target / "user_profile.yaml"), "--no-store", "-q", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr


def test_examples_never_overwrite(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text("keep me")
    done = harness("examples", str(tmp_path))
    assert done.returncode == 2 and "not an empty folder" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert (tmp_path / "mine.yaml").read_text() == "keep me"


def test_the_environment_wins_over_the_file_which_wins_over_the_default(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('workers = 3\nglyphs = "ascii"\nstore = "~/runs.sqlite3"\n')
    settings = load_config({"HARNESS_TUI_CONFIG": str(path), "HARNESS_TUI_WORKERS": "5"})
    assert settings.get("workers") == 5 and settings.sources["workers"] == "HARNESS_TUI_WORKERS"
    assert settings.get("glyphs") == "ascii" and settings.sources["glyphs"] == str(path)
    assert settings.get("store") == str(Path("~/runs.sqlite3").expanduser())
    assert settings.get("executor") == "threads" and not settings.given("executor")


@pytest.mark.parametrize(
    ("text", "env", "says"),
    [
        ("wrokers = 3\n", {}, "unknown key 'wrokers'"),
        ("workers = [\n", {}, "not TOML"),
        ("workers = true\n", {}, "workers must be a whole number"),
        ('glyphs = "emoji"\n', {}, 'glyphs must be "unicode" or "ascii"'),
        ("", {"HARNESS_TUI_WORKERS": "0"}, "HARNESS_TUI_WORKERS: workers must be"),
        (b"\xff\xfe".decode("latin-1"), {}, "not UTF-8"),
    ],
)
def test_a_bad_setting_is_one_line_naming_where(
    tmp_path: Path, text: str, env: dict[str, str], says: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(ConfigError, match=None) as caught:
        load_config({"HARNESS_TUI_CONFIG": str(path), **env})
    assert says in str(caught.value) and "\n" not in str(caught.value)
    # Every command says it in one line, exit 2; `config path` still answers.
    done = harness(
        "validate", str(WORKFLOWS / "user_profile.yaml"), HARNESS_TUI_CONFIG=str(path), **env
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and says in done.stderr
    assert "Traceback" not in done.stderr
    assert harness("config", "path", HARNESS_TUI_CONFIG=str(path), **env).returncode == 0


def test_config_show_says_where_each_value_came_from(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('executor = "threads"\n')
    done = harness(
        "config", "show", "--json", HARNESS_TUI_CONFIG=str(path), HARNESS_TUI_GLYPHS="ascii"
    )
    shown = json.loads(done.stdout)
    assert list(shown) == [s.key for s in SETTINGS]
    assert shown["executor"] == {"value": "threads", "from": str(path)}
    assert shown["glyphs"] == {"value": "ascii", "from": "HARNESS_TUI_GLYPHS"}
    assert shown["workers"] == {"value": 1, "from": "default"}
    assert harness("config", "path", HARNESS_TUI_CONFIG=str(path)).stdout.strip() == str(path)


def _workers_used(export: Path) -> set[int]:
    return {attempt["worker"] for attempt in json.loads(export.read_text())["attempts"]}


def test_settings_are_the_defaults_of_the_options_and_the_line_still_wins(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    store = tmp_path / "from-config.sqlite3"
    path.write_text(f'workers = 3\nstore = "{store}"\n')
    workflow = str(WORKFLOWS / "etl_fanout.yaml")
    configured = harness(
        "run", workflow, "-q", "--export", str(tmp_path / "a.json"), HARNESS_TUI_CONFIG=str(path)
    )
    assert configured.returncode == 0, configured.stderr
    assert store.is_file()  # the store named in the file
    assert _workers_used(tmp_path / "a.json") - {0}  # a pool: workers numbered from 1
    given = harness(
        "run",
        workflow,
        "-q",
        "--no-store",
        "--workers",
        "1",
        "--export",
        str(tmp_path / "b.json"),
        HARNESS_TUI_CONFIG=str(path),
    )
    assert given.returncode == 0, given.stderr
    assert _workers_used(tmp_path / "b.json") == {0}  # serial: the option on the line won
    # The store named in the config file is the one `runs` lists.
    listed = harness("runs", "--json", HARNESS_TUI_CONFIG=str(path))
    assert [row["workflow"] for row in json.loads(listed.stdout)] == ["etl_fanout"]


def _complete(words: str, cword: int, cwd: Path, **env: str) -> list[str]:
    done = harness(
        cwd=cwd,
        _HARNESS_TUI_COMPLETE="bash_complete",
        COMP_WORDS=words,
        COMP_CWORD=str(cword),
        **env,
    )
    assert done.returncode == 0, done.stderr
    return [line.partition(",")[2] for line in done.stdout.splitlines() if line]


def test_completion_offers_commands_and_files_first_then_factories_and_run_ids(
    tmp_path: Path,
) -> None:
    (tmp_path / "flow.yaml").write_text("name: x\n")
    (tmp_path / "flow.py").write_text(
        "raise SystemExit('never imported')\ndef build(): ...\ndef _hidden(): ...\n"
    )
    (tmp_path / "notes.txt").write_text("")
    (tmp_path / "folder").mkdir()
    assert _complete("harness-tui f", 1, tmp_path) == ["flow.py", "flow.yaml", "folder/"]
    assert "run" in _complete("harness-tui r", 1, tmp_path)
    assert _complete("harness-tui validate flow.py:", 2, tmp_path) == ["flow.py:build"]
    store = tmp_path / "s.sqlite3"
    ran = harness("run", str(WORKFLOWS / "user_profile.yaml"), "-q", "--store", str(store))
    assert ran.returncode == 0, ran.stderr
    ids = _complete(f"harness-tui export --store {store} ", 4, tmp_path)
    assert len(ids) == 1 and ids[0].count("-") == 2
    # No store there: nothing offered, and none is created.
    missing = tmp_path / "none.sqlite3"
    assert _complete(f"harness-tui resume --store {missing} ", 4, tmp_path) == []
    assert not missing.exists()


def test_file_completion_is_bounded_and_inert(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_bytes(b"def f(): ...\n" + b"#" * (2 * 1024 * 1024))
    (tmp_path / "broken.py").write_text("def (:\n")
    assert complete_files(f"{tmp_path}/big.py:") == []
    assert complete_files(f"{tmp_path}/broken.py:") == []
    assert [item.value for item in complete_files(f"{tmp_path}/b")] == [
        f"{tmp_path}/big.py",
        f"{tmp_path}/broken.py",
    ]
