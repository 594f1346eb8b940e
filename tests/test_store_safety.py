"""Nothing lost: a forced resume after each kind of configuration change, the ``--pgnout`` file
always equal to the stored games, database failures ending the run with one line, a slot
that fails stopping the run, and the tournament lease.

Most tests drive the tournament with a scripted scheduler (games "end" at once, no engines),
on SQLite and on PostgreSQL; the slot test plays the bundled engine.
"""

from __future__ import annotations

import asyncio
import errno
import os
import socket
import sqlite3
import subprocess
from collections.abc import AsyncGenerator, Callable, Iterable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from postgres_server import PostgresServer

import runner.game.slot as slot_module
import runner.store.db as store_db
import runner.tournament.writer as writer_module
from runner.clock import TimeControl
from runner.config.model import TournamentConfig
from runner.config.parse import parse_config
from runner.game.job import GameJob
from runner.game.record import GameRecord, GameTermination
from runner.store import Database, GameFilter, open_database, stream_games, tournaments
from runner.store.lease import LEASE_TIMEOUT, acquire, holders, new_owner
from runner.store.models import GameStatus, LeaseRow, TournamentRow, TournamentStatus
from runner.store.queries import tournament_info
from runner.store.resume import pgn_games
from runner.tournament.events import (
    DatabaseFailure,
    Event,
    GameFinished,
    Notice,
    RunOutcome,
    TournamentError,
)
from runner.tournament.run import Tournament
from runner.tournament.scheduler import JobFinished, JobStarted, Scheduler, SchedulerEvent
from runner.tournament.writer import GameWriter, pgn_file_text
from runner.types import MoveRecord

ENGINES = {"one": "1", "greedy": "greedy", "random": "random"}
BOOK = [f"rnbqkbnr/pppppppp/8/8/{rank}/8/{pawns}/RNBQKBNR b KQkq - 0 1" for rank, pawns in (
    ("4P3", "PPPP1PPP"), ("3P4", "PPP1PPPP"), ("2P5", "PP1PPPPP"), ("1P6", "P1PPPPPP"),
    ("P7", "1PPPPPPP"), ("5P2", "PPPPP1PP"))]


def _config(tmp_path: Path, *, engines: Iterable[str] = ("one", "greedy"), rounds: int = 2,
            fmt: str = "gauntlet", tc: str = "10+0.1", pgnout: bool = True,
            book: bool = False) -> TournamentConfig:
    table: dict[str, Any] = {
        "name": "safety", "format": fmt, "rounds": rounds, "games": 2, "tc": tc,
        "engines": [{"name": name, "command": ["python", "-m", "engine", "--level",
                                               ENGINES[name]]} for name in engines],
        "adjudication": {"maxmoves": 40},
    }
    if pgnout:
        table["pgnout"] = str(tmp_path / "games.pgn")
    if book:
        (tmp_path / "book.epd").write_text("".join(f"{fen}\n" for fen in BOOK))
        table["openings"] = {"file": "book.epd", "order": "sequential"}
    return parse_config(table, source="safety test", base_dir=tmp_path)


class Scripted(Scheduler):
    """Every job 'ends' at once (White wins even indices, odd ones are drawn); records the
    jobs it was given. `stop_after` stops after that many games."""

    def __init__(self, stop_after: int | None = None) -> None:
        self.jobs: list[GameJob] = []
        self.stop_after = stop_after
        self.stopped = False

    def submit(self, jobs: Iterable[GameJob]) -> None:
        self._source = iter(jobs)

    def stop(self, hard: bool = False) -> None:
        self.stopped = True

    async def events(self) -> AsyncGenerator[SchedulerEvent, None]:
        while not self.stopped and (job := next(self._source, None)) is not None:
            if self.stop_after is not None and len(self.jobs) >= self.stop_after:
                return
            self.jobs.append(job)
            yield JobStarted(job, 0)
            now = datetime.now(UTC)
            yield JobFinished(job, GameRecord(
                white=job.white.name, black=job.black.name, spec=job.spec,
                moves=(MoveRecord("e4", uci="e2e4", time=0.1),),
                result="1-0" if job.index % 2 == 0 else "1/2-1/2",
                termination=GameTermination.ADJUDICATION, reason="scripted",
                started_at=now, ended_at=now, final_fen=""), 0.0)


