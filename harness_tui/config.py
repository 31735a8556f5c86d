"""The user's settings: ``config.toml`` in the user config folder, then ``HARNESS_TUI_<KEY>``.

Each setting is decided once, at the edge, in this order (the first that has it wins): the
command-line option, the environment variable ``HARNESS_TUI_<KEY>``, the config file, the
built-in default. The file is read with the standard library (``tomllib``) and never written:
what the workbench remembers on its own (the theme picked in the palette) goes to a separate
state file, :func:`state_path`. ``HARNESS_TUI_LIMITS`` is not a setting of this file: it keeps
its own meaning (:mod:`harness_tui.workflow.limits`).

Stdlib only, and no import of the package's other layers: the command line reads it before
any command's module is loaded.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .engine.errors import HarnessError
from .engine.untrusted import quoted, shown

__all__ = [
    "CONFIG_ENV",
    "SETTINGS",
    "Config",
    "ConfigError",
    "Setting",
    "config_path",
    "load_config",
    "state_path",
]

APP = "harness-tui"
CONFIG_ENV = "HARNESS_TUI_CONFIG"
"""Names another config file (a test, a project, a CI job); ``""`` reads none."""
STATE_ENV = "HARNESS_TUI_STATE"
"""Names another state file; ``""`` keeps no state."""
CONFIG_BYTES = 64 * 1024
"""The config file is a handful of lines; a larger one is refused rather than parsed."""


class ConfigError(HarnessError):
    """The config file or a ``HARNESS_TUI_<KEY>`` variable does not parse; the message says
    where and why, in one line."""


def _workers(value: object) -> int:
    # bool is an int to Python, never a worker count to a person.
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError("a whole number from 1 to 256")
    try:
        number = int(value)
    except ValueError:
        raise ValueError("a whole number from 1 to 256") from None
    if not 1 <= number <= 256:
        raise ValueError("a whole number from 1 to 256")
    return number


def _text(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("a non-empty string")
    return value


def _glyphs(value: object) -> str:
    if value not in ("unicode", "ascii"):
        raise ValueError('"unicode" or "ascii"')
    return str(value)


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def _log_level(value: object) -> str:
    if not isinstance(value, str) or value.upper() not in LOG_LEVELS:
        raise ValueError(" or ".join(f'"{name}"' for name in LOG_LEVELS))
    return value.upper()


def _path(value: object) -> str:
    return str(Path(_text(value)).expanduser())


@dataclass(frozen=True, slots=True)
class Setting:
    """One key of ``config.toml``: what it means and how a value is checked."""

    key: str
    help: str
    parse: Callable[[object], object]
    default: object

    @property
    def env(self) -> str:
        """The environment variable that overrides the file: ``HARNESS_TUI_<KEY>``."""
        return f"HARNESS_TUI_{self.key.upper()}"


SETTINGS: tuple[Setting, ...] = (
    Setting("store", "the run store (default: runs.sqlite3 in the user data folder)", _path, None),
    Setting("workers", "tasks run at once", _workers, 1),
    Setting("executor", "where attempts run: threads, dask or dask=ADDRESS", _text, "threads"),
    Setting("theme", "the workbench's Textual theme", _text, None),
    Setting("glyphs", 'status and box glyphs: "unicode" or "ascii"', _glyphs, "unicode"),
    Setting("keymap", "the keymap file that remaps keys by binding id", _path, None),
    Setting(
        "log_level",
        "the lowest level of a task's logging records kept in its log, whatever the "
        "loggers' levels",
        _log_level,
        "INFO",
    ),
)
"""Every setting, named once: the file, the environment, ``config show`` and the defaults of
the command-line options are derived from this table."""

_BY_KEY = {setting.key: setting for setting in SETTINGS}


@dataclass(frozen=True, slots=True)
class Config:
    """The settings in force, each with where it came from (``default``, the file's path, or
    the environment variable's name)."""

    values: Mapping[str, object]
    sources: Mapping[str, str]
    path: Path | None

    def get(self, key: str) -> Any:
        """The value of one setting (``None`` where it has no default and nobody set it)."""
        return self.values[key]

    def given(self, key: str) -> bool:
        """Whether the file or the environment set ``key`` (not the built-in default)."""
        return self.sources[key] != "default"


def config_path(environ: Mapping[str, str] | None = None) -> Path | None:
    """Where the config file is read from: ``$HARNESS_TUI_CONFIG`` when set (empty: none),
    else ``config.toml`` in the user config folder (``~/.config/harness-tui`` on Linux)."""
    env = os.environ if environ is None else environ
    if CONFIG_ENV in env:
        return Path(env[CONFIG_ENV]).expanduser() if env[CONFIG_ENV] else None
    from platformdirs import user_config_dir

    return Path(user_config_dir(APP, appauthor=False)) / "config.toml"


def state_path(environ: Mapping[str, str] | None = None) -> Path | None:
    """Where the workbench keeps what it remembers (``state.json`` in the user state folder;
    ``$HARNESS_TUI_STATE`` names another, empty keeps none). Never the user's config file."""
    env = os.environ if environ is None else environ
    if STATE_ENV in env:
        return Path(env[STATE_ENV]).expanduser() if env[STATE_ENV] else None
    from platformdirs import user_state_dir

    return Path(user_state_dir(APP, appauthor=False)) / "state.json"


def load_config(environ: Mapping[str, str] | None = None) -> Config:
    """The settings in force: built-in defaults, then the config file, then the environment.

    Raises:
        ConfigError: the file is unreadable, too large, not TOML, has an unknown key or a
            value of the wrong kind; or a ``HARNESS_TUI_<KEY>`` value is wrong.
    """
    env = os.environ if environ is None else environ
    values: dict[str, object] = {s.key: s.default for s in SETTINGS}
    sources = dict.fromkeys(values, "default")
    path = config_path(env)
    if path is not None:
        for key, value in _read_file(path).items():
            values[key] = _check(_BY_KEY[key], value, shown(str(path)))
            sources[key] = str(path)
    for setting in SETTINGS:
        if setting.env in env:
            values[setting.key] = _check(setting, env[setting.env], setting.env)
            sources[setting.key] = setting.env
    return Config(values, sources, path)


def _read_file(path: Path) -> dict[str, object]:
    import tomllib

    where = shown(str(path))
    try:
        with path.open("rb") as file:
            data = file.read(CONFIG_BYTES + 1)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read the config file: {exc.strerror}") from None
    if len(data) > CONFIG_BYTES:
        raise ConfigError(f"{where}: the config file is over {CONFIG_BYTES // 1024} KiB")
    try:
        table = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{where}: not UTF-8 text (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: not TOML: {shown(str(exc))}") from None
    unknown = sorted(set(table) - set(_BY_KEY))
    if unknown:
        known = ", ".join(_BY_KEY)
        raise ConfigError(f"{where}: unknown key {quoted(unknown[0])} (known: {known})")
    return table


def _check(setting: Setting, value: object, where: str) -> object:
    try:
        return setting.parse(value)
    except ValueError as exc:
        raise ConfigError(
            f"{where}: {setting.key} must be {exc}, not {quoted(str(value)[:80])}"
        ) from None
