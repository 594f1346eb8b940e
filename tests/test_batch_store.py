"""The batch write (`runner.store.batch`, `GameWriter.store_many` and `mark_soon`): games
that arrive together stored in one transaction, each exactly once, on SQLite (both ways of
writing) and PostgreSQL: the same game twice in one batch, a game played already beside
new ones, and the lease lost under a batch (nothing of it written)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from runner.clock import TimeControl
from runner.config.parse import load_config
from runner.fleet.scheduler import FleetScheduler, Refusal
from runner.game.job import GameJob
from runner.game.record import GameRecord, GameSpec, GameTermination
from runner.rules import Result
from runner.store import Database, create_tournament, open_database
from runner.store.lease import acquire
from runner.store.recording import EngineRowValues, JobKey
from runner.store.records import DuplicateGameError, LeaseLostError
from runner.store.store import Store
from runner.tournament.events import RunOutcome
from runner.tournament.run import Tournament
from runner.tournament.writer import GameWriter
from runner.types import MoveRecord

T0 = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
OWNER = "b" * 32
MOVES = (MoveRecord("e4", uci="e2e4", time=0.1), MoveRecord("e5", uci="e7e5", time=0.1),
         MoveRecord("Qh5", uci="d1h5", time=0.1))


@pytest.fixture(params=["sqlite-fast", "sqlite-sqlalchemy", "postgresql"])
def way(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Database, bool]]:
    """A migrated database and whether the writer may take sqlite3's way."""
    if request.param == "postgresql":
        url = request.getfixturevalue("postgres_server").new_database()
    else:
        url = f"sqlite:///{tmp_path / 'runner.db'}"
    database = open_database(url)
    try:
        yield database, request.param == "sqlite-fast"
    finally:
        database.close()


