"""The one YAML reader: bounded, YAML 1.2 core schema, positions only when reporting.

Plain data is built straight from libyaml's event stream (the pure-Python parser when PyYAML
was built without libyaml): no node tree, no table of positions. Every cap of
:mod:`~harness_tui.workflow.limits` that concerns YAML is checked while reading, so an alias
bomb or a deep nesting stops at the cap instead of after the memory is gone. An alias adds
the value it names, not a copy, so the data read stays small; what aliases add is counted
both in values and in bytes, because every later step (checking a payload, digesting a
task's parameters, writing an export) handles the data expanded, as JSON.

Scalars mean what they mean in YAML 1.2's core schema, as editors and JSON Schema validators
read them (``yes`` and ``010`` are a string and ten, ``1e-7`` a number). YAML 1.1 meanings
that could silently differ are either refused (sexagesimal ``1:30``) or listed by
:func:`yaml11_differences` for ``validate`` to warn about. Tags other than the core ones
(``!!python/...``, ``!custom``) are refused: reading never constructs an object (I6).

Duplicate keys are reported (``yaml.safe_load`` silently keeps the last one). Where a value is
written is found by reading the text a second time, only when a problem is reported.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import yaml

from .limits import Limits

__all__ = ["Located", "YamlSyntaxError", "compose", "yaml11_differences"]

Path = tuple[str | int, ...]
Mark = tuple[int, int]

try:
    _Loader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Loader = yaml.SafeLoader

_CORE = "tag:yaml.org,2002:"
_SCALAR_TAGS = frozenset(_CORE + t for t in ("str", "int", "float", "bool", "null"))
_MAP_TAG = _CORE + "map"
_SEQ_TAG = _CORE + "seq"

# The YAML 1.2 core schema (https://yaml.org/spec/1.2.2/#1032-tag-resolution).
_NULLS = frozenset(("", "~", "null", "Null", "NULL"))
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT = re.compile(r"[-+]?[0-9]+\Z")
_OCT = re.compile(r"0o[0-7]+\Z")
_HEX = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_INF = re.compile(r"[-+]?\.(?:inf|Inf|INF)\Z")
_NAN = re.compile(r"\.(?:nan|NaN|NAN)\Z")
# YAML 1.1 reads ``1:30`` as the base-60 number 90 (``09:30`` stays a string there too).
_YAML11 = yaml.resolver.Resolver()
_NUMBER_TAGS = frozenset((_CORE + "int", _CORE + "float"))
# A plain scalar that is none of these words and starts with none of these characters is a
# string in the core schema.
_WORDS = _NULLS | _BOOLS.keys()
_MAYBE_NUMBER = frozenset("0123456789+-.")


class YamlSyntaxError(ValueError):
    """The text is not valid YAML, or is YAML that harness-tui refuses to read."""

    def __init__(self, line: int, column: int, message: str) -> None:
        self.line = line
        self.column = column
        self.message = message
        super().__init__(f"{line}:{column}: {message}")


def _at(event: Any) -> Mark:
    mark = event.start_mark
    return (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)


def _fail(event: Any, message: str) -> YamlSyntaxError:
    return YamlSyntaxError(*_at(event), message)


def _number(value: str, limits: Limits, event: Any) -> Any:
    """The core-schema value of a plain scalar that may be a number, null or a boolean."""
    if value in _NULLS:
        return None
    if value in _BOOLS:
        return _BOOLS[value]
    if _INT.match(value):
        digits = len(value.lstrip("+-"))
        if digits > limits.int_digits:
            raise _fail(
                event, f"an integer has {digits:,} digits; the limit is {limits.int_digits:,}"
            )
        return int(value)
    if _OCT.match(value) or _HEX.match(value):
        if len(value) - 2 > limits.int_digits:
            raise _fail(event, f"an integer has more than {limits.int_digits:,} digits")
        return int(value[2:], 8 if value[1] == "o" else 16)
    if _FLOAT.match(value):
        if len(value) > limits.int_digits:
            raise _fail(event, f"a number has more than {limits.int_digits:,} digits")
        return float(value)
    if _INF.match(value):
        return -math.inf if value[0] == "-" else math.inf
    if _NAN.match(value):
        return math.nan
    if ":" in value and _yaml11_tag(value) in _NUMBER_TAGS:
        raise _fail(
            event,
            f"{value!r} is a base-60 number in YAML 1.1 and a string in YAML 1.2; "
            "write the number in seconds, or quote it to keep a string",
        )
    return value


def _yaml11_tag(value: str) -> str:
    """The tag YAML 1.1 (PyYAML's resolver) gives a plain scalar."""
    return str(_YAML11.resolve(yaml.ScalarNode, value, (True, False)))  # type: ignore[no-untyped-call]


def _scalar(event: Any, limits: Limits) -> Any:
    value: str = event.value
    if len(value) > limits.string_chars:
        raise _fail(
            event, f"a value has {len(value):,} characters; the limit is {limits.string_chars:,}"
        )
    # libyaml marks `! 12` implicit too, but the non-specific tag `!` makes it a string.
    if event.implicit[0] and event.tag is None:  # plain and untagged: the core schema
        if value and value[0] not in _MAYBE_NUMBER and value not in _WORDS:
            return value
        return _number(value, limits, event)
    tag = event.tag
    if tag is None or tag == "!" or tag == _CORE + "str":
        return value
    _check_tag(event, tag, _SCALAR_TAGS)
    resolved = _number(value, limits, event)
    kind = tag.removeprefix(_CORE)
    wanted = {"int": int, "float": float, "bool": bool, "null": type(None)}[kind]
    if kind == "float" and type(resolved) is int:
        return float(resolved)
    if type(resolved) is not wanted:
        raise _fail(event, f"{value!r} is not a valid !!{kind}")
    return resolved


def _check_tag(event: Any, tag: str, allowed: frozenset[str]) -> None:
    if tag in allowed:
        return
    if tag.startswith(_CORE + "python/"):
        raise _fail(
            event,
            f"tag '!!{tag.removeprefix(_CORE)}' is not allowed: "
            "reading a workflow never constructs Python objects",
        )
    shown = "!!" + tag.removeprefix(_CORE) if tag.startswith(_CORE) else tag
    raise _fail(event, f"unsupported tag {shown!r}: only plain YAML values are read")


class Located:
    """Plain data, the duplicate keys found, and positions found on demand.

    Attributes:
        data: the document as plain Python data (None for an empty file).
        duplicates: ``(path, first position, second position)`` for each repeated key.
    """

    def __init__(self, text: str, data: Any, duplicates: list[Path]) -> None:
        self.text = text
        self.data = data
        self._duplicates = duplicates
        self._positions: dict[Path, Mark] | None = None
        self._key_positions: dict[Path, Mark] = {}
        self._repeats: dict[Path, list[Mark]] = {}

    @property
    def duplicates(self) -> list[tuple[Path, Mark, Mark]]:
        found: list[tuple[Path, Mark, Mark]] = []
        if not self._duplicates:
            return found
        self._table()
        seen: dict[Path, int] = {}
        for path in self._duplicates:
            index = seen[path] = seen.get(path, -1) + 1
            repeats = self._repeats.get(path) or [(1, 1)]
            found.append((path, self.key_position(path), repeats[min(index, len(repeats) - 1)]))
        return found

    def _table(self) -> dict[Path, Mark]:
        if self._positions is None:
            self._positions = {}
            _record_positions(self.text, self._positions, self._key_positions, self._repeats)
        return self._positions

    def position(self, path: Path) -> Mark:
        """The position of ``path``, or of its closest ancestor that has one."""
        table = self._table()
        for end in range(len(path), -1, -1):
            found = table.get(path[:end])
            if found is not None:
                return found
        return (1, 1)

    def key_position(self, path: Path) -> Mark:
        """Where the key of ``path`` is first written (for "unknown key" messages)."""
        self._table()
        return self._key_positions.get(path) or self.position(path)


@contextmanager
def _parser(text: str) -> Iterator[Callable[[], Any]]:
    """The event stream of ``text`` as a ``get_event`` function; parser errors inside the
    ``with`` block become :class:`YamlSyntaxError` with a position."""
    loader = None
    text, restore = _hide_breaks(text)
    try:
        loader = _Loader(text)  # PyYAML's own reader checks every character here
        yield loader.get_event if restore is None else _restoring(loader.get_event, restore)
    except UnicodeEncodeError as exc:  # a lone surrogate, from JSON text such as "\\ud800"
        line, column = _offset_position(text, exc.start, in_bytes=False)
        code = ord(text[exc.start])
        raise YamlSyntaxError(
            line, column, f"not Unicode text: lone surrogate \\u{code:04x}"
        ) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        message = " ".join(part for part in (exc.context, exc.problem) if part)
        raise YamlSyntaxError(line, column, f"YAML syntax error: {message}") from None
    except yaml.reader.ReaderError as exc:
        line, column = _offset_position(
            text, exc.position, loader is not None and not isinstance(loader, yaml.parser.Parser)
        )
        char = f"#x{exc.character:04x}" if isinstance(exc.character, int) else repr(exc.character)
        raise YamlSyntaxError(line, column, f"YAML syntax error: {exc.reason} ({char})") from None
    except yaml.YAMLError as exc:  # pragma: no cover - every parser error is one of the above
        raise YamlSyntaxError(1, 1, f"YAML error: {' '.join(str(exc).split())}") from None
    finally:
        if loader is not None:
            loader.dispose()


# YAML 1.1 (and so libyaml) breaks lines at NEL, LS and PS; YAML 1.2 reads them as content.
_BREAKS_1_1 = "\x85\u2028\u2029"


def _hide_breaks(text: str) -> tuple[str, dict[int, str] | None]:
    """``text`` with each YAML 1.1-only line break swapped for a private-use character the
    text does not hold, and the table to swap them back (None when there are none)."""
    if not any(char in text for char in _BREAKS_1_1):
        return text, None
    spare = (chr(code) for code in range(0xE000, 0xF900) if chr(code) not in text)
    hide = {ord(char): next(spare, char) for char in _BREAKS_1_1}
    return text.translate(hide), {ord(stand_in): chr(code) for code, stand_in in hide.items()}


def _restoring(get_event: Callable[[], Any], restore: dict[int, str]) -> Callable[[], Any]:
    """``get_event`` with the characters :func:`_hide_breaks` hid put back into scalars."""

    def get() -> Any:
        event = get_event()
        if type(event) is yaml.ScalarEvent:
            event.value = event.value.translate(restore)
        return event

    return get


def _events(text: str) -> Iterator[Any]:
    """Every event of ``text`` (for the readings that only report)."""
    with _parser(text) as get_event:
        while True:
            event = get_event()
            yield event
            if type(event) is yaml.StreamEndEvent:
                return


def _offset_position(text: str, offset: int, in_bytes: bool) -> Mark:
    """Line and column of a reader error: libyaml counts UTF-8 bytes, PyYAML characters."""
    if in_bytes:
        before = text.encode("utf-8", "surrogatepass")[:offset].decode("utf-8", "replace")
    else:
        before = text[:offset]
    return before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1


# A collection being read is a list (cheaper to make than an object, and the reader makes one
# per mapping or sequence): [container, pending key, start event, values read before it]. The
# container is a dict or a list; the pending key is _NO_KEY while a mapping waits for a key;
# an anchored collection's size is the count of values at its end minus the last field.
_Frame = list[Any]


_NO_KEY: Any = object()


def compose(text: str, limits: Limits | None = None) -> Located:
    """Read YAML text into :class:`Located` data, within ``limits``.

    Raises:
        YamlSyntaxError: the first syntax error or cap reached, with its position.
    """
    return _Reader(text, limits or Limits()).read()


class _Reader:
    def __init__(self, text: str, limits: Limits) -> None:
        self.text = text
        self.limits = limits
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.open_anchors: set[str] = set()
        self.alias_nodes = 0
        self.alias_bytes = 0
        self.sizes: dict[int, tuple[int, Any]] = {}  # see _json_size
        self.duplicates: list[Path] = []
        self.stack: list[_Frame] = []  # see _Frame
        self.root: Any = None
        self.documents = 0

    def read(self) -> Located:
        with _parser(self.text) as get_event:
            self._read(get_event)
        return Located(self.text, self.root, self.duplicates)

    def _read(self, get_event: Callable[[], Any]) -> None:
        # The hot loop of loading, with the common cases inline (a plain string, a collection
        # without tag or anchor); anything else goes through a method.
        scalar_type, end_type = yaml.ScalarEvent, yaml.StreamEndEvent
        map_start, seq_start = yaml.MappingStartEvent, yaml.SequenceStartEvent
        map_end, seq_end = yaml.MappingEndEvent, yaml.SequenceEndEvent
        stack, limits, depth = self.stack, self.limits, self.limits.depth
        longest, numeric, words, no_key = limits.string_chars, _MAYBE_NUMBER, _WORDS, _NO_KEY
        count = 0  # values read, aliases counted with all they stand for
        while True:
            event = get_event()
            kind = type(event)
            if kind is scalar_type:
                value = event.value
                if event.implicit[0]:  # plain: a string unless it may be a number or a word
                    if not value or value[0] in numeric or value in words or len(value) > longest:
                        value = _scalar(event, limits)
                elif event.tag is not None or len(value) > longest:  # quoted: a string
                    value = _scalar(event, limits)
                if event.anchor is not None:
                    self.anchors[event.anchor] = (value, 1)
                count += 1
            elif kind is map_start or kind is seq_start:
                if event.tag is None and event.anchor is None and len(stack) < depth:
                    stack.append([{} if kind is map_start else [], no_key, event, 0])
                else:
                    self.open(event, kind is map_start, count)
                continue
            elif kind is map_end or kind is seq_end:
                value, _, event, first = stack.pop()
                count += 1
                if event.anchor is not None:
                    self.open_anchors.discard(event.anchor)
                    self.anchors[event.anchor] = (value, count - first)
            elif kind is end_type:
                return
            else:
                count += self.other(event, kind)
                continue
            if not stack:
                self.root = value
                continue
            frame = stack[-1]
            container = frame[0]
            if type(container) is list:
                container.append(value)
            elif frame[1] is no_key:
                if type(value) is str and value != "<<":
                    frame[1] = value
                else:
                    frame[1] = self.check_key(value, event)
            else:
                key = frame[1]
                frame[1] = no_key
                if key in container:
                    self.duplicates.append(self.path_of(key))
                else:
                    container[key] = value

    def other(self, event: Any, kind: type) -> int:
        """Handle an alias or the start of a document; the number of values it adds."""
        if kind is yaml.AliasEvent:
            return self.alias(event)
        if kind is yaml.DocumentStartEvent:
            self.documents += 1
            if self.documents > 1:
                raise _fail(event, "a workflow file holds one YAML document, not several")
            version = event.version
            if version is not None and tuple(version) != (1, 2):
                raise _fail(
                    event,
                    f"%YAML {version[0]}.{version[1]}: files are read as YAML 1.2 only; "
                    "remove the directive or write %YAML 1.2",
                )
        return 0

    def open(self, event: Any, is_map: bool, count: int) -> None:
        tag = event.tag
        if tag is not None and tag != "!":
            _check_tag(event, tag, frozenset((_MAP_TAG if is_map else _SEQ_TAG,)))
        if len(self.stack) >= self.limits.depth:
            raise _fail(event, f"nested more than {self.limits.depth} levels deep")
        if event.anchor is not None:
            self.open_anchors.add(event.anchor)
        self.stack.append([{} if is_map else [], _NO_KEY, event, count])

    def alias(self, event: Any) -> int:
        name = event.anchor
        if name in self.open_anchors:
            raise _fail(event, f"alias *{name} refers to a value that contains it")
        found = self.anchors.get(name)
        if found is None:
            raise _fail(event, f"alias *{name} has no anchor &{name} before it")
        value, nodes = found
        self.alias_nodes += nodes
        if self.alias_nodes > self.limits.alias_nodes:
            raise _fail(
                event,
                f"aliases expand to more than {self.limits.alias_nodes:,} values (an alias bomb?)",
            )
        self.alias_bytes += _json_size(value, self.sizes)
        if self.alias_bytes > self.limits.alias_bytes:
            raise _fail(
                event,
                f"aliases expand to more than {self.limits.alias_bytes:,} bytes (an alias bomb?)",
            )
        self.add(value, event)
        return nodes

    def add(self, value: Any, event: Any) -> None:
        if not self.stack:
            self.root = value
            return
        frame = self.stack[-1]
        container = frame[0]
        if type(container) is list:
            container.append(value)
            return
        key = frame[1]
        if key is _NO_KEY:
            frame[1] = self.check_key(value, event)
            return
        frame[1] = _NO_KEY
        if key in container:
            self.duplicates.append(self.path_of(key))
            return
        container[key] = value

    def check_key(self, key: Any, event: Any) -> Any:
        if type(key) is not str:
            raise _fail(event, "mapping keys must be strings (quote a key such as 1 or true)")
        if key == "<<" and type(event) is yaml.ScalarEvent and event.implicit[0]:
            raise _fail(event, "merge keys (<<) are not supported")
        return key

    def path_of(self, key: str) -> Path:
        """The path of ``key`` in the innermost mapping (only for reporting a duplicate)."""
        parts: list[str | int] = []
        for container, pending, _, _ in self.stack[:-1]:
            parts.append(len(container) if type(container) is list else pending)
        return (*parts, key)


def _json_size(value: Any, sizes: dict[int, tuple[int, Any]]) -> int:
    """About the size of ``value``'s canonical JSON in bytes (escapes not counted), without
    making it: the cost is the number of collections and strings walked, not their bytes.

    ``sizes`` remembers each collection measured, by ``id`` (holding the collection, so that
    its id cannot be reused): an aliased value is measured when its alias is read, so a value
    that holds aliases is walked down to them, never through what they stand for.
    """
    kind = type(value)
    if kind is str:
        size = len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))
        return size + 2
    if kind is not dict and kind is not list:
        return len(str(value))  # a number, true, false or null as YAML read it
    known = sizes.get(id(value))
    if known is not None:
        return int(known[0])
    if kind is dict:
        size = sum(_json_size(k, sizes) + 1 + _json_size(v, sizes) for k, v in value.items())
    else:
        size = sum(_json_size(item, sizes) for item in value)
    size += 1 + max(len(value), 1)  # brackets and commas
    sizes[id(value)] = (size, value)
    return size


