"""The database schema as SQLAlchemy 2 typed ORM models: tournaments, engines, games, moves.

Alembic owns the schema (``migrations/``); these models are what the migrations must match,
which a test checks with alembic's autogenerate comparison. Only portable column types are
used, so the same models run on SQLite and PostgreSQL. Enumerations are stored as their
string values in plain VARCHAR columns (no native enum types to migrate).
"""

from __future__ import annotations

import enum
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Enum,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.types import TypeDecorator

from runner.store.records import GameStatus, TournamentStatus, utc

__all__ = [
    "Base",
    "EngineRow",
    "GameRow",
    "GameStatus",
    "LeaseRow",
    "MoveRow",
    "TournamentRow",
    "TournamentStatus",
    "TuneIterationRow",
    "TuneRow",
    "UtcDateTime",
    "column_kinds",
]

# Named constraints, so migrations can refer to them on every backend.
_NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UtcDateTime(TypeDecorator[datetime]):
    """A timestamp stored in UTC and always read back timezone-aware (SQLite drops the zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Aware times are converted to UTC; naive ones are taken to be UTC already."""
        if value is not None and value.tzinfo is not None:
            value = value.astimezone(UTC)
            if dialect.name == "sqlite":
                value = value.replace(tzinfo=None)
        return value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        """Attach UTC to what the database returns without a zone."""
        return utc(value)


class Base(DeclarativeBase):
    """Declarative base carrying the shared metadata."""

    metadata = MetaData(naming_convention=_NAMING)
    type_annotation_map: dict[Any, Any] = {
        datetime: UtcDateTime(),
        dict[str, Any]: JSON,
        list[str]: JSON,
    }


# The statuses are defined with the records the store answers in (importable without
# SQLAlchemy); the models store them.


def _enum_column(kind: type[enum.Enum], length: int) -> Enum:
    """A VARCHAR column storing an enum's values, without a native type or CHECK constraint."""
    return Enum(kind, native_enum=False, create_constraint=False, length=length,
                values_callable=lambda members: [m.value for m in members],
                validate_strings=True)


class TournamentRow(Base):
    """A tournament: its configuration, progress and outcome."""

    __tablename__ = "tournaments"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    config: Mapped[dict[str, Any]]
    fingerprint: Mapped[str] = mapped_column(String(64), index=True)
    total_games: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[TournamentStatus] = mapped_column(
        _enum_column(TournamentStatus, 16), default=TournamentStatus.RUNNING)
    created_at: Mapped[datetime] = mapped_column(default=lambda: datetime.now(UTC))
    finished_at: Mapped[datetime | None]
    sprt_decision: Mapped[str | None] = mapped_column(String(16))
    book_state: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    origin: Mapped[str | None] = mapped_column(String(16))
    """Where it came from: None, the command line; "service", submitted over HTTP."""
    reason: Mapped[str | None] = mapped_column(Text)
    """Why its last run failed (one line), None when it did not."""

    engines: Mapped[list[EngineRow]] = relationship(
        back_populates="tournament", cascade="all, delete-orphan", passive_deletes=True,
        order_by="EngineRow.id")


