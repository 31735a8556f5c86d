"""Reading an export or sniffing a file is bounded (I6): no hang on a FIFO, no endless read
of a device, one line for what is not a regular file, and a BOM is not an error."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness_tui.files import FileError, FileKind, file_kind, read_capped
from harness_tui.records.errors import RecordError
from harness_tui.records.export import RunRecord
from harness_tui.workflow.payload import PayloadError, parse_payload

DATA = Path(__file__).parent / "data"
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")


def outcome_within(seconds: float, call: Callable[[], Any]) -> BaseException | Any:
    """What ``call`` returns or raises, failing the test if it is still blocked after
    ``seconds`` (the thread is a daemon, so a hang does not hold the test run)."""
    box: list[Any] = []

    def target() -> None:
        try:
            box.append(call())
        except BaseException as exc:  # the caller asserts on it
            box.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "blocked reading a file that is not a regular file"
    return box[0]


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.json"
    os.mkfifo(path)
    return path


READERS: dict[str, Callable[[Path], Any]] = {
    "read": RunRecord.read,
    "file_kind": file_kind,
    "payload": lambda path: parse_payload(f"@{path}", "--payload"),
}


@needs_fifo
@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_fifo_is_refused_at_once(reader: str, fifo: Path) -> None:
    result = outcome_within(5, lambda: READERS[reader](fifo))
    assert isinstance(result, FileError | RecordError | PayloadError)
    assert "not a regular file (a named pipe)" in str(result)
    assert "\n" not in str(result)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_device_is_refused_not_read_forever(reader: str) -> None:
    result = outcome_within(5, lambda: READERS[reader](Path("/dev/zero")))
    assert isinstance(result, FileError | RecordError | PayloadError)
    assert "not a regular file (a character device)" in str(result)


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_folder_is_refused_in_one_line(reader: str, tmp_path: Path) -> None:
    with pytest.raises(
        (FileError, RecordError, PayloadError), match=r"not a regular file \(a folder\)"
    ):
        READERS[reader](tmp_path)


def test_at_most_the_cap_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "ten"
    path.write_bytes(b"0123456789")
    assert read_capped(path, 10) == b"0123456789"
    assert read_capped(path, 9) is None


@pytest.mark.skipif(not Path("/proc/self/cmdline").is_file(), reason="no /proc here")
def test_a_file_longer_than_its_size_says_is_read_whole_or_refused() -> None:
    cmdline = Path("/proc/self/cmdline")  # its size says 0 bytes
    assert cmdline.stat().st_size == 0 and len(cmdline.read_bytes()) > 10
    assert read_capped(cmdline, 1 << 20) == cmdline.read_bytes()
    assert read_capped(cmdline, 10) is None


def test_an_export_and_a_payload_file_with_a_bom_read(tmp_path: Path) -> None:
    text = (DATA / "export-1.0.json").read_text(encoding="utf-8")
    export = tmp_path / "bom.json"
    export.write_text("\ufeff" + text, encoding="utf-8")
    assert RunRecord.read(export).document["format_version"] == "1.0"
    assert file_kind(export) is FileKind.EXPORT
    payload = tmp_path / "payload.json"
    payload.write_text('\ufeff{"user_id": "u1"}', encoding="utf-8")
    assert parse_payload(f"@{payload}").value == {"user_id": "u1"}
