"""Issue 39's failure classes on Dask, with a real ``dask scheduler`` and ``dask worker``
processes on 127.0.0.1 (as `tests/test_cluster.py` starts them): a worker killed while its
engines are still in their protocol handshake, the scheduler killed mid-run, and a worker
running another version of the package.

Expected each time: one line naming what failed (no traceback), the CLI's exit code, no game
lost or counted twice (the next run plays exactly what is missing), no engine left running.
"""

from __future__ import annotations

import shutil
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import EVENT_TIMEOUT, REPO
from tests.test_cluster import (
    ENV,
    PY,
    _alive,
    _Cluster,
    _engines_of,
    _games,
    _legal_pgn,
    _runner,
    _wait_stored,
)


def _config(tmp_path: Path, *, rounds: int, slow_start: float = 0.0) -> Path:
    """A match of quick depth-limited bundled engines on the cluster, with a PGN file; with
    `slow_start`, each engine takes that long to finish its handshake."""
    fault = f', "--fault", "slow-start={slow_start}"' if slow_start else ""
    blocks = "".join(
        f'[[engines]]\nname = "{name}"\ncommand = ["python", "-m", "engine", "--depth", '
        f'"{depth}", "--level", "1"{fault}]\nprotocol = "cecp"\n'
        for name, depth in (("d1", 1), ("d2", 2)))
    path = tmp_path / "t.toml"
    path.write_text(f'name = "clf"\nformat = "match"\nrounds = {rounds}\ngames = 2\n'
                    f'tc = "10+0.1"\nconcurrency = 2\npgnout = "games.pgn"\n{blocks}'
                    '[adjudication]\nmaxmoves = 20\n')
    return path


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[_Cluster]:
    """A scheduler of the test's own (one test kills it)."""
    made = _Cluster(tmp_path)
    try:
        yield made
    finally:
        made.close()


