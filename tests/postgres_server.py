"""A throw-away PostgreSQL server for tests: Debian's binaries, a temporary directory, a socket.

`start_server()` runs ``initdb`` and ``pg_ctl start`` from ``/usr/lib/postgresql/*/bin`` (as
the ``postgres`` user when the tests run as root, since PostgreSQL refuses to run as root),
listening only on a unix socket inside the temporary directory. Tests skip with the reason
when the binaries or psycopg are missing (CI installs them: apt-get install postgresql,
pip install psycopg[binary]).
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

_counter = itertools.count(1)


@dataclass
class PostgresServer:
    """A running server: where it lives and how to reach it."""

    bindir: Path
    datadir: Path
    socketdir: Path
    prefix: tuple[str, ...]
    user: str = "runner"

    def url(self, database: str = "postgres") -> str:
        """A SQLAlchemy URL for `database` over the unix socket."""
        return f"postgresql+psycopg://{self.user}@/{database}?host={self.socketdir}"

    def new_database(self) -> str:
        """Create an empty database and return its URL."""
        import psycopg

        name = f"test_{os.getpid()}_{next(_counter)}"
        with psycopg.connect(host=str(self.socketdir), user=self.user, dbname="postgres",
                             autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def restart(self, down: float = 0.0) -> None:
        """Stop the server at once (as a crash would: every connection cut), leave it down for
        `down` seconds, and start it again on the same socket."""
        subprocess.run([*self.prefix, str(self.bindir / "pg_ctl"), "-D", str(self.datadir),
                        "-m", "immediate", "-w", "stop"], capture_output=True, timeout=60,
                       check=True)
        time.sleep(down)
        subprocess.run(_start_argv(self), capture_output=True, timeout=120, check=True)

    def stop(self) -> None:
        """Stop the server at once and remove its files."""
        subprocess.run([*self.prefix, str(self.bindir / "pg_ctl"), "-D", str(self.datadir),
                        "-m", "immediate", "stop"], capture_output=True, timeout=60, check=False)
        shutil.rmtree(self.datadir.parent, ignore_errors=True)


def _bindir() -> Path | None:
    """The newest Debian PostgreSQL binary directory, if any."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    return Path(found[-1]).parent if found else None


def _start_argv(server: PostgresServer) -> list[str]:
    """``pg_ctl start`` for `server`: listening on its unix socket only, waiting until up."""
    options = (f"-c listen_addresses='' -c unix_socket_directories={server.socketdir} "
               "-c fsync=off")
    return [*server.prefix, str(server.bindir / "pg_ctl"), "-D", str(server.datadir), "-l",
            str(server.datadir.parent / "server.log"), "-o", options, "-w", "-t", "60", "start"]


def start_server() -> PostgresServer:
    """Start a server in a new temporary directory, or skip the test with the reason."""
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install "
                        "'cecp-runner[postgres]')")
    bindir = _bindir()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries not found in /usr/lib/postgresql/*/bin "
                    "(CI installs them with apt-get install postgresql)")
    prefix: tuple[str, ...] = ()
    if os.geteuid() == 0:
        try:
            account = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no 'postgres' user to run the server as")
        runuser = shutil.which("runuser")
        if runuser is None:
            pytest.skip("running as root and runuser is missing")
        prefix = (runuser, "-u", "postgres", "--")
    top = Path(tempfile.mkdtemp(prefix="runner-pg-"))
    datadir, socketdir = top / "data", top / "socket"
    socketdir.mkdir()
    if prefix:
        for path in (top, socketdir):
            os.chown(path, account.pw_uid, account.pw_gid)
    server = PostgresServer(bindir, datadir, socketdir, prefix)
    initdb = [*prefix, str(bindir / "initdb"), "-D", str(datadir), "-U", server.user,
              "-A", "trust", "--no-sync", "-E", "UTF8"]
    for argv in (initdb, _start_argv(server)):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0:
            log = top / "server.log"
            detail = log.read_text() if log.exists() else ""
            server.stop()
            raise RuntimeError(f"{argv[len(prefix)]} failed ({done.returncode}):\n"
                               f"{done.stdout}\n{done.stderr}\n{detail}")
    return server


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL server for the whole test session."""
    server = start_server()
    try:
        yield server
    finally:
        server.stop()