_UNBOUNDED = Limits(
    depth=1 << 62,
    alias_nodes=1 << 62,
    alias_bytes=1 << 62,
    int_digits=1 << 62,
    string_chars=1 << 62,
)


class _Slot:
    __slots__ = ("index", "is_map", "key", "path")

    def __init__(self, path: Path, is_map: bool) -> None:
        self.path = path
        self.is_map = is_map
        self.key: Any = _NO_KEY
        self.index = 0


def _record_positions(
    text: str,
    positions: dict[Path, Mark],
    keys: dict[Path, Mark],
    repeats: dict[Path, list[Mark]],
) -> None:
    """Read ``text`` again, noting where each path is first written (reporting only: the
    text was read within the limits once already)."""
    frames: list[_Slot] = []
    scalars: dict[str, Any] = {}
    for event in _events(text):
        kind = type(event)
        if kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            frames.pop()
            _advance(frames, None)
            continue
        if kind not in (yaml.ScalarEvent, yaml.AliasEvent, *_STARTS):
            continue
        mark = _at(event)
        slot = frames[-1] if frames else None
        if slot is not None and slot.is_map and slot.key is _NO_KEY:
            key = _key_value(event, scalars)
            written: Path = (*slot.path, key)
            if written in keys:
                repeats.setdefault(written, []).append(mark)
            keys.setdefault(written, mark)
            _advance(frames, key)
            continue
        here: Path = () if slot is None else (*slot.path, slot.key if slot.is_map else slot.index)
        positions.setdefault(here, mark)
        if kind in _STARTS:
            frames.append(_Slot(here, kind is yaml.MappingStartEvent))
            continue
        if kind is yaml.ScalarEvent and event.anchor is not None:
            scalars[event.anchor] = _scalar(event, _UNBOUNDED)
        _advance(frames, None)


