"""Reads shared by every client: one load at a time per key, reused until stale or dropped.

Two hundred clients polling a tournament must not build two hundred reports: a value is
loaded once (callers arriving meanwhile await the same load), kept for `max_age` seconds,
until `drop` says it changed (a game finished) or until the caller's `tag` differs from the
one it was loaded under (the number of games stored, say: a change made by another process
shows without a `drop`), and shared. One value is kept per key, the newest.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

__all__ = ["SharedReads"]


class SharedReads:
    """Single-flight loads with a time-to-live, per key."""

    def __init__(self) -> None:
        """Empty: every key is loaded on first use."""
        self._values: dict[Hashable, tuple[float, int, Hashable, Any]] = {}
        self._loads: dict[Hashable, asyncio.Future[Any]] = {}
        self._versions: dict[Hashable, int] = {}

    async def get(self, key: Hashable, load: Callable[[], Awaitable[Any]],
                  max_age: float = float("inf"), tag: Hashable = None) -> Any:
        """The value for `key`: kept if fresh and loaded under `tag`, else loaded (once for
        all callers waiting)."""
        version = self._versions.get(key, 0)
        kept = self._values.get(key)
        if (kept is not None and kept[1] == version and kept[2] == tag
                and time.monotonic() - kept[0] < max_age):
            return kept[3]
        pending = self._loads.get(key)
        if pending is not None:
            try:
                return await asyncio.shield(pending)
            except asyncio.CancelledError:
                # The loading caller was cancelled, not this one: load it ourselves.
                task = asyncio.current_task()
                if not pending.cancelled() or (task is not None and task.cancelling()):
                    raise
                return await self.get(key, load, max_age, tag)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._loads[key] = future
        try:
            began = time.monotonic()
            value = await load()
        except BaseException as exc:
            if isinstance(exc, Exception):
                future.set_exception(exc)
                future.exception()  # retrieved: no "never retrieved" warning without waiters
            else:
                future.cancel()
            raise
        finally:
            self._loads.pop(key, None)
        # A change announced during the load makes this value stale at once.
        self._values[key] = (began, version, tag, value)
        future.set_result(value)
        return value

    def drop(self, key: Hashable) -> None:
        """The value for `key` changed: the next `get` loads it again."""
        self._versions[key] = self._versions.get(key, 0) + 1
