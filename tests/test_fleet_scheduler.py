"""The workers-placed run's scheduler (`runner.fleet.scheduler`) in the windows the service's
event loop leaves open: a batch is written to the store on a thread while the run goes on
looking for its end, or is stopped. Nothing here starts an engine; the games are made up and
refereed as uploads are."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from runner.config.parse import load_config
from runner.fleet.scheduler import FleetScheduler
from runner.store import open_database
from runner.store.fleet import Fleet
from runner.store.records import TournamentStatus
from runner.store.store import Store
from runner.tournament.run import Tournament
from tests.test_batch_store import _fools_mate

WAIT = 60.0
"""Seconds any one step may take on a loaded machine."""


class _SlowLease:
    """The store's batch write held until `go` is set; `entered` once a lease is waiting."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.entered = threading.Event()
        self.go = threading.Event()
        real = Fleet.lease

        def held(fleet: Fleet, *args: Any) -> int:
            self.entered.set()
            assert self.go.wait(WAIT), "the test never let the lease through"
            return real(fleet, *args)

        # On the class: each `Store.fleet` is a new view of the database.
        monkeypatch.setattr(Fleet, "lease", held)


def _tournament(tmp_path: Path) -> tuple[Store, FleetScheduler, Tournament]:
    """A pair of games of engines a and b, placed on a fleet scheduler."""
    engines = "".join(f'[[engines]]\nname = "{name}"\ncommand = [{json.dumps(sys.executable)}, '
                      '"-m", "engine"]\n' for name in "ab")  # never started: no worker here
    (tmp_path / "t.toml").write_text('name = "race"\nformat = "match"\nrounds = 1\n'
                                     f'games = 2\ntc = "10+0.1"\n{engines}')
    store = Store.of(open_database(f"sqlite:///{tmp_path / 'runner.db'}"))
    scheduler = FleetScheduler(store, lease_seconds=60)
    return store, scheduler, Tournament(load_config(tmp_path / "t.toml"), store, new=True,
                                        scheduler=scheduler)


async def _opened(store: Store, scheduler: FleetScheduler, tournament: Tournament,
                  ) -> tuple[int, asyncio.Task[Any]]:
    """A registered worker's id and the running tournament, once its jobs wait."""
    await asyncio.to_thread(tournament.prepare)
    scheduler.tournament_id = tournament.tournament_id
    worker = await asyncio.to_thread(store.fleet.register, "w", "tok", {"engines": ["a", "b"]})
    run = asyncio.create_task(tournament.run())
    for _ in range(int(WAIT / 0.05)):
        if scheduler.wants({"a", "b"}):
            return worker, run
        await asyncio.sleep(0.05)
    raise AssertionError("the run never offered its jobs")


def test_the_run_waits_for_a_batch_being_leased_with_its_last_games(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every job taken out of the line for a batch whose row is still being written: the
    run is not over (it ended a game short on a loaded service, CI's fleet test, before the
    scheduler counted the leases in flight); once the batch is out and its games come back,
    the tournament finishes."""
    store, scheduler, tournament = _tournament(tmp_path)
    slow = _SlowLease(monkeypatch)

    async def play() -> Any:
        worker, run = await _opened(store, scheduler, tournament)
        leasing = asyncio.create_task(scheduler.lease(worker, {"a", "b"}, 1))
        assert await asyncio.to_thread(slow.entered.wait, WAIT)
        # The run looks for its end at least once a second: let it look a few times.
        await asyncio.sleep(2.5)
        ended_early = run.done()
        slow.go.set()
        assert not ended_early, f"the run ended with a batch being leased: {run.result()}"
        batch = await asyncio.wait_for(leasing, WAIT)
        assert batch is not None
        for job in sorted(batch.jobs.values(), key=lambda job: job.index):
            await asyncio.wait_for(scheduler.upload(worker, batch.id, _fools_mate(job),
                                                    job.index, 1.0, "w"), WAIT)
        return await asyncio.wait_for(run, WAIT)

    outcome = asyncio.run(play())
    assert (outcome.status, outcome.done) == (TournamentStatus.FINISHED, 2), outcome
    assert tournament.tournament_id is not None
    assert [b.state for b in store.fleet.batches(tournament.tournament_id)] == ["ended"]


def test_a_batch_leased_across_a_hard_stop_is_handed_back_not_given_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hard stop while a batch's row is written: the worker gets nothing (a stop leases
    nothing more), the row says the batch was lost, and the run ends with its games unplayed
    for a resume to play."""
    store, scheduler, tournament = _tournament(tmp_path)
    slow = _SlowLease(monkeypatch)

    async def play() -> tuple[Any, Any]:
        worker, run = await _opened(store, scheduler, tournament)
        leasing = asyncio.create_task(scheduler.lease(worker, {"a", "b"}, 1))
        assert await asyncio.to_thread(slow.entered.wait, WAIT)
        tournament.stop(hard=True)
        slow.go.set()
        return await asyncio.wait_for(leasing, WAIT), await asyncio.wait_for(run, WAIT)

    batch, outcome = asyncio.run(play())
    assert batch is None
    assert (outcome.status, outcome.done) == (TournamentStatus.INTERRUPTED, 0), outcome
    assert tournament.tournament_id is not None
    assert [b.state for b in store.fleet.batches(tournament.tournament_id)] == ["lost"]
