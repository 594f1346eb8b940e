"""The game slot's rules, the same scenarios on both schedulers that run slots (issue 27).

Each scenario runs once in this process (`LocalScheduler`) and once on a one-worker local
Dask cluster (`DaskScheduler` on a real scheduler and worker on 127.0.0.1), with the bundled
engine as real processes and its fault modes: kept engines reused (by their full
configuration), engines started afresh after a stall, an engine that never starts, a hard
stop during an engine's handshake and during a game, and games that cannot be set up. Every
scenario ends by checking that no engine process is left below this one (the Dask worker's
engines are its grandchildren). Engine starts are counted by a shell line in front of each
engine's command, on either side.
"""

from __future__ import annotations

import asyncio
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from runner.clock import TimeControl
from runner.game.adjudication import AdjudicationRules
from runner.game.job import GameJob
from runner.game.record import GameSpec, GameTermination
from runner.protocol.engine import EngineConfig
from runner.tournament.events import Notice
from runner.tournament.scheduler import (
    JobFinished,
    LocalScheduler,
    Scheduler,
    SchedulerEvent,
    SchedulerFailure,
)
from tests.conftest import REPO

distributed = pytest.importorskip("distributed", reason="distributed is not installed "
                                  "(pip install '.[cluster]')")
psutil = pytest.importorskip("psutil", reason="psutil (a dependency of distributed) is missing")

from runner.cluster.scheduler import SLOTS, DaskScheduler  # noqa: E402  (needs distributed)

pytestmark = pytest.mark.timeout(240)

CLOCK = TimeControl.parse("20+0.2")
QUICK = AdjudicationRules(max_moves=8)
LEFT_WAIT = 30.0
"""Seconds an engine may take to go once a run has ended (quit, then SIGTERM, SIGKILL)."""


@pytest.fixture(scope="module")
def dask_address() -> Iterator[str]:
    """One Dask worker with one game slot, outliving the runs on it (as a real cluster does)."""
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  resources={SLOTS: 1}, dashboard_address="127.0.0.1:0",
                                  silence_logs=40) as made:
        yield made.scheduler_address


@pytest.fixture(params=["in-process", "dask"])
def where(request: pytest.FixtureRequest) -> str:
    """Where the slots run: this process's loop, or the Dask worker's."""
    return str(request.param)


@dataclass
class Bench:
    """What a scenario needs: schedulers of the chosen kind, engines whose starts are counted."""

    where: str
    address: str | None
    starts: Path

    def scheduler(self, *, fresh: frozenset[str] = frozenset()) -> Scheduler:
        """A one-slot scheduler of the kind under test."""
        if self.address is None:
            return LocalScheduler(1, fresh_engines=fresh)
        return DaskScheduler(1, address=self.address, fresh_engines=fresh, tournament="slot")

    def engine(self, name: str, *args: str, options: dict[str, str] | None = None,
               command: tuple[str, ...] | None = None) -> EngineConfig:
        """The bundled engine (depth 1) called `name`, each start logged under its name."""
        argv = command or (sys.executable, "-m", "engine", "--depth", "1", "--level", "1", *args)
        logged = ("sh", "-c", f'echo {name} >> "{self.starts}"; exec "$0" "$@"', *argv)
        return EngineConfig(name, logged, working_dir=REPO, options=options or {},
                            start_timeout=20.0)

    def counted(self) -> dict[str, int]:
        """Engine starts so far, by name."""
        if not self.starts.exists():
            return {}
        names = self.starts.read_text().split()
        return {name: names.count(name) for name in sorted(set(names))}


@pytest.fixture
def bench(where: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Bench]:
    """The scenario's bench; afterwards, no engine process may be left."""
    address = request.getfixturevalue("dask_address") if where == "dask" else None
    yield Bench(where, address, tmp_path / "starts.log")
    assert _wait_no_engines() == [], "engine processes were left running"


def _engines() -> list[str]:
    """The bundled-engine processes below this one (zombies are gone already)."""
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            line = " ".join(child.cmdline())
            if "engine" in line and "--depth" in line and child.status() != psutil.STATUS_ZOMBIE:
                found.append(f"{child.pid}: {line}")
        except psutil.NoSuchProcess:
            pass
    return found


def _wait_no_engines(limit: float = LEFT_WAIT) -> list[str]:
    deadline = time.monotonic() + limit
    while (left := _engines()) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def _job(index: int, white: EngineConfig, black: EngineConfig, *,
         control: TimeControl = CLOCK, untimed_timeout: float = 5.0) -> GameJob:
    spec = GameSpec(control, control, adjudication=QUICK, tags={"Round": str(index + 1)},
                    untimed_move_timeout=untimed_timeout)
    return GameJob(index, white, black, spec)


def _run(scheduler: Scheduler, jobs: list[GameJob],
         stop_when: Callable[[], bool] | None = None) -> list[SchedulerEvent]:
    """Play `jobs`, collecting the events; with `stop_when`, a watcher thread stops the run
    hard the moment it holds (the run may be waiting on an engine: no event to react to)."""
    async def go() -> list[SchedulerEvent]:
        loop = asyncio.get_running_loop()
        done = threading.Event()

        def watch() -> None:
            assert stop_when is not None
            while not done.is_set():
                if stop_when():
                    loop.call_soon_threadsafe(scheduler.stop, True)
                    return
                time.sleep(0.1)

        watcher = None
        if stop_when is not None:
            watcher = threading.Thread(target=watch, daemon=True)
            watcher.start()
        scheduler.submit(jobs)
        seen: list[SchedulerEvent] = []
        try:
            async for event in scheduler.events():
                seen.append(event)
        finally:
            done.set()
        return seen

    return asyncio.run(go())


