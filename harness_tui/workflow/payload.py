"""Payloads as people type them: JSON text or ``@file.json``, parsed once where they enter
(the command line, the workbench, the payload editor) and passed inward as a value."""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
from pathlib import Path
from typing import IO, Any, NamedTuple

from ..engine.canonical import CanonicalError, check_json
from ..engine.errors import HarnessError
from ..engine.untrusted import quoted, shown
from .limits import current

__all__ = [
    "MAX_PAYLOAD_FILE_BYTES",
    "NotRegularFileError",
    "Payload",
    "PayloadError",
    "editable_text",
    "open_regular",
    "parse_payload",
    "read_capped",
    "too_many_digits",
]

MAX_PAYLOAD_FILE_BYTES = 64 * 1024 * 1024


class PayloadError(HarnessError, ValueError):
    """A payload given by a person is unusable; the message says why, in one line."""


class NotRegularFileError(OSError):
    """A path names a FIFO, a device or a folder, not a file (reading it could block or
    never end); ``strerror`` says which."""


_KINDS = {
    stat.S_IFDIR: "a folder",
    stat.S_IFIFO: "a named pipe",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def open_regular(path: str | Path) -> IO[bytes]:
    """Open a regular file for reading in binary, refusing anything else without blocking.

    ``O_NONBLOCK`` makes opening a FIFO return at once instead of waiting for a writer; the
    kind is then read from the open descriptor, so the file checked is the file read.

    Raises:
        NotRegularFileError: a FIFO, a device, a socket or a folder.
        OSError: the path cannot be opened.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = _KINDS.get(stat.S_IFMT(mode), "not a file")
            raise NotRegularFileError(errno.EINVAL, f"not a regular file ({kind})")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_capped(path: str | Path, limit: int) -> bytes | None:
    """The bytes of a regular file, or None when it holds more than ``limit`` bytes.

    At most ``limit + 1`` bytes are read whatever the file's size claims to be (a file that
    grows while it is read, or a size that lies, cannot make this read more), and memory is
    taken for what the file holds, not for the limit (a read of ``limit + 1`` bytes would
    reserve all of them first: 256 MiB to read a small export).

    Raises:
        NotRegularFileError: not a regular file.
        OSError: the file cannot be opened or read.
    """
    with open_regular(path) as handle:
        expected = min(os.fstat(handle.fileno()).st_size, limit)
        data = handle.read(expected + 1)
        if len(data) <= expected:
            return data
        parts, size = [data], len(data)  # longer than it said: read on, in steps
        while size <= limit:
            more = handle.read(min(_STEP, limit + 1 - size))
            if not more:
                break
            parts.append(more)
            size += len(more)
    return None if size > limit else b"".join(parts)


_STEP = 1 << 20


class Payload(NamedTuple):
    """A parsed payload (any JSON value, ``null`` included; absent means the workflow's own)."""

    value: Any


def parse_payload(text: str, what: str = "payload") -> Payload:
    """Parse ``text``: JSON, or ``@path`` for a JSON file.

    Args:
        text: what the person typed.
        what: how to name the input in errors (``--payload``).

    Raises:
        PayloadError: unreadable file, not JSON, or not a JSON value (one line each).
    """
    source = text
    if text.startswith("@"):
        path = Path(text[1:])
        try:
            data = read_capped(path, MAX_PAYLOAD_FILE_BYTES)
            if data is None:
                raise PayloadError(
                    f"{what}: {shown(str(path))} is over the {MAX_PAYLOAD_FILE_BYTES:,}-byte limit"
                )
            source = data.decode("utf-8-sig")  # a BOM from a Windows editor is not JSON
        except OSError as exc:
            raise PayloadError(f"{what}: cannot read {shown(str(path))}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise PayloadError(f"{what}: {shown(str(path))} is not UTF-8 text") from None
        except ValueError:  # os.open refuses a NUL in a path
            raise PayloadError(
                f"{what}: cannot read {quoted(text[1:])}: a NUL in the name"
            ) from None
    try:
        value = json.loads(source)
    except json.JSONDecodeError as exc:
        raise PayloadError(
            f"{what}: not JSON: {exc.msg}, line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise PayloadError(f"{what}: nested too deeply") from None
    except ValueError:  # an integer past the interpreter's digit limit (CVE-2020-10735)
        raise PayloadError(f"{what}: {too_many_digits()}") from None
    try:
        text = check_json(value, "payload")
    except CanonicalError as exc:
        raise PayloadError(f"{what}: {exc}") from None
    check_payload_size(text, what)
    return Payload(value)


def check_payload_size(text: str, what: str) -> None:
    """Refuse a payload whose canonical JSON ``text`` is over the ``payload_bytes`` cap.

    Raises:
        PayloadError: one line, ``what`` first.
    """
    limit = current().payload_bytes
    if len(text) > limit // 4 and len(text.encode("utf-8")) > limit:
        raise PayloadError(
            f"{what}: {len(text.encode('utf-8')):,} bytes as JSON; the limit is {limit:,} "
            f"(raise it with HARNESS_TUI_LIMITS=payload_bytes=N)"
        )


def too_many_digits() -> str:
    """Why ``json.loads`` refused text that is otherwise JSON: the one ``ValueError`` it
    raises besides a decode error is an integer longer than Python converts."""
    return f"a number has more than {sys.get_int_max_str_digits():,} digits"


def editable_text(value: Any) -> str:
    """A payload as a person edits it: indented, keys sorted, non-ASCII kept."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)
