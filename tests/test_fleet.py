"""Remote workers on loopback: a real ``runner serve --accept-workers`` and real ``runner
worker join`` processes, each in its own directory with its own engines file, playing a
tournament placed on them (issue 40). Short leases (``--worker-lease``) and depth-1 games of
the bundled engine keep them quick; the longer cases are slow."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service extra (fastapi) is not installed")
httpx = pytest.importorskip("httpx", reason="the fleet extra (httpx) is not installed")

from runner.store.store import Store  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
ENGINES = REPO / "configs" / "engines.toml"
WAIT = 240.0
"""Seconds a tournament on the workers may take here (the machine is shared and loaded)."""


def _engines_file(directory: Path, names: tuple[str, ...]) -> Path:
    """A worker's own allow-list, in its own directory."""
    commands = {"bundled": '["python", "-m", "engine"]',
                "bundled-v1": '["python", "-m", "engine", "--version", "v1"]'}
    path = directory / "engines.toml"
    path.write_text("".join(f'[[engines]]\nname = "{name}"\ncommand = {commands[name]}\n'
                            'protocol = "cecp"\n\n' for name in names), encoding="utf-8")
    return path


def _runner(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "runner", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd, env={**os.environ, "COLUMNS": "200"})


class Fleet:
    """A service taking workers, and the workers started against it."""

    def __init__(self, root: Path, lease: float) -> None:
        self.root = root
        self.db = root / "server" / "runner.db"
        self.db.parent.mkdir(parents=True)
        self.admin = "admin-" + os.urandom(8).hex()
        made = _runner("token", "add", "w", "--role", "worker", "--db", f"sqlite:///{self.db}",
                       cwd=self.db.parent)
        assert made.returncode == 0, made.stderr
        self.worker_token = made.stdout.split()[0]
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.lease = lease
        self.server: subprocess.Popen[str] | None = None
        self.workers: dict[str, subprocess.Popen[str]] = {}
        self.start_server()

    def start_server(self) -> None:
        """Start (or restart) the service and wait until it answers."""
        self.server = subprocess.Popen(
            [sys.executable, "-m", "runner", "serve", "--port", str(self.port), "--db",
             f"sqlite:///{self.db}", "--engines", str(ENGINES), "--accept-workers",
             "--worker-lease", str(self.lease)],
            cwd=self.db.parent, env={**os.environ, "RUNNER_TOKEN": self.admin},
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            start_new_session=True)
        deadline = time.monotonic() + 90
        while True:
            try:
                httpx.get(f"{self.base}/api/tournaments", timeout=2)
                return
            except httpx.TransportError:
                assert self.server.poll() is None, self.server.communicate()[1]
                assert time.monotonic() < deadline, "runner serve did not answer in 90 s"
                time.sleep(0.1)

    def join(self, name: str, engines: tuple[str, ...], *, token: str | None = None
             ) -> subprocess.Popen[str]:
        """Start a worker in its own directory, allowing `engines`."""
        home = self.root / name
        home.mkdir()
        (home / "token").write_text((token or self.worker_token) + "\n", encoding="utf-8")
        process = subprocess.Popen(
            [sys.executable, "-m", "runner", "worker", "join", "--server", self.base,
             "--token-file", str(home / "token"), "--engines", str(_engines_file(home, engines)),
             "--concurrency", "1"],
            cwd=home, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "RUNNER_TOKEN": ""}, start_new_session=True)
        self.workers[name] = process
        return process

    def submit(self, rounds: int) -> int:
        """Place a bundled vs bundled-v1 match of `rounds` pairs on the workers."""
        answer = httpx.post(f"{self.base}/api/tournaments", json={
            "name": "fleet", "format": "match", "engines": ["bundled", "bundled-v1"],
            "tc": "depth=1", "rounds": rounds, "games": 2, "concurrency": 2,
            "placement": "workers"}, headers={"Authorization": f"Bearer {self.admin}"},
            timeout=60)
        assert answer.status_code == 201, answer.text
        return int(answer.json()["id"])

    def wait_finished(self, tournament_id: int) -> dict[str, object]:
        """The tournament's detail once it is finished."""
        deadline = time.monotonic() + WAIT
        while True:
            detail = httpx.get(f"{self.base}/api/tournaments/{tournament_id}", timeout=30).json()
            if detail["status"] == "finished":
                return dict(detail)
            assert time.monotonic() < deadline, f"not finished in {WAIT:g} s: {detail}"
            time.sleep(0.5)

    def stop_all(self) -> None:
        """End every process this fleet started (by its own process group)."""
        for process in [*self.workers.values(), self.server]:
            if process is not None and process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGCONT)
                    os.killpg(process.pid, signal.SIGTERM)
        for process in [*self.workers.values(), self.server]:
            if process is None:
                continue
            try:
                process.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.communicate()


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[Fleet]:
    """A service on loopback taking workers, with a 3 s lease; everything ended after."""
    made = Fleet(tmp_path, lease=3.0)
    try:
        yield made
    finally:
        made.stop_all()


def _stored(db: Path, tournament_id: int) -> list[tuple[int, str, str, str]]:
    """(index, White, Black, result) of every stored game of the tournament."""
    with Store.open(f"sqlite:///{db}", migrate=False) as store:
        return sorted((game.job_index, game.white, game.black, str(game.result))
                      for game in store.games() if game.tournament_id == tournament_id)


def _local_run(directory: Path, rounds: int) -> list[tuple[int, str, str, str]]:
    """The same schedule played by ``runner run`` on this machine."""
    directory.mkdir()
    config = directory / "match.toml"
    config.write_text(f'name = "fleet"\nformat = "match"\nengines_file = "{ENGINES}"\n'
                      f'engines = ["bundled", "bundled-v1"]\ntc = "depth=1"\n'
                      f"rounds = {rounds}\ngames = 2\nconcurrency = 2\n", encoding="utf-8")
    done = _runner("run", str(config), "--db", f"sqlite:///{directory / 'local.db'}",
                   cwd=directory)
    assert done.returncode == 0, done.stderr
    return _stored(directory / "local.db", 1)


def test_three_workers_play_a_tournament_and_one_without_an_engine_gets_none(
        fleet: Fleet) -> None:
    """Two workers with both engines and one lacking bundled-v1: every game stored once,
    with the results a local run of the same schedule gives; none handed to the third."""
    tournament_id = fleet.submit(rounds=4)
    fleet.join("a", ("bundled", "bundled-v1"))
    fleet.join("b", ("bundled", "bundled-v1"))
    fleet.join("c", ("bundled",))
    fleet.wait_finished(tournament_id)
    games = _stored(fleet.db, tournament_id)
    assert [game[0] for game in games] == list(range(8))  # every game once
    assert games == _local_run(fleet.root / "local", rounds=4)  # as this machine plays them
    with Store.open(f"sqlite:///{fleet.db}", migrate=False) as store:
        workers = {w.name: w for w in store.fleet.workers()}
        batches = store.fleet.batches(tournament_id)
    assert len(workers) == 3
    lacking = [w for w in workers.values() if "bundled-v1" not in w.info["engines"]]
    assert len(lacking) == 1 and lacking[0].games == 0
    assert all(batch.worker_id != lacking[0].id for batch in batches)
    assert sum(w.games for w in workers.values()) == 8
