"""Checking a SQLite write-ahead log before the store is opened.

SQLite replays the WAL's frames up to the first one that does not check out and silently
drops the rest: after a torn write at the very end (the process died while appending) that is
right, but a bad frame *followed by more frames of the same generation* (the same salts) means
the file was damaged afterwards, and the transactions after it would be lost without a word.
A WAL with content but no valid header is dropped whole. Both are damage; we say so before
SQLite opens the file, and keep a copy of the log for whoever wants to recover it.

Format (https://www.sqlite.org/fileformat2.html#walformat): a 32-byte header (magic, version,
page size, checkpoint sequence, two salts, a checksum of its first 24 bytes), then frames of
a 24-byte header (page number, database size after a commit, the two salts, a cumulative
checksum) and one page each.
"""

from __future__ import annotations

import shutil
import struct
import time
from pathlib import Path

__all__ = ["check_wal", "keep_copy"]

_MAGIC = (0x377F0682, 0x377F0683)  # little-endian checksums, big-endian checksums
_VERSION = 3007000
_HEADER = 32
_FRAME_HEADER = 24


def checksum(data: bytes, big_endian: bool, s0: int, s1: int) -> tuple[int, int]:
    """SQLite's WAL checksum over ``data`` (a multiple of 8 bytes), continued from (s0, s1)."""
    words = struct.unpack(f"{'>' if big_endian else '<'}{len(data) // 4}I", data)
    mask = 0xFFFFFFFF
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & mask
        s1 = (s1 + words[i + 1] + s0) & mask
    return s0, s1


def _header_problem(head: bytes) -> str | None:
    if len(head) < _HEADER:
        return f"only {len(head)} bytes, shorter than its header"
    magic, version, page_size = struct.unpack(">III", head[:12])
    if magic not in _MAGIC or version != _VERSION:
        return "its header is not a WAL header"
    if page_size < 512 or page_size > 65536 or page_size & (page_size - 1):
        return f"its header gives an impossible page size ({page_size})"
    expected = struct.unpack(">II", head[24:32])
    if checksum(head[:24], magic == _MAGIC[1], 0, 0) != expected:
        return "its header checksum does not match"
    return None


def check_wal(wal: Path) -> str | None:
    """What is wrong with the write-ahead log ``wal``, or None when it is sound, empty,
    missing, or only torn at its end (which SQLite handles as it should)."""
    try:
        data = wal.read_bytes()
    except FileNotFoundError:
        return None
    if not data:
        return None
    problem = _header_problem(data[:_HEADER])
    if problem:
        return f"the write-ahead log {wal.name} is damaged: {problem}"
    big_endian = struct.unpack(">I", data[:4])[0] == _MAGIC[1]
    page_size = struct.unpack(">I", data[8:12])[0]
    salts = data[16:24]
    sums = struct.unpack(">II", data[24:32])
    frame = _FRAME_HEADER + page_size
    bad: int | None = None
    count = (len(data) - _HEADER) // frame
    for index in range(count):
        start = _HEADER + index * frame
        header = data[start : start + _FRAME_HEADER]
        if header[8:16] != salts:
            continue  # a frame of an earlier generation: SQLite ignores it, so do we
        if bad is not None:
            return (
                f"the write-ahead log {wal.name} is damaged: frame {bad + 1} of {count} is "
                "corrupt and later frames would be lost"
            )
        page = data[start + _FRAME_HEADER : start + frame]
        computed = checksum(page, big_endian, *checksum(header[:8], big_endian, *sums))
        if computed != struct.unpack(">II", header[16:24]):
            bad = index
        else:
            sums = computed
    return None


def keep_copy(wal: Path) -> Path:
    """Copy a damaged log beside itself (``NAME.damaged-STAMP``); return the copy's path."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    copy = wal.with_name(f"{wal.name}.damaged-{stamp}")
    shutil.copy2(wal, copy)
    return copy
