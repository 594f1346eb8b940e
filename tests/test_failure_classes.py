"""Issue 39's failure classes on the store, tried on real processes: a SQLite file locked by
another process, deleted during a run, read-only, and a database whose schema is newer than
the code (on SQLite and PostgreSQL).

Each test runs real ``runner`` processes playing the bundled engine, and checks what the issue
expects everywhere: one line naming what failed (no traceback), the CLI's exit code (1 for a
database failing during a run, 2 for what the user must fix before one), no game lost or
counted twice (the next run plays exactly the missing games: `runner export` and the PGN file
then hold every game once), and no engine left running after the runner exits.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import EVENT_TIMEOUT, REPO

PY = sys.executable
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
ROUNDS = 6
GAMES = 2 * ROUNDS


def _config(tmp_path: Path, *, rounds: int = ROUNDS) -> Path:
    """A match of quick depth-limited bundled engines, with a PGN file; the engines carry
    the test's marker (`_marker`) as their seed."""
    engines = "".join(
        f'[[engines]]\nname = "{name}"\ncommand = ["{PY}", "-m", "engine", "--depth", '
        f'"{depth}", "--level", "1", "--seed", "{_marker(tmp_path)}"]\nprotocol = "cecp"\n'
        for name, depth in (("a", 1), ("b", 2)))
    path = tmp_path / "t.toml"
    path.write_text(f'name = "fc"\nformat = "match"\nrounds = {rounds}\ngames = 2\n'
                    f'tc = "10+0.1"\npgnout = "{tmp_path / "games.pgn"}"\n{engines}'
                    '[adjudication]\nmaxmoves = 20\n')
    return path


def _marker(tmp_path: Path) -> str:
    """A number of the test's own, given to its engines as their seed and found again in
    the process table."""
    return str(zlib.crc32(str(tmp_path).encode()) + os.getpid() * 10**10)


