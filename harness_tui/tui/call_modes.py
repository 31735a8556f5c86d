"""How a re-run started in the workbench reaches models and APIs: answered from the run's
recording (``offline``, ``fill``) or sent (``live``), as ``rerun --calls`` does on the command
line (docs/recording.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ..engine.exchanges import Exchange
from ..engine.recorded_calls import CallMode, CallSession

__all__ = ["MODES", "answering_session"]

MODES = (CallMode.OFFLINE, CallMode.FILL, CallMode.LIVE)
"""The modes in the order the re-run dialog offers them; the first is the default."""


def answering_session(
    mode: CallMode,
    recordings: Mapping[tuple[str, int], Sequence[Exchange]],
    redacted: Iterable[str],
    like: CallSession | None,
) -> CallSession | None:
    """The session answering a re-run from ``recordings`` in ``mode``, or None when it sends
    everything (``live``, or nothing recorded). It records what the re-run tasks are answered
    (the calls view shows them, the store keeps them) with the volatile paths and secret
    headers of ``like`` (the session of ``open --record``), and installs the HTTP
    interception: the recorder answers only the requests it sees."""
    if mode is CallMode.LIVE or not recordings:
        return None
    from ..interception import install

    install()
    return CallSession(
        mode,
        recordings,
        volatile=like.volatile_paths if like is not None else (),
        secret_headers=like.secret_headers if like is not None else (),
        redact=redacted,
    )
