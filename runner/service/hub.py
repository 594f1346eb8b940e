"""Each tournament's events, kept for late and reconnecting readers, and handed to live ones.

An event has an id ``EPOCH-SEQ``: the service process's epoch (new on every start) and a
sequence number within the tournament. A reader that reconnects with ``Last-Event-ID`` gets
every kept event after it. Everything but moves is kept for the life of the process (one
entry per game start and end: small); moves are kept in a bounded ring only, since a board
is redrawn by any later move or snapshot. A reader whose id is older than the ring, or from
an earlier process, gets every finished game after its point from the database instead
(`EventLog.replay` is told how to read them), then a fresh snapshot: a reconnecting client
never misses a finished game.

Each live reader has its own bounded queue. A reader too slow to keep up is cut off (its
queue is full) rather than slowing the games or growing memory: it reconnects and resumes
from its last id.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import secrets
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass

from runner.report.wire import wire_text
from runner.service.payloads import GameFinishedEvent, SnapshotEvent, StreamEvent

__all__ = ["EPOCH", "EventLog", "EventLogs", "HubEvent", "SlowReader"]

EPOCH = secrets.token_hex(4)
"""This process's epoch: ids from an earlier run of the service are told apart by it."""

MOVE_RING = 4096
"""Move events kept for readers that reconnect (older ones are skipped: boards redraw)."""


@dataclass(frozen=True)
class HubEvent:
    """One event: its id and its data (whose model names its type)."""

    seq: int
    data: StreamEvent
    replayed: bool = False
    """Read back from the database for a reader from another epoch: sent without an id, so
    that a reader cut off during the replay starts it again."""

    @property
    def id(self) -> str | None:
        """The SSE id: epoch and sequence number (None for a replayed game)."""
        return None if self.replayed else f"{EPOCH}-{self.seq}"

    @property
    def kind(self) -> str:
        """The SSE event name."""
        return self.data.type

    @functools.cached_property
    def text(self) -> str:
        """The data as JSON text, encoded once however many readers get it."""
        return wire_text(self.data)


Snapshot = Callable[[], Awaitable[SnapshotEvent | None]]
"""Reads the snapshot a (re)connecting reader starts with (None: no such tournament)."""
StoredGames = Callable[[], Awaitable[list[GameFinishedEvent]]]
"""Reads every game stored so far, oldest first, for a reader from another epoch."""


class SlowReader(Exception):
    """A reader's queue overflowed: its stream ends, and it resumes from its last id."""


class _Reader:
    def __init__(self, limit: int) -> None:
        self.queue: asyncio.Queue[HubEvent | None] = asyncio.Queue(maxsize=limit)
        self.overflowed = False

    def put(self, event: HubEvent | None) -> None:
        if self.overflowed:
            return
        try:
            self.queue.put_nowait(event)
        except asyncio.QueueFull:
            self.overflowed = True


class EventLog:
    """One tournament's events: kept for replay, fanned out to live readers."""

    def __init__(self, tournament_id: int, *, reader_limit: int = 2000) -> None:
        """`reader_limit` bounds each live reader's queue."""
        self.tournament_id = tournament_id
        self.reader_limit = reader_limit
        self._seq = itertools.count(1)
        self._kept: list[HubEvent] = []
        self._moves: deque[HubEvent] = deque(maxlen=MOVE_RING)
        self._readers: set[_Reader] = set()
        self.closed = False

    @property
    def readers(self) -> int:
        """Live readers now."""
        return len(self._readers)

    @property
    def last_seq(self) -> int:
        """The sequence number of the newest event (0: none yet)."""
        last = [log[-1].seq for log in (self._kept, self._moves) if log]
        return max(last, default=0)

    def publish(self, data: StreamEvent) -> HubEvent:
        """Add an event and hand it to every live reader."""
        event = HubEvent(next(self._seq), data)
        (self._moves if event.kind == "move" else self._kept).append(event)
        for reader in self._readers:
            reader.put(event)
        return event

    def close(self) -> None:
        """No more events: live readers get the end of their stream."""
        self.closed = True
        for reader in self._readers:
            reader.put(None)

    def since(self, seq: int) -> list[HubEvent] | None:
        """Kept events after `seq`, in order; None when moves after it were dropped (the
        reader must be given a snapshot)."""
        if self._moves and self._moves[0].seq > seq + 1 and self._moves.maxlen is not None \
                and len(self._moves) == self._moves.maxlen:
            return None
        later = [e for e in itertools.chain(self._kept, self._moves) if e.seq > seq]
        return sorted(later, key=lambda e: e.seq)

    async def follow(self, last_id: str | None, snapshot: Snapshot,
                     finished_games: StoredGames) -> AsyncIterator[HubEvent]:
        """The events a reader should get: a catch-up from `last_id` (or a snapshot), then
        live ones until the log closes. Raises SlowReader when the reader falls behind.

        `snapshot` returns (awaitable) the snapshot event's data; `finished_games` returns
        (awaitable) the data of every game stored so far, for a reader from another epoch.
        """
        reader = _Reader(self.reader_limit)
        self._readers.add(reader)  # first: nothing published while catching up is lost
        try:
            seen = 0
            for event in await self._catch_up(last_id, snapshot, finished_games):
                seen = max(seen, event.seq)
                yield event
            if self.closed and reader.queue.empty():
                return
            while True:
                if reader.overflowed:
                    raise SlowReader(f"tournament {self.tournament_id}: reader fell behind")
                live = await reader.queue.get()
                if live is None:
                    return
                if live.seq > seen:
                    yield live
        finally:
            self._readers.discard(reader)

    async def _catch_up(self, last_id: str | None, snapshot: Snapshot,
                        finished_games: StoredGames) -> Iterable[HubEvent]:
        """What a (re)connecting reader gets before the live events."""
        seq = _own_seq(last_id)
        if seq is not None and seq <= self.last_seq:
            kept = self.since(seq)
            if kept is not None:
                return kept
        # Taken before the snapshot is read: an event published meanwhile comes from the
        # queue as well (a game told twice is harmless; a game never told is not).
        now = self.last_seq
        replayed: list[HubEvent] = []
        if last_id:  # another epoch or a gap: every stored game, then the state now
            replayed.extend(HubEvent(now, game, replayed=True) for game in await finished_games())
        found = await snapshot()
        if found is not None:  # None: the tournament is gone (nothing to show)
            replayed.append(HubEvent(now, found))
        return replayed


class EventLogs:
    """The event logs of every tournament this service has spoken of, each made on first use."""

    def __init__(self, reader_limit: int) -> None:
        """`reader_limit` bounds each live reader's queue, in every log."""
        self.reader_limit = reader_limit
        self._logs: dict[int, EventLog] = {}

    def of(self, tournament_id: int) -> EventLog:
        """The tournament's event log (made on first use)."""
        event_log = self._logs.get(tournament_id)
        if event_log is None:
            event_log = EventLog(tournament_id, reader_limit=self.reader_limit)
            self._logs[tournament_id] = event_log
        return event_log

    def readers(self) -> int:
        """Live readers now, all tournaments together."""
        return sum(event_log.readers for event_log in self._logs.values())

    def close(self) -> None:
        """End every log: each live reader gets the end of its stream."""
        for event_log in self._logs.values():
            event_log.close()


def _own_seq(last_id: str | None) -> int | None:
    """The sequence number of an id from this epoch, else None."""
    if not last_id:
        return None
    epoch, _, seq = last_id.strip().partition("-")
    if epoch != EPOCH or not seq.isdigit():
        return None
    return int(seq)
