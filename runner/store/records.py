"""What the store answers the list of tournaments in, importable without SQLAlchemy.

The statuses, a tournament's progress and the lease holder that decides whether a "running"
tournament still runs are read the same way whether the rows came through SQLAlchemy (`queries`)
or from the compiled statements `runner.store.quick` keeps (``runner list`` starts without
SQLAlchemy, issue 30): this module is their one definition, and it imports nothing but the
standard library.
"""

from __future__ import annotations

import enum
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from runner.game.record import GameRecord, GameTermination
    from runner.rules import Result

__all__ = ["LEASE_TIMEOUT", "SERVICE", "DuplicateGameError", "EngineRowValues", "FinishedGame",
           "GameStatus", "HEARTBEAT_SECONDS", "Holder", "JobKey", "LeaseHeldError",
           "LeaseLostError", "PgnGame", "Placement", "PlayedRow", "StoredTournament",
           "TournamentStatus", "holder", "lease_timeout", "lease_values", "never_moved",
           "enums", "forget", "heartbeat_interval", "new_owner", "utc"]

SERVICE = "service"
"""The origin of a tournament submitted to the service."""
LEASE_TIMEOUT = timedelta(seconds=60)
"""The default time a lease may go without a heartbeat before another host may take it."""

LIVE: set[str] = set()
"""Owners whose run is going on in this process: a lease of this process's pid with another
owner was left by a run that ended without giving it up (its database failing)."""


def utc(value: datetime | None) -> datetime | None:
    """A stored time, timezone-aware: what the database returns without a zone is UTC (the
    store writes UTC; SQLite drops the zone)."""
    if value is not None and value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value


class TournamentStatus(enum.Enum):
    """Where a tournament is in its life."""

    RUNNING = "running"
    INTERRUPTED = "interrupted"
    STOPPED = "stopped"
    """Stopped on request (the service's stop): not resumed until asked."""
    FINISHED = "finished"


class GameStatus(enum.Enum):
    """Where a game is in its life; ``replay`` marks a game cut short that must be played again."""

    PLANNED = "planned"
    RUNNING = "running"
    DONE = "done"
    REPLAY = "replay"
    EXCLUDED = "excluded"
    """Played, then taken out of the plan by a forced change of configuration (an engine
    removed, fewer rounds): kept with its moves and PGN, never counted."""


@dataclass(frozen=True, slots=True)
class JobKey:
    """Where a game sits in its tournament's schedule, as plain values; `index` is the resume key."""

    index: int
    round: int
    pair: int
    game_in_pair: int
    white: str
    black: str
    opening_index: int

    @property
    def engines(self) -> tuple[str, str]:
        """The two engines, White first."""
        return (self.white, self.black)


@dataclass(frozen=True)
class FinishedGame:
    """A finished game as a run's writer hands it to the store with others (the batch
    write, `runner.store.batch`): where it sits in the schedule, its record and PGN text."""

    job: JobKey
    record: GameRecord
    pgn: str
    pgn_size: int = 0
    """Bytes its text takes in the PGN file (the writer's count; 0 without a file)."""


class EngineRowValues(NamedTuple):
    """The values of one engine row of a tournament (the configuration's engine, as stored)."""

    name: str
    command: Sequence[str]
    protocol: str = "cecp"
    options: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class StoredTournament:
    """A tournament's row as a run deciding whether to continue it reads it."""

    id: int
    name: str
    origin: str | None
    """Who owns it (None: the command line; the service's origin name otherwise)."""
    status: TournamentStatus
    fingerprint: str
    config: dict[str, Any]
    """The configuration it was stored with (JSON data, credentials scrubbed)."""
    total_games: int


@dataclass(frozen=True)
class PlayedRow:
    """A played game (counted or excluded) as a re-plan sees it."""

    id: int
    job_index: int
    round: int
    white: str
    black: str
    status: GameStatus


class PgnGame(NamedTuple):
    """A played game's PGN text and where it was written in the PGN file (None: nowhere)."""

    id: int
    pgn: str
    offset: int | None


class Placement(NamedTuple):
    """Where a played game sits in the new schedule."""

    job_index: int
    round: int
    pair_index: int
    game_in_pair: int
    opening_index: int


class DuplicateGameError(ValueError):
    """A game whose job is already stored as played: a resume must never play it twice."""


