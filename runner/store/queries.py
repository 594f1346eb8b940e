"""Reading the results database for reports, exports and resume; large reads stream.

Streams use ``yield_per`` (server-side cursors where the database has them), so exporting or
counting a hundred thousand games keeps memory flat. Results are frozen dataclasses, never
ORM rows, so callers cannot accidentally write.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from sqlalchemy import Float, Integer, Select, bindparam, case, cast, func, literal, or_, select
from sqlalchemy.orm import Session, aliased

from runner.store.lease import holders, holders_query
from runner.store.models import (
    EngineRow,
    GameRow,
    GameStatus,
    MoveRow,
    TournamentRow,
)
from runner.store.origin import failures_query
from runner.store.reads import (
    GameFilter,
    StoredGame,
    StoredMove,
    TournamentProgress,
    progress,
    shown_status,
    stored_game,
)
from runner.store.records import enums

if TYPE_CHECKING:  # read on first use: listing tournaments needs neither the rules nor games
    from runner.game.record import GameTermination
    from runner.rules import Result

__all__ = [
    "NEAR_FLAG_SHARE",
    "GameFilter",
    "PlayedGame",
    "ReportRows",
    "SearchTotals",
    "StoredGame",
    "StoredMove",
    "TournamentInfo",
    "TournamentProgress",
    "finished_job_keys",
    "find_tournament",
    "game_moves",
    "search_totals",
    "list_statements",
    "stream_games",
    "stream_played",
    "tournament_info",
    "tournaments",
]

@functools.cache
def _progress_query() -> Select[TournamentRow, int, int]:
    """Tournaments with their done and running game counts."""
    done = func.coalesce(func.sum(case((GameRow.status == GameStatus.DONE, 1), else_=0)), 0)
    running = func.coalesce(
        func.sum(case((GameRow.status == GameStatus.RUNNING, 1), else_=0)), 0)
    return (
        select(TournamentRow, done, running)
        .outerjoin(GameRow, GameRow.tournament_id == TournamentRow.id)
        .group_by(TournamentRow.id)
        .order_by(TournamentRow.id)
    )


def list_statements(session: Session) -> dict[str, Any]:
    """The statements behind `tournaments` and `origin.failures`, by name: what
    `runner.store.quick` runs, compiled, to list tournaments without SQLAlchemy."""
    return {"holders": holders_query(session), "progress": _progress_query(),
            "failures": failures_query()}


def tournaments(session: Session) -> list[TournamentProgress]:
    """Every tournament, oldest first, with its progress."""
    leases = holders(session)
    return [progress(*row, leases) for row in session.execute(_progress_query())]


def find_tournament(session: Session, *, tournament_id: int | None = None,
                    fingerprint: str | None = None) -> TournamentProgress | None:
    """One tournament by id, or the newest with a given config fingerprint."""
    query = _progress_query()
    if tournament_id is not None:
        query = query.where(TournamentRow.id == tournament_id)
    if fingerprint is not None:
        query = query.where(TournamentRow.fingerprint == fingerprint)
    query = query.order_by(None).order_by(TournamentRow.id.desc()).limit(1)
    row = session.execute(query).first()
    return None if row is None else progress(*row, holders(session))


FINISHED_JOBS = select(GameRow.job_index).where(
    GameRow.tournament_id == bindparam("row_tournament"), GameRow.status == GameStatus.DONE)
"""The schedule places of a tournament's played games."""


def finished_job_keys(session: Session, tournament_id: int) -> set[int]:
    """Job indices of the games already played (a resume skips them)."""
    return set(session.scalars(FINISHED_JOBS, {"row_tournament": tournament_id}))


