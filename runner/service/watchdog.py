"""A run that makes no progress is stopped, saying why.

The service's ceiling on a move without a clock (`ServiceSettings.move_ceiling_seconds`)
ends every such move in time; should a run still stand still (no move played, no game
started or finished) for that long and `STALL_GRACE` more, its only place to run is not held
forever: it is stopped, and the reason is what the API and the page show.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

__all__ = ["STALL_GRACE", "ProgressWatch"]

STALL_GRACE = 30.0
"""Seconds beyond the ceiling a run may stand still: a game that loses a move on time has
its engines stopped and started again before the next game's first move."""


class ProgressWatch:
    """When a run last made progress, and whether it has stood still too long."""

    def __init__(self, ceiling: float, *, grace: float = STALL_GRACE,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ceiling = ceiling
        self.limit = ceiling + grace
        """Seconds without progress after which the run is stopped."""
        self._clock = clock
        self._last = clock()

    def progressed(self) -> None:
        """A move was played, or a game started or finished."""
        self._last = self._clock()

    def stalled(self) -> str | None:
        """Why the run must stop (None: it need not)."""
        silent = self._clock() - self._last
        if silent <= self.limit:
            return None
        return (f"no progress for {silent:.0f} s (no move played, no game started or "
                f"finished; the ceiling on a move without a clock is {self.ceiling:g} s): "
                "the run was stopped")

    async def guard(self, stop: Callable[[str], Awaitable[object]]) -> None:
        """Look now and then until the run stands still too long, then `stop` it with the
        reason (cancelled when the run ends first)."""
        while True:
            silent = self._clock() - self._last
            await asyncio.sleep(max(0.05, min(self.limit - silent, self.limit / 4) + 0.01))
            reason = self.stalled()
            if reason is not None:
                await stop(reason)
                return