def _finished(events: list[SchedulerEvent]) -> list[JobFinished]:
    return [e for e in events if isinstance(e, JobFinished)]


def _failures(events: list[SchedulerEvent]) -> list[str]:
    return [e.text for e in events if isinstance(e, SchedulerFailure)]


def _running(marker: str, settle: float = 0.0) -> Callable[[], bool]:
    """True once an engine process whose command holds `marker` has run `settle` seconds."""
    def check() -> bool:
        return any(marker in line and time.time() - psutil.Process(int(line.split(":")[0]))
                   .create_time() >= settle for line in _engines())

    return check


def test_kept_engines_are_reused_by_their_full_configuration(bench: Bench) -> None:
    """Three games of a against b start each once; b with another option under the same name
    is another engine, started afresh."""
    a, b = bench.engine("a"), bench.engine("b")
    other_b = bench.engine("b", "--seed", "7")
    events = _run(bench.scheduler(), [_job(0, a, b), _job(1, b, a), _job(2, a, b),
                                      _job(3, a, other_b)])
    assert [e.job.index for e in _finished(events)] == [0, 1, 2, 3], events
    assert not any(e.record.replay for e in _finished(events))
    assert bench.counted() == {"a": 1, "b": 2}


def test_engines_start_afresh_after_a_stall_and_when_asked(bench: Bench) -> None:
    """A game b stalls in (an untimed move that never comes) ends STALL and the slot starts
    its engines afresh for the next game; a `restart = on` engine starts for every game."""
    a, hangs = bench.engine("a"), bench.engine("b", "--fault", "hang@2")
    depth = TimeControl.parse("depth=1")
    events = _run(bench.scheduler(), [_job(0, a, hangs, control=depth, untimed_timeout=2.0),
                                      _job(1, a, bench.engine("c"), control=depth)])
    finished = _finished(events)
    assert [e.record.termination for e in finished][0] is GameTermination.STALL, events
    assert len(finished) == 2 and bench.counted() == {"a": 2, "b": 1, "c": 1}

    bench.starts.unlink()
    a, b = bench.engine("a"), bench.engine("b")
    events = _run(bench.scheduler(fresh=frozenset({"b"})), [_job(i, a, b) for i in range(3)])
    assert len(_finished(events)) == 3 and bench.counted() == {"a": 3, "b": 3}


def test_an_engine_that_never_starts_stops_the_run(bench: Bench) -> None:
    """b exits at once: no game is played, the run stops saying why (in this process after
    MAX_START_FAILURES starts in a row; on a cluster once no worker can start b)."""
    a = bench.engine("a")
    broken = bench.engine("b", command=("sh", "-c", "exit 3"))
    events = _run(bench.scheduler(), [_job(i, a, broken) for i in range(4)])
    assert not _finished(events)
    [failure] = _failures(events)
    # On a cluster the jobs go out together: whichever the last worker refuses names the run's end.
    assert ("engine b failed to start" in failure if bench.where == "in-process"
            else re.search(r"no worker left that can play game \d \(a and b\)", failure)), failure
    assert any("start" in e.text for e in events if isinstance(e, Notice)), events
    assert bench.counted()["b"] >= 1


@pytest.mark.parametrize(("when", "fault", "settle"), [
    ("during the handshake", "no-done", 1.0), ("during a game", "hang@1", 2.0)])
def test_a_hard_stop_leaves_no_engine(bench: Bench, when: str, fault: str, settle: float) -> None:
    """A hard stop while b is stuck ends the run with no record and every engine gone.

    During the handshake: b sends ``feature done=0`` and nothing more (for two minutes);
    before the one slot, a Dask worker left that engine running until the worker itself
    exited. During a game: b stops answering anything, quit included, at its first move, so
    the slot has to go on to signals."""
    a, stuck = bench.engine("a"), bench.engine("b", "--fault", fault)
    events = _run(bench.scheduler(), [_job(0, a, stuck), _job(1, a, stuck)],
                  stop_when=_running(fault, settle=settle))
    assert not _finished(events) and not _failures(events)
    assert bench.counted() == {"a": 1, "b": 1}
    assert _wait_no_engines() == [], f"the engine stopped {when} was left running"


@pytest.mark.parametrize("case", ["undeclared option", "node limit for CECP"])
def test_a_game_that_cannot_be_set_up_stops_the_run(bench: Bench, case: str) -> None:
    """An engine refusing its configuration, or a game an engine cannot play: every game
    would fail alike, so the run stops at the first with the reason."""
    a = bench.engine("a")
    if case == "undeclared option":
        jobs = [_job(i, a, bench.engine("b", options={"NoSuchOption": "1"})) for i in range(3)]
        said = "declares no option 'NoSuchOption'"
    else:
        nodes = TimeControl.parse("nodes=100")
        jobs = [_job(i, a, bench.engine("b"), control=nodes) for i in range(3)]
        said = "CECP has no node limit"
    events = _run(bench.scheduler(), jobs)
    assert not _finished(events)
    [failure] = _failures(events)
    assert failure.startswith("game 1 cannot be played") and said in failure, failure
