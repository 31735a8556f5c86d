"""Files as harness-tui meets them: bounded reading, atomic writing, and telling an export from
a workflow by its content. Every file a person names goes through here, so a FIFO, a device or
a folder is refused in one line before anything blocks on it, and no reader takes more memory
than its cap."""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable, Iterable
from enum import StrEnum
from pathlib import Path
from typing import IO

from .engine.canonical import text_batches
from .engine.errors import HarnessError

__all__ = [
    "PIPE_READER_WAIT",
    "FileError",
    "FileKind",
    "NotRegularFileError",
    "atomic_write",
    "atomic_write_chunks",
    "check_target",
    "file_kind",
    "is_device",
    "open_regular",
    "read_capped",
]


class FileError(HarnessError, ValueError):
    """A file named by a person cannot be used as asked; the message says why, in one line."""


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


def is_device(path: str | Path) -> bool:
    """Whether ``path`` is something other than a file or a folder (a device, a pipe)."""
    try:
        mode = Path(path).stat().st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def atomic_write(path: str | Path, text: str, max_bytes: int | None = None) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the new one, never half
    (a device or a pipe is written into as it is: a rename would replace it).

    The file gets the mode a plain ``open`` would give it (``0o666 & ~umask``), not the
    private mode of the temporary file it is renamed from.

    Raises:
        FileError: the text is over ``max_bytes`` (what the reader would refuse).
        OSError: the file cannot be written.
    """
    data = text.encode("utf-8")
    if max_bytes is not None and len(data) > max_bytes:
        raise _too_big(path, len(data), max_bytes)
    target = Path(path)
    if is_device(target):  # /dev/null, /dev/stdout, a pipe: written into, never replaced
        _write_into(target, data)
        return
    _replace_with(target, lambda handle: handle.write(data))


def atomic_write_chunks(
    path: str | Path,
    chunks: Iterable[str],
    max_bytes: int | None = None,
    finish: Callable[[IO[bytes]], object] | None = None,
) -> None:
    """:func:`atomic_write` of the text made of ``chunks``, never whole in memory (a device
    or a pipe, which cannot be taken back once written, gets the whole text).

    Args:
        finish: called with the temporary file once every chunk is in it (within
            ``max_bytes``), before it is made durable and renamed: to set in place a part
            known only at the end (an export's checksum). Not for a device or a pipe (see
            :func:`is_device`), which is refused.

    Raises:
        FileError: the text is over ``max_bytes``; nothing is written, the text is read to
            its end to say how long it is.
        OSError: the file cannot be written.
    """
    target = Path(path)
    if is_device(target):
        if finish is not None:
            raise ValueError(f"{path}: a device or a pipe cannot be written into afterwards")
        atomic_write(target, "".join(chunks), max_bytes)
        return
    size = 0

    def write(handle: IO[bytes]) -> None:
        nonlocal size
        for batch in text_batches(chunks):
            data = batch.encode("utf-8")
            if max_bytes is None or size + len(data) <= max_bytes:
                handle.write(data)  # past the limit the rest is only counted
            size += len(data)
        if max_bytes is not None and size > max_bytes:
            raise _too_big(path, size, max_bytes)
        if finish is not None:
            finish(handle)

    _replace_with(target, write)


def _too_big(path: str | Path, size: int, max_bytes: int) -> FileError:
    return FileError(
        f"{path}: the file would be {size:,} bytes, over the {max_bytes:,}-byte limit of "
        "the reader: not written"
    )


def _replace_with(target: Path, write: Callable[[IO[bytes]], object]) -> None:
    """Write a temporary file beside ``target`` with ``write``, then rename it over
    ``target`` (durably); the temporary file is removed if anything fails."""
    directory = target.resolve().parent
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    try:  # make the rename itself durable
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


PIPE_READER_WAIT = 5.0
"""Seconds a named pipe given as a target may take to get a reader (one started beside the
command) before it is refused."""


def _write_into(target: Path, data: bytes) -> None:
    """Write into a device or a named pipe. A pipe no process reads would block the open
    forever: it is opened without blocking, tried again for :data:`PIPE_READER_WAIT`
    seconds, and refused if nobody reads it by then."""
    deadline = time.monotonic() + PIPE_READER_WAIT
    while True:
        try:
            fd = os.open(target, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            break
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: a FIFO without a reader
                raise
            if time.monotonic() >= deadline:
                raise OSError(exc.errno, "it is a named pipe that no process reads") from None
            time.sleep(0.02)
    os.set_blocking(fd, True)  # a reader is there: wait for it to take the text
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def _umask() -> int:
    """The process's umask: read where the system shows it (Linux), else set and restored
    (which other threads creating files at that instant would see)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def check_target(path: str | Path) -> Path:
    """Check, before a run, that an export can be written to ``path``; return it absolute,
    so that a task that changes directory cannot move it.

    Raises:
        FileError: one line saying why not (missing folder, a folder given, read-only).
    """
    target = Path(os.path.abspath(path))
    directory = target.parent
    if target.is_dir():
        raise FileError(f"cannot write {path}: it is a folder")
    if not directory.is_dir():
        raise FileError(f"cannot write {path}: no folder {directory}")
    if target.exists() and not os.access(target, os.W_OK):
        raise FileError(f"cannot write {path}: the file is read-only")
    try:  # the folder's permissions, a read-only file system or a full disk: try it
        fd, probe = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise FileError(f"cannot write {path}: {exc.strerror}") from None
    os.close(fd)
    os.unlink(probe)
    return target


