"""The service under a bounded load: benchmarks/service_load.py, smaller, in CI.

The real `runner serve` (a subprocess on a free loopback port, a temporary SQLite database,
RUNNER_TOKEN, the repository's engines file) plays the bundled engine against its v1, two
games at once, while CLIENTS clients each read the event stream and poll the status. The
games are cut at MAXMOVES moves each (a draw by the move limit) to bound the run. Asserted:
every client got every game's `game_finished`, no response was a 5xx (no poll went
unanswered), no game was lost on time (the stored terminations), and no process of the
service (engines included) is left once it is stopped. The figures are printed (-s).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip("uvicorn", reason="the service extra (uvicorn) is not installed")

from tests.conftest import REPO

_spec = importlib.util.spec_from_file_location("service_load", REPO / "benchmarks" / "service_load.py")
assert _spec is not None and _spec.loader is not None
service_load = importlib.util.module_from_spec(_spec)
sys.modules["service_load"] = service_load
_spec.loader.exec_module(service_load)

CLIENTS = 200
POLL = 1.0
TC = "10+0.1"
MAXMOVES = 30


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_two_games_watched_by_200_clients(tmp_path: Path) -> None:
    """200 streams and 200 pollers while 2 games run: no 5xx, no missed game, no time loss."""
    result = service_load.run_load(clients=CLIENTS, rounds=1, tc=TC, poll=POLL,
                                   maxmoves=MAXMOVES, timeout=120.0, workdir=tmp_path)
    for line in service_load.report(result, tc=TC, poll=POLL):
        print(line)
    assert len(result.games) == 2, result.games
    assert result.server_errors == 0
    assert set(result.poll_statuses) == {200}, result.poll_statuses
    assert all(dict(r.statuses) == {200: 1 + r.reconnects} for r in result.streams)
    assert result.missed == [], f"{len(result.missed)} clients missed a game_finished"
    assert all(r.tournament_finished for r in result.streams)
    assert all(r.moves > 0 for r in result.streams)
    assert result.time_losses == [], result.time_losses
    assert result.engines_left == []
    assert len(result.poll_latencies) >= CLIENTS  # every poller got answers, more than once