class EngineRow(Base):
    """An engine as it took part in one tournament."""

    __tablename__ = "engines"
    __table_args__ = (UniqueConstraint("tournament_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    command: Mapped[list[str]]
    protocol: Mapped[str] = mapped_column(String(16), default="cecp")
    options: Mapped[dict[str, Any] | None] = mapped_column(JSON)

    tournament: Mapped[TournamentRow] = relationship(back_populates="engines")


class GameRow(Base):
    """One scheduled game and, once played, its outcome and PGN."""

    __tablename__ = "games"
    __table_args__ = (
        UniqueConstraint("tournament_id", "job_index"),
        Index(None, "tournament_id", "status"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"))
    job_index: Mapped[int] = mapped_column(Integer)
    round: Mapped[int] = mapped_column(Integer)
    pair_index: Mapped[int] = mapped_column(Integer)
    game_in_pair: Mapped[int] = mapped_column(Integer)
    white_id: Mapped[int] = mapped_column(ForeignKey("engines.id"), index=True)
    black_id: Mapped[int] = mapped_column(ForeignKey("engines.id"), index=True)
    opening_index: Mapped[int] = mapped_column(Integer)
    opening_fen: Mapped[str | None] = mapped_column(Text)
    opening_moves: Mapped[str | None] = mapped_column(Text)
    status: Mapped[GameStatus] = mapped_column(
        _enum_column(GameStatus, 16), default=GameStatus.PLANNED)
    result: Mapped[str | None] = mapped_column(String(8))
    termination: Mapped[str | None] = mapped_column(String(32))
    reason: Mapped[str | None] = mapped_column(Text)
    plies: Mapped[int | None] = mapped_column(Integer)
    started_at: Mapped[datetime | None]
    ended_at: Mapped[datetime | None]
    pgn: Mapped[str | None] = mapped_column(Text)
    pgn_offset: Mapped[int | None] = mapped_column(BigInteger)
    """Byte offset of this game's text in the ``--pgnout`` file, stored with the game before
    the text is written (so a resume can check the file); None: not in the file, -1: written
    by a runner that did not keep offsets."""
    worker: Mapped[str | None] = mapped_column(String(200))
    """The Dask worker that played the game (None: played in the runner's own process)."""
    white_stderr: Mapped[str | None] = mapped_column(Text)
    """White's standard error during the game, bounded, kept when it ended by a crash, a
    stall or a time loss (None: nothing written, or another ending)."""
    black_stderr: Mapped[str | None] = mapped_column(Text)
    """Black's, as `white_stderr`."""

    white: Mapped[EngineRow] = relationship(foreign_keys=[white_id])
    black: Mapped[EngineRow] = relationship(foreign_keys=[black_id])
    moves: Mapped[list[MoveRow]] = relationship(
        back_populates="game", cascade="all, delete-orphan", passive_deletes=True,
        order_by="MoveRow.ply")


class MoveRow(Base):
    """One move of a game, with what the engine reported about it."""

    __tablename__ = "moves"

    game_id: Mapped[int] = mapped_column(
        ForeignKey("games.id", ondelete="CASCADE"), primary_key=True)
    ply: Mapped[int] = mapped_column(Integer, primary_key=True)
    san: Mapped[str] = mapped_column(String(16))
    uci: Mapped[str] = mapped_column(String(8))
    time_ms: Mapped[int | None] = mapped_column(Integer)
    depth: Mapped[int | None] = mapped_column(Integer)
    score_cp: Mapped[int | None] = mapped_column(Integer)
    mate: Mapped[int | None] = mapped_column(Integer)
    nodes: Mapped[int | None] = mapped_column(BigInteger)
    seldepth: Mapped[int | None] = mapped_column(Integer)
    clock_ms: Mapped[int | None] = mapped_column(Integer)
    """Milliseconds on the mover's clock when it was asked for the move (None: book, no clock)."""
    time_left_ms: Mapped[int | None] = mapped_column(Integer)
    """Milliseconds on the mover's clock after the move, increment added (fastchess's tl)."""
    ponder_hit: Mapped[bool | None] = mapped_column(Boolean)
    """Whether the mover had pondered on the move before it (None: it had not pondered)."""

    game: Mapped[GameRow] = relationship(back_populates="moves")


class LeaseRow(Base):
    """Which process is running a tournament: one row per tournament being run, refreshed by
    a heartbeat and deleted when the run ends (a row left by a killed runner goes stale)."""

    __tablename__ = "leases"

    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True)
    owner: Mapped[str] = mapped_column(String(64))
    pid: Mapped[int] = mapped_column(Integer)
    host: Mapped[str] = mapped_column(String(255))
    acquired_at: Mapped[datetime]
    heartbeat_at: Mapped[datetime]
    """Written with the database's own clock (never a host's), as is `acquired_at`."""
    timeout_seconds: Mapped[float | None] = mapped_column(Float)
    """The silence after which the holder's lease may be taken over (None: rows written
    before runners declared it, the default 60 s)."""


class BranchTestRow(Base):
    """A branch test of the service's queue: what was asked, where it stands, its stages'
    tournaments (runner.service.branches runs it)."""

    __tablename__ = "branch_tests"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    recipe: Mapped[str] = mapped_column(String(200))
    base_ref: Mapped[str] = mapped_column(String(200))
    base_sha: Mapped[str] = mapped_column(String(64))
    dev_ref: Mapped[str] = mapped_column(String(200))
    dev_sha: Mapped[str] = mapped_column(String(64))
    spec: Mapped[dict[str, Any]]
    """The submitted test (its tournament keys and ``branch`` table), checked."""
    priority: Mapped[int] = mapped_column(Integer, default=0)
    share: Mapped[float] = mapped_column(Float, default=1.0)
    state: Mapped[str] = mapped_column(String(16), default="pending")
    stage: Mapped[int] = mapped_column(Integer, default=0)
    tournaments: Mapped[list[int]] = mapped_column(JSON, default=list)
    """The ids of its stages' tournaments, in order (as JSON numbers)."""
    message: Mapped[str | None] = mapped_column(Text)
    """Why it failed or stopped (a build's last lines, a wrong bench), or its end."""
    created_at: Mapped[datetime] = mapped_column(default=lambda: datetime.now(UTC))
    updated_at: Mapped[datetime] = mapped_column(default=lambda: datetime.now(UTC))
    author: Mapped[str | None] = mapped_column(String(200))
    """The name of the token that submitted it (None: the service's own token, or older)."""
    results: Mapped[list[Any] | None] = mapped_column(JSON)
    """Each ended stage's figures (games, LLR, decision, Elo, pentanomial), in order: the
    tests' list reads these instead of a report per test."""
    builds: Mapped[list[Any] | None] = mapped_column(JSON)
    """Each build of a side on a machine: the commit, the machine, its bench and its log's
    end."""


class TokenRow(Base):
    """A token of the service: its name, role and the SHA-256 of its text (never the text)."""

    __tablename__ = "tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    role: Mapped[str] = mapped_column(String(16))
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=lambda: datetime.now(UTC))
    last_used_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]


class TuneRow(Base):
    """An SPSA tuning run (``runner tune``): its name, its checked plan and its seed."""

    __tablename__ = "tunes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    plan: Mapped[dict[str, Any]]
    """The tune file's settings as checked (engine, parameters, iterations, seed...)."""
    created_at: Mapped[datetime] = mapped_column(default=lambda: datetime.now(UTC))
    submitted: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    """The table a service checked it from (None: a ``runner tune`` run): a restarted
    service checks it again to resume the run."""
    placement: Mapped[str | None] = mapped_column(String(20))
    """Where the service plays it (None: the operator's choice, or not the service's)."""
    stopped: Mapped[bool] = mapped_column(default=False, server_default=false())
    """An admin stopped it: a restarted service leaves it stopped."""


class TuneIterationRow(Base):
    """One played iteration of a tuning run: its flips, both sides' values, result and theta."""

    __tablename__ = "tune_iterations"
    __table_args__ = (UniqueConstraint("tune_id", "k"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tune_id: Mapped[int] = mapped_column(ForeignKey("tunes.id", ondelete="CASCADE"))
    k: Mapped[int] = mapped_column(Integer)
    flips: Mapped[list[int]] = mapped_column(JSON)
    plus: Mapped[list[int]] = mapped_column(JSON)
    minus: Mapped[list[int]] = mapped_column(JSON)
    result: Mapped[int] = mapped_column(Integer)
    """The plus side's wins minus its losses over the pair."""
    theta: Mapped[list[float]] = mapped_column(JSON)
    """Every parameter's theta after this iteration's update."""
    tournament_id: Mapped[int | None] = mapped_column(Integer)
    """The pair's stored tournament (its games)."""
    created_at: Mapped[datetime] = mapped_column(default=lambda: datetime.now(UTC))


class FleetWorkerRow(Base):
    """A machine registered by ``runner worker join``: what it said of itself, when it was
    last heard from, and whether it is flagged or blocked."""

    __tablename__ = "fleet_workers"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    principal: Mapped[str | None] = mapped_column(String(200))
    """The token's name it registered with (None: the service's own token)."""
    info: Mapped[dict[str, Any]]
    """What it registered: cores, memory, OS, runner version, tablebases, engines."""
    registered_at: Mapped[datetime] = mapped_column(default=lambda: datetime.now(UTC))
    last_seen: Mapped[datetime] = mapped_column(default=lambda: datetime.now(UTC))
    games: Mapped[int] = mapped_column(Integer, default=0)
    """Games it uploaded that were counted."""
    flag: Mapped[str | None] = mapped_column(Text)
    """Why it is flagged (a refused upload), None when it is not."""
    blocked: Mapped[bool] = mapped_column(default=False)


class FleetBatchRow(Base):
    """Some game pairs of a tournament leased to one worker until a deadline."""

    __tablename__ = "fleet_batches"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), index=True)
    worker_id: Mapped[int] = mapped_column(ForeignKey("fleet_workers.id", ondelete="CASCADE"),
                                           index=True)
    games: Mapped[list[int]] = mapped_column(JSON, default=list)
    """The schedule indexes of its games."""
    state: Mapped[str] = mapped_column(String(16), default="leased")
    """leased, ended (the worker ended it), expired (its lease ran out: given to another),
    refused (a game of it failed the referee), or lost (the service stopped with it out)."""
    leased_at: Mapped[datetime] = mapped_column(default=lambda: datetime.now(UTC))
    deadline: Mapped[datetime] = mapped_column(default=lambda: datetime.now(UTC))


class FleetGameRow(Base):
    """A game a remote worker played and the service counted: who, in which batch, and the
    factor its time control was scaled by for that machine."""

    __tablename__ = "fleet_games"

    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True)
    job_index: Mapped[int] = mapped_column(Integer, primary_key=True)
    worker_id: Mapped[int] = mapped_column(ForeignKey("fleet_workers.id", ondelete="CASCADE"),
                                           index=True)
    batch_id: Mapped[int] = mapped_column(Integer)
    factor: Mapped[float] = mapped_column(Float)
    """The tournament's clocks times this were the game's clocks (1.0: not scaled)."""
    factor_source: Mapped[str | None] = mapped_column(String(200), nullable=True)
    """Which bench the factor came from (`runner.fleet.speed.Scaling`; None: older game)."""


class PlacementRow(Base):
    """Where a service's tournament plays when it is not this host (``workers``)."""

    __tablename__ = "tournament_placements"

    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True)
    placement: Mapped[str] = mapped_column(String(16))


def column_kinds(statement: Any) -> dict[str, str]:
    """How each column a SELECT reads is converted back when sqlite3 reads it instead of
    SQLAlchemy: "utc" (a stored time), "json", or the name of its status enum."""
    kinds: dict[str, str] = {}
    for column in statement.selected_columns:
        kind = getattr(column, "type", None)
        if isinstance(kind, UtcDateTime):
            kinds[column.name] = "utc"
        elif isinstance(kind, Enum) and kind.enum_class is not None:
            kinds[column.name] = kind.enum_class.__name__
        elif isinstance(kind, JSON):
            kinds[column.name] = "json"
    return kinds