def _games_query(where: GameFilter) -> Select[*tuple[Any, ...]]:
    """The columns of `StoredGame`, filtered and in schedule order."""
    white = aliased(EngineRow)
    black = aliased(EngineRow)
    query = (
        select(
            GameRow.id, GameRow.tournament_id, GameRow.job_index, GameRow.round,
            GameRow.pair_index, GameRow.game_in_pair, white.name.label("white"),
            black.name.label("black"),
            GameRow.opening_index, GameRow.opening_fen, GameRow.opening_moves, GameRow.status,
            GameRow.result, GameRow.termination, GameRow.reason, GameRow.plies,
            GameRow.started_at, GameRow.ended_at, GameRow.pgn, GameRow.white_stderr,
            GameRow.black_stderr,
        )
        .join(white, GameRow.white_id == white.id)
        .join(black, GameRow.black_id == black.id)
        .order_by(GameRow.tournament_id, GameRow.job_index)
    )
    if where.tournament_id is not None:
        query = query.where(GameRow.tournament_id == where.tournament_id)
    if where.status is not None:
        query = query.where(GameRow.status == where.status)
    if where.engine is not None:
        query = query.where(or_(white.name == where.engine, black.name == where.engine))
    if where.result is not None:
        query = query.where(GameRow.result == where.result.value)
    if where.termination is not None:
        query = query.where(GameRow.termination == where.termination.value)
    return query


def played_games() -> Any:
    """A tournament's (``row_tournament``) played games as `StoredGame` reads them, in
    schedule order (what a run's preparation counts)."""
    return _games_query(GameFilter()).where(GameRow.tournament_id == bindparam("row_tournament"))


def stream_games(session: Session, where: GameFilter | None = None, *,
                 batch: int = 1000) -> Iterator[StoredGame]:
    """Games matching `where`, in schedule order, fetched `batch` rows at a time."""
    query = _games_query(where or GameFilter()).execution_options(yield_per=batch)
    for row in session.execute(query):
        yield stored_game(row._asdict())


def game_moves(session: Session, game_id: int) -> list[StoredMove]:
    """The moves of one game, in order."""
    query = (select(MoveRow.ply, MoveRow.san, MoveRow.uci, MoveRow.time_ms, MoveRow.depth,
                    MoveRow.score_cp, MoveRow.mate, MoveRow.nodes)
             .where(MoveRow.game_id == game_id).order_by(MoveRow.ply))
    return [StoredMove(*row) for row in session.execute(query)]


# -- report reads (runner/report/build.py): one aggregate and one lean stream over the played games --


@dataclass(frozen=True)
class TournamentInfo:
    """What a report needs of a tournament: settings, engines in entry order, games played."""

    id: int
    name: str
    status: str
    config: dict[str, object]
    total_games: int
    sprt_decision: str | None
    engines: tuple[str, ...]
    played: int
    """Games stored as played (``done``), whatever their result."""
    scored: int
    """Played games with a result that scores (1-0, 0-1, 1/2-1/2)."""
    first_started: datetime | None
    last_ended: datetime | None
    reason: str | None = None
    """Why its last run failed (the tournaments' ``reason`` column), None when it did not."""


class PlayedGame(NamedTuple):
    """One played game as a report replays it, in the order games ended."""

    white: str
    black: str
    result: Result | None
    pair_index: int
    game_in_pair: int
    termination: GameTermination | None
    """None when the row has none, or one this version of the runner does not know."""
    plies: int | None
    at_fault: str | None
    """The engine whose fault ended the game, for the terminations the caller names."""
    worker: str | None = None
    """The Dask worker that played the game (None: the runner's own process)."""


def tournament_info(session: Session, tournament_id: int) -> TournamentInfo | None:
    """A tournament's settings and engines, with its game counts and first/last game times."""
    row = session.execute(
        select(TournamentRow.id, TournamentRow.name, TournamentRow.status, TournamentRow.config,
               TournamentRow.total_games, TournamentRow.sprt_decision, TournamentRow.reason)
        .where(TournamentRow.id == tournament_id)).first()
    if row is None:
        return None
    engines = tuple(session.scalars(select(EngineRow.name)
                                    .where(EngineRow.tournament_id == tournament_id)
                                    .order_by(EngineRow.id)))
    configured = {entry.get("name") for entry in (row.config or {}).get("engines") or ()
                  if isinstance(entry, dict)}
    if configured:  # an engine a forced change removed keeps its row, not its place
        engines = tuple(name for name in engines if name in configured)
    scoring = tuple(text for text, result in enums()[0].items() if result.finished)
    scored = func.coalesce(func.sum(case((GameRow.result.in_(scoring), 1), else_=0)), 0)
    played, scored_count, first, last = session.execute(
        select(func.count(), scored, func.min(GameRow.started_at), func.max(GameRow.ended_at))
        .where(GameRow.tournament_id == tournament_id, GameRow.status == GameStatus.DONE)).one()
    status = shown_status(row.id, row.status, holders(session))
    return TournamentInfo(id=row.id, name=row.name, status=status,
                          config=dict(row.config or {}), total_games=row.total_games,
                          sprt_decision=row.sprt_decision, engines=engines, played=int(played),
                          scored=int(scored_count), first_started=_utc(first),
                          last_ended=_utc(last), reason=row.reason)


