"""A run's hold on its tournament's lease: taken before the first game, refreshed while games
are played, given up when the run ends.

The lease (`runner.store.lease` keeps the rows) makes one runner at a time the writer of a
tournament; every write of the run proves it still holds it. This module is the run's side:
its owner id, how long a silence the run declares, the heartbeats on the writer thread, and
telling a failed write that was really the lease lost from a database that fails.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from runner.store.store import (
    LEASE_TIMEOUT,
    LeaseHeldError,
    LeaseLostError,
    Store,
    database_errors,
    forget,
    heartbeat_interval,
    new_owner,
)
from runner.tournament.events import DatabaseFailure, TournamentError
from runner.tournament.finding import held_message
from runner.tournament.writer import GameWriter

__all__ = ["RunLease"]

_ATTEMPTS = 3
"""Tries at taking the lease before a failing database ends the run."""


class RunLease:
    """One run's lease on its tournament: the owner id each of its writes proves it holds."""

    def __init__(self, store: Store, timeout: float | None = None) -> None:
        self.store = store
        self.owner = new_owner()
        """This run's id in the tournament's lease."""
        self.timeout = LEASE_TIMEOUT.total_seconds() if timeout is None else timeout
        """Silence after which another runner may take the tournament over (heartbeats come
        several times within it)."""
        self.held = False
        """Whether the lease is this run's now (taken by `prepare`, else by `take`)."""

    def take(self, tournament_id: int) -> None:
        """Hold the tournament's lease (blocking): TournamentError when another live runner
        has it; two runners racing for it collide on its key and one of them is refused."""
        for attempt in range(_ATTEMPTS):
            try:
                self.store.take_lease(tournament_id, self.owner, self.timeout)
                self.held = True
                return
            except LeaseHeldError as exc:
                raise TournamentError(held_message(exc)) from None
            except database_errors() as exc:
                if attempt == _ATTEMPTS - 1:
                    raise DatabaseFailure(self.store.failure(exc)) from None

    def let_go(self) -> None:
        """Note that the run is over, whether or not its lease row could be deleted (a row
        left behind is stale from now on)."""
        forget(self.owner)
        self.held = False

    async def keep(self, writer: GameWriter,
                   fail: Callable[[BaseException], Awaitable[None]]) -> None:
        """Refresh the lease now and then, on the writer thread (one UPDATE of one row), until
        cancelled; when a refresh fails or finds the lease lost, tell `fail` and stop."""
        interval = heartbeat_interval(self.timeout)
        while True:
            await asyncio.sleep(interval)
            try:
                held = await writer.call(writer.heartbeat)
            except database_errors() as exc:
                await fail(exc)
                return
            if not held:
                await fail(LeaseLostError(writer.tournament_id))
                return

    async def cause(self, exc: BaseException, writer: GameWriter) -> BaseException:
        """What made a write fail: a database error is the lease lost when the lease is no
        longer this run's (PostgreSQL ended the transaction of a runner paused in the middle
        of it, and another runner took over meanwhile)."""
        if not isinstance(exc, database_errors()):
            return exc
        try:
            held = await writer.call(writer.heartbeat)
        except database_errors():
            return exc  # the database itself is failing
        return exc if held else LeaseLostError(writer.tournament_id)
