"""The events of a run as scripts and the service's stream read them: one model per kind.

A run's events (a game started, a move, a game finished, the standings, the SPRT's state, a
notice, a status change, the run's end) are these models, built by `runner.app.stream` from
the tournament's own events. The service sends them as server-sent events
(`runner.service.hub`), the command line and the drop-ins write them as JSON lines
(``--events FILE``): the same objects, serialized once by `runner.report.wire.wire_text`.
Every one carries its kind as ``type`` and the format's ``version``: a script checks the
version and dispatches on the type (docs/events.md describes each).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, TypeAdapter

from runner.report.tree import ReportJson
from runner.report.wire import Finite, SprtJson, Wire, wire_text

__all__ = [
    "EVENTS_VERSION",
    "BoardState",
    "GameFinishedEvent",
    "GameStartedEvent",
    "LineEvent",
    "MoveEvent",
    "NoticeEvent",
    "RunFinishedEvent",
    "SprtEvent",
    "StandingsEvent",
    "StatusEvent",
    "StreamEvent",
    "TournamentFinishedEvent",
    "event_line",
    "read_event_line",
]

EVENTS_VERSION = 1
"""The version of the events' format: raised when a key changes meaning or goes away (a new
key or a new type does not raise it; readers ignore what they do not know)."""


class StreamEvent(Wire):
    """Base of the events: `type` names the kind (the SSE event name), `version` the format."""

    type: str
    version: int = EVENTS_VERSION

    @classmethod
    def kind(cls) -> str:
        """The kind of this model's events (its `type`)."""
        default = cls.model_fields["type"].default
        return default if isinstance(default, str) else ""


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


class GameStartedEvent(BoardState, StreamEvent):
    """A game began: its board as it starts (position after the opening, full clocks)."""

    type: Literal["game_started"] = "game_started"


class MoveEvent(StreamEvent):
    """A move was played in a running game."""

    type: Literal["move"] = "move"
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

    type: Literal["game_finished"] = "game_finished"
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
    """The report after the latest games (at most about once a second; a command-line run's
    once more as it ends)."""

    type: Literal["standings"] = "standings"
    report: ReportJson
    done_games: int
    total_games: int


class NoticeEvent(StreamEvent):
    """Something a watcher should read (a run that stopped with an error, say)."""

    type: Literal["notice"] = "notice"
    text: str


class _Status(Wire):
    """What a status change says."""

    status: str
    reason: str | None = None
    """Why the run failed, if it did (null: none known)."""
    sprt_decision: str | None = None


class StatusEvent(_Status, StreamEvent):
    """The tournament's status changed."""

    type: Literal["status"] = "status"


class TournamentFinishedEvent(_Status, StreamEvent):
    """The tournament played its last game: its final status (the stream ends)."""

    type: Literal["tournament_finished"] = "tournament_finished"


class SprtEvent(SprtJson, StreamEvent):
    """Where the SPRT stands after a game."""

    type: Literal["sprt"] = "sprt"
    done_games: int


class RunFinishedEvent(StreamEvent):
    """A command-line or drop-in run ended: the last line of its events."""

    type: Literal["run_finished"] = "run_finished"
    exit_status: int
    """The process's exit status (0 done, 1 an error, 2 refused, 128 + a signal's number)."""
    tournament_id: int | None
    """The tournament played (null: the run ended before one was found or created)."""
    status: str | None
    """The tournament's stored status (finished, interrupted, stopped...; null as above)."""
    done_games: int | None
    total_games: int | None
    played_now: int | None
    """Games this run stored."""
    sprt_decision: str | None = None
    error: str | None = None
    """Why the run failed or was refused, in one line (null: it did not)."""
    signal: int | None = None
    """The stop signal's number, when one interrupted the run."""


LineEvent = Annotated[
    GameStartedEvent | MoveEvent | GameFinishedEvent | StandingsEvent | NoticeEvent | StatusEvent
    | TournamentFinishedEvent | SprtEvent | RunFinishedEvent, Field(discriminator="type")]
"""Every kind a line of ``--events`` can hold."""

_LINES: TypeAdapter[LineEvent] = TypeAdapter(LineEvent)


def event_line(event: StreamEvent) -> str:
    """One event as its line of ``--events``: compact JSON and a newline (the SSE data too)."""
    return wire_text(event) + "\n"


def read_event_line(line: str) -> LineEvent:
    """The event a line of ``--events`` holds, checked against its kind's model (pydantic's
    ValidationError for a line that is not one)."""
    return _LINES.validate_json(line)
