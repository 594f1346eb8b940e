"""Several runner processes on one database: creating a fresh database at once, and two
runners on one tournament (the lease).

Real processes, started together behind a time barrier so that they really race.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from postgres_server import PostgresServer
from sqlalchemy import text

from runner.store.db import create_db_engine, current_revision, head_revision

_OPEN_AT = """
import sys, time
from runner.store import open_database  # loaded before the barrier: the race is the creation
time.sleep(max(0.0, float(sys.argv[2]) - time.time()))
open_database(sys.argv[1]).close()
print('alembic' in sys.modules)
"""

DATABASES = 3
"""Fresh databases per backend, each opened by two processes at the same instant."""


def _open_all_at_once(urls: list[str], cwd: Path) -> None:
    start = time.time() + 3.0  # time for every process to import what it needs
    processes = [subprocess.Popen([sys.executable, "-c", _OPEN_AT, url, repr(start)],
                                  cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True)
                 for url in urls for _ in range(2)]
    failures, loaded_alembic = [], []
    for process in processes:
        out, err = process.communicate(timeout=120)
        if process.returncode != 0:
            failures.append(err.strip().splitlines()[-3:])
        loaded_alembic.append(out.strip())
    assert failures == []
    # One process of each pair creates the database from the models; the other, waiting on
    # the lock, finds it done instead of handing it to alembic.
    assert loaded_alembic == ["False"] * len(processes)
    for url in urls:
        engine = create_db_engine(url)
        try:
            assert current_revision(engine) == head_revision()
            with engine.connect() as connection:
                stamps = connection.execute(text("SELECT version_num FROM alembic_version"))
                assert stamps.scalars().all() == [head_revision()]
        finally:
            engine.dispose()


@pytest.mark.timeout(180)
def test_processes_creating_a_fresh_sqlite_database_at_once_do_not_race(tmp_path: Path) -> None:
    _open_all_at_once([f"sqlite:///{tmp_path / f'fresh{n}.db'}" for n in range(DATABASES)],
                      tmp_path)


@pytest.mark.timeout(180)
def test_processes_creating_a_fresh_postgresql_database_at_once_do_not_race(
        postgres_server: PostgresServer, tmp_path: Path) -> None:
    _open_all_at_once([postgres_server.new_database() for _ in range(DATABASES)], tmp_path)


_CONNECT_AT = """
import sys, time
from runner.store.db import create_db_engine
start, errors = float(sys.argv[2]), []
for n in range(int(sys.argv[3])):
    engine = create_db_engine(f"sqlite:///{sys.argv[1]}/new{n}.db")
    time.sleep(max(0.0, start + n * 0.05 - time.time()))  # all processes at once, every file
    try:
        with engine.connect() as connection:
            errors.append(connection.exec_driver_sql("PRAGMA journal_mode").scalar())
    except Exception as exc:
        errors.append(str(exc).splitlines()[0])
    engine.dispose()
print(errors)
"""


@pytest.mark.timeout(120)
def test_processes_connecting_to_new_sqlite_files_at_once_all_switch_them_to_wal(
        tmp_path: Path) -> None:
    """SQLite fails one of two connections switching a new file to WAL at the same instant
    ("database is locked", at once, whatever the busy timeout): that one must try again."""
    files = 20
    start = time.time() + 2.0
    processes = [subprocess.Popen([sys.executable, "-c", _CONNECT_AT, str(tmp_path), repr(start),
                                   str(files)], cwd=tmp_path, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(3)]
    for process in processes:
        out, err = process.communicate(timeout=100)
        assert process.returncode == 0, err
        assert out.strip() == repr(["wal"] * files)


def _games_done(db: Path) -> int:
    import sqlite3

    try:
        with sqlite3.connect(db) as conn:
            return int(conn.execute("select count(*) from games where status = 'done'")
                       .fetchone()[0])
    except sqlite3.OperationalError:
        return 0


@pytest.mark.timeout(180)
def test_a_second_runner_is_refused_and_takes_over_once_the_first_is_killed(
        tmp_path: Path) -> None:
    import os
    import signal
    import socket

    config = tmp_path / "t.toml"
    text = (
        'name = "leased"\nformat = "match"\nrounds = 3\ngames = 2\ntc = "10+0.1"\n'
        'pgnout = "games.pgn"\n'
        '[[engines]]\nname = "a"\ncommand = ["python", "-m", "engine", "--level", "1"]\n'
        'restart = "on"\n'
        '[[engines]]\nname = "b"\ncommand = ["python", "-m", "engine", "--level", "greedy"]\n'
        'restart = "on"\n[adjudication]\nmaxmoves = 30\n')
    # Engines started afresh for every game keep the first runner busy for a while; the
    # restart policy is not part of what a tournament is, so the last run can drop it.
    config.write_text(text)
    db = tmp_path / "r.db"
    url = f"sqlite:///{db}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    run = [sys.executable, "-m", "runner", "run", str(config), "--db", url, "--quiet"]
    first = subprocess.Popen(run, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while _games_done(db) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _games_done(db) >= 2
        # Paused (engines too) rather than left playing: on a loaded machine it could finish
        # its six games before the listing below; its lease (60 s) outlives the pause.
        os.killpg(first.pid, signal.SIGSTOP)
        second = subprocess.run(run, cwd=tmp_path, env=env, capture_output=True, text=True,
                                timeout=60)
        assert second.returncode == 2
        message = " ".join(second.stderr.split())
        assert f"is being run by pid {first.pid} on host {socket.gethostname()}" in message
        assert first.poll() is None  # the first runner is untouched
        listing = subprocess.run([sys.executable, "-m", "runner", "list", "--db", url],
                                 cwd=tmp_path, env=env, capture_output=True, text=True,
                                 timeout=60)
        assert " running " in listing.stdout
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # kill -9, engines included
        first.wait()
    listing = subprocess.run([sys.executable, "-m", "runner", "list", "--db", url],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert "interrupted" in listing.stdout and " running " not in listing.stdout
    # The killed runner's lease is stale: the next run takes over and finishes the games.
    config.write_text(text.replace('restart = "on"\n', ""))
    third = subprocess.run(run, cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=150)
    assert third.returncode == 0, third.stderr
    assert _games_done(db) == 6
    assert (tmp_path / "games.pgn").read_text().count("[Event ") == 6
