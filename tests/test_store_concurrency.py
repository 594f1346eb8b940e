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

from runner.store.db import create_db_engine, current_revision, head_revision

_OPEN_AT = """
import sys, time
import alembic.command, alembic.config  # loaded before the barrier: the race is the upgrade
from runner.store import open_database
time.sleep(max(0.0, float(sys.argv[2]) - time.time()))
open_database(sys.argv[1]).close()
"""

DATABASES = 3
"""Fresh databases per backend, each opened by two processes at the same instant."""


def _open_all_at_once(urls: list[str], cwd: Path) -> None:
    start = time.time() + 3.0  # time for every process to import what it needs
    processes = [subprocess.Popen([sys.executable, "-c", _OPEN_AT, url, repr(start)],
                                  cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True)
                 for url in urls for _ in range(2)]
    failures = []
    for process in processes:
        _, err = process.communicate(timeout=120)
        if process.returncode != 0:
            failures.append(err.strip().splitlines()[-3:])
    assert failures == []
    for url in urls:
        engine = create_db_engine(url)
        try:
            assert current_revision(engine) == head_revision()
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
