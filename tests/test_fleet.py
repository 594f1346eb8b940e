"""Remote workers on loopback: a real ``runner serve --accept-workers`` and real ``runner
worker join`` processes, each in its own directory with its own engines file, playing a
tournament placed on them (issue 40). Short leases (``--worker-lease``) and depth-1 games of
the bundled engine keep them quick; the longer cases are slow."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the service extra (fastapi) is not installed")
httpx = pytest.importorskip("httpx", reason="the fleet extra (httpx) is not installed")

from runner.clock import TimeControl  # noqa: E402
from runner.fleet import WIRE_VERSION  # noqa: E402
from runner.fleet.speed import SpeedTerms, scale_control  # noqa: E402
from runner.game.job import GameJob  # noqa: E402
from runner.game.record import GameRecord  # noqa: E402
from runner.game.termination import GameTermination  # noqa: E402
from runner.rules import Result  # noqa: E402
from runner.store.store import Store  # noqa: E402
from runner.types import MoveRecord  # noqa: E402
from tests.fleet_uploads import play_here, upload_body  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
ENGINES = REPO / "configs" / "engines.toml"
WAIT = 240.0
"""Seconds a tournament on the workers may take here (the machine is shared and loaded)."""
TC = "30+0.3 depth=1"
"""Clocks to scale (each worker's by its speed), and a depth limit that decides every move
whatever the clock, so a local run of the same schedule gives the same games."""
REFERENCE_NPS = 12_000
"""The service's reference speed: about the bundled engine's bench on an idle core here."""
COMMANDS = {"bundled": ("python", "-m", "engine"),
            "bundled-v1": ("python", "-m", "engine", "--version", "v1"),
            "bundled-random": ("python", "-m", "engine", "--level", "random", "--seed", "1")}


def _engines_file(directory: Path, names: tuple[str, ...]) -> Path:
    """A worker's own allow-list, in its own directory."""
    path = directory / "engines.toml"
    path.write_text("".join(f'[[engines]]\nname = "{name}"\ncommand = {json.dumps(COMMANDS[name])}\n'
                            'protocol = "cecp"\n\n' for name in names), encoding="utf-8")
    return path


def _runner(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "runner", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd, env={**os.environ, "COLUMNS": "200"})


class Fleet:
    """A service taking workers, and the workers started against it."""

    def __init__(self, root: Path, lease: float, reference: int | None = REFERENCE_NPS,
                 serve_args: tuple[str, ...] = ()) -> None:
        self.root = root
        self.serve_args = serve_args
        """More options of runner serve (a tuning test's --max-concurrency)."""
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
        self.reference = reference
        """The service's reference speed (None: clocks not scaled)."""
        self.server: subprocess.Popen[str] | None = None
        self.workers: dict[str, subprocess.Popen[str]] = {}
        self.start_server()

    @property
    def server_log(self) -> Path:
        """The service's stderr: a file, not a pipe nobody reads while the test runs (a full
        pipe would stall the service at its next access-log line)."""
        return self.db.parent / "serve.log"

    def server_said(self, lines: int = 60) -> str:
        """The last `lines` of the service's stderr."""
        if not self.server_log.exists():
            return ""
        return "\n".join(self.server_log.read_text(errors="replace").splitlines()[-lines:])

    def start_server(self) -> None:
        """Start (or restart) the service and wait until it answers."""
        with self.server_log.open("a") as log:
            self.server = self._serve(log)
        deadline = time.monotonic() + 90
        while True:
            try:
                httpx.get(f"{self.base}/api/tournaments", timeout=2)
                return
            except httpx.TransportError:
                assert self.server.poll() is None, self.server_said()
                assert time.monotonic() < deadline, "runner serve did not answer in 90 s"
                time.sleep(0.1)

    def _serve(self, log: Any) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "runner", "serve", "--port", str(self.port), "--db",
             f"sqlite:///{self.db}", "--engines", str(ENGINES), "--accept-workers",
             "--worker-lease", str(self.lease),
             *(() if self.reference is None else ("--worker-reference-nps", str(self.reference))),
             # Wide: a loaded test machine benches slowly, and only the forger is too slow.
             "--worker-max-factor", "1000", *self.serve_args],
            cwd=self.db.parent, env={**os.environ, "RUNNER_TOKEN": self.admin},
            stdout=subprocess.DEVNULL, stderr=log, text=True, start_new_session=True)

    def join(self, name: str, engines: tuple[str, ...], *, token: str | None = None,
             concurrency: int = 1) -> subprocess.Popen[str]:
        """Start a worker in its own directory, allowing `engines`, playing `concurrency`
        games at once."""
        home = self.root / name
        home.mkdir()
        (home / "token").write_text((token or self.worker_token) + "\n", encoding="utf-8")
        process = subprocess.Popen(
            [sys.executable, "-m", "runner", "worker", "join", "--server", self.base,
             "--token-file", str(home / "token"), "--engines", str(_engines_file(home, engines)),
             "--concurrency", str(concurrency)],
            cwd=home, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "RUNNER_TOKEN": ""}, start_new_session=True)
        self.workers[name] = process
        return process

    def submit(self, rounds: int) -> int:
        """Place a bundled vs bundled-v1 match of `rounds` pairs on the workers."""
        answer = httpx.post(f"{self.base}/api/tournaments", json={
            "name": "fleet", "format": "match", "engines": ["bundled", "bundled-v1"],
            "tc": TC, "rounds": rounds, "games": 2, "concurrency": 2,
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
            assert time.monotonic() < deadline, (
                f"not finished in {WAIT:g} s: {detail}\nthe service said:\n{self.server_said()}")
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
                      f'engines = ["bundled", "bundled-v1"]\ntc = "{TC}"\n'
                      f"rounds = {rounds}\ngames = 2\nconcurrency = 2\n", encoding="utf-8")
    done = _runner("run", str(config), "--db", f"sqlite:///{directory / 'local.db'}",
                   cwd=directory)
    assert done.returncode == 0, done.stderr
    return _stored(directory / "local.db", 1)


def _fools_mate(job: GameJob, result: Result, first: str = "f2f3") -> GameRecord:
    """A made-up game of the job's engines: 1. f3 e5 2. g4 Qh4# (`first` the first move),
    with `result` claimed by checkmate."""
    now = datetime.now(UTC)
    moves = tuple(MoveRecord(san, uci=uci, time=0.01) for san, uci in (
        ("f3", first), ("e5", "e7e5"), ("g4", "g2g4"), ("Qh4#", "d8h4")))
    return GameRecord(job.white.name, job.black.name, job.spec, moves, result,
                      GameTermination.CHECKMATE, "forged", now, now,
                      "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3")


def _forge(fleet: Fleet) -> str:
    """A worker that sends what it was not given: a machine far too slow, an oversized body,
    a game outside its batch, a game sent twice (the same: refused; another: flagged), a
    result the final position does not allow, an illegal move, other engines than asked, an
    upload after it ended its batch, an upload after it fell silent past its lease (the fast
    form of the SIGSTOP case: the batch expires at its deadline). Each refused with 4xx and
    nothing of it counted but the one game it played honestly; the batches it loses go to
    the others."""
    auth = {"Authorization": f"Bearer {fleet.worker_token}"}
    info = {"name": "forger", "concurrency": 1, "cores": 1, "memory_mb": 1, "os": "x",
            "version": "0", "engines": ["bundled", "bundled-v1"]}
    # A worker from before the exchange was versioned sends no version: refused at once,
    # both versions named, not left to fail on the first batch it cannot read.
    older = httpx.post(f"{fleet.base}/api/workers", headers=auth, timeout=30,
                       json={**info, "nps": REFERENCE_NPS})
    assert older.status_code == 409, older.text
    assert "version 1 of the workers' exchange" in older.text, older.text
    assert f"this service version {WIRE_VERSION}" in older.text, older.text
    info["wire"] = WIRE_VERSION
    slow = httpx.post(f"{fleet.base}/api/workers", headers=auth, timeout=30,
                      json={**info, "nps": 1})
    assert slow.status_code == 403 and "too slow" in slow.text, slow.text
    joined = httpx.post(f"{fleet.base}/api/workers", headers=auth, timeout=30,
                        json={**info, "nps": REFERENCE_NPS})
    assert joined.status_code == 201, joined.text
    assert joined.json()["factor"] == 1.0
    worker_id = joined.json()["id"]
    base = f"{fleet.base}/api/workers/{worker_id}"

    def batch() -> tuple[int, list[GameJob]]:
        deadline = time.monotonic() + 60
        while (offer := httpx.post(f"{base}/batch", headers=auth, timeout=30)).status_code == 204:
            assert time.monotonic() < deadline, "no batch offered"
            time.sleep(0.2)
        assert offer.status_code == 200, offer.text
        return offer.json()["id"], [GameJob.from_json(text) for text in offer.json()["jobs"]]

    def upload(batch_id: int, index: int, record: GameRecord) -> httpx.Response:
        return httpx.post(f"{base}/batches/{batch_id}/games", timeout=30,
                          headers={**auth, "Content-Type": "application/json"},
                          content=upload_body(index, record, 1.0))

    def flag() -> str | None:
        with Store.open(f"sqlite:///{fleet.db}", migrate=False) as store:
            found = store.fleet.worker(worker_id)
        assert found is not None
        return found.flag

    first, jobs = batch()
    beating = threading.Event()

    def beat() -> None:  # the batch kept while its game plays here, as a worker keeps it
        while not beating.wait(0.5):
            httpx.post(f"{base}/batches/{first}/heartbeat", headers=auth, timeout=30)

    beater = threading.Thread(target=beat)
    beater.start()
    try:
        return _forge_first(fleet, first, jobs, upload, flag, batch, base, beating)
    finally:
        beating.set()
        beater.join()


def _forge_first(fleet: Fleet, first: int, jobs: list[GameJob], upload: Any, flag: Any,
                 batch: Any, base: str, beating: threading.Event) -> str:
    """The forger's uploads, its first batch kept by heartbeats until the referee takes it
    back."""
    job = jobs[0]
    auth = {"Authorization": f"Bearer {fleet.worker_token}"}
    assert job.white.argv == (job.white.name,)  # no command of the service's goes out
    huge = httpx.post(f"{base}/batches/{first}/games", headers=auth, timeout=30,
                      content=b"x" * (5 << 20))
    assert huge.status_code == 413
    honest = play_here(job)
    assert upload(first, job.index, honest).status_code == 201
    again = upload(first, job.index, honest)  # an answer lost on the way: sent again
    assert again.status_code == 409 and "already uploaded" in again.text, again.text
    assert flag() is None
    other = upload(first, job.index, dataclasses.replace(honest, reason="changed"))
    assert other.status_code == 409 and "another game" in other.text, other.text
    outside = upload(first, 10_000, honest)
    assert outside.status_code == 422 and "not in batch" in outside.text
    # Refereed again: each refusal takes the batch back at once (its games to the others).
    second = jobs[1]
    wrong = upload(first, second.index, _fools_mate(second, Result.WHITE_WINS))
    beating.set()
    assert wrong.status_code == 422 and "makes 0-1, not 1-0" in wrong.text, wrong.text
    third, jobs = batch()
    illegal = upload(third, jobs[0].index, _fools_mate(jobs[0], Result.BLACK_WINS, "f2f5"))
    assert illegal.status_code == 422 and "'f2f5' is illegal" in illegal.text, illegal.text
    fourth, jobs = batch()
    job = jobs[0]
    swapped = upload(fourth, job.index, dataclasses.replace(
        _fools_mate(job, Result.BLACK_WINS), white=job.black.name, black=job.white.name))
    assert swapped.status_code == 422, swapped.text
    assert f"not {job.white.name} vs {job.black.name}" in swapped.text
    ended = httpx.post(f"{base}/batches/{fourth}/end", headers=auth, timeout=30)
    assert ended.status_code == 409
    late = upload(fourth, job.index, _fools_mate(job, Result.BLACK_WINS))
    assert late.status_code == 409, late.text
    # Silent past its lease (as a worker SIGSTOPped): the batch is taken back at its deadline
    # and what it sends afterwards is refused, without a flag of its own.
    fifth, jobs = batch()
    deadline = time.monotonic() + 60
    while (state := _batch_state(fleet.db, fifth)) == "leased":
        assert time.monotonic() < deadline, "the silent batch was not taken back in 60 s"
        time.sleep(0.2)
    assert state == "expired"
    after = upload(fifth, jobs[0].index, _fools_mate(jobs[0], Result.BLACK_WINS))
    assert after.status_code == 409 and "no longer" in after.text, after.text
    return base


def _batch_state(db: Path, batch_id: int) -> str | None:
    with Store.open(f"sqlite:///{db}", migrate=False) as store:
        found = store.fleet.batch(batch_id)
    return None if found is None else found.state


def test_three_workers_play_a_tournament_and_one_without_an_engine_gets_none(
        fleet: Fleet) -> None:
    """Two workers with both engines and one lacking bundled-v1: every game stored once,
    with the results a local run of the same schedule gives; none handed to the third. A
    forging worker took the first batch: refused, flagged, and its batch played by others."""
    tournament_id = fleet.submit(rounds=3)
    # The local run goes meanwhile (its own process and directory): the test waits for the
    # longer of the two, not their sum.
    pool = ThreadPoolExecutor(1)
    local = pool.submit(_local_run, fleet.root / "local", 3)
    pool.shutdown(wait=False)
    forger = _forge(fleet)
    fleet.join("a", ("bundled", "bundled-v1"))
    fleet.join("b", ("bundled", "bundled-v1"))
    fleet.join("c", ("bundled",))
    fleet.wait_finished(tournament_id)
    games = _stored(fleet.db, tournament_id)
    assert [game[0] for game in games] == list(range(6))  # every game once
    assert games == local.result(timeout=WAIT)  # as this machine plays them
    with Store.open(f"sqlite:///{fleet.db}", migrate=False) as store:
        workers = {w.name: w for w in store.fleet.workers()}
        batches = store.fleet.batches(tournament_id)
        played = store.fleet.games(tournament_id)
        pgns = {g.job_index: g.pgn for g in store.games() if g.tournament_id == tournament_id}
    assert len(workers) == 4  # the forger too
    assert "expired" in {b.state for b in batches} and "refused" in {b.state for b in batches}
    by_id = {w.id: w for w in workers.values()}
    # Each game's clocks were scaled to its worker's bench (the forger claimed the reference
    # speed); the factor is kept with the game and the stored game says the clocks it had.
    assert [game.job_index for game in played] == list(range(6))
    for game in played:
        nps = by_id[game.worker_id].info["nps"]
        assert nps > 0 and game.factor == SpeedTerms(REFERENCE_NPS).factor(nps)
        clocks = scale_control(TimeControl.parse(TC), game.factor).to_pgn()
        assert f'[TimeControl "{clocks}"]' in (pgns[game.job_index] or ""), clocks
    assert workers["forger"].flag is not None and workers["forger"].games == 1
    lacking = [w for w in workers.values() if "bundled-v1" not in w.info["engines"]]
    assert len(lacking) == 1 and lacking[0].games == 0
    assert all(batch.worker_id != lacking[0].id for batch in batches)
    assert sum(w.games for w in workers.values()) == 6
    # The workers table (API and page): speed, factor, batches, games, flags.
    shown = httpx.get(f"{fleet.base}/api/workers", timeout=30).json()
    rows = {row["name"]: row for row in shown["workers"]}
    assert shown["tournament_id"] == tournament_id and set(rows) == set(workers)
    for name, worker in workers.items():
        row = rows[name]
        assert (row["games"], row["nps"]) == (worker.games, worker.info.get("nps", 0))
        assert row["batches"] == sum(b.worker_id == worker.id for b in batches)
    assert rows["forger"]["flag"] and rows["forger"]["factor"] == 1.0
    page = httpx.get(f"{fleet.base}/workers", timeout=30)
    assert page.status_code == 200 and "forger" in page.text and "refused upload" in page.text
    listed = _runner("worker", "list", "--db", f"sqlite:///{fleet.db}", cwd=fleet.root)
    assert listed.returncode == 0 and "forger" in listed.stdout, listed.stderr
    # An admin blocks the flagged worker (API; runner worker block does the same): its
    # next request is refused; unblocked, it may ask again.
    admin = {"Authorization": f"Bearer {fleet.admin}"}
    forger_id = workers["forger"].id
    refused = httpx.post(f"{fleet.base}/api/workers/{forger_id}/block", timeout=30,
                         headers={"Authorization": f"Bearer {fleet.worker_token}"})
    assert refused.status_code == 403  # a worker's token is no admin's
    blocked = httpx.post(f"{fleet.base}/api/workers/{forger_id}/block", headers=admin,
                         timeout=30)
    assert blocked.status_code == 200 and blocked.json()["blocked"] is True, blocked.text
    auth = {"Authorization": f"Bearer {fleet.worker_token}"}
    refused = httpx.post(f"{forger}/batch", timeout=30, headers=auth)
    assert refused.status_code == 403 and "blocked" in refused.text
    unblocked = _runner("worker", "block", str(forger_id), "--unblock", "--db",
                        f"sqlite:///{fleet.db}", cwd=fleet.root)
    assert unblocked.returncode == 0, unblocked.stderr
    assert httpx.post(f"{forger}/batch", timeout=30, headers=auth).status_code == 204


def _counted(db: Path) -> int:
    """Games counted for any worker so far."""
    with Store.open(f"sqlite:///{db}", migrate=False) as store:
        return sum(worker.games for worker in store.fleet.workers())


def _wait_counted(fleet: Fleet, at_least: int) -> None:
    deadline = time.monotonic() + WAIT
    while _counted(fleet.db) < at_least:
        assert time.monotonic() < deadline, f"fewer than {at_least} games uploaded in {WAIT:g} s"
        time.sleep(0.1)


@pytest.mark.slow
@pytest.mark.parametrize("how", ["kill", "stop"])
def test_a_silent_worker_s_batch_goes_to_another_and_nothing_counts_twice(
        fleet: Fleet, how: str) -> None:
    """A worker killed (kill -9) or stopped (SIGSTOP) after its first upload: once its lease
    ends its games go to a second worker; a stopped one resumed (SIGCONT) is refused its late
    uploads; every game stored once."""
    tournament_id = fleet.submit(rounds=4)
    first = fleet.join("a", ("bundled", "bundled-v1"))
    _wait_counted(fleet, 1)
    os.killpg(first.pid, signal.SIGKILL if how == "kill" else signal.SIGSTOP)
    fleet.join("b", ("bundled", "bundled-v1"))
    fleet.wait_finished(tournament_id)
    if how == "stop":
        os.killpg(first.pid, signal.SIGCONT)
        time.sleep(10)  # its next heartbeat or upload, refused, before it is asked to stop
        os.killpg(first.pid, signal.SIGTERM)
        _, said = first.communicate(timeout=120)
        assert "refused" in said or "no longer this worker's" in said, said
    games = _stored(fleet.db, tournament_id)
    assert [game[0] for game in games] == list(range(8))
    assert _counted(fleet.db) == 8
    with Store.open(f"sqlite:///{fleet.db}", migrate=False) as store:
        states = [batch.state for batch in store.fleet.batches(tournament_id)]
    assert "expired" in states


@pytest.mark.slow
def test_the_server_restarted_mid_run_loses_nothing(fleet: Fleet) -> None:
    """The service stopped after the first upload and started again: the worker backs off
    while it is away, its old batch is refused, and it plays the resumed tournament's
    missing games; every game stored once."""
    tournament_id = fleet.submit(rounds=4)
    fleet.join("a", ("bundled", "bundled-v1"))
    _wait_counted(fleet, 1)
    assert fleet.server is not None
    os.killpg(fleet.server.pid, signal.SIGTERM)
    fleet.server.communicate(timeout=120)
    fleet.start_server()
    fleet.wait_finished(tournament_id)
    games = _stored(fleet.db, tournament_id)
    assert [game[0] for game in games] == list(range(8))


@pytest.mark.slow
def test_a_revoked_token_stops_its_worker_with_one_line(fleet: Fleet) -> None:
    """The worker's token revoked mid-batch: its next request is refused and it exits with
    one line saying so; a worker with another token plays the rest."""
    tournament_id = fleet.submit(rounds=4)
    worker = fleet.join("a", ("bundled", "bundled-v1"))
    _wait_counted(fleet, 1)
    revoked = _runner("token", "revoke", "w", "--db", f"sqlite:///{fleet.db}",
                      cwd=fleet.db.parent)
    assert revoked.returncode == 0, revoked.stderr
    _, said = worker.communicate(timeout=120)
    assert worker.returncode == 2
    assert "refused this worker" in said, said
    made = _runner("token", "add", "w2", "--role", "worker", "--db", f"sqlite:///{fleet.db}",
                   cwd=fleet.db.parent)
    fleet.join("b", ("bundled", "bundled-v1"), token=made.stdout.split()[0])
    fleet.wait_finished(tournament_id)
    assert [game[0] for game in _stored(fleet.db, tournament_id)] == list(range(8))


@pytest.mark.slow
def test_a_machine_far_too_slow_is_refused_with_one_line(tmp_path: Path) -> None:
    """A service whose reference no machine here reaches (the factor would pass the gate):
    the worker benches, is refused when it registers, and exits with one line saying so."""
    fleet = Fleet(tmp_path, lease=3.0, reference=10**9)
    try:
        worker = fleet.join("a", ("bundled",))
        _, said = worker.communicate(timeout=120)
    finally:
        fleet.stop_all()
    assert worker.returncode == 2, said
    assert "benched" in said and "too slow to play its time controls" in said, said
    assert said.count("too slow") == 1
