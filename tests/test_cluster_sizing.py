"""Where a run plays when nobody said: this process up to what it relays in time, then local
Dask workers (issue 30). The choice is a pure function; the runs are real (Dask on 127.0.0.1)."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from runner.cli.vocabulary import CommandLineError, read_arguments
from runner.clock import TimeControl
from runner.cluster import make_scheduler
from runner.cluster.sizing import (
    CPUS_ENV,
    GAMES_PER_PROCESS,
    local_workers_for,
    machine_cpus,
)
from runner.cluster.worker import JobReply
from runner.config.parse import parse_config
from runner.game.job import GameJob
from runner.game.play import FROZEN_REPLAY
from runner.game.record import GameRecord, GameSpec, GameTermination
from runner.game.slot import Played
from runner.protocol.engine import EngineConfig
from runner.rules import STARTING_FEN, Result
from runner.tournament.events import Notice
from runner.tournament.scheduler import LocalScheduler
from tests.conftest import REPO

ABOVE = GAMES_PER_PROCESS + 1
"""A concurrency one process should not carry alone."""


def test_up_to_the_threshold_games_stay_in_this_process() -> None:
    assert local_workers_for(1, 2) == 0
    assert local_workers_for(GAMES_PER_PROCESS, 2) == 0
    assert local_workers_for(GAMES_PER_PROCESS, 64) == 0


def test_past_the_threshold_one_worker_per_share_of_games_on_half_the_cores() -> None:
    assert local_workers_for(ABOVE, 4) == 2
    assert local_workers_for(128, 4) == 2
    assert local_workers_for(128, 8) == 4
    assert local_workers_for(3 * GAMES_PER_PROCESS, 16) == 3
    assert local_workers_for(1000, 8) == 4


def test_two_cores_or_fewer_never_get_workers() -> None:
    """Measured on 2 cores: workers took the engines' cores and did worse than one process
    (and on one core more processes only share it)."""
    for cpus in (1, 2, 3):
        assert local_workers_for(1000, cpus) == 0


@given(st.integers(1, 5000), st.integers(1, 256))
def test_the_choice_is_bounded_and_grows_with_the_games(concurrency: int, cpus: int) -> None:
    workers = local_workers_for(concurrency, cpus)
    assert workers == 0 or 2 <= workers <= cpus // 2
    assert workers * GAMES_PER_PROCESS < concurrency + GAMES_PER_PROCESS
    assert local_workers_for(concurrency + 1, cpus) >= workers


def test_the_cores_counted_can_be_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CPUS_ENV, "12")
    assert machine_cpus() == 12
    monkeypatch.setenv(CPUS_ENV, "many")  # not a number: the machine's own count
    assert machine_cpus() == len(os.sched_getaffinity(0))


def test_match_reads_workers() -> None:
    words = ["--engine", "cmd=a", "--engine", "cmd=b", "--each", "tc=1+0.01"]
    assert read_arguments(words, "match").workers is None
    assert read_arguments([*words, "--workers", "0"], "match").workers == 0
    assert read_arguments([*words, "--workers", "3"], "gauntlet").workers == 3
    with pytest.raises(CommandLineError, match="--workers"):
        read_arguments([*words, "--workers", "-1"], "match")


def test_workers_0_plays_here_even_when_the_file_asks_for_a_cluster() -> None:
    config = parse_config({"name": "c", "format": "match", "tc": "1+0.01", "engines": [
        {"name": "a", "command": [sys.executable]}, {"name": "b", "command": [sys.executable]}],
        "cluster": {"workers": 2}}, source="c.toml")
    assert type(make_scheduler(config, ABOVE, workers=0)) is LocalScheduler


# -- real runs ---------------------------------------------------------------------------------


def _config(tmp_path: Path, concurrency: int, extra: str = "") -> Path:
    """Two games of instant bundled engines at `concurrency` games at once (`extra`: more
    of the file's top-level settings)."""
    blocks = "".join(f'[[engines]]\nname = "{name}"\ncommand = ["{sys.executable}", "-m", '
                     f'"engine", "--level", "random", "--seed", "{seed}"]\n'
                     for name, seed in (("a", 1), ("b", 2)))
    path = tmp_path / "t.toml"
    path.write_text(f'name = "sized"\nformat = "match"\nrounds = 1\ngames = 2\ntc = "10+0.1"\n'
                    f'concurrency = {concurrency}\n{extra}\n[adjudication]\nmaxmoves = 20\n\n'
                    f'{blocks}')
    return path


_NO_DASK = """\
import sys

sys.modules["distributed"] = None  # as on a machine without the cluster extra
"""


def _workers_of_games(tmp_path: Path, *extra: str, without_dask: bool = False,
                      cpus: int = 4) -> tuple[list[str | None], str]:
    """Run the file with `extra` words (`without_dask`: as if the cluster extra were not
    installed; `cpus`: the cores the runner counts); the worker column of every stored game,
    and what the run wrote to stderr."""
    db = tmp_path / f"run{len(list(tmp_path.glob('*.db')))}.db"
    path = str(REPO)
    if without_dask:
        (tmp_path / "no_dask").mkdir(exist_ok=True)
        (tmp_path / "no_dask" / "sitecustomize.py").write_text(_NO_DASK)
        path = f"{tmp_path / 'no_dask'}{os.pathsep}{path}"
    done = subprocess.run(
        [sys.executable, "-m", "runner", "run", str(tmp_path / "t.toml"), "--db", str(db),
         "-q", "--new", *extra], cwd=tmp_path, capture_output=True, text=True, timeout=180,
        env={**os.environ, "PYTHONPATH": path, CPUS_ENV: str(cpus)})
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(db) as conn:
        rows = conn.execute("select status, worker from games").fetchall()
    assert [status for status, _ in rows] == ["done", "done"]
    return [worker for _, worker in rows], done.stderr


def test_a_high_concurrency_run_plays_on_local_workers_by_default(tmp_path: Path) -> None:
    """Without --workers, a concurrency past one process's share starts local workers (the
    games come back stamped with a worker's name); --workers 0 keeps them here."""
    pytest.importorskip("distributed", reason="distributed is not installed "
                        "(pip install '.[cluster]')")
    _config(tmp_path, ABOVE)
    workers, said = _workers_of_games(tmp_path)
    assert all(worker is not None for worker in workers)
    assert f"{ABOVE} games at once: played on 2 local worker processes" in said
    workers, said = _workers_of_games(tmp_path, "--workers", "0")
    assert workers == [None, None] and "local worker" not in said


def test_without_the_cluster_extra_a_high_concurrency_run_stays_here(tmp_path: Path) -> None:
    """The default never asks for what is not installed: the run plays here, as before."""
    _config(tmp_path, ABOVE)
    workers, said = _workers_of_games(tmp_path, without_dask=True)
    assert workers == [None, None] and "local worker" not in said


def test_workers_0_plays_here_without_the_extra_despite_the_file(tmp_path: Path) -> None:
    """--workers 0 overrides the file's [cluster] and so needs no cluster extra."""
    _config(tmp_path, 2, extra="[cluster]\nworkers = 2\n")
    workers, _ = _workers_of_games(tmp_path, "--workers", "0", without_dask=True)
    assert workers == [None, None]


def test_a_low_concurrency_run_stays_in_this_process(tmp_path: Path) -> None:
    _config(tmp_path, 2)
    assert _workers_of_games(tmp_path)[0] == [None, None]


def test_two_cores_keep_a_high_concurrency_run_here(tmp_path: Path) -> None:
    _config(tmp_path, ABOVE)
    workers, said = _workers_of_games(tmp_path, cpus=2)
    assert workers == [None, None] and "local worker" not in said


# -- a worker under load is not a broken worker --------------------------------------------------


def _replayed_reply(reason: str, job: int) -> str:
    """A worker's JSON answer for `job`: a game not scored (to be played again) for `reason`."""
    control = TimeControl.parse("1+0.01")
    record = GameRecord(
        white="a", black="b", spec=GameSpec(control, control), moves=(),
        result=Result.UNFINISHED, termination=GameTermination.ERROR, reason=reason,
        started_at=datetime(2026, 1, 1, tzinfo=UTC), ended_at=datetime(2026, 1, 1, tzinfo=UTC),
        final_fen=STARTING_FEN, protocol_lines=((), ()), replay=True, worker="host/0")
    return JobReply(Played(record, 1.0), worker="host/0",
                    address="tcp://127.0.0.1:1").to_json()


async def _notices_after_replays(reason: str) -> list[str]:
    """The notices a local-cluster scheduler gives for four games of one worker replayed for
    `reason` (the worker's answers go through the same path as on a cluster)."""
    from runner.cluster.scheduler import DaskScheduler, _InFlight

    scheduler = DaskScheduler(ABOVE, workers=2)
    engine = EngineConfig(name="a", argv=(sys.executable,))
    notices = []
    for index in range(4):
        job = GameJob(index, engine, engine, GameSpec(TimeControl.parse("1+0.01"),
                                                      TimeControl.parse("1+0.01")))
        answer: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        answer.set_result(_replayed_reply(reason, index))
        task = asyncio.ensure_future(answer)
        await task
        flight = _InFlight(job, cast(Any, None), index)
        notices += [event.text async for event in scheduler._outcome(cast(Any, None), flight, task)
                    if isinstance(event, Notice)]
    return notices


def test_replays_of_a_frozen_worker_do_not_leave_it_out() -> None:
    """On a loaded machine a worker's loop stands still and flags fall: those games are played
    again, but the worker stays in (all left out, the run stopped: seen at 64 games at once on
    two cores); replays for runner errors still count against it."""
    pytest.importorskip("distributed", reason="distributed is not installed")
    frozen = asyncio.run(_notices_after_replays(
        f"{FROZEN_REPLAY} for 2.1 s while Black was on move, and its flag fell: not scored"))
    assert frozen == []
    broken = asyncio.run(_notices_after_replays("runner error: RuntimeError: boom"))
    assert broken == ["worker host/0 failed 3 jobs; it takes no more games in this run"]