class LeaseLostError(RuntimeError):
    """This run no longer holds its tournament's lease: another runner took it over."""

    def __init__(self, tournament_id: int) -> None:
        super().__init__(
            f"tournament {tournament_id} was taken over by another runner while this one was "
            "silent for too long (paused or suspended); this run stops and its unstored games "
            "are dropped")
        self.tournament_id = tournament_id


def _alive(pid: int) -> bool:
    """Whether a process with this id exists on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    return True


def _stopped(pid: int) -> bool:
    """Whether the process is stopped (SIGSTOP, ^Z, a debugger): alive, but not running its
    tournament. Only Linux's /proc tells; elsewhere a live process counts as running."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            fields = stat.read().rsplit(")", 1)[-1].split()
    except OSError:
        return False
    return bool(fields) and fields[0] in ("T", "t")


@dataclass(frozen=True)
class Holder:
    """Who holds a tournament's lease, and how long ago (by the database's clock) it was
    last heard of."""

    owner: str
    pid: int
    host: str
    age: float
    """Seconds since the last heartbeat, as the database counts them."""
    timeout: float
    """The silence after which the holder said its lease may be taken over."""

    def stale(self) -> bool:
        """Whether the holder is gone (see `runner.store.lease`'s docstring)."""
        import socket  # here: a list with no lease left running never asks

        if self.host == socket.gethostname():
            if self.pid == os.getpid():
                return self.owner not in LIVE
            if not _alive(self.pid):
                return True
            return self.age > self.timeout and _stopped(self.pid)
        return self.age > self.timeout

    def describe(self) -> str:
        """``pid 123 on host h (last heartbeat 4 s ago)``."""
        return (f"pid {self.pid} on host {self.host} "
                f"(last heartbeat {max(0.0, self.age):.0f} s ago)")


HEARTBEAT_SECONDS = 10.0
"""How often a running tournament refreshes its lease (at most: see `heartbeat_interval`)."""


def heartbeat_interval(timeout: float) -> float:
    """How often a holder with this lease timeout refreshes it: often enough that a few
    missed beats (a busy database) never make a live runner look gone."""
    return max(0.05, min(HEARTBEAT_SECONDS, timeout / 6))


def new_owner() -> str:
    """A fresh owner id for one run: 32 random hex digits, as a random UUID's were (uuid
    imports platform and its regexes, a tenth of the store's import: issue 38)."""
    return os.urandom(16).hex()


def forget(owner: str) -> None:
    """Note that `owner`'s run in this process is over, whether or not its lease row could be
    deleted (a row left behind is then stale)."""
    LIVE.discard(owner)


class LeaseHeldError(RuntimeError):
    """Another live process runs the tournament."""

    def __init__(self, tournament_id: int, holder: Holder) -> None:
        super().__init__(f"tournament {tournament_id} is being run by {holder.describe()}")
        self.tournament_id = tournament_id
        self.holder = holder


def lease_timeout(row_timeout: float | None) -> float:
    """A lease row's timeout in seconds (rows written before runners declared one: the
    default)."""
    return LEASE_TIMEOUT.total_seconds() if row_timeout is None else float(row_timeout)


def lease_values(owner: str, timeout: float | None) -> dict[str, Any]:
    """The values of `runner.store.lease.LEASE_KEYS` for `owner` in this process."""
    import socket  # here: reading a tournament list never takes a lease

    return {"owner": owner, "pid": os.getpid(), "host": socket.gethostname(),
            "timeout_seconds": lease_timeout(timeout)}


def holder(row: Any) -> Holder:
    """The holder of a lease row (owner, pid, host, age, timeout_seconds)."""
    return Holder(row.owner, row.pid, row.host, float(row.age or 0.0),
                  lease_timeout(row.timeout_seconds))


@cache
def enums() -> tuple[dict[str | None, Result], dict[str | None, GameTermination]]:
    """Stored text -> enum, for results and terminations; a text not in it (or NULL) reads
    as None. Built on the first read of games (the commands that list tournaments, such as
    ``runner list``, start without the rules core and the game record)."""
    from runner.game.record import GameTermination
    from runner.rules import Result

    return ({result.value: result for result in Result},
            {kind.value: kind for kind in GameTermination})


_NEVER_MOVED = re.compile(r"engine (.+?) lost \d+ games without making a move")
"""How the reason of a run stopped by `runner.tournament.silence` begins."""


def never_moved(reason: str | None) -> str | None:
    """The engine (its name as quoted in `reason`) whose never moving stopped the run, when
    that is the stored reason: the run's scores then mean nothing; else None."""
    found = _NEVER_MOVED.match(reason or "")
    return None if found is None else found[1]
