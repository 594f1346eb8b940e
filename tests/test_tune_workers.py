"""Tuning pairs on remote workers (issue 42): a real ``runner serve --accept-workers`` and
real ``runner worker join`` processes on loopback play a tuning run's game pairs, leased,
uploaded and refereed as a tournament's games are; the SPSA steps are applied in the order of
the iterations, so the run ends with the very iterations a run on this machine gives. A
batch whose worker falls silent goes to another at its deadline, and its late upload is
refused; the service killed and started again resumes the run. Depth-1 games of the bundled
engine keep it short."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the service extra (fastapi) is not installed")
httpx = pytest.importorskip("httpx", reason="the fleet extra (httpx) is not installed")

from runner.app.tune import tune  # noqa: E402
from runner.config.tune import parse_tune  # noqa: E402
from runner.fleet import WIRE_VERSION  # noqa: E402
from runner.game.job import GameJob  # noqa: E402
from runner.rules import Result  # noqa: E402
from runner.store.store import Store  # noqa: E402
from tests.test_fleet import (  # noqa: E402
    ENGINES,
    REFERENCE_NPS,
    WAIT,
    Fleet,
    _batch_state,
    _fools_mate,
)

TUNE = """
name = "tune on workers"
engine = "bundled"
iterations = 4
seed = 7
tc = "depth=1"
concurrency = 4
maxmoves = 12

[parameters.Skew]
start = 140
min = 0
max = 200
c_end = 8
r_end = 0.05
"""


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[Fleet]:
    """A service on loopback taking workers, with a 3 s lease and two pairs in flight (four
    games at once, all on the workers); everything ended after."""
    made = Fleet(tmp_path, lease=3.0, serve_args=("--max-concurrency", "4"))
    try:
        yield made
    finally:
        made.stop_all()


def _submit(fleet: Fleet, text: str) -> int:
    answer = httpx.post(f"{fleet.base}/api/tunes", json={**tomllib.loads(text),
                                                         "placement": "workers"},
                        headers={"Authorization": f"Bearer {fleet.admin}"}, timeout=60)
    assert answer.status_code == 201, answer.text
    return int(answer.json()["id"])


def _finished(fleet: Fleet, tune_id: int) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT
    while True:
        found = httpx.get(f"{fleet.base}/api/tunes/{tune_id}", timeout=30).json()
        if found["state"] in ("finished", "failed"):
            return dict(found)
        assert time.monotonic() < deadline, f"not finished in {WAIT:g} s: {found}"
        time.sleep(0.5)


def _silent_worker(fleet: Fleet) -> None:
    """A worker that takes the first batch (checking what it is given) and falls silent:
    the batch expires at its deadline and what it sends afterwards is refused."""
    auth = {"Authorization": f"Bearer {fleet.worker_token}"}
    joined = httpx.post(f"{fleet.base}/api/workers", headers=auth, timeout=30, json={
        "name": "silent", "concurrency": 1, "cores": 1, "memory_mb": 1, "os": "x",
        "version": "0", "wire": WIRE_VERSION, "engines": ["bundled"], "nps": REFERENCE_NPS})
    assert joined.status_code == 201, joined.text
    base = f"{fleet.base}/api/workers/{joined.json()['id']}"
    deadline = time.monotonic() + 60
    while (offer := httpx.post(f"{base}/batch", headers=auth, timeout=30)).status_code == 204:
        assert time.monotonic() < deadline, "no batch offered"
        time.sleep(0.2)
    assert offer.status_code == 200, offer.text
    body = offer.json()
    # Both sides are the tuned engine, by the name the worker's own file knows; no command
    # goes out; the values to play are in the options, typed as integers.
    assert body["names"] == {"plus": "bundled", "minus": "bundled"}
    jobs = [GameJob.from_json(text) for text in body["jobs"]]
    assert {job.engines for job in jobs} == {("plus", "minus"), ("minus", "plus")}
    for job in jobs:
        assert job.white.argv == (job.white.name,)
        assert all(type(side.options["Skew"]) is int for side in (job.white, job.black))
    while (state := _batch_state(fleet.db, body["id"])) == "leased":
        assert time.monotonic() < deadline + 60, "the silent batch was not taken back"
        time.sleep(0.2)
    assert state == "expired"
    record = json.loads(_fools_mate(jobs[0], Result.BLACK_WINS).to_json())
    for _ in range(2):  # refused alike when sent again (its answer lost on the way)
        late = httpx.post(f"{base}/batches/{body['id']}/games", headers=auth, timeout=30,
                          json={"index": jobs[0].index, "seconds": 1.0, "record": record})
        assert late.status_code == 409 and "no longer" in late.text, late.text


def _local(directory: Path, text: str = TUNE) -> list[tuple[Any, ...]]:
    """The same tuning file played on this machine: each iteration's values, result, theta."""
    directory.mkdir()
    config = parse_tune({**tomllib.loads(text), "engines_file": str(ENGINES)},
                        base_dir=directory)
    with Store.open(f"sqlite:///{directory / 'local.db'}") as store:
        outcome = asyncio.run(tune(config, store))
        assert outcome.done == config.iterations, outcome
        return [(i.k, i.flips, i.plus, i.minus, i.result, i.theta)
                for i in store.tunes.iterations(outcome.tune_id)]