def _start(tmp_path: Path, config: Path, address: str) -> subprocess.Popen[str]:
    return subprocess.Popen([PY, "-m", "runner", "run", str(config), "--db", "r.db", "-q",
                             "--cluster", address], cwd=tmp_path, env=ENV, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def _all_once(tmp_path: Path, games: int) -> None:
    """Every game stored once as played, and once in the PGN file (each a legal game)."""
    stored = _games(tmp_path / "r.db")
    assert [g[0] for g in stored] == list(range(games)) and {g[1] for g in stored} == {"done"}
    assert _legal_pgn(tmp_path / "games.pgn") == games


def _played(tmp_path: Path) -> int:
    """Games stored as played so far (0 before the database has its tables)."""
    if not (tmp_path / "r.db").exists():
        return 0
    try:
        return sum(g[1] == "done" for g in _games(tmp_path / "r.db"))
    except sqlite3.Error:
        return 0


def _gone(engines: set[int]) -> bool:
    deadline = time.monotonic() + EVENT_TIMEOUT
    while _alive(engines) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not _alive(engines)


@pytest.mark.slow  # CI time: a worker killed mid-run stays fast in test_cluster.py
@pytest.mark.timeout(300)
def test_a_worker_killed_while_its_engines_handshake(tmp_path: Path, cluster: _Cluster) -> None:
    """kill -9 of a worker whose engines have started but not yet said ``done=1``: its jobs
    are played on the other worker, every game stored once, its engines do not outlive it."""
    cluster.worker("w1", slots=1)
    cluster.worker("w2", slots=1)
    cluster.wait_workers()
    config = _config(tmp_path, rounds=2, slow_start=3)
    run = _start(tmp_path, config, cluster.address)
    victim = cluster.workers["w1"]
    deadline = time.monotonic() + 4 * EVENT_TIMEOUT
    while not (engines := _engines_of(victim.pid)):
        assert run.poll() is None and time.monotonic() < deadline, "no engine started on w1"
        time.sleep(0.05)
    assert not _played(tmp_path)  # its engines are still in the handshake
    victim.send_signal(signal.SIGKILL)
    _, err = run.communicate(timeout=8 * EVENT_TIMEOUT)
    assert run.returncode == 0, err
    assert "Traceback" not in err
    _all_once(tmp_path, 4)
    assert {g[3] for g in _games(tmp_path / "r.db")} == {"w2"}
    assert _gone(engines), "an engine of the killed worker is still running"


@pytest.mark.slow  # CI time: a worker killed mid-run stays fast in test_cluster.py
@pytest.mark.timeout(300)
def test_the_scheduler_killed_mid_run(tmp_path: Path, cluster: _Cluster) -> None:
    """kill -9 of the Dask scheduler: the run stops with one line (Dask's two-line message
    was printed as it is), exit 1, the workers' engines stop; with a new scheduler the same
    command plays exactly the missing games."""
    cluster.worker("w1")
    cluster.wait_workers()
    config = _config(tmp_path, rounds=4)
    run = _start(tmp_path, config, cluster.address)
    _wait_stored(tmp_path / "r.db", 2, run)
    engines = _engines_of(cluster.workers["w1"].pid)
    cluster.scheduler.send_signal(signal.SIGKILL)
    _, err = run.communicate(timeout=8 * EVENT_TIMEOUT)
    assert run.returncode == 1, err
    assert "Traceback" not in err
    (line,) = _error_lines(err)
    assert line.startswith(f"error: lost the Dask scheduler ({cluster.address}) while game ")
    follows = err.splitlines()[err.splitlines().index(line) + 1]
    assert follows.startswith("Once the cause above is fixed"), err
    # The games that were out died with the scheduler: none is said to finish.
    assert "running games will finish" not in err, err
    assert "the games that were out are lost with it and not counted" in err, err
    assert _gone(engines), "an engine of the worker is still running"
    before = sum(g[1] == "done" for g in _games(tmp_path / "r.db"))
    assert _legal_pgn(tmp_path / "games.pgn") == before
    cluster.close()
    again = _Cluster(tmp_path)
    try:
        again.worker("w1")
        again.wait_workers()
        done = _runner("run", str(config), "--db", "r.db", "-q", "--cluster", again.address,
                       cwd=tmp_path)
    finally:
        again.close()
    assert done.returncode == 0, done.stderr
    assert f"({8 - before} in this run" in done.stderr
    _all_once(tmp_path, 8)


def _other_version(tmp_path: Path) -> dict[str, str]:
    """The environment of a worker importing a copy of the package that says it is version
    0.0.1-other (the bundled engine still found in the checkout)."""
    copy = tmp_path / "other"
    shutil.copytree(REPO / "runner", copy / "runner",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    init = copy / "runner" / "__init__.py"
    text = init.read_text()
    assert '__version__ = "' in text
    init.write_text(text.replace('__version__ = "', '__version__ = "0.0.1-other+', 1))
    return {**ENV, "PYTHONPATH": f"{copy}:{REPO}"}


@pytest.mark.timeout(300)
def test_a_worker_with_another_version_of_the_package_takes_no_game(
        tmp_path: Path, cluster: _Cluster) -> None:
    """Jobs and replies are read as each version writes them: a worker of another version
    is left out with a notice naming it and both versions; the run plays on the others, and
    with no other worker stops before its first game with one line, exit 1."""
    from runner import __version__

    cluster.worker("old", slots=1, env=_other_version(tmp_path))
    cluster.wait_workers()
    config = _config(tmp_path, rounds=1)
    alone = _runner("run", str(config), "--db", "r.db", "-q", "--cluster", cluster.address,
                    cwd=tmp_path)
    assert alone.returncode == 1, alone.stderr
    assert "Traceback" not in alone.stderr
    notice = (f"worker old runs cecp-runner 0.0.1-other+{__version__}, this runner is "
              f"{__version__}: it takes no games in this run")
    assert alone.stderr.count(notice) == 1, alone.stderr
    (line,) = _error_lines(alone.stderr)
    assert "no worker left that can play game 1" in line
    assert not _played(tmp_path)
    cluster.worker("same", slots=1)
    cluster.wait_workers()
    both = _runner("run", str(config), "--db", "r.db", "-q", "--cluster", cluster.address,
                   cwd=tmp_path)
    assert both.returncode == 0, both.stderr
    assert both.stderr.count(notice) == 1, both.stderr
    _all_once(tmp_path, 2)
    assert {g[3] for g in _games(tmp_path / "r.db")} == {"same"}


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_a_worker_of_another_version_joining_during_the_run_takes_no_game(
        tmp_path: Path, cluster: _Cluster) -> None:
    """A worker of another version that joins while the run plays is asked its version when
    the next game comes back and left out with the same notice; every game is stored once,
    none played by it."""
    from runner import __version__

    cluster.worker("same", slots=1)
    cluster.wait_workers()
    # Engines restarted for every game, each slow to start: games last long enough for the
    # late worker to join while the run still has games to hand out.
    config = _config(tmp_path, rounds=4, slow_start=1.5)
    config.write_text(config.read_text().replace('protocol = "cecp"\n',
                                                 'protocol = "cecp"\nrestart = "on"\n'))
    run = _start(tmp_path, config, cluster.address)
    try:
        deadline = time.monotonic() + 8 * EVENT_TIMEOUT
        while _played(tmp_path) < 1:
            assert run.poll() is None and time.monotonic() < deadline, run.communicate()
            time.sleep(0.2)
        cluster.worker("old", slots=1, env=_other_version(tmp_path))
        _, err = run.communicate(timeout=8 * EVENT_TIMEOUT)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 0, err
    assert "Traceback" not in err
    notice = (f"worker old runs cecp-runner 0.0.1-other+{__version__}, this runner is "
              f"{__version__}: it takes no games in this run")
    assert err.count(notice) == 1, err
    _all_once(tmp_path, 8)
    assert {g[3] for g in _games(tmp_path / "r.db")} == {"same"}


@pytest.mark.timeout(300)
def test_a_run_whose_only_worker_died_while_joining_says_it_waits(
        tmp_path: Path, cluster: _Cluster) -> None:
    """The only worker killed as it starts (before or while it registers with the scheduler):
    the run waited without a word (it looked hung). It says it waits for a worker, and plays
    every game once one joins."""
    cluster.worker("dying", slots=1)
    cluster.workers["dying"].send_signal(signal.SIGKILL)
    cluster.workers["dying"].wait()
    config = _config(tmp_path, rounds=1)
    run = _start(tmp_path, config, cluster.address)
    assert run.stderr is not None
    expected = f"no Dask worker is connected to {cluster.address} yet: the games wait for one"
    seen = []
    while expected not in "".join(seen):
        line = run.stderr.readline()
        assert line, f"the run ended without saying it waits: {''.join(seen)}"
        seen.append(line)
    cluster.worker("late", slots=1)
    _, err = run.communicate(timeout=8 * EVENT_TIMEOUT)
    assert run.returncode == 0, "".join(seen) + err
    assert "Traceback" not in err
    _all_once(tmp_path, 2)
