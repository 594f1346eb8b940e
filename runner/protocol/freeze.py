"""`FreezeMonitor`: notices the stretches when this process's event loop did not run.

A move's time is measured by the runner's monotonic clock between writing the request and
reading the reply. When the runner itself is not running (stopped by SIGSTOP, a paused
virtual machine, a loop starved by a long piece of synchronous work), the engine's reply
waits in the pipe and the stretch is charged to the engine, which then "loses on time"
for what the runner did. The game loop asks this monitor how long the loop stood still
before it declares a time forfeit.

The monitor is one timer per event loop, not per game or per move: a tick every `period`
seconds that notes when it ran. A tick that comes more than `threshold` seconds late means
the loop stood still from when the tick was due until it ran. (``time.monotonic`` on Linux
stops during a system suspend, so a suspend charges nobody; a SIGSTOP or a VM pause does
advance it, and that is what this sees.)

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque

__all__ = ["FreezeMonitor"]


class FreezeMonitor:
    """Records when the event loop stood still; shared by its users (`acquire`/`release`)."""

    __slots__ = ("_handle", "_last", "_loop", "_stalls", "_users", "period", "threshold")

    def __init__(self, period: float = 0.2, threshold: float = 0.3, keep: int = 64) -> None:
        """Tick every `period` seconds; a tick later than `threshold` is a stall; the last
        `keep` stalls are remembered (a game asks only about its own stretch of time)."""
        if period <= 0 or threshold < 0:
            raise ValueError("a freeze monitor needs a positive period and a threshold >= 0")
        self.period = period
        self.threshold = threshold
        self._stalls: deque[tuple[float, float]] = deque(maxlen=keep)
        self._handle: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._last = 0.0
        self._users = 0

    @property
    def running(self) -> bool:
        """Whether the tick is armed."""
        return self._handle is not None

    def acquire(self) -> None:
        """Start ticking on the running loop unless a user already started it."""
        self._users += 1
        if self._handle is None:
            self._loop = asyncio.get_running_loop()
            self._last = time.monotonic()
            self._handle = self._loop.call_later(self.period, self._tick)

    def release(self) -> None:
        """One user is done; the last one stops the tick."""
        self._users = max(0, self._users - 1)
        if self._users == 0 and self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _tick(self) -> None:
        now = time.monotonic()
        due = self._last + self.period
        if now - due > self.threshold:
            self._stalls.append((due, now))
        self._last = now
        assert self._loop is not None
        self._handle = self._loop.call_later(self.period, self._tick)

    def frozen(self, since: float, until: float | None = None) -> float:
        """Seconds the loop stood still between the monotonic instants `since` and `until`
        (now by default), counting only stalls longer than the threshold.

        A stall still under way counts too: after a freeze every overdue timer fires in one
        loop turn, in deadline order, so the caller may run before the tick that would
        record it.
        """
        end = time.monotonic() if until is None else until
        total = 0.0
        for began, ended in self._stalls:
            total += max(0.0, min(ended, end) - max(began, since))
        if self._handle is not None:
            due = self._last + self.period
            if end - due > self.threshold:
                total += max(0.0, end - max(due, since))
        return total