def _job(index: int) -> JobKey:
    white, black = ("a", "b") if index % 2 == 0 else ("b", "a")
    return JobKey(index=index, round=index // 2, pair=index // 2, game_in_pair=index % 2,
                  white=white, black=black, opening_index=index // 2)


def _record(index: int, plies: int, result: Result = Result.WHITE_WINS) -> GameRecord:
    job = _job(index)
    control = TimeControl.parse("10+0.1")
    return GameRecord(white=job.white, black=job.black,
                      spec=GameSpec(control, control, tags={"Event": "batch"}),
                      moves=MOVES[:plies], result=result,
                      termination=GameTermination.ADJUDICATION, reason=f"game {index}",
                      started_at=T0, ended_at=T0 + timedelta(seconds=3), final_fen=None,
                      worker=None)


def _writer(database: Database, fast: bool, tmp_path: Path) -> GameWriter:
    with database.session() as session:
        row = create_tournament(session, name="batch", config={"name": "batch"},
                                fingerprint="b" * 16, total_games=8,
                                engines=[EngineRowValues("a", ["x"]),
                                         EngineRowValues("b", ["y"])])
        acquire(session, row.id, OWNER)
        tournament_id = row.id
    return GameWriter(database, tournament_id, tmp_path / "out.pgn", OWNER,
                      statements=tmp_path / "writes.json", fast=fast)


def _games(database: Database) -> list[tuple[int, str, int]]:
    """Each game's job index, status and number of stored moves."""
    with database.session() as session:
        return [tuple(row) for row in session.execute(text(
            "SELECT g.job_index, g.status, (SELECT count(*) FROM moves m WHERE m.game_id = g.id)"
            " FROM games g ORDER BY g.job_index"))]


def test_a_batch_stores_each_game_once_and_a_played_one_does_not_sink_the_others(
        way: tuple[Database, bool], tmp_path: Path) -> None:
    database, fast = way
    writer = _writer(database, fast, tmp_path)

    async def marks() -> list[BaseException | None]:
        # Queued together: the thread marks them in one transaction, each told its outcome.
        futures = [writer.mark_soon(_job(index)) for index in (0, 1, 2, 4)]
        return list(await asyncio.gather(*futures, return_exceptions=True))

    try:
        writer.store(_job(1), _record(1, 2), "pgn 1\n")  # played before the batch
        marked = asyncio.run(marks())
        assert marked[0] is None and marked[2:] == [None, None]
        assert isinstance(marked[1], DuplicateGameError)  # the others marked all the same
        stored = writer.store_many([
            (_job(0), _record(0, 3), "pgn 0\n"),
            (_job(0), _record(0, 1, Result.BLACK_WINS), "pgn 0 again\n"),  # the same game
            (_job(1), _record(1, 3), "pgn 1 again\n"),  # played already
            (_job(2), _record(2, 0), "pgn 2\n"),  # no moves
            (_job(3), _record(3, 2), "pgn 3\n"),  # never marked running
        ])
        assert stored == [True, False, False, True, True]
        assert writer.repair_pgn() == 0  # the file holds exactly the stored games, in place
    finally:
        writer.close()
    assert _games(database) == [(0, "done", 3), (1, "done", 2), (2, "done", 0),
                                (3, "done", 2), (4, "running", 0)]
    assert (tmp_path / "out.pgn").read_text() == "pgn 1\n\npgn 0\n\npgn 2\n\npgn 3\n\n"


def test_a_lease_lost_under_a_batch_writes_nothing_of_it(
        way: tuple[Database, bool], tmp_path: Path) -> None:
    database, fast = way
    writer = _writer(database, fast, tmp_path)
    try:
        writer.store(_job(0), _record(0, 3), "pgn 0\n")
        writer.rows.mark_running_many([_job(1), _job(2)])
        with database.session() as session:  # another runner took the tournament over
            session.execute(text("UPDATE leases SET owner = 'someone else'"))
        with pytest.raises(LeaseLostError):
            writer.store_many([(_job(1), _record(1, 3), "pgn 1\n"),
                               (_job(2), _record(2, 2), "pgn 2\n")])
        with pytest.raises(LeaseLostError):
            writer.rows.mark_running_many([_job(3)])
    finally:
        writer.close()
    assert _games(database) == [(0, "done", 3), (1, "running", 0), (2, "running", 0)]
    assert (tmp_path / "out.pgn").read_text() == "pgn 0\n\n"


def _fools_mate(job: GameJob) -> GameRecord:
    """An honest-looking game of the job: 1. f3 e5 2. g4 Qh4#, Black mating (the referee
    replays it and finds the result right)."""
    now = datetime.now(UTC)
    moves = tuple(MoveRecord(san, uci=uci, time=0.01) for san, uci in (
        ("f3", "f2f3"), ("e5", "e7e5"), ("g4", "g2g4"), ("Qh4#", "d8h4")))
    return GameRecord(job.white.name, job.black.name, job.spec, moves, Result.BLACK_WINS,
                      GameTermination.CHECKMATE, "mated", now, now,
                      "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3")


def test_uploads_queued_together_are_counted_once_and_none_is_answered_before_its_commit(
        any_db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker's uploads sent at once reach the tournament as one batch (one transaction):
    the same game sent twice is counted once; after the run's lease is lost, the uploads
    waiting are refused (503), not acknowledged, and nothing of them is stored."""
    sizes: list[int] = []
    store_many = GameWriter.store_many

    def spied(self: GameWriter, games: list[Any]) -> list[bool]:
        sizes.append(len(games))
        return store_many(self, games)

    monkeypatch.setattr(GameWriter, "store_many", spied)
    engines = "".join(f'[[engines]]\nname = "{name}"\ncommand = [{json.dumps(sys.executable)}, '
                      '"-m", "engine"]\n' for name in "ab")  # never started: no worker here
    (tmp_path / "t.toml").write_text('name = "batch"\nformat = "roundrobin"\nrounds = 2\n'
                                     f'games = 2\ntc = "10+0.1"\n{engines}')
    store = Store.of(any_db)
    scheduler = FleetScheduler(store, lease_seconds=60)
    tournament = Tournament(load_config(tmp_path / "t.toml"), store, new=True,
                            scheduler=scheduler)

    async def play() -> tuple[list[Any], list[Any], RunOutcome]:
        await asyncio.to_thread(tournament.prepare)
        scheduler.tournament_id = tournament.tournament_id
        worker = await asyncio.to_thread(store.fleet.register, "w", "tok",
                                         {"engines": ["a", "b"]})
        run = asyncio.create_task(tournament.run())
        batch = None
        while batch is None:  # the run opens the scheduler first
            await asyncio.sleep(0.05)
            batch = await scheduler.lease(worker, {"a", "b"}, 8)
        jobs = sorted(batch.jobs.values(), key=lambda job: job.index)
        assert len(jobs) == 4

        def send(job: GameJob) -> Any:
            return scheduler.upload(worker, batch.id, _fools_mate(job), job.index, 1.0, "w")

        first = await asyncio.gather(send(jobs[0]), send(jobs[0]), send(jobs[1]),
                                     return_exceptions=True)
        with any_db.session() as session:  # another runner took the tournament over
            session.execute(text("UPDATE leases SET owner = 'someone else'"))
        second = await asyncio.gather(send(jobs[2]), send(jobs[3]), return_exceptions=True)
        return first, second, await asyncio.wait_for(run, 120)

    first, second, outcome = asyncio.run(play())
    assert first[0] is None and first[2] is None
    assert isinstance(first[1], Refusal) and first[1].status == 409, first[1]
    # Refused, not acknowledged: 503 when the batch write found the lease lost, 409 when
    # the run's heartbeat found it first (a loaded machine) and the batch was taken back.
    assert all(isinstance(r, Refusal) and r.status in (409, 503) for r in second), second
    assert sizes[0] == 2  # the two uploads waiting together: one transaction
    assert outcome.taken_over and outcome.done == 2
    assert [(i, s) for i, s, _ in _games(any_db) if s == "done"] == [(0, "done"), (1, "done")]
    assert [g.job_index for g in store.fleet.games(tournament.tournament_id)] == [0, 1]
