"""``harness-tui config path|show``: where the settings file is, and what is in force."""

from __future__ import annotations

import click

from ..config import SETTINGS, ConfigError, config_path, load_config, state_path
from ..engine.untrusted import shown
from .app import cli
from .common import die, echo, echo_json

__all__: list[str] = []


@cli.group()
def config() -> None:
    """The settings file (config.toml) and the environment variables that override it."""


@config.command("path")
def config_path_cmd() -> None:
    """Print where config.toml is read from (it need not exist) and the state file."""
    path = config_path()
    echo(shown(str(path)) if path is not None else "(none: HARNESS_TUI_CONFIG is empty)")
    state = state_path()
    echo(f"state: {shown(str(state)) if state is not None else '(none)'}", err=True)


@config.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print the settings as JSON.")
def config_show(as_json: bool) -> None:
    """Print every setting, its value and where it came from (default, the file, or
    HARNESS_TUI_<KEY>)."""
    try:
        settings = load_config()
    except ConfigError as exc:
        die(str(exc))
    if as_json:
        echo_json(
            {
                s.key: {"value": settings.get(s.key), "from": settings.sources[s.key]}
                for s in SETTINGS
            }
        )
        return
    width = max(len(s.key) for s in SETTINGS)
    for setting in SETTINGS:
        value = settings.get(setting.key)
        shown_value = "(unset)" if value is None else shown(str(value))
        echo(f"{setting.key:<{width}}  {shown_value}  ({shown(settings.sources[setting.key])})")
