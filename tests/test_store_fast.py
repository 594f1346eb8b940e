"""The writer's per-game statements by sqlite3 (`runner.store.fast`): the same rows as through
SQLAlchemy, the lease still fencing every write, a stale cache compiled again, PostgreSQL left
to SQLAlchemy, and a real ``runner match`` storing its games that way."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from runner.clock import TimeControl
from runner.game.record import GameRecord, GameSpec, GameTermination
from runner.rules import Result
from runner.store import Database, create_tournament, open_database
from runner.store import fast as fast_module
from runner.store.fast import ENV_VAR, by_position, cache_key, load
from runner.store.lease import acquire
from runner.store.recording import EngineRowValues, JobKey
from runner.store.records import DuplicateGameError, LeaseLostError
from runner.tournament.writer import GameWriter
from runner.types import MoveRecord

T0 = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
OWNER = "a" * 32


def _record(white: str, black: str, moves: tuple[MoveRecord, ...], reason: str) -> GameRecord:
    control = TimeControl.parse("10+0.1")
    return GameRecord(
        white=white, black=black, spec=GameSpec(control, control, tags={"Event": "t"}),
        moves=moves, result=Result.WHITE_WINS, termination=GameTermination.CHECKMATE,
        reason=reason, started_at=T0, ended_at=T0 + timedelta(seconds=7.5, microseconds=3),
        final_fen="8/8/8/8/8/8/8/K6k w - - 0 1", worker=None)


MOVES = (MoveRecord("e4", score_cp=20, depth=3, time=0.25, uci="e2e4", nodes=99,
                    ponder_hit=True),
         MoveRecord("e5", book=True, uci="e7e5"),
         MoveRecord("Qh5", mate=-3, time=0.0104, uci="d1h5", nodes=2**40, ponder_hit=False))
# A value that would break SQL built from text: it must arrive as it is (bound parameters).
ODD = "White mates'); DROP TABLE games; --"


def _tournament(db: Database) -> int:
    with db.session() as session:
        row = create_tournament(session, name="fast", config={"name": "fast"},
                                fingerprint="f" * 16, total_games=4,
                                engines=[EngineRowValues("a", ["x"]), EngineRowValues("b", ["y"])])
        acquire(session, row.id, OWNER)
        return row.id


def _job(index: int, white: str = "a", black: str = "b") -> JobKey:
    return JobKey(index=index, round=index // 2, pair=0, game_in_pair=index % 2, white=white,
                  black=black, opening_index=index // 2)


def _play(db: Database, tournament_id: int, tmp: Path, *, fast: bool) -> GameWriter:
    """Store the same games through one way: marked then stored, stored unmarked, no moves."""
    writer = GameWriter(db, tournament_id, tmp / "out.pgn", OWNER,
                        statements=tmp / "cache" / "writes.json", fast=fast)
    try:
        writer.mark_running(_job(0))
        writer.store(_job(0), _record("a", "b", MOVES, ODD), "pgn 0\n")
        writer.store(_job(1, "b", "a"), _record("b", "a", MOVES[:1], ""), "pgn 1\n")
        writer.mark_running(_job(2))
        writer.store(_job(2), _record("a", "b", (), "none"), "pgn 2\n")
        writer.mark_running(_job(3, "b", "a"))  # left running, as a run cut short leaves it
        assert writer.heartbeat()
        with pytest.raises(DuplicateGameError):
            writer.store(_job(0), _record("a", "b", MOVES, ""), "again\n")
    finally:
        writer.close()
    return writer


def _table(path: Path, query: str) -> list[tuple]:
    connection = sqlite3.connect(path)
    try:
        return connection.execute(query).fetchall()
    finally:
        connection.close()


def test_the_fast_writes_store_the_rows_sqlalchemy_stores(tmp_path: Path) -> None:
    """Every column of games and moves (the times' text included) is the same either way;
    only the running game's start time, the clock's own, is left out."""
    found = {}
    for way in ("fast", "sqlalchemy"):
        tmp = tmp_path / way
        tmp.mkdir()
        with open_database(f"sqlite:///{tmp / 'r.db'}") as db:
            writer = _play(db, _tournament(db), tmp, fast=way == "fast")
        assert (writer.fast_writes() is not None) is (way == "fast")
        found[way] = (
            _table(tmp / "r.db", "SELECT * FROM games WHERE status != 'running' ORDER BY id"),
            _table(tmp / "r.db", "SELECT id, tournament_id, job_index, white_id, black_id, "
                   "status, started_at IS NOT NULL FROM games WHERE status = 'running'"),
            _table(tmp / "r.db", "SELECT * FROM moves ORDER BY game_id, ply"),
            _table(tmp / "r.db", "SELECT * FROM engines ORDER BY id"),
            (tmp / "out.pgn").read_bytes(),
        )
    assert found["fast"] == found["sqlalchemy"]
    games, running, moves, _engines, _pgn = found["fast"]
    assert [game[2] for game in games] == [0, 1, 2] and running[0][2:] == (3, 2, 1, "running", 1)
    assert ODD in games[0] and "2026-11-23 12:00:07.500003" in games[0]
    assert len(moves) == 4 and moves[2][8] == 2**40  # nodes (columns added since follow it)
    assert [move[12] for move in moves] == [1, None, 0, 1]  # ponder_hit, stored as 0 or 1


def test_the_moves_bound_by_name_store_the_rows_bound_by_position(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The moves' insert by position (`by_position`) and by name, its fallback, store the
    same rows."""
    found = {}
    for way in ("position", "name"):
        if way == "name":
            monkeypatch.setattr(fast_module, "by_position", lambda _sql, _keys: None)
        tmp = tmp_path / way
        tmp.mkdir()
        with open_database(f"sqlite:///{tmp / 'r.db'}") as db:
            _play(db, _tournament(db), tmp, fast=True)
        found[way] = _table(tmp / "r.db", "SELECT *, typeof(ponder_hit) FROM moves "
                            "ORDER BY game_id, ply")
    assert found["position"] == found["name"] and len(found["name"]) == 4


def test_by_position_takes_only_named_parameters_it_knows() -> None:
    """A statement's named parameters become ``?`` with each one's index among the keys; a
    name not among them, or a quote in the text, leaves the statement by name (None)."""
    assert by_position("INSERT INTO t (b, a) VALUES (:b, :a)", ("a", "b")) == (
        "INSERT INTO t (b, a) VALUES (?, ?)", [1, 0])
    assert by_position("INSERT INTO t (c) VALUES (:c)", ("a", "b")) is None
    assert by_position("INSERT INTO t (a) VALUES (':a')", ("a",)) is None
    assert by_position("INSERT INTO t (a) VALUES (1)", ("a",)) is None


def test_a_lost_lease_stores_nothing_on_the_fast_way(tmp_path: Path) -> None:
    """Another runner took the tournament over: the heartbeat says so, and a game's end is
    refused whole (no row changed, no move stored, nothing in the PGN file)."""
    with open_database(f"sqlite:///{tmp_path / 'r.db'}") as db:
        tournament_id = _tournament(db)
        writer = GameWriter(db, tournament_id, tmp_path / "out.pgn", OWNER,
                            statements=tmp_path / "writes.json", fast=True)
        try:
            writer.mark_running(_job(0))
            assert writer.fast_writes() is not None
            _table(tmp_path / "r.db", "SELECT 1")
            connection = sqlite3.connect(tmp_path / "r.db")
            with connection:
                connection.execute("UPDATE leases SET owner = 'someone else'")
            connection.close()
            assert not writer.heartbeat()
            with pytest.raises(LeaseLostError):
                writer.store(_job(0), _record("a", "b", MOVES, ""), "pgn\n")
            with pytest.raises(LeaseLostError):
                writer.mark_running(_job(1))
        finally:
            writer.close()
    assert _table(tmp_path / "r.db", "SELECT job_index, status FROM games") == [(0, "running")]
    assert _table(tmp_path / "r.db", "SELECT count(*) FROM moves") == [(0,)]
    assert not (tmp_path / "out.pgn").exists() or (tmp_path / "out.pgn").read_bytes() == b""


def test_a_stale_cache_is_compiled_again(tmp_path: Path) -> None:
    """A cache written for other sources (another key) is never run: the writer compiles the
    statements again and replaces the file."""
    cache = tmp_path / "writes.json"
    key = cache_key()
    assert key is not None
    with open_database(f"sqlite:///{tmp_path / 'r.db'}") as db:
        writer = GameWriter(db, _tournament(db), None, OWNER, statements=cache, fast=True)
        writer.mark_running(_job(0))
        writer.close()
    good = json.loads(cache.read_text())
    assert load(cache, key) is not None
    stale = {**good, "key": "0" * 64,
             "statements": {name: "DELETE FROM games" for name in good["statements"]}}
    cache.write_text(json.dumps(stale))
    assert load(cache, key) is None
    with open_database(f"sqlite:///{tmp_path / 'r.db'}") as db:
        writer = GameWriter(db, 1, None, OWNER, statements=cache, fast=True)
        writer.store(_job(0), _record("a", "b", MOVES, ""), "pgn\n")
        writer.close()
    assert json.loads(cache.read_text()) == good
    assert _table(tmp_path / "r.db", "SELECT job_index, status FROM games") == [(0, "done")]


def test_the_fast_connection_takes_the_store_s_settings_now_not_the_cache_s(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The busy timeout is a setting of the connection, not a statement: a cache written while
    the store waited 30 s on a lock does not make a writer that should wait 0.3 s wait 30 s
    (a database lock then ended a run only after a wait per statement), nor the reverse."""
    from runner.store import db as store_db

    cache = tmp_path / "writes.json"
    timeouts = []
    for lock_ms in (30_000, 300):
        monkeypatch.setattr(store_db, "LOCK_TIMEOUT_MS", lock_ms)
        with open_database(f"sqlite:///{tmp_path / 'r.db'}") as db:
            tournament_id = _tournament(db) if lock_ms == 30_000 else 1
            writer = GameWriter(db, tournament_id, None, OWNER, statements=cache, fast=True)
            try:
                fast = writer.fast_writes()
                assert fast is not None
                with fast.transaction():
                    timeouts.append(fast._connect().execute("PRAGMA busy_timeout").fetchone()[0])
            finally:
                writer.close()
        assert cache.is_file() and "busy_timeout" not in cache.read_text()
    assert timeouts == [30_000, 300]


def test_postgresql_keeps_sqlalchemy_s_way(postgres_server, tmp_path: Path) -> None:
    """The fast way is for SQLite files only: a PostgreSQL store writes through SQLAlchemy."""
    with open_database(postgres_server.new_database()) as db:
        tournament_id = _tournament(db)
        writer = GameWriter(db, tournament_id, None, OWNER, statements=tmp_path / "w.json",
                            fast=True)
        try:
            writer.mark_running(_job(0))
            writer.store(_job(0), _record("a", "b", MOVES, ODD), "pgn\n")
            assert writer.fast_writes() is None
        finally:
            writer.close()
        with db.session() as session:
            from sqlalchemy import text

            assert session.execute(text("SELECT reason, status FROM games")).all() == [
                (ODD, "done")]
    assert not (tmp_path / "w.json").exists()


def test_a_real_match_stores_its_games_through_the_cached_statements(tmp_path: Path) -> None:
    """``runner match`` with the bundled engine: the first run compiles and caches the
    statements, the second (a new database) plays from the cache; both store every game;
    with RUNNER_SQLALCHEMY=1 nothing is compiled for it."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path),
           "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop(ENV_VAR, None)
    cache = tmp_path / "cache" / "cecp-runner" / "writer-statements.json"

    def match(db: str, extra: dict[str, str]) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "runner", "match",
             "--engine", f"cmd={sys.executable} -m engine --level 1", "name=a",
             "--engine", f"cmd={sys.executable} -m engine --level 1", "name=b",
             "--each", "proto=cecp", "tc=2+0.05", "--games", "2", "--rounds", "2",
             "--db", str(tmp_path / db), "--pgnout", str(tmp_path / f"{db}.pgn"), "--quiet"],
            cwd=tmp_path, env={**env, **extra}, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert _table(tmp_path / db, "SELECT count(*) FROM games WHERE status = 'done'") == [(4,)]
        assert _table(tmp_path / db, "SELECT count(*) FROM leases") == [(0,)]

    match("slow.db", {ENV_VAR: "1"})
    assert not cache.exists()
    match("first.db", {})
    assert load(cache, str(cache_key())) is not None
    stamp = cache.stat().st_mtime_ns
    match("second.db", {})
    assert cache.stat().st_mtime_ns == stamp  # read, not written again
