"""The test engine's own bench as a worker's speed measure (issue 40): an engines file's
``bench`` and ``reference_nps``, the worker's benches of its engines (real Stockfish, once per
binary, a failing one reported), the rule that turns two sides' factors into one (the
geometric mean, the machine's factor for a side without its own), and a real ``runner
serve`` with a real ``runner worker join`` on loopback scaling a game of Stockfish by it."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.build.benches import MachineBuild
from runner.build.recipe import load_recipes
from runner.clock import TimeControl
from runner.config.check import ConfigError
from runner.config.engines import BenchDeclaration, load_bench_declarations
from runner.config.parse import load_config
from runner.config.recipes import BuildOrder
from runner.fleet import WIRE_VERSION
from runner.fleet.batches import Batch
from runner.fleet.builds import FleetBuilds, WorkerBuild
from runner.fleet.hub import FleetHub, Leased
from runner.fleet.speed import EngineBenches, EngineSpeed, Scaling, SpeedTerms, scale_control
from runner.game.job import GameJob
from runner.game.record import GameSpec
from runner.protocol.engine import EngineConfig
from runner.store.store import Store
from runner.tournament.run import Tournament

STOCKFISH = shutil.which("stockfish") or shutil.which("stockfish", path="/usr/games")
SF_BENCH = ["bench", "16", "1", "2"]
"""Stockfish's bench at hash 16, one thread, depth 2: its positions in well under a second."""
TC = "30+0.3 depth=1"
"""Clocks to scale, and a depth that decides every move whatever the clock."""