def test_a_tuning_run_on_two_remote_workers(fleet: Fleet) -> None:
    """Two workers play the pairs (two in flight) after a silent one lost the first batch;
    every game is refereed and counted once, and the iterations are the local run's."""
    text = TUNE.replace("iterations = 4", "iterations = 2")  # one round of two pairs
    tune_id = _submit(fleet, text)
    _silent_worker(fleet)
    fleet.join("a", ("bundled",))
    fleet.join("b", ("bundled",))
    final = _finished(fleet, tune_id)
    assert final["state"] == "finished" and final["done"] == 2, final
    with Store.open(f"sqlite:///{fleet.db}", migrate=False) as store:
        workers = {w.id: w.name for w in store.fleet.workers()}
        played = {i["k"]: store.fleet.games(i["tournament_id"]) for i in final["iterations"]}
        batches = [b for i in final["iterations"] for b in store.fleet.batches(
            i["tournament_id"])]
    assert all(sorted(g.job_index for g in games) == [0, 1] for games in played.values())
    players = {workers[g.worker_id] for games in played.values() for g in games}
    # a, b or both (whichever asks first when a batch is free: a worker with nothing to play
    # backs off), never the silent one, whose batch another played
    assert 1 <= len(players) <= 2 and "silent" not in players, players
    assert "expired" in {b.state for b in batches}
    assert [(i["k"], tuple(i["flips"]), tuple(i["plus"]), tuple(i["minus"]), i["result"],
             tuple(i["theta"])) for i in final["iterations"]] == _local(fleet.root / "local",
                                                                        text)


@pytest.mark.slow
def test_a_tuning_run_on_workers_survives_the_service_killed(fleet: Fleet) -> None:
    """``runner serve`` killed (SIGKILL) with pairs out on the workers and started again: it
    resumes the run from its stored submission, the workers back off and come back, and the
    run ends with the iterations of a run on this machine."""
    tune_id = _submit(fleet, TUNE)
    fleet.join("a", ("bundled",))
    fleet.join("b", ("bundled",))
    deadline = time.monotonic() + WAIT
    while httpx.get(f"{fleet.base}/api/tunes/{tune_id}", timeout=30).json()["done"] < 1:
        assert time.monotonic() < deadline, "no iteration played"
        time.sleep(0.2)
    assert fleet.server is not None
    os.killpg(fleet.server.pid, signal.SIGKILL)
    fleet.server.communicate(timeout=60)
    with Store.open(f"sqlite:///{fleet.db}", migrate=False) as store:
        record = store.tunes.find("tune on workers")
        assert record is not None and len(store.tunes.iterations(record.id)) < 4
    fleet.start_server()
    final = _finished(fleet, tune_id)
    assert final["state"] == "finished" and final["done"] == 4, final
    assert [(i["k"], tuple(i["flips"]), tuple(i["plus"]), tuple(i["minus"]), i["result"],
             tuple(i["theta"])) for i in final["iterations"]] == _local(fleet.root / "local")


def test_a_worker_starts_a_tuning_side_from_its_own_file_with_the_values_checked() -> None:
    """A batch's ``names`` lead the worker to its own command for the tuned engine; the
    service's option values are then checked as a submitter's when the engine starts: a spin
    value outside the bounds the engine declares is refused, naming the option and range."""
    from runner.clock import TimeControl
    from runner.fleet.client import JoinSettings, WorkerClient
    from runner.game.record import GameSpec
    from runner.protocol.engine import EngineConfig
    from runner.protocol.factory import make_engine

    own = EngineConfig("bundled", (sys.executable, "-m", "engine"))
    worker = WorkerClient(JoinSettings("http://127.0.0.1:1", "t", 1, {"bundled": own},
                                       bench=None), say=lambda _text: None)
    sent = EngineConfig("plus", ("plus",), options={"Skew": "500"})
    control = TimeControl.parse("depth=1")
    job = GameJob(0, sent, dataclasses.replace(sent, name="minus", options={"Skew": "60"}),
                  GameSpec(control, control))
    mine = worker._own_job(job, {"plus": "bundled", "minus": "bundled"})
    assert mine is not None and mine.engines == ("plus", "minus")
    assert mine.white.argv == own.argv and mine.white.options_submitted
    assert worker._own_job(job, {}) is None  # no engine named plus in its file

    async def start(config: EngineConfig) -> str | None:
        engine = make_engine(config)
        try:
            await engine.start()
        except ValueError as exc:
            return str(exc)
        finally:
            await engine.quit()
        return None

    refused = asyncio.run(start(mine.white))
    assert refused is not None and "Skew" in refused and "range 0..200" in refused, refused
    assert asyncio.run(start(mine.black)) is None
