"""Games on Dask distributed, with real processes on 127.0.0.1 (issue 18).

A LocalCluster run (``--workers 2``) must give the same results table as the in-process run;
a real ``dask scheduler`` with ``dask worker`` processes must survive a worker killed with
SIGKILL mid-run (every planned game stored once, every PGN game legal, no engine left) and a
coordinator killed with SIGKILL (the next run plays exactly the missing games); ``runner
worker check`` must show a worker that cannot start an engine.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import chess.pgn
import pytest

from tests.conftest import REPO

distributed = pytest.importorskip("distributed", reason="distributed is not installed "
                                  "(pip install '.[cluster]')")
psutil = pytest.importorskip("psutil", reason="psutil (a dependency of distributed) is missing")

PY = sys.executable
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def _config(tmp_path: Path, *, rounds: int, concurrency: int, tc: str, depth: str,
            extra: str = "") -> Path:
    """A round robin of quick depth-limited bundled engines (the same moves on every run)."""
    blocks = "".join(
        f'[[engines]]\nname = "{name}"\ncommand = ["python", "-m", "engine", "--depth", '
        f'"{d}", "--level", "1"]\n' for name, d in (("d1", "1"), (f"d{depth}", depth)))
    book = tmp_path / "book.epd"
    book.write_text(
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\n"
        "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1\n"
        "rnbqkbnr/pppppppp/8/8/2P5/8/PP1PPPPP/RNBQKBNR b KQkq - 0 1\n")
    path = tmp_path / "t.toml"
    path.write_text(
        f'name = "cl"\nformat = "roundrobin"\nrounds = {rounds}\ngames = 2\ntc = "{tc}"\n'
        f'concurrency = {concurrency}\n{extra}\n{blocks}\n'
        '[openings]\nfile = "book.epd"\norder = "sequential"\n\n[adjudication]\nmaxmoves = 20\n')
    return path


def _runner(*args: str, cwd: Path, timeout: float = 120,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "runner", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env or ENV)


def _games(db: Path) -> list[tuple[int, str, str | None, str | None]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("select job_index, status, result, worker from games "
                            "order by job_index").fetchall()


def _legal_pgn(path: Path) -> int:
    """Replay every game of a PGN file with python-chess; returns how many there are."""
    count = 0
    with path.open(encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            assert not game.errors, game.errors
            board = game.board()
            for move in game.mainline_moves():
                assert board.is_legal(move), f"game {count + 1}: illegal {move} in {board.fen()}"
                board.push(move)
            count += 1
    return count


@pytest.mark.slow  # CI time: about 12 s; local workers play in the drop-in driver and sizing tests
def test_local_workers_same_table_as_in_process(tmp_path: Path) -> None:
    """--workers 2 plays the 20 games with the same results and valid PGN."""
    config = _config(tmp_path, rounds=10, concurrency=2, tc="10+0.1", depth="2")
    here = _runner("run", str(config), "--db", "here.db", "-q", "--new", cwd=tmp_path)
    assert here.returncode == 0, here.stderr
    there = _runner("run", str(config), "--db", "there.db", "-q", "--new", "--workers", "2",
                    cwd=tmp_path)
    assert there.returncode == 0, there.stderr
    assert there.stdout == here.stdout  # the summary lines: score, Elo, pentanomial
    local, remote = _games(tmp_path / "here.db"), _games(tmp_path / "there.db")
    assert [g[:3] for g in remote] == [g[:3] for g in local] and len(remote) == 20
    assert all(g[3] is None for g in local)
    assert {g[3] for g in remote} <= {f"{socket.gethostname()}/{n}" for n in (0, 1)}
    with sqlite3.connect(tmp_path / "there.db") as conn:
        pgn = "".join(row[0].rstrip("\n") + "\n\n" for row in
                      conn.execute("select pgn from games order by job_index"))
    (tmp_path / "there.pgn").write_text(pgn)
    assert _legal_pgn(tmp_path / "there.pgn") == 20


# -- a real scheduler and workers -----------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _Cluster:
    """A ``dask scheduler`` and the ``dask worker`` processes the tests start on it."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.address = f"tcp://127.0.0.1:{_free_port()}"
        self.procs: list[subprocess.Popen[bytes]] = []
        self.scheduler = self._spawn(["dask", "scheduler", "--host", "127.0.0.1", "--port",
                                      self.address.rsplit(":", 1)[1], "--no-dashboard"])
        self.workers: dict[str, subprocess.Popen[bytes]] = {}

    def stop_workers(self) -> None:
        """Stop this test's workers (they stop their engines on the way out)."""
        for proc in self.workers.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.workers.values():
            try:
                proc.wait(timeout=8)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.workers.clear()

    def _spawn(self, argv: list[str], env: dict[str, str] | None = None,
               ) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen([PY, "-m", "distributed.cli.dask_" + argv[1], *argv[2:]],
                                cwd=self.cwd, env=env or ENV, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        self.procs.append(proc)
        return proc

    def worker(self, name: str, slots: int = 2, env: dict[str, str] | None = None) -> None:
        """Start ``dask worker ADDR --nthreads S --resources slots=S`` (no nanny: the process
        killed is the one holding the engines)."""
        self.workers[name] = self._spawn(
            ["dask", "worker", self.address, "--nthreads", str(slots), "--resources",
             f"slots={slots}", "--name", name, "--no-nanny", "--no-dashboard"], env)

    def wait_workers(self) -> None:
        """Wait until every worker started is connected."""
        with distributed.Client(self.address, timeout=20) as client:
            client.wait_for_workers(len(self.workers), timeout=60)

    def close(self) -> None:
        self.stop_workers()
        self.scheduler.kill()
        self.scheduler.wait()


@pytest.fixture(scope="module")
def _scheduler(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Cluster]:
    made = _Cluster(tmp_path_factory.mktemp("dask"))
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
def cluster(_scheduler: _Cluster) -> Iterator[_Cluster]:
    """The module's scheduler, with no worker yet; the test's workers are stopped after it."""
    try:
        yield _scheduler
    finally:
        _scheduler.stop_workers()


def _engines_of(pid: int) -> set[int]:
    """The bundled-engine processes below a process."""
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return set()
    return {c.pid for c in children if "engine" in " ".join(c.cmdline())}


def _alive(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                alive.add(pid)
        except psutil.NoSuchProcess:
            pass
    return alive


def _wait_stored(db: Path, count: int, proc: subprocess.Popen[str], limit: float = 60) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and proc.poll() is None:
        if db.exists():
            try:
                if sum(g[1] == "done" for g in _games(db)) >= count:
                    return
            except sqlite3.OperationalError:
                pass
        time.sleep(0.1)
    raise AssertionError(f"{count} games not stored in time")


def test_worker_killed_mid_run(tmp_path: Path, cluster: _Cluster) -> None:
    """kill -9 of a worker: its games are played elsewhere, every game stored once, legal PGN,
    and none of its engines left running."""
    cluster.worker("w1")
    cluster.worker("w2")
    cluster.wait_workers()
    config = _config(tmp_path, rounds=4, concurrency=4, tc="10+0.1", depth="2",
                     extra='pgnout = "games.pgn"')
    run = subprocess.Popen([PY, "-m", "runner", "run", str(config), "--db", "r.db", "-q",
                            "--cluster", cluster.address], cwd=tmp_path, env=ENV,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_stored(tmp_path / "r.db", 2, run)
    victim = cluster.workers["w1"]
    engines = _engines_of(victim.pid)
    assert engines, "the worker kept no engine between games"
    victim.send_signal(signal.SIGKILL)
    out, err = run.communicate(timeout=120)
    assert run.returncode == 0, err
    games = _games(tmp_path / "r.db")
    assert [g[0] for g in games] == list(range(8)) and {g[1] for g in games} == {"done"}
    assert _legal_pgn(tmp_path / "games.pgn") == 8  # none doubled in the file either
    assert {g[3] for g in games} <= {"w1", "w2"} and "w2" in {g[3] for g in games}
    deadline = time.monotonic() + 10
    while _alive(engines) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(engines), "an engine of the killed worker is still running"


@pytest.mark.slow  # CI time: a killed worker and a stopped run are resumed in the fast run
def test_coordinator_killed_then_resumed(tmp_path: Path, cluster: _Cluster) -> None:
    """kill -9 of the runner mid-run; the same command again plays exactly the missing games."""
    cluster.worker("w1")
    cluster.wait_workers()
    config = _config(tmp_path, rounds=4, concurrency=2, tc="10+0.1", depth="2",
                     extra=f'pgnout = "games.pgn"\n[cluster]\naddress = "{cluster.address}"')
    run = subprocess.Popen([PY, "-m", "runner", "run", str(config), "--db", "r.db", "-q"],
                           cwd=tmp_path, env=ENV, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    _wait_stored(tmp_path / "r.db", 2, run)
    run.send_signal(signal.SIGKILL)
    run.communicate(timeout=30)
    before = sum(g[1] == "done" for g in _games(tmp_path / "r.db"))
    assert before < 8
    again = _runner("run", str(config), "--db", "r.db", "-q", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    games = _games(tmp_path / "r.db")
    assert [g[0] for g in games] == list(range(8)) and {g[1] for g in games} == {"done"}
    assert f"({8 - before} in this run" in again.stderr


def test_a_worker_missing_an_engine(tmp_path: Path, cluster: _Cluster) -> None:
    """A worker whose engines file points an engine at a missing program: `runner worker check`
    names it, and a run plays every game on the other worker."""
    own = tmp_path / "own-engines.toml"
    own.write_text('[[engines]]\nname = "d2"\ncommand = ["/nonexistent/d2-engine"]\n')
    cluster.worker("good", slots=1)
    cluster.worker("bad", slots=1, env={**ENV, "RUNNER_WORKER_ENGINES": str(own)})
    cluster.wait_workers()
    config = _config(tmp_path, rounds=1, concurrency=1, tc="1+0.05", depth="2")
    check = _runner("worker", "check", "--cluster", cluster.address, str(config), cwd=tmp_path)
    assert check.returncode == 1, check.stdout + check.stderr
    text = check.stdout
    good, bad = text.index("worker good"), text.index("worker bad")
    assert "1 slots" in text and "cores" in text
    bad_part = text[bad:good] if bad < good else text[bad:]
    good_part = text[good:bad] if good < bad else text[good:]
    assert "NO" in bad_part and "nonexistent" in bad_part
    assert "NO" not in good_part and "cecp-runner engine" in good_part
    # The run: the worker that cannot start d2 says so once and takes no more of its games.
    config = _config(tmp_path, rounds=2, concurrency=2, tc="10+0.1", depth="2")
    run = _runner("run", str(config), "--db", "r.db", "-q", "--cluster", cluster.address,
                  cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    games = _games(tmp_path / "r.db")
    assert [(g[0], g[1], g[3]) for g in games] == [(i, "done", "good") for i in range(4)]
    assert run.stderr.count("worker bad cannot start engine d2") == 1, run.stderr


@pytest.mark.slow  # CI time: about 13 s each; the in-process SPRT stop and tables tests stay fast
def test_sprt_stop_cancels_the_queued_jobs(tmp_path: Path) -> None:
    """An SPRT decision on a LocalCluster: the jobs waiting are cancelled, the run ends
    finished long before its planned games, and only games already playing are added."""
    config = tmp_path / "sprt.toml"
    config.write_text(
        'name = "sp"\nformat = "match"\nrounds = 100\ngames = 2\ntc = "10+0.1"\nconcurrency = 2\n'
        '[[engines]]\nname = "strong"\ncommand = ["python", "-m", "engine", "--depth", "2", '
        '"--level", "1"]\n[[engines]]\nname = "random"\ncommand = ["python", "-m", "engine", '
        '"--level", "random", "--seed", "3"]\n[sprt]\nelo0 = 0\nelo1 = 100\n'
        '[adjudication]\nmaxmoves = 40\n')
    run = _runner("run", str(config), "--db", "r.db", "--workers", "2", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    lines = run.stderr.splitlines()
    decided = next(i for i, line in enumerate(lines) if line.startswith("SPRT decided"))
    before = sum(line.startswith("Finished game") for line in lines[:decided])
    games = _games(tmp_path / "r.db")
    done = [g for g in games if g[1] == "done"]
    # Two slots, each holding up to two jobs on its worker (one playing, one queued so the slot
    # starts its next game at once). The queued ones are cancelled, but one may start in the
    # moment between its slot's game ending and the cancel arriving: stored games after the
    # decision are bounded by the jobs in flight, not the playing games alone. (Seen in CI:
    # 20 before the decision, 23 stored.)
    in_flight = 2 * 2
    assert before <= len(done) <= before + in_flight and len(done) < 50, (before, len(done))
    with sqlite3.connect(tmp_path / "r.db") as conn:
        assert conn.execute("select status from tournaments").fetchone() == ("finished",)


@pytest.mark.slow  # CI time: about 13 s each; the in-process SPRT stop and tables tests stay fast
def test_workers_adjudicate_by_their_own_tables(tmp_path: Path, cluster: _Cluster) -> None:
    """A tournament with tablebases on Dask workers: `runner worker check` lists each worker's
    tables (count, complete and largest piece counts), and the games played there end by the
    tables (each worker opened them itself from the configured directories)."""
    syzygy = REPO.parent / "shared" / "data" / "syzygy"
    stockfish = shutil.which("stockfish", path="/usr/games:/usr/local/games")
    if not syzygy.is_dir() or stockfish is None:
        pytest.skip(f"needs the Syzygy tables ({syzygy}) and stockfish")
    cluster.worker("tb1", slots=1)
    cluster.worker("tb2", slots=1)
    cluster.wait_workers()
    book = REPO / "tests" / "data" / "tb_endgames.epd"
    config = tmp_path / "tb.toml"
    config.write_text(
        f'name = "tb"\nformat = "match"\nrounds = 4\ngames = 2\ntc = "inf"\nconcurrency = 2\n'
        f'[[engines]]\nname = "a"\ncommand = ["{stockfish}"]\nprotocol = "uci"\n'
        f'tc = "tc=inf depth=4"\n'
        f'[[engines]]\nname = "b"\ncommand = ["{stockfish}"]\nprotocol = "uci"\n'
        f'tc = "tc=inf depth=4"\n'
        f'[openings]\nfile = "{book}"\n'
        f'[adjudication]\nmaxmoves = 100\ntablebases = ["{syzygy}"]\ntbpieces = 4\n')
    check = _runner("worker", "check", "--cluster", cluster.address, str(config), cwd=tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    lines = [line for line in check.stdout.splitlines() if "tablebases:" in line]
    assert len(lines) == 2, check.stdout
    assert all("complete to 4 pieces, some of 5" in line for line in lines), check.stdout
    run = _runner("run", str(config), "--db", "r.db", "-q", "--cluster", cluster.address,
                  cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    with sqlite3.connect(tmp_path / "r.db") as conn:
        rows = conn.execute("select termination, reason, worker from games").fetchall()
    judged = [row for row in rows if row[0] == "tablebase"]
    assert len(rows) == 8 and len(judged) >= 4, rows
    assert all(row[1].endswith("by adjudication: SyzygyTB") and row[2] in ("tb1", "tb2")
               for row in judged), judged


def test_workers_without_slots_stop_the_run_at_once(tmp_path: Path, cluster: _Cluster) -> None:
    """Issue 31: workers started as plain ``dask worker ADDR`` have no ``slots`` resource, and a
    run on them used to wait forever with every game "running". It stops with one line that
    says how to start workers."""
    cluster.workers["plain"] = cluster._spawn(
        ["dask", "worker", cluster.address, "--nthreads", "2", "--name", "plain", "--no-nanny",
         "--no-dashboard"])
    cluster.wait_workers()
    config = _config(tmp_path, rounds=1, concurrency=2, tc="10+0.1", depth="2")
    # The generous timeout is the test's guard only: the run stops as soon as it connects.
    run = _runner("run", str(config), "--db", "r.db", "-q", "--cluster", cluster.address,
                  cwd=tmp_path, timeout=240)
    assert run.returncode == 1, run.stderr
    text = " ".join(run.stderr.split())
    assert f"no Dask worker at {cluster.address} has the 'slots' resource (workers: plain)" in text
    assert '--resources "slots=8"' in text
    assert [g[1] for g in _games(tmp_path / "r.db")] in ([], ["running"])
