"""How a workers-placed run ends (issue 40), in process on a real SQLite store: a tournament
played through the `FleetHub`'s scheduler with games uploaded as a worker would (short
mates the referee replays and accepts). A game counts as started when the worker says so,
not when its batch is leased; a soft stop (a stop request, an SPRT decision) tells the
worker to finish what it started and hand the rest back, and the run ends without the rest;
a hard stop tells it to cut. The same with real processes: tests/test_fleet_winddown.py."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from runner.config.parse import load_config
from runner.fleet import WIRE_VERSION
from runner.fleet.batches import WindDown
from runner.fleet.hub import FleetHub, Joined, Leased
from runner.fleet.scheduler import Refusal
from runner.game.job import GameJob
from runner.game.record import GameRecord, GameTermination
from runner.rules import Board, Result
from runner.store.store import Store
from runner.tournament.events import RunOutcome
from runner.tournament.run import Tournament
from runner.types import MoveRecord

WHITE_MATES = ("e2e4", "e7e5", "f1c4", "b8c6", "d1h5", "g8f6", "h5f7")
BLACK_MATES = ("f2f3", "e7e5", "g2g4", "d8h4")
SPRT = "\n[sprt]\nelo0 = 0\nelo1 = 200\nalpha = 0.2\nbeta = 0.2\n"
"""Bounds that 'a' winning every game passes after three pairs."""


def _mate(job: GameJob) -> GameRecord:
    """A game of the job won by engine 'a' whatever its colour (a scholar's mate when it
    is White, a fool's mate when Black), as an honest worker would upload it."""
    ucis = WHITE_MATES if job.white.name == "a" else BLACK_MATES
    board = Board()
    moves = []
    for uci in ucis:
        move = board.parse_uci(uci)
        moves.append(MoveRecord(board.san(move), uci=uci, time=0.01))
        board.push(move)
    result = Result.WHITE_WINS if job.white.name == "a" else Result.BLACK_WINS
    now = datetime.now(UTC)
    return GameRecord(job.white.name, job.black.name, job.spec, tuple(moves), result,
                      GameTermination.CHECKMATE, "mated", now, now, board.fen())


def _config(directory: Path, more: str = "") -> Path:
    engines = "".join(f'[[engines]]\nname = "{name}"\ncommand = [{json.dumps(sys.executable)}, '
                      '"-m", "engine"]\n' for name in "ab")  # never started: no worker here
    path = directory / "t.toml"
    path.write_text('name = "wind"\nformat = "match"\nrounds = 10\ngames = 2\n'
                    f'tc = "10+0.1"\n{engines}{more}', encoding="utf-8")
    return path


Play = Callable[[FleetHub, Joined, Leased, Tournament], Awaitable[Any]]


def _play(tmp_path: Path, more: str, worker: Play) -> tuple[Any, RunOutcome, dict[str, int]]:
    """Run the tournament of `_config` on a hub whose one worker (slots for every game: one
    batch) does `worker`; its answer, the run's outcome and the game rows by status."""
    store = Store.open(f"sqlite:///{tmp_path / 'fleet.db'}")
    hub = FleetHub(store, lease_seconds=60.0)
    config = load_config(_config(tmp_path, more))
    tournament = Tournament(config, store, new=True, scheduler=hub.scheduler(config, 2))

    async def play() -> tuple[Any, RunOutcome]:
        await asyncio.to_thread(tournament.prepare)
        FleetHub.attach(tournament)
        joined = await hub.register("w", "tok", {"engines": ["a", "b"], "concurrency": 8,
                                                 "wire": WIRE_VERSION})
        run = asyncio.create_task(tournament.run())
        leased = None
        while leased is None:  # the run opens its scheduler first
            await asyncio.sleep(0.02)
            leased = await hub.request(joined)
        assert len(leased.batch.jobs) == 20  # every game of the schedule, in one batch
        said = await worker(hub, joined, leased, tournament)
        return said, await asyncio.wait_for(run, 60)

    try:
        said, outcome = asyncio.run(play())
        with sqlite3.connect(tmp_path / "fleet.db") as connection:
            rows = dict(connection.execute(
                "SELECT status, COUNT(*) FROM games GROUP BY status").fetchall())
    finally:
        store.close()
    return said, outcome, {str(k).lower(): int(v) for k, v in rows.items()}


async def _rows_marked(path: Path, count: int) -> None:
    """Wait until `count` game rows are written (the run's writer marks them running)."""
    for _ in range(500):
        with sqlite3.connect(path) as connection:
            if connection.execute("SELECT COUNT(*) FROM games").fetchone()[0] >= count:
                return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{count} game rows not written")


def test_a_soft_stop_counts_the_games_started_and_hands_the_rest_back(
        tmp_path: Path) -> None:
    async def worker(hub: FleetHub, joined: Joined, leased: Leased,
                     tournament: Tournament) -> list[Any]:
        batch = leased.batch
        jobs = sorted(batch.jobs.values(), key=lambda job: job.index)
        said: list[Any] = [await hub.heartbeat(joined, batch.id, [0, 1])]
        await hub.upload(joined, batch.id, 0, _mate(jobs[0]), 1.0)
        await _rows_marked(tmp_path / "fleet.db", 2)
        tournament.stop()  # a first stop request, while game 1 plays
        said.append(await hub.heartbeat(joined, batch.id))
        said.append(await hub.upload(joined, batch.id, 1, _mate(jobs[1]), 1.0))
        said.append(await hub.request(joined))  # nothing more is leased
        said.append(await hub.end(joined, batch.id))
        return said

    said, outcome, rows = _play(tmp_path, "", worker)
    assert said == [(60.0, WindDown.NONE), (60.0, WindDown.FINISH), WindDown.FINISH, None, 18]
    assert outcome.done == 2 and outcome.played_now == 2
    assert rows == {"done": 2}  # only the started games had rows; none left running


def test_an_sprt_decision_winds_down_and_counts_the_game_in_flight(tmp_path: Path) -> None:
    async def worker(hub: FleetHub, joined: Joined, leased: Leased,
                     _tournament: Tournament) -> list[Any]:
        batch = leased.batch
        jobs = sorted(batch.jobs.values(), key=lambda job: job.index)
        said: list[Any] = []
        await hub.heartbeat(joined, batch.id, [0, 1])
        for index in range(7):
            # Two slots: game index + 1 is in flight when game index is uploaded.
            said.append(await hub.upload(joined, batch.id, index, _mate(jobs[index]), 1.0))
            if said[-1] is WindDown.FINISH:
                break
            await hub.heartbeat(joined, batch.id, [index + 2])
        # The game in flight at the decision ends and is counted, as in a local run.
        said.append(await hub.upload(joined, batch.id, index + 1, _mate(jobs[index + 1]), 1.0))
        said.append(await hub.end(joined, batch.id))
        return said

    said, outcome, rows = _play(tmp_path, SPRT, worker)
    assert said == [WindDown.NONE] * 5 + [WindDown.FINISH] * 2 + [13]
    assert outcome.sprt is not None and outcome.sprt.decision.value == "H1"
    assert outcome.done == 7 and rows == {"done": 7}


def test_a_hard_stop_cuts_the_batch_and_refuses_its_games(tmp_path: Path) -> None:
    async def worker(hub: FleetHub, joined: Joined, leased: Leased,
                     tournament: Tournament) -> list[Any]:
        batch = leased.batch
        jobs = sorted(batch.jobs.values(), key=lambda job: job.index)
        await hub.heartbeat(joined, batch.id, [0, 1])
        await hub.upload(joined, batch.id, 0, _mate(jobs[0]), 1.0)
        await _rows_marked(tmp_path / "fleet.db", 2)
        tournament.stop(hard=True)
        said: list[Any] = [await hub.heartbeat(joined, batch.id)]
        with pytest.raises(Refusal) as refused:
            await hub.upload(joined, batch.id, 1, _mate(jobs[1]), 1.0)
        said.append((refused.value.status, "hard stop" in refused.value.text))
        said.append(await hub.end(joined, batch.id))
        return said

    said, outcome, rows = _play(tmp_path, "", worker)
    assert said == [(60.0, WindDown.CUT), (409, True), 19]
    assert outcome.done == 1
    assert rows == {"done": 1, "replay": 1}  # the game cut: played again on a resume


def test_a_refusal_passes_through_a_context_manager_as_itself() -> None:
    # Frozen, it turned into FrozenInstanceError where contextlib set its __traceback__.
    import contextlib

    @contextlib.contextmanager
    def held() -> Iterator[None]:
        yield

    with pytest.raises(Refusal) as caught, held():
        raise Refusal(409, "the run ended")
    assert (caught.value.status, str(caught.value)) == (409, "the run ended")
