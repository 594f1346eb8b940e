"""What a run tells its watcher (games started and finished, notices) and how a run ended."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from runner.game.live import LiveMove
from runner.game.record import GameRecord, GameSpec, GameTermination
from runner.rules import Result
from runner.stats import SprtResult
from runner.store import TournamentStatus
from runner.tournament.interrupts import exit_status
from runner.tournament.pairing import ScheduledGame
from runner.tournament.scoreboard import Scoreboard

__all__ = [
    "DatabaseFailure", "EngineNotStarted", "Event", "GameFinished", "GameStarted",
    "MachineBuilt", "MovePlayed", "Notice", "RunOutcome", "TournamentError",
]


class TournamentError(RuntimeError):
    """A run that cannot start or go on: a changed configuration, an engine that never starts."""

    exit_code = 2
    """The process's exit status for it: 2, the user's input or setup is to be changed."""


class AlreadyFinished(TournamentError):
    """The tournament a run would continue is finished: nothing to play (exit status 0)."""

    exit_code = 0

    def __init__(self, tournament_id: int, total_games: int, changed: bool) -> None:
        super().__init__(f"tournament {tournament_id} is already finished")
        self.tournament_id = tournament_id
        self.total_games = total_games
        self.changed = changed
        """Whether the configuration differs from the one it was played with."""


class DatabaseFailure(TournamentError):
    """The results database failed (I/O error, disk full, a lock held too long): not the
    user's input, so exit status 1, as when it fails in the middle of a run."""

    exit_code = 1


@dataclass(frozen=True)
class GameStarted:
    """A game began in a slot."""

    job: ScheduledGame
    slot: int
    spec: GameSpec | None = None
    """What is played: start position, opening moves, time controls (for live boards)."""


@dataclass(frozen=True)
class MovePlayed:
    """A move in a running game (only when the scheduler watches moves: live boards)."""

    job: ScheduledGame
    move: LiveMove


@dataclass(frozen=True)
class GameFinished:
    """A game ended and was stored (or, with ``replay``, will be played again)."""

    job: ScheduledGame
    result: Result
    termination: GameTermination
    reason: str
    plies: int
    seconds: float
    replay: bool = False
    record: GameRecord | None = None
    """The game's whole record (moves with their data, times): a run's events always carry
    it; None only for an event built without one."""


@dataclass(frozen=True)
class Notice:
    """Something the user should read (a stop requested, an engine restarted...)."""

    text: str


@dataclass(frozen=True)
class MachineBuilt(Notice):
    """A worker built an engine of the run from its build order and benched it (the `text`
    says so for any watcher of notices); `record` is the build's record as JSON (a branch
    test keeps it with its own builds: runner.build.benches.MachineBuild)."""

    record: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EngineNotStarted(Notice):
    """A game's engine did not start (the `text` says so for any watcher of notices); the
    game was not played and is tried again, up to the run's limit."""

    game: int = 0
    """The game it was to play: its place in the schedule (0-based)."""
    white: str = ""
    black: str = ""
    engine: str = ""
    """The engine's name."""
    command: tuple[str, ...] = ()
    """The engine's command line (its program first)."""
    os_error: str | None = None
    """The system's words when its program could not be run (``No such file or
    directory``); None for another failure (no answer to the protocol's greeting...)."""


Event = GameStarted | MovePlayed | GameFinished | Notice


@dataclass
class RunOutcome:
    """How a run ended: the tournament, its status, the games played in this run."""

    tournament_id: int
    status: TournamentStatus
    total_games: int
    done: int
    played_now: int
    scoreboard: Scoreboard
    sprt: SprtResult | None = None
    resumed: bool = False
    error: str | None = None
    signal: int | None = None
    """The first stop signal received (SIGINT, SIGTERM, SIGHUP), if one interrupted the run."""
    taken_over: bool = False
    """Another runner took the tournament over (this run's lease was lost): nothing of this
    run's end was stored, `error` says so."""
    void: bool = False
    """An engine made no move in any of its games: the run stopped, `error` says so, and its
    scores are not worth showing."""
    refused: bool = False
    """The engines refused the configuration (`error` says how): running it again fails alike."""

    @property
    def exit_status(self) -> int:
        """The process's exit status: 128 + the signal's number if one came, 2 when the
        configuration was refused (as when the check before the run refuses it), 1 after
        another error, else 0."""
        if self.signal is not None:
            return exit_status(self.signal)
        if self.refused:
            return 2
        return 0 if self.error is None else 1
