"""A stop reaches the remote workers (issue 40): a real ``runner serve --accept-workers`` and
a real ``runner worker join`` on loopback. A soft stop (a first stop request, an SPRT
decision) has the worker finish the games it started, upload them and hand the rest of its
batch back; a hard stop has it cut them; either way it then takes the next tournament's
work. Batches are big (clocks short enough for dozens of games a batch, a depth limit
deciding each move), so a run that played its batches out would show in its game counts."""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the service extra (fastapi) is not installed")
httpx = pytest.importorskip("httpx", reason="the fleet extra (httpx) is not installed")

from runner.store.store import Store  # noqa: E402
from tests.test_fleet import WAIT, Fleet, _stored  # noqa: E402

TC = "2+0.02 depth=1"
"""Clocks of a few seconds (a batch of about 28 games a slot) and a depth limit that plays
each move at once."""
ENGINES = ("bundled", "bundled-v1", "bundled-random")
SLOTS = 2


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[Fleet]:
    """A service on loopback taking workers (clocks not scaled: the batches' size does not
    depend on this machine's bench), with a 3 s lease."""
    made = Fleet(tmp_path, lease=3.0, reference=None)
    try:
        yield made
    finally:
        made.stop_all()


def _submit(fleet: Fleet, engines: tuple[str, str], rounds: int, **more: Any) -> int:
    answer = httpx.post(f"{fleet.base}/api/tournaments", json={
        "name": "wind down", "format": "match", "engines": list(engines), "tc": TC,
        "rounds": rounds, "games": 2, "concurrency": SLOTS, "placement": "workers", **more},
        headers={"Authorization": f"Bearer {fleet.admin}"}, timeout=60)
    assert answer.status_code == 201, answer.text
    return int(answer.json()["id"])


def _detail(fleet: Fleet, tournament_id: int) -> dict[str, Any]:
    answer = httpx.get(f"{fleet.base}/api/tournaments/{tournament_id}", timeout=30)
    return dict(answer.json())


def _wait(fleet: Fleet, tournament_id: int, status: str) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT
    while (detail := _detail(fleet, tournament_id))["status"] != status:
        assert time.monotonic() < deadline, f"not {status} in {WAIT:g} s: {detail}"
        time.sleep(0.2)
    return detail


def _wait_stored(fleet: Fleet, tournament_id: int, at_least: int) -> None:
    deadline = time.monotonic() + WAIT
    while len(_stored(fleet.db, tournament_id)) < at_least:
        assert time.monotonic() < deadline, f"fewer than {at_least} games in {WAIT:g} s"
        time.sleep(0.1)


def _stop(fleet: Fleet, tournament_id: int, *, hard: bool = False) -> None:
    answer = httpx.post(f"{fleet.base}/api/tournaments/{tournament_id}/stop",
                        params={"hard": "true"} if hard else {}, timeout=30,
                        headers={"Authorization": f"Bearer {fleet.admin}"})
    assert answer.status_code == 200, answer.text


def _unplayed(db: Path, tournament_id: int) -> int:
    """The tournament's game rows not played (a row is written when its game starts; one
    whose game did not end is left to be played again)."""
    with sqlite3.connect(db) as connection:
        found = connection.execute("SELECT COUNT(*) FROM games WHERE tournament_id = ? AND "
                                   "lower(status) != 'done'", (tournament_id,)).fetchone()
    return int(found[0])


def _batch(db: Path, tournament_id: int) -> tuple[int, str]:
    """The size and state of the tournament's one batch."""
    with Store.open(f"sqlite:///{db}", migrate=False) as store:
        batches = store.fleet.batches(tournament_id)
    assert len(batches) == 1, batches
    return len(batches[0].games), batches[0].state


@pytest.mark.slow  # about 30 s (a service, a worker's bench, four tournaments): its rules
# run fast in process (tests/test_fleet_winding.py)
def test_stops_wind_the_worker_s_batch_down_and_it_takes_the_next_run(fleet: Fleet) -> None:
    """(a) A first stop request while the worker holds a batch of dozens of games: stopped
    after the games it had started (stored, none left running), the rest never played.
    (b) An SPRT that decides in a few games (bundled against a random mover) finishes
    without its batch played out; the games in flight at the decision are counted, as a
    local run counts them. (c) A hard stop: the worker cuts its running games (not stored).
    The same worker, still up, plays each next tournament."""
    worker = fleet.join("a", ENGINES, concurrency=SLOTS)
    stopped = _submit(fleet, ("bundled", "bundled-v1"), rounds=40)
    _wait_stored(fleet, stopped, 1)
    _stop(fleet, stopped)
    detail = _wait(fleet, stopped, "stopped")
    size, state = _batch(fleet.db, stopped)
    played = len(_stored(fleet.db, stopped))
    assert size >= 40 and state == "ended"
    # Within a few games' time (a loaded machine may finish some before the stop arrives).
    assert played == detail["done_games"] and played < size // 4, (played, size)
    assert _unplayed(fleet.db, stopped) == 0  # only the games started had rows

    decided = _submit(fleet, ("bundled", "bundled-random"), rounds=40,
                      sprt={"elo0": 0, "elo1": 200, "alpha": 0.2, "beta": 0.2})
    detail = _wait(fleet, decided, "finished")
    size, state = _batch(fleet.db, decided)
    played = len(_stored(fleet.db, decided))
    assert detail["report"]["sprt"]["decision"] == "H1", detail["report"]
    assert played == detail["done_games"] < size // 2 and state == "ended", (played, size)
    assert _unplayed(fleet.db, decided) == 0

    cut = _submit(fleet, ("bundled", "bundled-v1"), rounds=40)
    _wait_stored(fleet, cut, 1)
    _stop(fleet, cut, hard=True)
    _wait(fleet, cut, "stopped")
    assert _batch(fleet.db, cut)[1] == "lost"  # taken back by the stop, none of it counted
    last = _submit(fleet, ("bundled", "bundled-v1"), rounds=1)
    _wait(fleet, last, "finished")
    assert worker.poll() is None  # it winds down, it does not leave
    assert _unplayed(fleet.db, cut) <= SLOTS  # the games cut, no more
    os.killpg(worker.pid, signal.SIGTERM)
    _, said = worker.communicate(timeout=120)
    assert said.count("finishing the running games, handing the rest back") == 2, said
    # Cut when its heartbeat hears of the stop, or when the upload of a game that ended
    # meanwhile is refused (the batch no longer its).
    assert said.count("cutting the running games") + said.count("by a hard stop") >= 1, said
    assert said.count("wound down") >= 2, said