def _utc(value: object) -> datetime | None:
    """A timestamp read through an aggregate, made timezone-aware (UTC) like the model does."""
    if isinstance(value, str):  # in case a backend hands back text
        value = datetime.fromisoformat(value)
    if not isinstance(value, datetime):
        return None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)




def stream_played(session: Session, tournament_id: int, *,
                  fault_terminations: Iterable[GameTermination] = (),
                  batch: int = 5000) -> Iterator[PlayedGame]:
    """Every played game in the order they ended: eight small columns each, streamed in batches.

    For a game ended by one of `fault_terminations`, ``at_fault`` names the loser of a
    decisive game, or in a drawn one (a time forfeit against a side that cannot mate) the
    color the reason starts with (``White ...``/``Black ...``); it is worked out by the
    database, so the reason text is never fetched.
    """
    from runner.rules import Result

    results, terminations = enums()
    names = dict(session.execute(select(EngineRow.id, EngineRow.name)
                                 .where(EngineRow.tournament_id == tournament_id)).all())
    kinds = tuple(kind.value for kind in fault_terminations)
    fault = GameRow.termination.in_(kinds)
    culprit = case(
        (fault & (GameRow.result == Result.WHITE_WINS.value), GameRow.black_id),
        (fault & (GameRow.result == Result.BLACK_WINS.value), GameRow.white_id),
        (fault & GameRow.reason.like("White %"), GameRow.white_id),
        (fault & GameRow.reason.like("Black %"), GameRow.black_id),
        else_=None,
    ) if kinds else literal(None, Integer)
    query = (
        select(GameRow.white_id, GameRow.black_id, GameRow.result, GameRow.pair_index,
               GameRow.game_in_pair, GameRow.termination, GameRow.plies, culprit,
               GameRow.worker)
        .where(GameRow.tournament_id == tournament_id, GameRow.status == GameStatus.DONE)
        .order_by(GameRow.ended_at, GameRow.job_index)
        .execution_options(yield_per=batch)
    )
    # A Core execution on the session's connection: plain rows, no ORM loading overhead.
    for white, black, result, pair, in_pair, termination, plies, fault, worker in \
            session.connection().execute(query):
        yield PlayedGame(names[white], names[black], results.get(result), pair, in_pair,
                         terminations.get(termination), plies,
                         None if fault is None else names[fault], worker)



class SearchTotals(NamedTuple):
    """Sums over one engine's own moves (book moves left out) in a tournament's played games
    on one worker (None: in the runner's own processes)."""

    engine: str
    moves: int
    depth_sum: int
    depth_moves: int
    """Moves that reported a depth (`depth_sum` is theirs)."""
    time_ms: int
    nodes: int
    node_time_ms: int
    """The time of the moves that reported a node count (what `nodes` was searched in)."""
    worker: str | None = None
    seldepth_sum: int = 0
    seldepth_moves: int = 0
    """Moves that reported a selective depth (`seldepth_sum` is theirs)."""
    share_sum: float = 0.0
    """The sum of each timed move's time over its clock when asked (see `clock_moves`)."""
    clock_moves: int = 0
    """Moves with a clock shown when asked (more than 0 ms): the ones `share_sum` adds."""
    least_left_ms: int | None = None
    """The least a clock showed right after a move's search, before any increment."""
    near_flag: int = 0
    """Moves after whose search less than `NEAR_FLAG_SHARE` of the clock when asked, or of
    what the move then added to it (the increment), was left."""
    pondered: int = 0
    """Moves after a ponder search (a hit or a miss)."""
    ponder_hits: int = 0


