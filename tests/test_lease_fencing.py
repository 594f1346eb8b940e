"""One writer per tournament, with real ``runner run`` processes on SQLite and PostgreSQL: a
runner paused past its lease is fenced off, lease ages are the database's, two runs started
together make one tournament, the command line leaves the service's tournaments alone, and
no password is stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from postgres_server import PostgresServer
from sqlalchemy import Engine, text
from sqlalchemy.engine import make_url
from test_store_safety import Scripted

from runner.config.parse import load_config
from runner.game.record import GameRecord, GameTermination
from runner.store.db import create_db_engine, open_database, upgrade
from runner.store.recording import record_game
from runner.tournament.events import Event, Notice
from runner.tournament.run import Tournament
from runner.types import MoveRecord

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
RUN = [sys.executable, "-m", "runner"]


def _config(path: Path, *, name: str = "fenced", rounds: int = 2, tc: str = "3+0.05",
            database: str | None = None) -> Path:
    """A match of the bundled engine against itself (level 1, games cut at 40 moves)."""
    engine = '["python", "-m", "engine", "--level", "1"]'
    path.write_text(
        f'name = "{name}"\nformat = "match"\nrounds = {rounds}\ngames = 2\ntc = "{tc}"\n'
        + (f'database = "{database}"\n' if database else "")
        + f'[[engines]]\nname = "a"\ncommand = {engine}\n'
        f'[[engines]]\nname = "b"\ncommand = {engine}\n[adjudication]\nmaxmoves = 40\n')
    return path


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh database of each backend (PostgreSQL skips when its binaries are absent)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'r.db'}"
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return server.new_database()


@pytest.fixture()
def engine_of() -> Iterator[list[Engine]]:
    """Engines the test opened, disposed of at its end."""
    opened: list[Engine] = []
    yield opened
    for engine in opened:
        engine.dispose()


def _rows(url: str, query: str, opened: list[Engine]) -> list[tuple]:
    if not opened:
        opened.append(create_db_engine(url))
    with opened[0].connect() as connection:
        return [tuple(row) for row in connection.execute(text(query))]


def _done(url: str, opened: list[Engine]) -> int:
    try:
        return int(_rows(url, "SELECT count(*) FROM games WHERE status = 'done'", opened)[0][0])
    except Exception:  # the tables are not there yet
        return 0


def _wait(predicate, what: str, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def _start(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen([*RUN, *args], cwd=cwd, env=env or ENV, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _kill(process: subprocess.Popen) -> None:
    """Kill a runner and its engines (its own process group), whatever state it is in."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    process.wait()


# -- leases are fenced ---------------------------------------------------------------------------


@pytest.mark.timeout(300)
def test_a_paused_runner_that_lost_its_lease_stores_nothing_and_stops_with_one_line(
        db_url: str, tmp_path: Path, engine_of: list[Engine]) -> None:
    """SIGSTOP a runner mid-tournament past its (short) lease timeout, let a second runner take
    the tournament over and finish it, then SIGCONT the first: its game in flight (a bogus
    time forfeit by its own clock) must not be stored, nor the tournament marked
    interrupted; it stops with one line and exit status 1."""
    config = _config(tmp_path / "t.toml", rounds=3)
    short = {**ENV, "RUNNER_LEASE_TIMEOUT": "2"}
    first = _start(["run", str(config), "--db", db_url, "--quiet"], tmp_path, short)
    try:
        _wait(lambda: _done(db_url, engine_of) >= 1 and _rows(
            db_url, "SELECT count(*) FROM games WHERE status = 'running'", engine_of)[0][0],
            "a game in flight after the first one")
        os.kill(first.pid, signal.SIGSTOP)  # the runner only: its engines wait for it
        time.sleep(4)  # twice its lease timeout, by any clock
        second = subprocess.run([*RUN, "run", str(config), "--db", db_url, "--quiet"],
                                cwd=tmp_path, env=ENV, capture_output=True, text=True,
                                timeout=200)
        assert second.returncode == 0, second.stderr
        assert "Traceback" not in second.stderr
        os.kill(first.pid, signal.SIGCONT)
        out, err = first.communicate(timeout=60)
    finally:
        _kill(first)
    assert first.returncode == 1, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err
    assert len(" ".join(lines)) and "taken over by another runner" in " ".join(lines)
    assert len(lines) <= 3, err  # one message (wrapped to the terminal's width at most)
    games = _rows(db_url, "SELECT job_index, status, termination, reason FROM games "
                  "ORDER BY job_index", engine_of)
    assert [game[0] for game in games] == list(range(6))  # every game once
    assert all(game[1] == "done" for game in games)
    assert not any("waited" in (game[3] or "") for game in games), games
    assert _rows(db_url, "SELECT status FROM tournaments", engine_of) == [("finished",)]
    assert _rows(db_url, "SELECT count(*) FROM leases", engine_of) == [(0,)]