def test_an_engines_file_declares_each_engine_s_bench_and_reference(tmp_path: Path) -> None:
    path = tmp_path / "engines.toml"
    path.write_text(
        '[[engines]]\nname = "sf"\ncommand = ["sf"]\nbench = ["bench", "16", "1", "2"]\n'
        'reference_nps = 900000\n\n'
        '[[engines]]\nname = "eth"\ncommand = ["eth"]\nbench = true\n'
        'bench_nodes = "Nodes\\\\s*:\\\\s*(\\\\d+)"\n\n'
        '[[engines]]\nname = "plain"\ncommand = ["plain"]\n', encoding="utf-8")
    assert load_bench_declarations(path) == {
        "sf": BenchDeclaration(("bench", "16", "1", "2"), reference_nps=900000),
        "eth": BenchDeclaration(("bench",), r"Nodes\s*:\s*(\d+)")}
    path.write_text('[[engines]]\nname = "sf"\ncommand = ["sf"]\nbench = 3\n'
                    'reference_nps = 0\nbench_nodes = "Nodes"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_bench_declarations(path)
    text = str(caught.value)
    for key in ("engines[0].bench = 3", "engines[0].reference_nps = 0",
                'engines[0].bench_nodes = "Nodes"'):
        assert f"{path}: {key}" in text, text


def test_two_sides_factors_give_their_geometric_mean() -> None:
    """An engine's own factor where the service declares its reference and the worker
    benched it; the machine's otherwise (none without a machine reference); one clock for
    both sides, the geometric mean of theirs; an engine far too slow gets no games."""
    terms = SpeedTerms(reference_nps=10_000, max_factor=4.0,
                       engines={"sf": 800_000, "eth": 300_000, "slow": 1_000_000})
    measured = [EngineSpeed("sf", 400_000, 10), EngineSpeed("eth", 600_000, 10),
                EngineSpeed("broken", failed="exit status 1"), EngineSpeed("slow", 100_000, 1)]
    own = terms.engine_factors(measured)
    assert own == {"sf": 2.0, "eth": 0.5, "slow": 10.0}
    assert terms.too_slow(measured) == ["slow"]
    assert terms.scaling(5_000, own, ("sf", "eth")) == Scaling(1.0, "bench:eth+bench:sf")
    assert terms.scaling(5_000, own, ("sf", "sf")) == Scaling(2.0, "bench:sf")
    # A side without its own bench (or whose bench failed) counts the machine's factor, 2.
    assert terms.scaling(5_000, own, ("eth", "broken")) == Scaling(1.0, "bench:eth+machine")
    assert terms.scaling(5_000, own, ("broken", "plain")) == Scaling(2.0, "machine")
    unscaled = SpeedTerms(engines={"sf": 800_000})
    assert unscaled.scaling(5_000, own, ("sf", "plain")) == Scaling(2.0, "bench:sf")
    assert unscaled.scaling(5_000, {}, ("a", "b")) == Scaling(1.0, "none")


def _counting_bench(path: Path, count: Path) -> Path:
    """A program printing a bench as Stockfish does, noting each run in `count`."""
    path.write_text(f"#!{sys.executable}\nimport sys\n"
                    f"open({str(count)!r}, 'a').write('run\\n')\n"
                    "sys.stderr.write('Nodes searched  : 1234\\nNodes/second    : 56789\\n')\n",
                    encoding="utf-8")
    path.chmod(0o755)
    return path


def test_a_binary_is_benched_once_until_it_changes_and_a_failure_is_reported(
        tmp_path: Path) -> None:
    count = tmp_path / "count"
    program = _counting_bench(tmp_path / "engine", count)
    benches = EngineBenches(timeout=60)

    async def measure(name: str, words: tuple[str, ...] = ("bench",)) -> EngineSpeed:
        return await benches.measure(name, [str(program)], words, slots=1)

    first = asyncio.run(measure("a"))
    again = asyncio.run(measure("b"))  # another name of the same binary: not run again
    assert (first.nps, first.nodes, again.engine, again.nps) == (56789, 1234, "b", 56789)
    assert count.read_text().count("run") == 1
    os.utime(program, ns=(time.time_ns(), time.time_ns() + 10**9))  # a new build
    asyncio.run(measure("a"))
    assert count.read_text().count("run") == 2
    failed = asyncio.run(benches.measure("bundled", [sys.executable, "-m", "engine"],
                                         ["bench", "99"], slots=1))
    assert failed.nps == 0 and failed.failed is not None and "exit status 2" in failed.failed


def test_a_built_side_s_later_batches_are_scaled_by_its_build_s_bench(tmp_path: Path) -> None:
    """A branch test's recipe declares its reference speed; once a worker reported its
    build of a side with a bench speed, that side's factor on that worker is the reference
    over it (a side whose recipe declares none, and another worker, have none)."""
    (tmp_path / "engines.toml").write_text(
        '[[recipes]]\nname = "sf"\nrepository = "."\ncommand = ["sf"]\nbench = ["bench"]\n'
        'reference_nps = 900000\n\n[[recipes]]\nname = "plain"\nrepository = "."\n'
        'command = ["plain"]\n', encoding="utf-8")
    recipes = load_recipes(tmp_path / "engines.toml")
    assert (recipes["sf"].reference_nps, recipes["plain"].reference_nps) == (900000, None)
    commit = "a" * 40
    orders = {"dev": BuildOrder(recipes["sf"], commit, "dev"),
              "base": BuildOrder(recipes["plain"], commit, "base")}
    engine = EngineConfig(name="dev", argv=("dev",))
    spec = GameSpec(TimeControl.parse("10+0.1"), TimeControl.parse("10+0.1"))
    job = GameJob(0, engine, dataclasses.replace(engine, name="base"), spec)
    builds = FleetBuilds(orders)
    reports = [WorkerBuild(name, MachineBuild(order.side, commit, "m", 100, 300_000, True,
                                              0.0, "")) for name, order in orders.items()]
    checked = builds.reported(7, "m", Batch(1, 7, {0: job}, 0.0), reports)
    assert checked.failure is None
    assert builds.factors(7) == {"dev": 3.0} and builds.factors(8) == {}
    with pytest.raises(ConfigError, match="reference_nps = -5"):
        (tmp_path / "bad.toml").write_text('[[recipes]]\nname = "x"\nrepository = "."\n'
                                           'command = ["x"]\nreference_nps = -5\n')
        load_recipes(tmp_path / "bad.toml")


@pytest.mark.skipif(STOCKFISH is None, reason="stockfish is not installed")
def test_a_batch_s_games_are_scaled_by_their_engines_benches(tmp_path: Path) -> None:
    """The service's hub with a worker that benched real Stockfish, whose bench of the
    bundled engine failed and which has no bench of a third: in one batch of a round-robin,
    each game's clocks are the tournament's times its factor (Stockfish's and the machine's
    geometric mean, or the machine's alone), each job as given to the worker carries them,
    and the factor's source is kept for the game."""
    assert STOCKFISH is not None
    bundled = f'command = [{json.dumps(sys.executable)}, "-m", "engine"]\n'
    (tmp_path / "t.toml").write_text(
        'name = "rr"\nformat = "roundrobin"\nrounds = 1\ngames = 2\ntc = "10+0.1"\n'
        f'[[engines]]\nname = "stockfish"\ncommand = ["{STOCKFISH}"]\nprotocol = "uci"\n'
        f'[[engines]]\nname = "bundled"\n{bundled}[[engines]]\nname = "plain"\n{bundled}',
        encoding="utf-8")
    benches = EngineBenches(timeout=60)

    async def measured() -> list[EngineSpeed]:
        return [await benches.measure("stockfish", [STOCKFISH], SF_BENCH, slots=1),
                await benches.measure("bundled", [sys.executable, "-m", "engine"],
                                      ["bench", "99"], slots=1)]

    speeds = asyncio.run(measured())
    assert speeds[0].nps > 0 and speeds[1].failed is not None
    terms = SpeedTerms(reference_nps=12_000, max_factor=1000.0,
                       engines={"stockfish": 3 * speeds[0].nps})
    store = Store.open(f"sqlite:///{tmp_path / 'runner.db'}")
    hub = FleetHub(store, lease_seconds=60, speed=terms)
    tournament = Tournament(load_config(tmp_path / "t.toml"), store, new=True,
                            scheduler=hub.scheduler(load_config(tmp_path / "t.toml"), 1))

    async def lease() -> Leased | None:
        await asyncio.to_thread(tournament.prepare)
        hub.attach(tournament)
        joined = await hub.register("w", "tok", {
            "wire": WIRE_VERSION, "engines": ["stockfish", "bundled", "plain"],
            "concurrency": 3, "nps": 6_000,
            "engine_speeds": [dataclasses.asdict(speed) for speed in speeds]})
        assert joined.engine_factors == {"stockfish": 3.0}
        run = asyncio.create_task(tournament.run())
        try:
            for _ in range(200):  # the run opens its scheduler first
                if (leased := await hub.request(joined)) is not None:
                    return leased
                await asyncio.sleep(0.05)
            return None
        finally:
            tournament.scheduler.stop(hard=True)
            await asyncio.wait_for(run, 60)

    leased = asyncio.run(lease())
    store.close()
    assert leased is not None
    batch = leased.batch
    assert len(batch.jobs) == 6
    both = Scaling(round(math.sqrt(3.0 * 2.0), 3), "bench:stockfish+machine")
    for index, job in batch.jobs.items():
        sides = {job.white.name, job.black.name}
        expected = both if "stockfish" in sides else Scaling(2.0, "machine")
        assert batch.scaling(index) == expected, (sides, batch.scaling(index))
        given = batch.given(index)
        assert given is not None and given.spec.white_tc == scale_control(
            TimeControl.parse("10+0.1"), expected.factor)


# ----------------------------------------------------------------- on loopback


def _engines(path: Path, entries: dict[str, dict[str, object]]) -> Path:
    path.write_text("".join(
        "[[engines]]\n" + "".join(f"{key} = {json.dumps(value)}\n" for key, value in
                                  {"name": name, **entry}.items()) + "\n"
        for name, entry in entries.items()), encoding="utf-8")
    return path


def _tail(log: Path, lines: int = 60) -> str:
    """The last `lines` of a process's stderr file."""
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


@contextlib.contextmanager
def _started(*processes: subprocess.Popen[str]) -> Iterator[None]:
    """End the processes (their own groups) whatever happens."""
    try:
        yield
    finally:
        for process in processes:
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            try:
                process.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.communicate()


@pytest.mark.slow
@pytest.mark.skipif(STOCKFISH is None, reason="stockfish is not installed")
def test_a_worker_scales_stockfish_s_games_by_its_own_bench(tmp_path: Path) -> None:
    """A service declaring Stockfish's reference speed, and a worker whose engines file
    gives Stockfish its bench and the bundled engine one that fails: the worker registers
    Stockfish's speed and the failure; a game of Stockfish against the bundled engine is
    played under the tournament's clocks times the geometric mean of Stockfish's factor and
    the machine's (the bundled engine's side), and stored with that factor, its source and
    those clocks; the workers' table shows each engine's bench."""
    assert STOCKFISH is not None
    pytest.importorskip("fastapi", reason="the service extra (fastapi) is not installed")
    httpx = pytest.importorskip("httpx", reason="the fleet extra (httpx) is not installed")
    server_dir, worker_dir = tmp_path / "server", tmp_path / "worker"
    server_dir.mkdir()
    worker_dir.mkdir()
    reference, machine_reference = 2_000_000, 12_000
    bundled = {"command": ["python", "-m", "engine"], "protocol": "cecp"}
    served = _engines(server_dir / "engines.toml", {
        "stockfish": {"command": [STOCKFISH], "protocol": "uci", "reference_nps": reference},
        "bundled": bundled})
    own = _engines(worker_dir / "engines.toml", {
        "stockfish": {"command": [STOCKFISH], "protocol": "uci", "bench": SF_BENCH},
        "bundled": {**bundled, "bench": ["bench", "99"]}})
    db = server_dir / "runner.db"
    admin = "admin-" + os.urandom(8).hex()
    # The service's own token is an admin's, which the workers' routes take too (a worker
    # token would cost a process more here; test_fleet.py joins with those).
    (worker_dir / "token").write_text(admin + "\n", encoding="utf-8")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    # Their stderr goes to files, not pipes nobody reads while they run: a full pipe would
    # stall the process at its next log line.
    server_log = (server_dir / "serve.log").open("w", encoding="utf-8")
    worker_log = (worker_dir / "worker.log").open("w", encoding="utf-8")
    server = subprocess.Popen(
        [sys.executable, "-m", "runner", "serve", "--port", str(port), "--db",
         f"sqlite:///{db}", "--engines", str(served), "--accept-workers", "--worker-lease",
         "20", "--worker-reference-nps", str(machine_reference), "--worker-max-factor", "1000"],
        cwd=server_dir, env={**os.environ, "RUNNER_TOKEN": admin}, stdout=subprocess.DEVNULL,
        stderr=server_log, text=True, start_new_session=True)
    worker = subprocess.Popen(
        [sys.executable, "-m", "runner", "worker", "join", "--server", base, "--token-file",
         str(worker_dir / "token"), "--engines", str(own), "--concurrency", "1"],
        cwd=worker_dir, stdout=subprocess.DEVNULL, stderr=worker_log, text=True,
        env={**os.environ, "RUNNER_TOKEN": ""}, start_new_session=True)
    with server_log, worker_log, _started(worker, server):
        deadline = time.monotonic() + 120
        while True:
            try:
                answer = httpx.post(f"{base}/api/tournaments", timeout=60, json={
                    "name": "sf", "format": "match", "engines": ["stockfish", "bundled"],
                    "tc": TC, "rounds": 1, "games": 2, "placement": "workers",
                    "adjudication": {"maxmoves": 8}},
                    headers={"Authorization": f"Bearer {admin}"})
                break
            except httpx.TransportError:
                assert server.poll() is None, _tail(server_dir / "serve.log")
                assert time.monotonic() < deadline, "runner serve did not answer"
                time.sleep(0.2)
        assert answer.status_code == 201, answer.text
        tournament = answer.json()["id"]
        while httpx.get(f"{base}/api/tournaments/{tournament}",
                        timeout=30).json()["status"] != "finished":
            assert worker.poll() is None, _tail(worker_dir / "worker.log")
            assert time.monotonic() < deadline + 120, (
                "the match did not finish", _tail(server_dir / "serve.log"),
                _tail(worker_dir / "worker.log"))
            time.sleep(0.3)
        rows = httpx.get(f"{base}/api/workers", timeout=30).json()["workers"]
        page = httpx.get(f"{base}/workers", timeout=30).text
    assert len(rows) == 1
    benches = {entry["engine"]: entry for entry in rows[0]["engines"]}
    stockfish, failed = benches["stockfish"], benches["bundled"]
    assert stockfish["nps"] > 0 and failed["failed"] and "exit status 2" in failed["failed"]
    assert f"stockfish</bdi> {stockfish['nps']}" in page and "bench failed" in page
    sf_factor = round(reference / stockfish["nps"], 3)
    machine = round(machine_reference / rows[0]["nps"], 3)
    assert stockfish["factor"] == sf_factor and rows[0]["factor"] == machine
    expected = round(math.sqrt(sf_factor * machine), 3)
    with Store.open(f"sqlite:///{db}", migrate=False) as store:
        played = store.fleet.games(tournament)
        pgns = [g.pgn or "" for g in store.games() if g.tournament_id == tournament]
    assert len(played) == 2 and len(pgns) == 2
    assert {(g.factor, g.factor_source) for g in played} == {
        (expected, "bench:stockfish+machine")}
    clocks = scale_control(TimeControl.parse(TC), expected).to_pgn()
    assert all(f'[TimeControl "{clocks}"]' in pgn for pgn in pgns), (clocks, pgns)
