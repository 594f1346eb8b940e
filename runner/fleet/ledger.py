"""`CountedLedger`: the fleet's note of each counted game (which worker, batch and clock
factor) written in group commits.

Every counted upload adds a row to ``fleet_games`` and one to its worker's game count. One
transaction per upload made the uploads of a busy fleet queue for the database (SQLite's one
writer; a round trip each on PostgreSQL) behind the games themselves. Here the uploads that
arrive while a write is under way wait for the next one, which notes them all in one
transaction: an upload is still answered only once its row is committed (nothing is lost
when the service stops after answering), and a busy fleet costs a few transactions a second
whatever its number of uploads.
"""

from __future__ import annotations

import asyncio

from runner.store.store import FleetGameRecord, Store

__all__ = ["CountedLedger"]


class CountedLedger:
    """Group commits of counted games for one store (shared by a service's runs)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._pending: list[tuple[FleetGameRecord, asyncio.Future[None]]] = []
        self._writing: asyncio.Task[None] | None = None
        self.commits = 0
        """Transactions written so far (a test compares them with the games noted)."""

    async def note(self, game: FleetGameRecord) -> None:
        """Note one counted game; returns once it is committed (its error, if the write
        failed)."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        # Retrieved here too: an upload cancelled while waiting leaves nobody to read it.
        done.add_done_callback(lambda f: f.cancelled() or f.exception())
        self._pending.append((game, done))
        if self._writing is None or self._writing.done():
            self._writing = asyncio.create_task(self._write())
        await asyncio.shield(done)

    async def _write(self) -> None:
        """Write what is pending, again and again until nothing is."""
        while self._pending:
            taken, self._pending = self._pending, []
            try:
                await asyncio.to_thread(self.store.fleet.counted_many, [g for g, _ in taken])
            except Exception as exc:  # each waiting upload gets the error it caused
                for _game, done in taken:
                    if not done.done():
                        done.set_exception(exc)
                continue
            self.commits += 1
            for _game, done in taken:
                if not done.done():
                    done.set_result(None)
