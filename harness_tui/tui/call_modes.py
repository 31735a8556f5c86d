"""How a re-run started in the workbench reaches models and APIs: answered from the run's
recording (``offline``, ``fill``) or sent (``live``), as ``rerun --calls`` does on the command
line (docs/recording.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ..engine.exchanges import Exchange
from ..engine.recorded_calls import CallMode, CallSession
from ..records.runs.settings import Recording

__all__ = ["MODES", "answering_session"]

MODES = (CallMode.OFFLINE, CallMode.FILL, CallMode.LIVE)
"""The modes in the order the re-run dialog offers them; the first is the default."""


def answering_session(
    mode: CallMode,
    recordings: Mapping[tuple[str, int], Sequence[Exchange]],
    redacted: Iterable[str],
    recording: Recording | None,
) -> CallSession | None:
    """The session answering a re-run from ``recordings`` in ``mode``, or None when it sends
    everything (``live``, or nothing recorded: the run's settings then say whether it
    records). It records what the re-run tasks are answered (the calls view shows them, the
    store keeps them) with the volatile paths and secret headers of ``recording`` (those of
    ``open --record``), and installs the HTTP interception: the recorder answers only the
    requests it sees."""
    if mode is CallMode.LIVE or not recordings:
        return None
    from ..interception import install

    install()
    return CallSession(
        mode,
        recordings,
        volatile=recording.volatile if recording is not None else (),
        secret_headers=recording.secret_headers if recording is not None else (),
        redact=redacted,
    )