class FileKind(StrEnum):
    """What a file given to harness-tui is, decided once where it enters."""

    WORKFLOW = "workflow"
    EXPORT = "export"


# A JSON string (escapes included; an unterminated one runs to the end of the head, so text
# cut off inside a string is never read as structure) or one structural character.
_JSON_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"?|[{}\[\]]', re.DOTALL)
_MARK_VALUE = re.compile(rb'\s*:\s*"harness-run"')
_KEY_COLON = re.compile(rb"\s*:")
_SNIFF_BYTES = 65536


def _declares_export(head: bytes) -> bool:
    """Whether the JSON object starting ``head`` has ``"format": "harness-run"`` at its top
    level. The first top-level ``format`` key decides; ``{"format": "harness-run"}`` nested in
    a workflow's ``with:`` is not at the top level. A 1.1 export written before ``format``
    came first begins with ``"attempts"``, which no workflow has (its schema forbids it)."""
    depth = 0
    first_key = True
    for token in _JSON_TOKEN.finditer(head):
        text = token.group()
        if text in (b"{", b"["):
            depth += 1
        elif text in (b"}", b"]"):
            depth -= 1
            if depth <= 0:
                return False
        elif depth == 1 and _KEY_COLON.match(head, token.end()):
            if text == b'"format"':
                return _MARK_VALUE.match(head, token.end()) is not None
            if first_key and text == b'"attempts"':
                return True
            first_key = False
    return False


def file_kind(path: str | Path) -> FileKind:
    """Whether ``path`` is a run export or a workflow file, from its content, not its name.

    An export is a JSON object that declares ``"format": "harness-run"`` as a top-level key
    in its first 64 KiB (exports write it first; :meth:`RunRecord.read` does the real
    checking); anything else, a JSON or flow-style YAML workflow included, is a workflow
    file, and a path that cannot be opened is reported by the workflow loader.

    Raises:
        FileError: ``path`` is a FIFO, a device or a folder (reading it could block or
            never end).
    """
    try:
        with open_regular(path) as handle:
            head = handle.read(_SNIFF_BYTES)
    except NotRegularFileError as exc:
        raise FileError(f"{path}: {exc.strerror}") from None
    except OSError:
        return FileKind.WORKFLOW
    head = head.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n")
    if not head.startswith(b"{"):
        return FileKind.WORKFLOW
    return FileKind.EXPORT if _declares_export(head) else FileKind.WORKFLOW
