"""Every body the service sends, declared once: the API's answers, the boards, each event kind.

The routes declare these as their response models, so the OpenAPI document describes every
body and clients (the page's script among them) read only declared keys. They are built on
`runner.report.wire.Wire` and serialized by its helpers, which own the inf/NaN rule. The
events of a run are declared in `runner.report.stream` (the command line's ``--events`` lines
are the same objects) and named here with the service's own.
"""

from __future__ import annotations

from typing import Literal

from runner.report.stream import (
    BoardState,
    GameFinishedEvent,
    GameStartedEvent,
    MoveEvent,
    NoticeEvent,
    SprtEvent,
    StandingsEvent,
    StatusEvent,
    StreamEvent,
    TournamentFinishedEvent,
)
from runner.report.tree import ReportJson
from runner.report.wire import Wire

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


class SnapshotEvent(TournamentDetail, StreamEvent):
    """What a new stream starts with: the detail and the newest finished games, oldest first."""

    type: Literal["snapshot"] = "snapshot"
    finished_games: list[GameFinishedEvent]


def event_kinds() -> dict[str, type[StreamEvent]]:
    """Each event name of the stream and the model of its data."""
    kinds: list[type[StreamEvent]] = [
        SnapshotEvent, GameStartedEvent, MoveEvent, GameFinishedEvent, StandingsEvent,
        NoticeEvent, StatusEvent, TournamentFinishedEvent, SprtEvent]
    return {kind.kind(): kind for kind in kinds}