# -- lease age by the database's clock -----------------------------------------------------------


@pytest.mark.timeout(300)
def test_a_runner_whose_clock_is_two_minutes_fast_does_not_take_over_a_live_one(
        postgres_server: PostgresServer, tmp_path: Path, engine_of: list[Engine]) -> None:
    faketime = shutil.which("faketime")
    if faketime is None:
        pytest.skip("faketime is not installed")
    url = postgres_server.new_database()
    config = _config(tmp_path / "t.toml", rounds=40)  # far more than the test lasts
    first = _start(["run", str(config), "--db", url, "--quiet"], tmp_path)
    try:
        _wait(lambda: _done(url, engine_of) >= 1, "the first runner's first game")
        second = subprocess.run([faketime, "-f", "+2m", *RUN, "run", str(config), "--db", url,
                                 "--quiet"], cwd=tmp_path, env=ENV, capture_output=True,
                                text=True, timeout=120)
        assert second.returncode == 2, second.stderr
        assert f"is being run by pid {first.pid}" in " ".join(second.stderr.split())
        assert first.poll() is None  # the first goes on, its lease its own
        assert _rows(url, "SELECT pid FROM leases", engine_of) == [(first.pid,)]
        assert _rows(url, "SELECT count(*) FROM tournaments", engine_of) == [(1,)]
        done = _done(url, engine_of)
        _wait(lambda: _done(url, engine_of) > done, "a game stored after the refusal")
        first.send_signal(signal.SIGINT)  # a stop, as a user would
        out, err = first.communicate(timeout=120)
    finally:
        _kill(first)
    assert first.returncode == 130, err
    assert "taken over" not in err


@pytest.mark.timeout(120)
def test_a_lease_on_another_host_is_aged_by_the_database_not_by_the_checker(
        postgres_server: PostgresServer, tmp_path: Path, engine_of: list[Engine]) -> None:
    """A holder elsewhere heard of a second ago is live to a checker whose clock is two minutes
    fast: the checker reads the age the database computes."""
    faketime = shutil.which("faketime")
    if faketime is None:
        pytest.skip("faketime is not installed")
    url = postgres_server.new_database()
    config = _config(tmp_path / "t.toml", rounds=1)
    prepared = subprocess.run(
        [sys.executable, "-c", "import sys\n"
         "from runner.config.parse import load_config\n"
         "from runner.store import open_database\n"
         "from runner.tournament.run import Tournament\n"
         "db = open_database(sys.argv[2])\n"
         "Tournament(load_config(sys.argv[1]), db).prepare()\n"
         "with db.engine.begin() as c:\n"
         "    c.exec_driver_sql(\"UPDATE leases SET host = 'elsewhere', pid = 4242\")\n",
         str(config), url], cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=60)
    assert prepared.returncode == 0, prepared.stderr
    refused = subprocess.run([faketime, "-f", "+2m", *RUN, "run", str(config), "--db", url,
                              "--quiet"], cwd=tmp_path, env=ENV, capture_output=True, text=True,
                             timeout=60)
    assert refused.returncode == 2, refused.stderr
    assert "is being run by pid 4242 on host elsewhere" in " ".join(refused.stderr.split())
    assert _rows(url, "SELECT count(*) FROM games", engine_of) == [(0,)]


# -- find-or-create is atomic --------------------------------------------------------------------

_RUN_AT = """
import sys, time
from runner.cli.app import main
import runner.tournament.run, runner.store.db  # loaded before the barrier: the race is the run
time.sleep(max(0.0, float(sys.argv[1]) - time.time()))
sys.argv = ["runner", *sys.argv[2:]]
main()
"""

ATTEMPTS = 3
"""Pairs of runners started at the same instant, per backend."""


