"""YAML to plain data, remembering where every value came from.

``yaml.safe_load`` forgets positions and silently keeps the last of two duplicate keys; a
workflow with two tasks of the same name would lose one without a word. We compose the node
tree (with libyaml when available) and build the data ourselves, recording ``(line, column)``
for each path and reporting duplicate keys.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["Located", "YamlSyntaxError", "compose"]

Path = tuple[str | int, ...]

try:
    _Loader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Loader = yaml.SafeLoader


class YamlSyntaxError(ValueError):
    """The text is not valid YAML."""

    def __init__(self, line: int, column: int, message: str) -> None:
        self.line = line
        self.column = column
        self.message = message
        super().__init__(f"{line}:{column}: {message}")


class Located:
    """Plain data plus the source position of each path in it."""

    def __init__(self) -> None:
        self.data: Any = None
        self.positions: dict[Path, tuple[int, int]] = {}
        self.key_positions: dict[Path, tuple[int, int]] = {}
        self.duplicates: list[tuple[Path, tuple[int, int], tuple[int, int]]] = []

    def position(self, path: Path) -> tuple[int, int]:
        """The position of ``path``, or of its closest ancestor that has one."""
        for end in range(len(path), -1, -1):
            found = self.positions.get(path[:end])
            if found is not None:
                return found
        return (1, 1)

    def key_position(self, path: Path) -> tuple[int, int]:
        """Where the key of ``path`` is written (for "unknown key" messages)."""
        return self.key_positions.get(path) or self.position(path)


def _mark(node: yaml.Node) -> tuple[int, int]:
    return (node.start_mark.line + 1, node.start_mark.column + 1)


def compose(text: str) -> Located:
    """Parse YAML text into :class:`Located` data.

    Raises:
        YamlSyntaxError: with the position of the first syntax error.
    """
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        message = " ".join(part for part in (exc.context, exc.problem) if part)
        raise YamlSyntaxError(line, column, f"YAML syntax error: {message}") from None
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(1, 1, f"YAML error: {exc}") from None
    located = Located()
    constructor = yaml.SafeLoader("")
    located.data = None if root is None else _build(root, (), located, constructor)
    return located


def _build(node: yaml.Node, path: Path, located: Located, constructor: yaml.SafeLoader) -> Any:
    located.positions[path] = _mark(node)
    if isinstance(node, yaml.MappingNode):
        result: dict[Any, Any] = {}
        first_seen: dict[Any, tuple[int, int]] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise YamlSyntaxError(*_mark(key_node), "merge keys (<<) are not supported")
            raw_key = _build(key_node, (*path, "<key>"), located, constructor)
            if not isinstance(raw_key, str | int):
                raise YamlSyntaxError(
                    *_mark(key_node), "mapping keys must be plain strings or integers"
                )
            key: str | int = raw_key
            if key in first_seen:
                located.duplicates.append(((*path, key), first_seen[key], _mark(key_node)))
                continue
            first_seen[key] = _mark(key_node)
            located.key_positions[(*path, key)] = _mark(key_node)
            result[key] = _build(value_node, (*path, key), located, constructor)
        located.positions.pop((*path, "<key>"), None)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_build(item, (*path, i), located, constructor) for i, item in enumerate(node.value)]
    return constructor.construct_object(node, deep=True)