NEAR_FLAG_SHARE = 0.05
"""A move is near the flag when what its search left on the clock is under this share of the
clock when the move was asked, or of the time added after it (the increment)."""


def search_totals(session: Session, tournament_id: int) -> list[SearchTotals]:
    """Each engine's `SearchTotals` per worker, in one aggregate over the moves: ply 1 is the
    move of the side to move in the game's start position (White without an opening FEN)."""
    white_starts = or_(GameRow.opening_fen.is_(None), ~GameRow.opening_fen.like("% b %"))
    odd = MoveRow.ply % 2 == 1
    mover = case(((odd & white_starts) | (~odd & ~white_starts), GameRow.white_id),
                 else_=GameRow.black_id)
    counted = MoveRow.nodes.is_not(None)
    clocked = MoveRow.clock_ms > 0
    left = MoveRow.clock_ms - MoveRow.time_ms
    added = MoveRow.time_left_ms - left
    near = clocked & ((left < MoveRow.clock_ms * NEAR_FLAG_SHARE)
                      | (left < added * NEAR_FLAG_SHARE))
    query = (
        select(mover, GameRow.worker, func.count(), func.coalesce(func.sum(MoveRow.depth), 0),
               func.count(MoveRow.depth), func.coalesce(func.sum(MoveRow.time_ms), 0),
               func.coalesce(func.sum(MoveRow.nodes), 0),
               func.coalesce(func.sum(case((counted, MoveRow.time_ms), else_=0)), 0),
               func.coalesce(func.sum(MoveRow.seldepth), 0), func.count(MoveRow.seldepth),
               func.coalesce(func.sum(case(
                   (clocked, cast(MoveRow.time_ms, Float) / MoveRow.clock_ms), else_=0.0)), 0.0),
               func.count(case((clocked, 1))),
               func.min(left),
               func.count(case((near, 1))),
               func.count(MoveRow.ponder_hit),
               func.count(case((MoveRow.ponder_hit.is_(True), 1))))
        .join(GameRow, GameRow.id == MoveRow.game_id)
        .where(GameRow.tournament_id == tournament_id, GameRow.status == GameStatus.DONE,
               MoveRow.time_ms.is_not(None))
        .group_by(mover, GameRow.worker)
    )
    names = dict(session.execute(select(EngineRow.id, EngineRow.name)
                                 .where(EngineRow.tournament_id == tournament_id)).all())
    return [SearchTotals(names[engine], int(moves), int(depth), int(depths), int(time_ms),
                         int(nodes), int(node_time), worker, int(sel), int(sels), float(share),
                         int(clocks), None if least is None else int(least), int(near_count),
                         int(pondered), int(hits))
            for (engine, worker, moves, depth, depths, time_ms, nodes, node_time, sel, sels,
                 share, clocks, least, near_count, pondered, hits)
            in session.execute(query).all() if engine in names]


class ReportRows:
    """What a report reads, in the one transaction `Store.report_rows` holds."""

    def __init__(self, session: Session) -> None:
        self._session = session

    def newest(self) -> TournamentProgress | None:
        """The newest tournament (None: the database holds none)."""
        return find_tournament(self._session)

    def info(self, tournament_id: int) -> TournamentInfo | None:
        """The tournament's settings, engines and game counts (None: no such tournament)."""
        return tournament_info(self._session, tournament_id)

    def played(self, tournament_id: int, *,
               fault_terminations: Iterable[GameTermination] = ()) -> Iterator[PlayedGame]:
        """Its played games in the order they ended, streamed (see `stream_played`)."""
        return stream_played(self._session, tournament_id,
                             fault_terminations=fault_terminations)

    def search(self, tournament_id: int) -> list[SearchTotals]:
        """Each engine's search and time sums over its own moves (see `search_totals`)."""
        return search_totals(self._session, tournament_id)