@pytest.mark.timeout(600)
def test_two_runs_of_one_config_started_together_make_one_tournament(
        request: pytest.FixtureRequest, db_url: str, tmp_path: Path) -> None:
    backend = make_url(db_url).get_backend_name()
    for attempt in range(ATTEMPTS):
        if backend == "sqlite":
            url = f"sqlite:///{tmp_path / f'r{attempt}.db'}"
        else:
            url = request.getfixturevalue("postgres_server").new_database()
        open_database(url).close()  # the schema exists: the race is the tournament's
        config = _config(tmp_path / f"t{attempt}.toml", rounds=1)
        start = time.time() + 3.0
        runners = [subprocess.Popen([sys.executable, "-c", _RUN_AT, repr(start), "run",
                                     str(config), "--db", url, "--quiet"], cwd=tmp_path,
                                    env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, start_new_session=True) for _ in range(2)]
        try:
            results = [(runner.wait(timeout=200), runner.communicate()[1]) for runner in runners]
        finally:
            for runner in runners:
                _kill(runner)
        # One plays; the other is refused while it runs (or, had it finished before the
        # other got as far as its lock, finds it finished): never a second tournament.
        assert sorted(code for code, _ in results) in ([0, 2], [0, 0]), results
        said = [" ".join(err.split()) for _, err in results]
        assert sum("stored (2 in this run" in line for line in said) == 1, said
        assert any("is being run by pid" in line or "already finished" in line
                   for line in said), said
        engine = create_db_engine(url)
        try:
            with engine.connect() as connection:
                assert connection.execute(text("SELECT count(*) FROM tournaments")).scalar() == 1
                jobs = connection.execute(text("SELECT job_index FROM games WHERE status = "
                                               "'done' ORDER BY job_index")).scalars().all()
        finally:
            engine.dispose()
        assert jobs == [0, 1]


# -- the service's tournaments are the service's ----------------------------------------------


@pytest.mark.timeout(200)
def test_a_command_line_run_never_adopts_a_tournament_the_service_queued(
        tmp_path: Path, engine_of: list[Engine]) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    config = _config(tmp_path / "t.toml", rounds=1)
    queued = subprocess.run(  # a submission as the service stored it: a new row, its origin
        [sys.executable, "-c", "import sys\n"
         "from runner.config.parse import load_config\n"
         "from runner.store import open_database\n"
         "from runner.store.origin import mark_origin\n"
         "from runner.tournament.run import Tournament\n"
         "db = open_database(sys.argv[2])\n"
         "found = Tournament(load_config(sys.argv[1]), db, new=True).prepare()\n"
         "with db.session() as session:\n"
         "    mark_origin(session, found)\n"
         "print(found)\n", str(config), url],
        cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=60)
    assert queued.returncode == 0, queued.stderr
    service_id = int(queued.stdout)
    ran = subprocess.run([*RUN, "run", str(config), "--db", url, "--quiet"], cwd=tmp_path,
                         env=ENV, capture_output=True, text=True, timeout=150)
    assert ran.returncode == 0, ran.stderr
    rows = _rows(url, "SELECT id, origin, status FROM tournaments ORDER BY id", engine_of)
    assert rows[0] == (service_id, "service", "running")  # untouched, still the service's
    assert len(rows) == 2 and rows[1][1:] == (None, "finished")
    assert _rows(url, f"SELECT count(*) FROM games WHERE tournament_id = {service_id}",
                 engine_of) == [(0,)]
    resumed = subprocess.run([*RUN, "resume", str(service_id), "--db", url, "--quiet"],
                             cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=60)
    assert resumed.returncode == 2
    message = " ".join(resumed.stderr.split())
    assert f"tournament {service_id} ('fenced') belongs to the service" in message
    assert "Traceback" not in resumed.stderr and len(resumed.stderr.strip().splitlines()) <= 3


# -- no credentials stored -----------------------------------------------------------------------


@pytest.mark.timeout(200)
def test_the_database_password_is_never_stored_and_resume_takes_the_command_lines(
        postgres_server: PostgresServer, tmp_path: Path, engine_of: list[Engine]) -> None:
    plain = postgres_server.new_database()
    secret = "s3cret-Passw0rd"
    url = make_url(plain).set(password=secret).render_as_string(hide_password=False)
    config = _config(tmp_path / "t.toml", rounds=2, database=url)
    first = _start(["run", str(config), "--quiet"], tmp_path)  # the file's database
    try:
        _wait(lambda: _done(plain, engine_of) >= 1, "the first game")
        first.send_signal(signal.SIGINT)  # stopped: a resume plays the rest
        first.communicate(timeout=60)
    finally:
        _kill(first)
    stored = _rows(plain, "SELECT id, config FROM tournaments", engine_of)
    assert len(stored) == 1
    text_stored = json.dumps(stored[0][1]) if not isinstance(stored[0][1], str) else stored[0][1]
    assert secret not in text_stored
    assert "***" in text_stored
    resumed = subprocess.run([*RUN, "resume", str(stored[0][0]), "--db", url, "--quiet"],
                             cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=150)
    assert resumed.returncode == 0, resumed.stderr
    assert _done(plain, engine_of) == 4
    assert secret not in json.dumps(_rows(plain, "SELECT config FROM tournaments",
                                          engine_of)[0][0])