def _run(config: TournamentConfig, db: Database, *, stop_after: int | None = None,
         force: bool = False, events: list[Event] | None = None) -> tuple[RunOutcome, Scripted]:
    scripted = Scripted(stop_after)
    tournament = Tournament(config, db, force=force, scheduler=scripted)
    tournament.prepare()
    return asyncio.run(tournament.run(on_event=None if events is None else events.append)), \
        scripted


def _games(db: Database, status: GameStatus | None = GameStatus.DONE) -> list[Any]:
    with db.session() as session:
        return list(stream_games(session, GameFilter(status=status)))


def _assert_file_equals_database(db: Database, path: Path, foreign: bytes = b"") -> None:
    """The PGN file holds exactly the played games, each where the database says (after
    `foreign`, text that was in the file before and is not the tournament's)."""
    with db.session() as session:
        games = list(pgn_games(session, 1))
    assert games and all(game.offset is not None for game in games)
    expected = b"".join(pgn_file_text(game.pgn) for game in games)
    assert path.read_bytes() == foreign + expected
    assert len(games) == len(_games(db, None)) - len(_games(db, GameStatus.REPLAY))


# -- item 3: --force after each kind of change --------------------------------------------------


def test_force_with_an_engine_added_schedules_its_games(any_db: Database, tmp_path) -> None:
    first, _ = _run(_config(tmp_path, book=True), any_db, stop_after=3)
    assert (first.status.value, first.done, first.total_games) == ("interrupted", 3, 4)
    before = {(g.id, g.white, g.black, g.result) for g in _games(any_db)}
    bigger = _config(tmp_path, engines=("one", "greedy", "random"), book=True)
    with pytest.raises(TournamentError, match=r"engine\(s\) added: random"):
        Tournament(bigger, any_db, scheduler=Scripted()).prepare()
    events: list[Event] = []
    outcome, scripted = _run(bigger, any_db, force=True, events=events)
    assert (outcome.status.value, outcome.done, outcome.total_games) == ("finished", 8, 8)
    games = _games(any_db)
    assert [g.job_index for g in games] == list(range(8))
    assert before <= {(g.id, g.white, g.black, g.result) for g in games}  # kept and counted
    assert sum("random" in (g.white, g.black) for g in games) == 4
    assert [j.index for j in scripted.jobs] == [2, 3, 5, 6, 7]
    # Game 6 completes the pair whose first game moved (played as game 3, now game 5): it
    # starts from that game's opening, not from the one the book serves the new pair.
    moved = next(g for g in games if g.job_index == 4)
    assert moved.opening_fen == BOOK[1]
    assert scripted.jobs[2].spec.start_fen == BOOK[1]
    assert any(isinstance(e, Notice) and "engine(s) added: random" in e.text for e in events)
    with any_db.session() as session:
        (progress,) = tournaments(session)
    assert (progress.done, progress.total_games, progress.status) == (8, 8, "finished")


def test_force_with_an_engine_removed_keeps_its_games_out_of_the_standings(
        any_db: Database, tmp_path) -> None:
    three = _config(tmp_path, engines=("one", "greedy", "random"), fmt="round-robin", rounds=1)
    first, _ = _run(three, any_db, stop_after=5)  # the fifth game is one against greedy
    assert (first.done, first.total_games) == (5, 6)
    played = {g.id: g for g in _games(any_db)}
    two = _config(tmp_path, engines=("one", "greedy"), fmt="round-robin", rounds=1)
    with pytest.raises(TournamentError, match=r"engine\(s\) removed: random"):
        Tournament(two, any_db, scheduler=Scripted()).prepare()
    outcome, _ = _run(two, any_db, force=True)
    assert (outcome.status.value, outcome.done, outcome.total_games) == ("finished", 2, 2)
    assert outcome.played_now == 1
    assert [s.name for s in outcome.scoreboard.ranked()] != [] and all(
        s.name != "random" and s.games == 2 for s in outcome.scoreboard.ranked())
    counted, excluded = _games(any_db), _games(any_db, GameStatus.EXCLUDED)
    assert [g.job_index for g in counted] == [0, 1]
    assert {g.id for g in excluded} == {i for i, g in played.items()
                                        if "random" in (g.white, g.black)}
    assert all(g.pgn for g in excluded)  # kept with their PGN
    with any_db.session() as session:
        (progress,) = tournaments(session)
        info = tournament_info(session, progress.id)
    assert progress.done == progress.total_games == 2
    assert info is not None and set(info.engines) == {"one", "greedy"} and info.played == 2