def _start(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([PY, "-m", "runner", *args], cwd=REPO, env=ENV, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _runner(*args: str, timeout: float = 8 * EVENT_TIMEOUT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "runner", *args], cwd=REPO, env=ENV, text=True,
                          capture_output=True, timeout=timeout)


def _done_jobs(db: Path | str) -> list[int]:
    """The jobs stored as played, read as another process would: a SQLite file read-only (none
    while there is no file), or a server's URL."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.exc import SQLAlchemyError

    if isinstance(db, Path):
        if not db.exists():
            return []
        url = f"sqlite:///file:{db}?mode=ro&uri=true"
    else:
        url = db
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return [row[0] for row in connection.execute(text(
                "select job_index from games where status = 'done' order by job_index"))]
    except SQLAlchemyError:
        return []
    finally:
        engine.dispose()


def _stored(db: Path | str) -> int:
    """How many games are stored as played."""
    return len(_done_jobs(db))


def _wait_stored(db: Path | str, count: int, run: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 4 * EVENT_TIMEOUT
    while _stored(db) < count:
        assert run.poll() is None, run.communicate()
        assert time.monotonic() < deadline, f"{count} games not stored in time"
        time.sleep(0.05)


def _engines_left(marker: str) -> list[int]:
    """Live (not zombie) processes carrying `marker` among their arguments: the engines of
    the test's runs (``--seed MARKER``), found in the process table whoever their parent is
    now (an engine outliving its runner is adopted by init)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(") ", 1)[1][0]
        except (OSError, IndexError):
            continue
        if marker.encode() in words and state != "Z":
            found.append(int(entry.name))
    return found


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def _finish_and_check(config: Path, db: Path | str, before: int) -> None:
    """The same command again plays exactly the missing games: every game once in the
    database (`runner export`) and in the PGN file, each job once; no engine left."""
    again = _runner("run", str(config), "--db", str(db), "-q")
    assert again.returncode == 0, again.stderr
    if before < GAMES:
        assert f"{GAMES} of {GAMES} games stored ({GAMES - before} in this run" in again.stderr
    else:
        assert "is already finished" in again.stderr
    exported = _runner("export", "--db", str(db))
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout.count("[Event ") == GAMES
    assert (config.parent / "games.pgn").read_text().count("[Event ") == GAMES
    assert _done_jobs(db) == list(range(GAMES))
    assert not _engines_left(_marker(config.parent))


@pytest.mark.timeout(300)
def test_a_sqlite_file_deleted_during_a_run_is_written_back_and_the_run_stops(
        tmp_path: Path) -> None:
    """``rm runner.db*`` mid-run: the run went on storing into the unlinked file and said
    "12 of 12 games stored"; the next run began the tournament again and wrote every game
    into the PGN file twice."""
    config, db = _config(tmp_path), tmp_path / "r.db"
    run = _start(tmp_path, "run", str(config), "--db", str(db), "-q")
    _wait_stored(db, 2, run)
    for path in tmp_path.glob("r.db*"):
        path.unlink()
    _, err = run.communicate(timeout=4 * EVENT_TIMEOUT)
    assert run.returncode == 1, err
    assert "Traceback" not in err
    (line,) = _error_lines(err)
    assert f"the database file {db} was deleted during the run: the games stored in it were " \
           "written back to it" in line
    assert not _engines_left(_marker(tmp_path))
    before = _stored(db)
    assert 2 <= before < GAMES
    assert (tmp_path / "games.pgn").read_text().count("[Event ") == before
    _finish_and_check(config, db, before)


def _hold_lock(db: Path, seconds: float) -> subprocess.Popen[str]:
    """Another process holding SQLite's exclusive lock on `db` for `seconds`."""
    holder = subprocess.Popen(
        [PY, "-c", "import sqlite3, sys, time\n"
         "c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=60)\n"
         "c.execute('BEGIN EXCLUSIVE')\nprint('locked', flush=True)\n"
         "time.sleep(float(sys.argv[2]))\nc.execute('ROLLBACK')\n", str(db), str(seconds)],
        stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
    return holder


@pytest.mark.timeout(300)
def test_a_sqlite_lock_held_briefly_by_another_process_only_delays_the_run(
        tmp_path: Path) -> None:
    config, db = _config(tmp_path), tmp_path / "r.db"
    run = _start(tmp_path, "run", str(config), "--db", str(db), "-q")
    _wait_stored(db, 2, run)
    holder = _hold_lock(db, 2)
    _, err = run.communicate(timeout=8 * EVENT_TIMEOUT)
    holder.wait(timeout=EVENT_TIMEOUT)
    assert run.returncode == 0, err
    assert f"{GAMES} of {GAMES} games stored ({GAMES} in this run" in err
    assert (tmp_path / "games.pgn").read_text().count("[Event ") == GAMES


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_a_sqlite_lock_held_past_the_timeout_ends_the_run_with_one_line(tmp_path: Path) -> None:
    """Longer than the 30 s busy timeout: exit 1 with the database's line, the game in flight
    not stored, and the next run plays exactly what is missing."""
    config, db = _config(tmp_path), tmp_path / "r.db"
    run = _start(tmp_path, "run", str(config), "--db", str(db), "-q")
    _wait_stored(db, 2, run)
    holder = _hold_lock(db, 40)
    _, err = run.communicate(timeout=8 * EVENT_TIMEOUT)
    holder.wait(timeout=EVENT_TIMEOUT)
    assert run.returncode == 1, err
    assert "Traceback" not in err
    (line,) = _error_lines(err)
    assert line.startswith(f"error: database sqlite:///{db} failed: database is locked")
    assert not _engines_left(_marker(tmp_path))
    before = _stored(db)
    assert (tmp_path / "games.pgn").read_text().count("[Event ") == before
    _finish_and_check(config, db, before)


def _read_only(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``runner ARGS`` with `directory` read-only: a read-only bind mount in a mount namespace
    of its own for root (whom permissions do not stop), permissions otherwise."""
    command = [PY, "-m", "runner", *args]
    if os.geteuid() != 0:
        modes = {path: path.stat().st_mode for path in directory.iterdir()}
        for path in modes:
            path.chmod(0o444)
        directory.chmod(0o555)
        try:
            return subprocess.run(command, capture_output=True, text=True, cwd=REPO, env=ENV,
                                  timeout=4 * EVENT_TIMEOUT)
        finally:
            directory.chmod(0o755)
            for path, mode in modes.items():
                path.chmod(mode)
    probe = subprocess.run(["unshare", "-m", "sh", "-c", f'mount -o bind,ro "{directory}" '
                            f'"{directory}"'], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"running as root and cannot make a read-only mount: {probe.stderr}")
    mounted = ["unshare", "-m", "sh", "-c", 'mount -o bind,ro "$0" "$0" && exec "$@"',
               str(directory), *command]
    return subprocess.run(mounted, capture_output=True, text=True, cwd=REPO, env=ENV,
                          timeout=4 * EVENT_TIMEOUT)


@pytest.mark.timeout(300)
def test_an_interrupted_tournament_on_a_read_only_database_is_refused_then_resumed(
        tmp_path: Path) -> None:
    """Linux refuses to make a mount read-only while a file on it is open for writing (the
    run's SQLite file is), and permissions do not reach a file already open: a database turns
    read-only between runs. The run is refused before any game with one line naming the
    file; reading still works; once writable, the next run plays exactly what is missing."""
    stored = tmp_path / "stored"
    stored.mkdir()
    config, db = _config(tmp_path), stored / "r.db"
    run = _start(tmp_path, "run", str(config), "--db", str(db), "-q")
    _wait_stored(db, 2, run)
    run.kill()
    run.communicate(timeout=EVENT_TIMEOUT)
    before = _stored(db)
    pgn = (tmp_path / "games.pgn").read_bytes()
    refused = _read_only(stored, "run", str(config), "--db", str(db), "-q")
    assert refused.returncode == 2, refused.stderr
    assert "Traceback" not in refused.stderr
    (line,) = _error_lines(refused.stderr)
    assert str(db) in line and ("read-only" in line or "permission denied" in line), line
    assert (tmp_path / "games.pgn").read_bytes() == pgn  # nothing played, nothing written
    listed = _read_only(stored, "list", "--db", str(db))
    assert listed.returncode == 0 and f"{before}/{GAMES}" in listed.stdout, listed.stderr
    _finish_and_check(config, db, before)


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The URL of a new database on each backend (PostgreSQL: a real temporary server)."""
    if request.param == "sqlite":
        yield str(tmp_path / "r.db")
    else:
        yield request.getfixturevalue("postgres_server").new_database()


def _revision(url: str, revision: str | None = None) -> str:
    """The schema revision stored in the database at `url`, set to `revision` first if given."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url if "://" in url else f"sqlite:///{url}")
    try:
        with engine.begin() as connection:
            if revision is not None:
                connection.execute(text("update alembic_version set version_num = :r"),
                                   {"r": revision})
            return str(connection.execute(text("select version_num from alembic_version"))
                       .scalar_one())
    finally:
        engine.dispose()


@pytest.mark.timeout(300)
# CI time: the refusal reads the revision the same way on both backends; PostgreSQL's run is slow.
@pytest.mark.parametrize("db_url", ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)],
                         indirect=True)
def test_a_database_with_a_newer_schema_is_refused_by_every_command_and_left_as_it_is(
        tmp_path: Path, db_url: str) -> None:
    """A revision none of the migrations knows (a newer runner wrote the database): alembic's
    "Can't locate revision" was all the user saw. Each command says what it is, exit 2, and
    the database is not touched."""
    config = _config(tmp_path, rounds=1)
    first = _runner("run", str(config), "--db", db_url, "-q")
    assert first.returncode == 0, first.stderr
    _revision(db_url, "f00dfacef00d")
    pgn = (tmp_path / "games.pgn").read_bytes()
    for args in (("run", str(config), "--new"), ("resume", "1"), ("list",), ("report",),
                 ("export",), ("db", "upgrade")):
        done = _runner(*args, "--db", db_url)
        assert done.returncode == 2, (args, done.stderr)
        assert "Traceback" not in done.stderr
        (line,) = _error_lines(done.stderr)
        assert "its schema is at revision f00dfacef00d, which this runner" in line, line
        assert "a newer runner wrote it" in line
    assert _revision(db_url) == "f00dfacef00d"
    assert (tmp_path / "games.pgn").read_bytes() == pgn


@pytest.mark.timeout(300)
# CI time: the 4 s outage is slow; the fast run keeps the restart without a pause.
@pytest.mark.parametrize("down", [0.0, pytest.param(4.0, marks=pytest.mark.slow)])
def test_postgresql_restarted_mid_run(tmp_path: Path, down: float) -> None:
    """The server stopped at once (every connection cut) and started again. Back at once: the
    run goes on (the pool reconnects), or, when a write was cut, stops with one line. Down
    for seconds: the next write fails, the run stops with one line naming the database and
    exit 1 (its end could not be written: the lease of a process gone is stale). Either way
    the next run plays exactly the missing games."""
    from postgres_server import start_server

    server = start_server()
    try:
        url = server.new_database()
        config = _config(tmp_path)
        run = _start(tmp_path, "run", str(config), "--db", url, "-q")
        _wait_stored(url, 2, run)
        server.restart(down)
        _, err = run.communicate(timeout=8 * EVENT_TIMEOUT)
        assert "Traceback" not in err
        assert not _engines_left(_marker(tmp_path))
        if down:
            assert run.returncode == 1, err
        if run.returncode == 0:
            assert f"{GAMES} of {GAMES} games stored" in err
        else:
            assert run.returncode == 1, err
            (line,) = _error_lines(err)
            assert line.startswith(f"error: database {url.split('?')[0]}"), line
        before = _stored(url)
        assert (tmp_path / "games.pgn").read_text().count("[Event ") == before
        _finish_and_check(config, url, before)
    finally:
        server.stop()


@pytest.mark.parametrize("sqlalchemy_only", [False, True])
@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_commit_into_a_file_no_longer_there_is_refused_and_what_it_held_saved(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str, sqlalchemy_only: bool,
) -> None:
    """The store's own connections (SQLAlchemy's) and the writer's (sqlite3) alike: the next
    commit fails with the one sentence, every later one too, and what was committed before is
    back at the path (deleted) or beside the file put in its place (replaced), never over it."""
    from sqlalchemy import text

    from runner.store.db import SCHEMA_REVISION, open_database
    from runner.store.fast import FastWrites, WriteStatements
    from runner.store.guard import DatabaseFileGone

    path = tmp_path / "r.db"
    database = open_database(str(path))
    try:
        with database.session() as session:
            session.execute(text("create table kept (n integer)"))
            session.execute(text("insert into kept values (1), (2)"))
        statements = WriteStatements("test", SCHEMA_REVISION, {}, {}, {})
        writes = None if sqlalchemy_only else FastWrites(path, statements, [], database.watch)
        if writes is not None:
            with writes.transaction():
                writes._connect().execute("insert into kept values (3)")
        for leftover in tmp_path.glob("r.db*"):
            leftover.unlink()
        if how == "replaced":
            other = sqlite3.connect(path)
            other.execute("create table other (n integer)")
            other.commit()
            other.close()
        for _ in range(2):
            with pytest.raises(DatabaseFileGone, match=f"the database file {path} was "):
                if writes is not None:
                    with writes.transaction():
                        writes._connect().execute("insert into kept values (4)")
                else:
                    with database.session() as session:
                        session.execute(text("insert into kept values (4)"))
        if writes is not None:
            writes.close()
    finally:
        database.close()
    saved = path if how == "deleted" else tmp_path / f"r.db.saved-{os.getpid()}"
    with sqlite3.connect(saved) as connection:
        kept = [row[0] for row in connection.execute("select n from kept order by n")]
    assert kept == ([1, 2] if sqlalchemy_only else [1, 2, 3])
    if how == "replaced":
        with sqlite3.connect(path) as connection:
            assert connection.execute("select count(*) from other").fetchone() == (0,)