def test_the_migration_scrubs_passwords_from_stored_configurations(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = create_db_engine(url)
    try:
        upgrade(engine, "c41e8a6f2d17")
        config = {"name": "old", "database": "postgresql://u:hunter2@db.example/t"}
        with engine.begin() as connection:
            connection.execute(text(
                "INSERT INTO tournaments (name, config, fingerprint, total_games, status, "
                "created_at) VALUES ('old', :config, 'f', 0, 'finished', '2026-01-01')"),
                {"config": json.dumps(config)})
        upgrade(engine)
        with engine.connect() as connection:
            stored = connection.execute(text("SELECT config FROM tournaments")).scalar()
    finally:
        engine.dispose()
    assert "hunter2" not in stored
    assert json.loads(stored)["database"] == "postgresql://u:***@db.example/t"


# -- the taker never crashes on a duplicate --------------------------------------------------


def test_a_game_stored_meanwhile_by_another_writer_is_a_notice_not_a_crash(
        db_url: str, tmp_path: Path) -> None:
    """A game this run loaded as unplayed, stored meanwhile by a writer that took no lease (an
    older runner): the run says so and goes on (it used to die with DuplicateGameError)."""
    config = load_config(_config(tmp_path / "t.toml", rounds=1))
    database = open_database(db_url)
    try:
        events: list[Event] = []
        scripted = Scripted()
        tournament = Tournament(config, database, scheduler=scripted)
        tournament.prepare()
        first = tournament.pairing.job(0)
        now = datetime.now(UTC)
        spec = next(iter(tournament._game_jobs(tournament._opening_policy()))).spec
        with database.session() as session:
            record_game(session, tournament.tournament_id, first.key, GameRecord(
                white=first.white, black=first.black, spec=spec,
                moves=(MoveRecord("d4", uci="d2d4", time=0.1),), result="0-1",
                termination=GameTermination.ADJUDICATION, reason="the other writer's",
                started_at=now, ended_at=now, final_fen=""))
        outcome = asyncio.run(tournament.run(on_event=events.append))
        with database.engine.connect() as connection:
            games = connection.execute(text("SELECT job_index, result, reason FROM games "
                                            "ORDER BY job_index")).all()
    finally:
        database.close()
    assert outcome.error is None and outcome.status.value == "finished"
    assert any(isinstance(event, Notice) and "game 1 was already stored" in event.text
               for event in events)
    assert [tuple(game) for game in games] == [(0, "0-1", "the other writer's"),
                                               (1, "1/2-1/2", "scripted")]


@pytest.mark.slow
@pytest.mark.timeout(200)
def test_a_runner_paused_inside_a_write_does_not_block_the_taker_on_postgresql(
        postgres_server: PostgresServer, tmp_path: Path, engine_of: list[Engine]) -> None:
    """A holder paused in the middle of a write transaction (its lease row locked) on another
    host, long silent: PostgreSQL ends its idle transaction, and the next runner takes over
    instead of failing on the lock's timeout."""
    from runner.store.lease import heartbeat

    url = postgres_server.new_database()
    config_file = _config(tmp_path / "t.toml", rounds=1)
    database = open_database(url)
    try:
        found = Tournament(load_config(config_file), database, scheduler=Scripted(stop_after=0))
        tournament_id = found.prepare()
        with database.engine.begin() as connection:  # its lease, a paused holder's elsewhere
            connection.execute(text("DELETE FROM leases"))
            connection.execute(text(
                "INSERT INTO leases (tournament_id, owner, pid, host, acquired_at, heartbeat_at)"
                " VALUES (:id, 'paused', 4242, 'elsewhere', now() - interval '1 hour', "
                "now() - interval '1 hour')"), {"id": tournament_id})
        paused = database.sessions()
        assert heartbeat(paused, tournament_id, "paused")  # the row locked, never committed
        taker = subprocess.run([*RUN, "run", str(config_file), "--db", url, "--quiet"],
                               cwd=tmp_path, env=ENV, capture_output=True, text=True,
                               timeout=150)
        with contextlib.suppress(Exception):
            paused.close()
    finally:
        database.close()
    assert taker.returncode == 0, taker.stderr
    assert _done(url, engine_of) == 2
