"""What the user asked the workbench to do, one thing at a time, in the order asked.

Step, continue, restart, reload and payload changes are *intents*: they queue behind the one in
progress and start only when it is done, so a burst of key presses can never have two drives
on one run, or restart a run under a drive. Pause and stop are *signals*: they act at once on
the intent in progress and never start work of their own (they also drop queued steps and
continues, which would undo them). No Textual here: the screen calls this and does the work.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Intent", "IntentQueue"]

RUN_INTENTS = frozenset({"step", "continue"})


@dataclass(frozen=True, slots=True)
class Intent:
    """One request: its name (``step``, ``continue``, ``restart``...) and how to start it.

    ``start`` returns True when it began work that ends later (a drive in a worker, a modal),
    which then calls :meth:`IntentQueue.done`; False when it finished at once.
    """

    name: str
    start: Callable[[], bool]


@dataclass
class IntentQueue:
    """Runs intents one at a time."""

    _queue: deque[Intent] = field(default_factory=deque)
    current: Intent | None = None

    @property
    def busy(self) -> bool:
        """An intent is in progress."""
        return self.current is not None

    def pending(self, name: str | None = None) -> int:
        """How many intents wait (of one name, or of any)."""
        return sum(1 for intent in self._queue if name is None or intent.name == name)

    def submit(self, intent: Intent) -> bool:
        """Queue ``intent``; start it now if nothing is in progress. True if it waits."""
        self._queue.append(intent)
        if self.current is None:
            self._next()
            return False
        return True

    def done(self) -> None:
        """The intent in progress has ended: start the next one."""
        self.current = None
        self._next()

    def drop_run_intents(self) -> int:
        """Forget queued steps and continues (a pause or stop overrides them); how many."""
        kept = deque(intent for intent in self._queue if intent.name not in RUN_INTENTS)
        dropped = len(self._queue) - len(kept)
        self._queue = kept
        return dropped

    def clear(self) -> None:
        """Forget everything queued (what is open was replaced)."""
        self._queue.clear()

    def _next(self) -> None:
        while self._queue and self.current is None:
            intent = self._queue.popleft()
            self.current = intent
            if not intent.start():
                self.current = None