def test_force_with_fewer_then_more_rounds(any_db: Database, tmp_path) -> None:
    pgn = tmp_path / "games.pgn"
    first, _ = _run(_config(tmp_path, rounds=4, engines=("one", "greedy"), fmt="match"),
                    any_db, stop_after=5)
    assert (first.done, first.total_games) == (5, 8)
    fewer, scripted = _run(_config(tmp_path, rounds=2, fmt="match"), any_db, force=True)
    # "N of M" never exceeds M: the fifth game is kept but not counted.
    assert (fewer.status.value, fewer.done, fewer.total_games, fewer.played_now) == (
        "finished", 4, 4, 0)
    assert scripted.jobs == []
    assert sum(s.games for s in fewer.scoreboard.ranked()) == 8
    (dropped,) = _games(any_db, GameStatus.EXCLUDED)
    assert dropped.job_index < 0 and dropped.round == 3
    with any_db.session() as session:
        (progress,) = tournaments(session)
    assert (progress.done, progress.total_games) == (4, 4)
    # A finished tournament is not resumed by name: ask for it by id, with more rounds again.
    more = Tournament(_config(tmp_path, rounds=4, fmt="match"), any_db, force=True,
                      tournament_id=fewer.tournament_id, scheduler=(again := Scripted()))
    more.prepare()
    outcome = asyncio.run(more.run())
    assert (outcome.done, outcome.total_games, outcome.played_now) == (8, 8, 3)
    assert [j.index for j in again.jobs] == [5, 6, 7]  # the excluded game counts again
    assert [g.job_index for g in _games(any_db)] == list(range(8))
    assert _games(any_db, GameStatus.EXCLUDED) == []
    _assert_file_equals_database(any_db, pgn)


def test_force_with_another_time_control_applies_it_to_the_games_left(
        any_db: Database, tmp_path) -> None:
    first, _ = _run(_config(tmp_path), any_db, stop_after=2)
    changed = _config(tmp_path, tc="5+0.1")
    with pytest.raises(TournamentError) as refused:
        Tournament(changed, any_db, scheduler=Scripted()).prepare()
    assert "time control 10+0.1 -> 5+0.1" in str(refused.value)
    assert "--force" in str(refused.value)
    events: list[Event] = []
    outcome, scripted = _run(changed, any_db, force=True, events=events)
    assert (outcome.done, outcome.total_games, outcome.played_now) == (4, 4, 2)
    assert all(job.spec.white_tc == TimeControl.parse("5+0.1") for job in scripted.jobs)
    assert any(isinstance(e, Notice) and "applies to the games still to play" in e.text
               for e in events)
    pgns = [g.pgn for g in _games(any_db)]
    assert [p.count('[TimeControl "10+0.1"]') for p in pgns] == [1, 1, 0, 0]


# -- item 4: the PGN file always equals the database --------------------------------------------


