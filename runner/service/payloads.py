"""Every body the service sends, declared once: the API's answers, the boards, each event kind.

The routes declare these as their response models, so the OpenAPI document describes every
body and clients (the page's script among them) read only declared keys. They are built on
`runner.report.wire.Wire` and serialized by its helpers, which own the inf/NaN rule.
"""

from __future__ import annotations

from typing import ClassVar

from runner.report.tree import ReportJson
from runner.report.wire import Finite, SprtJson, Wire

__all__ = [
    "BoardState",
    "ErrorBody",
    "GameFinishedEvent",
    "GameStartedEvent",
    "MoveEvent",
    "NoticeEvent",
    "Problem",
    "ProblemsBody",
    "SnapshotEvent",
    "SprtEvent",
    "StandingsEvent",
    "StateChange",
    "StatusEvent",
    "StreamEvent",
    "Submitted",
    "TournamentDetail",
    "TournamentFinishedEvent",
    "TournamentList",
    "TournamentSummary",
    "event_kinds",
]


# -- answers of the API ------------------------------------------------------------------------


class TournamentSummary(Wire):
    """A tournament in the list: its progress and live status."""

    id: int
    name: str
    status: str
    """queued, running, stopping (this process), else as stored: finished, stopped, ..."""
    total_games: int
    done_games: int
    running_games: int
    created_at: str | None
    finished_at: str | None
    sprt_decision: str | None
    reason: str | None
    """Why the last run failed, while it has not run again (else null)."""


class TournamentList(Wire):
    """``GET /api/tournaments``: every tournament, oldest first."""

    tournaments: list[TournamentSummary]


class BoardState(Wire):
    """A running game's board: position, clocks and the last move with its evaluation."""

    index: int
    round: int
    white: str
    black: str
    fen: str | None
    ply: int
    white_clock: Finite
    """Seconds left (null: no clock)."""
    black_clock: Finite
    last_move: str | None
    last_uci: str | None
    score_cp: int | None
    mate: int | None
    depth: int | None
    moved_at: float
    """Unix time the clocks are as of: a client counts the side to move's clock down from it."""


class TournamentDetail(TournamentSummary):
    """``GET /api/tournaments/{id}``: the summary, the report and the boards running now."""

    report: ReportJson
    games: list[BoardState]


class Submitted(Wire):
    """``POST /api/tournaments``: the new tournament's id and where to read it."""

    id: int
    url: str


class StateChange(Wire):
    """``stop`` and ``resume``: the tournament's state after the request."""

    id: int
    status: str


class ErrorBody(Wire):
    """A refusal: what was wrong, in one line."""

    detail: str


class Problem(Wire):
    """One problem of a refused configuration, in the CLI's own words."""

    key: str
    """The key path (``engines[1].tc``); empty for the whole configuration."""
    value: str
    message: str
    text: str
    """The problem as the CLI prints it."""


class ProblemsBody(Wire):
    """A refused submission (422): every problem found."""

    detail: list[Problem]


# -- events of a tournament's stream -----------------------------------------------------------


class StreamEvent(Wire):
    """Base of the stream's events: `KIND` is the SSE event name, the fields its JSON data."""

    KIND: ClassVar[str] = ""


class GameStartedEvent(BoardState, StreamEvent):
    """A game began: its board as it starts (position after the opening, full clocks)."""

    KIND: ClassVar[str] = "game_started"


class MoveEvent(StreamEvent):
    """A move was played in a running game."""

    KIND: ClassVar[str] = "move"
    index: int
    ply: int
    san: str
    uci: str
    fen: str
    white_clock: Finite
    black_clock: Finite
    score_cp: int | None
    mate: int | None
    depth: int | None
    moved_at: float


class GameFinishedEvent(StreamEvent):
    """A game ended (live, or read back from the database for a reconnecting reader)."""

    KIND: ClassVar[str] = "game_finished"
    index: int
    round: int
    white: str
    black: str
    result: str | None
    termination: str | None
    reason: str | None
    plies: int | None
    seconds: Finite = None
    """How long it took (null for a game read back from the database)."""
    replay: bool
    """Played again after a fault (it does not count twice)."""


class StandingsEvent(StreamEvent):
    """The report after the latest games (at most about once a second)."""

    KIND: ClassVar[str] = "standings"
    report: ReportJson
    done_games: int
    total_games: int


class NoticeEvent(StreamEvent):
    """Something a watcher should read (a run that stopped with an error, say)."""

    KIND: ClassVar[str] = "notice"
    text: str


class StatusEvent(StreamEvent):
    """The tournament's status changed."""

    KIND: ClassVar[str] = "status"
    status: str
    reason: str | None = None
    """Why the run failed, if it did (null: none known)."""
    sprt_decision: str | None = None


class TournamentFinishedEvent(StatusEvent):
    """The tournament played its last game: its final status (the stream ends)."""

    KIND: ClassVar[str] = "tournament_finished"


class SprtEvent(SprtJson, StreamEvent):
    """Where the SPRT stands after a game."""

    KIND: ClassVar[str] = "sprt"
    done_games: int


class SnapshotEvent(TournamentDetail, StreamEvent):
    """What a new stream starts with: the detail and the newest finished games, oldest first."""

    KIND: ClassVar[str] = "snapshot"
    finished_games: list[GameFinishedEvent]


def event_kinds() -> dict[str, type[StreamEvent]]:
    """Each event name of the stream and the model of its data."""
    kinds: list[type[StreamEvent]] = [
        SnapshotEvent, GameStartedEvent, MoveEvent, GameFinishedEvent, StandingsEvent,
        NoticeEvent, StatusEvent, TournamentFinishedEvent, SprtEvent]
    return {kind.KIND: kind for kind in kinds}