_STARTS = (yaml.MappingStartEvent, yaml.SequenceStartEvent)


def _key_value(event: Any, scalars: dict[str, Any]) -> Any:
    if type(event) is yaml.ScalarEvent:
        value = _scalar(event, _UNBOUNDED)
        if event.anchor is not None:
            scalars[event.anchor] = value
        return value
    if type(event) is yaml.AliasEvent:
        return scalars.get(event.anchor or "")
    return None  # pragma: no cover - a collection key was refused on the first reading


def _advance(frames: list[_Slot], key: Any) -> None:
    if not frames:
        return
    slot = frames[-1]
    if not slot.is_map:
        slot.index += 1
    elif key is not None:
        slot.key = key
    else:
        slot.key = _NO_KEY


def yaml11_differences(text: str) -> list[tuple[int, int, str]]:
    """``(line, column, message)`` for each plain scalar that YAML 1.1 reads differently
    (``yes``, ``010``, ``2026-01-01``, ``1e3``...), for ``validate`` to warn about.

    Only called on text that was read without error.
    """
    found = []
    constructor = yaml.SafeLoader("")
    first_chars = set(_YAML11.yaml_implicit_resolvers) - {None}
    for event in _events(text):
        if type(event) is not yaml.ScalarEvent or not event.implicit[0]:
            continue
        value = event.value
        ours = _scalar(event, _UNBOUNDED)
        if type(ours) is str and value[:1] not in first_chars:
            continue  # a string to both: YAML 1.1 has no implicit type starting this way
        tag = _yaml11_tag(value)
        try:
            theirs = constructor.construct_object(yaml.ScalarNode(tag, value))
        except (ValueError, OverflowError, yaml.YAMLError):
            continue
        if not _same(ours, theirs):
            found.append(
                (
                    *_at(event),
                    f"{value!r} is {_describe(ours)} (YAML 1.2) but {_describe(theirs)} in "
                    "YAML 1.1; quote it or write it so that both agree",
                )
            )
    return found


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def _describe(value: Any) -> str:
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return f"the number {value!r}"
    return f"a {type(value).__name__}"