def test_a_failed_pgn_write_stops_the_run_and_resume_repairs_the_file(
        any_db: Database, tmp_path, monkeypatch) -> None:
    pgn = tmp_path / "games.pgn"
    real_write = os.write
    calls = 0

    def disk_full_at_third_game(fd: int, data: Any) -> int:
        nonlocal calls
        calls += 1
        if calls == 3:  # half the game reaches the disk, then the disk is full
            real_write(fd, bytes(data[:len(data) // 2]))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(GameWriter, "_write", staticmethod(disk_full_at_third_game))
    config = _config(tmp_path, rounds=3)
    outcome, scripted = _run(config, any_db)
    assert outcome.status.value == "interrupted" and len(scripted.jobs) == 3
    assert outcome.error is not None and "\n" not in outcome.error
    assert f"cannot write game 3 to the PGN file {pgn}: No space left on device" in outcome.error
    assert len(_games(any_db)) == outcome.done == 3  # committed before the write failed
    assert pgn.read_bytes().count(b"[Event ") == 2 and pgn.read_bytes().endswith(b"\n\n")
    monkeypatch.undo()
    resumed, _ = _run(config, any_db)
    assert (resumed.status.value, resumed.done) == ("finished", 6)
    _assert_file_equals_database(any_db, pgn)


@pytest.mark.parametrize("damage", ["killed before the write", "torn tail", "file deleted",
                                    "file replaced"])
def test_resume_repairs_every_gap_between_database_and_file(any_db: Database, tmp_path,
                                                            damage: str, monkeypatch) -> None:
    monkeypatch.setattr(writer_module, "_BATCH", 2)  # a rebuilt file is written in batches
    pgn = tmp_path / "games.pgn"
    config = _config(tmp_path, rounds=3)
    _run(config, any_db, stop_after=4)
    with any_db.session() as session:
        last = list(pgn_games(session, 1))[-1]
    text = pgn_file_text(last.pgn)
    assert last.offset is not None
    if damage == "killed before the write":  # committed, never written (kill -9 in the gap)
        os.truncate(pgn, last.offset)
    elif damage == "torn tail":
        os.truncate(pgn, last.offset)
        with open(pgn, "ab") as handle:
            handle.write(text[: len(text) // 3])
    elif damage == "file deleted":
        pgn.unlink()
    else:  # another file in its place: the tournament's games are appended to it
        pgn.write_bytes(foreign := b'[Event "something else"]\n\n1. e4 *\n\n')
    outcome, _ = _run(config, any_db)
    assert (outcome.status.value, outcome.done) == ("finished", 6)
    _assert_file_equals_database(any_db, pgn, foreign if damage == "file replaced" else b"")


def test_an_unwritable_pgn_file_ends_the_cli_run_with_one_line(tmp_path) -> None:
    """/dev/full takes the open and refuses every write (No space left on device)."""
    from typer.testing import CliRunner

    from runner.cli.app import app

    if not Path("/dev/full").exists():
        pytest.skip("/dev/full is absent on this system")
    config = tmp_path / "t.toml"
    config.write_text('name = "full"\nformat = "match"\nrounds = 1\ngames = 2\n'
                      'tc = "10+0.1"\npgnout = "/dev/full"\n'
                      '[[engines]]\nname = "a"\ncommand = ["python", "-m", "engine", '
                      '"--level", "random"]\n[[engines]]\nname = "b"\ncommand = ["python", '
                      '"-m", "engine", "--level", "random"]\n[adjudication]\nmaxmoves = 10\n')
    result = CliRunner().invoke(app, ["run", str(config), "--db", str(tmp_path / "r.db"),
                                      "--quiet"])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    text = " ".join(result.output.split())  # however the console wrapped it
    assert text.count("cannot write game 1 to the PGN file /dev/full: No space left on "
                      "device") == 1


# -- item 5: database failures ----------------------------------------------------------------


def _lock_from_another_connection(db: Database) -> Callable[[], None]:
    """Hold a lock on the games from another connection; returns how to let go."""
    url = db.engine.url
    if url.get_backend_name() == "sqlite":
        other = sqlite3.connect(str(url.database), isolation_level=None)
        other.execute("BEGIN EXCLUSIVE")

        def let_go() -> None:
            other.execute("ROLLBACK")
            other.close()

        return let_go
    import psycopg

    other_pg = psycopg.connect(host=url.query["host"], user=url.username, dbname=url.database)
    other_pg.execute("LOCK TABLE games IN ACCESS EXCLUSIVE MODE")

    def let_go_pg() -> None:
        other_pg.rollback()
        other_pg.close()

    return let_go_pg


@pytest.fixture(params=["sqlite", "postgresql"])
def short_lock_db(request: pytest.FixtureRequest, monkeypatch, tmp_path) -> Iterator[Database]:
    """A fresh database on each backend whose connections give up on a lock after 0.3 s
    (instead of 30 s)."""
    monkeypatch.setattr(store_db, "LOCK_TIMEOUT_MS", 300)
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'runner.db'}"
    else:
        server: PostgresServer = request.getfixturevalue("postgres_server")
        url = server.new_database()
    database = open_database(url)
    try:
        yield database
    finally:
        database.close()


def test_a_database_lock_ends_the_run_with_one_line_and_resume_replays(
        short_lock_db: Database, tmp_path) -> None:
    db = short_lock_db
    config = _config(tmp_path, rounds=3)
    release: list[Callable[[], None]] = []
    tournament = Tournament(config, db, scheduler=(scripted := Scripted()))

    def lock_after_two(event: Event) -> None:
        if isinstance(event, GameFinished) and not release and tournament.done_games == 2:
            release.append(_lock_from_another_connection(db))

    tournament.prepare()
    try:
        # No exception: the run ends, saying why.
        outcome = asyncio.run(tournament.run(on_event=lock_after_two))
    finally:
        for let_go in release:
            let_go()
    assert outcome.error is not None and "\n" not in outcome.error
    assert outcome.error.startswith(f"database {store_db.safe_url(db.url)} failed: ")
    assert "lock" in outcome.error.lower()
    assert len(scripted.jobs) == 3 and outcome.done == 2
    resumed, again = _run(config, db)
    assert (resumed.status.value, resumed.done) == ("finished", 6)
    assert [job.index for job in again.jobs] == [2, 3, 4, 5]  # the game in flight replayed
    _assert_file_equals_database(db, tmp_path / "games.pgn")


def test_a_database_password_never_appears_in_a_failure_line() -> None:
    from sqlalchemy.exc import OperationalError

    failure = OperationalError("INSERT ...", {}, Exception("disk I/O error"))
    line = store_db.database_failure("postgresql+psycopg://u:s3cret@db.example/r", failure)
    assert "s3cret" not in line and "disk I/O error" in line and "db.example" in line


@pytest.mark.timeout(120)
def test_a_failing_slot_stops_the_run_instead_of_dying_silently(tmp_path, monkeypatch) -> None:
    real_play = slot_module.play_game

    async def play(white: Any, black: Any, spec: Any, **kwargs: Any) -> GameRecord:
        if spec.tags.get("Round") == "1.2":
            raise RuntimeError("the runner's own bug")
        return await real_play(white, black, spec, **kwargs)

    monkeypatch.setattr(slot_module, "play_game", play)
    config = _config(tmp_path, rounds=6, fmt="match", pgnout=False)
    database = open_database(f"sqlite:///{tmp_path / 'r.db'}")
    try:
        tournament = Tournament(config, database, concurrency=2)
        tournament.prepare()
        outcome = asyncio.run(tournament.run())
    finally:
        database.close()
    assert outcome.error is not None
    assert "game slot" in outcome.error and "the runner's own bug" in outcome.error
    assert outcome.status.value == "interrupted" and outcome.done < 6


# -- item 6: the lease ---------------------------------------------------------------------------


def test_a_live_lease_refuses_a_second_runner_and_a_stale_one_is_taken_over(
        any_db: Database, tmp_path) -> None:
    config = _config(tmp_path)
    first, _ = _run(config, any_db, stop_after=1)
    now = datetime.now(UTC)
    with any_db.session() as session:
        assert holders(session) == {}  # released at the end of the run
        row = session.get(TournamentRow, first.tournament_id)
        assert row is not None
        row.status = TournamentStatus.RUNNING  # as a live runner leaves it
        session.add(LeaseRow(tournament_id=first.tournament_id, owner="elsewhere", pid=4242,
                             host="other-host", acquired_at=now, heartbeat_at=now))
    with pytest.raises(TournamentError, match="pid 4242 on host other-host"):
        Tournament(config, any_db, scheduler=Scripted()).prepare()
    with any_db.session() as session:
        (progress,) = tournaments(session)
        assert progress.status == "running"  # its runner is alive: not "interrupted"
    with any_db.session() as session:  # no heartbeat for longer than the timeout: stale
        lease = session.get(LeaseRow, first.tournament_id)
        assert lease is not None
        lease.heartbeat_at = now - LEASE_TIMEOUT - timedelta(seconds=1)
    with any_db.session() as session:
        (progress,) = tournaments(session)
        assert progress.status == "interrupted"
    outcome, _ = _run(config, any_db)
    assert (outcome.status.value, outcome.done) == ("finished", 4)


def test_a_lease_of_a_dead_process_on_this_host_is_stale(any_db: Database, tmp_path) -> None:
    config = _config(tmp_path)
    first, _ = _run(config, any_db, stop_after=1)
    gone = subprocess.Popen(["true"])
    gone.wait()
    dead = gone.pid
    now = datetime.now(UTC)
    with any_db.session() as session:
        session.add(LeaseRow(tournament_id=first.tournament_id, owner="gone", pid=dead,
                             host=socket.gethostname(), acquired_at=now, heartbeat_at=now))
    with any_db.session() as session:
        acquire(session, first.tournament_id, owner := new_owner())
        assert holders(session)[first.tournament_id].owner == owner


def test_a_database_failure_before_the_first_game_is_exit_status_1(
        short_lock_db: Database, tmp_path) -> None:
    db = short_lock_db
    config = _config(tmp_path, rounds=1)
    Tournament(config, db, scheduler=Scripted()).prepare(lease=False)  # the tables and row exist
    let_go = _lock_from_another_connection(db)
    try:
        with pytest.raises(DatabaseFailure) as raised:
            Tournament(config, db, scheduler=Scripted()).prepare()
    finally:
        let_go()
    # Not the user's input (exit 2) but the database failing, as in the middle of a run.
    assert raised.value.exit_code == 1
    assert str(raised.value).startswith(f"database {store_db.safe_url(db.url)} failed: ")
