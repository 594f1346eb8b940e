"""Games on Dask: in-process vs ``--workers 1`` vs ``--workers 2`` on one workload, in one run.

The workload: fairymax at depth 1 against itself (the bundled engine at depth 1 when fairymax
is absent), GAMES games, concurrency 2, into a fresh SQLite database per mode. For each mode:

- games per minute, over the whole run (cluster start included) and from the first game's
  start to the last record stored (steady state);
- the coordinator's CPU per game: this process's user+system time around the run (RUSAGE_SELF:
  its event loop, writer thread and Dask client; not the engines, not the Dask workers);
- the per-job scheduling overhead, engines excluded: for each game, the time from the job
  leaving the scheduler (Dask submit; in-process, the game's start) to its record stored,
  minus the game itself as timed where it was played (median and 90th percentile). The
  Dask scheduler sends two jobs per slot, so the next one waits on its worker; that wait is
  in the figure, and a fourth row, ``--workers 2`` sending one job per slot, shows the
  round trip alone (dispatch, engines pinged, record back, record stored); a fifth,
  ``--workers 1`` with ``restart = "on"``, starts both engines for every game: the difference
  to ``--workers 1`` is what keeping the engines up across games on a worker saves.

Run: python benchmarks/cluster_bench.py [--games 40]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from runner.cluster.scheduler import DaskScheduler
from runner.config.parse import parse_config
from runner.store import open_database
from runner.tournament import cluster
from runner.tournament.events import Event, GameFinished, GameStarted
from runner.tournament.run import Tournament
from runner.tournament.scheduler import JobFinished, JobStarted, SchedulerEvent

REPO = Path(__file__).resolve().parents[1]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class _Timed(DaskScheduler):
    """The Dask scheduler, noting when each job was submitted and how long its game took."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sent: dict[int, float] = {}
        self.played: dict[int, float] = {}

    def _launch(self, client: Any, job: Any) -> JobStarted | None:
        self.sent[job.index] = time.perf_counter()
        return super()._launch(client, job)

    async def events(self) -> Any:
        async for event in super().events():
            self._note(event)
            yield event

    def _note(self, event: SchedulerEvent) -> None:
        if isinstance(event, JobFinished):
            self.played[event.job.index] = event.seconds


def _table(games: int, restart: bool = False) -> dict[str, Any]:
    fairymax = shutil.which("fairymax") or ("/usr/games/fairymax"
                                             if Path("/usr/games/fairymax").exists() else None)
    if fairymax:
        engines = [{"name": "fm1", "command": [fairymax]}, {"name": "fm2", "command": [fairymax]}]
    else:
        bundled = [sys.executable, "-m", "engine", "--depth", "1"]
        engines = [{"name": "e1", "command": bundled}, {"name": "e2", "command": bundled}]
    if restart:  # a fresh pair of engine processes for every game
        engines = [{**engine, "restart": "on"} for engine in engines]
    return {"name": "bench", "format": "match", "rounds": games // 2, "games": 2,
            "tc": "inf depth=1", "concurrency": 2, "engines": engines,
            "adjudication": {"maxmoves": 60}}


def run_mode(workers: int | None, games: int, workdir: Path,
             restart: bool = False) -> dict[str, float]:
    """One tournament in one mode; its figures."""
    config = parse_config(_table(games, restart), source="benchmark", base_dir=REPO)
    db = open_database(f"sqlite:///{workdir / f'bench-{workers}-{time.monotonic_ns()}.db'}")
    fresh = frozenset(e.name for e in config.engines) if restart else frozenset()
    scheduler = None if workers is None else _Timed(2, workers=workers, tournament="bench",
                                                    fresh_engines=fresh)
    started: dict[int, float] = {}
    stored: dict[int, float] = {}
    seconds: dict[int, float] = {}

    def on_event(event: Event) -> None:
        now = time.perf_counter()
        if isinstance(event, GameStarted):
            started[event.job.index] = now
        elif isinstance(event, GameFinished) and not event.replay:
            stored[event.job.index] = now
            seconds[event.job.index] = event.seconds

    try:
        tournament = Tournament(config, db, scheduler=scheduler, on_event=on_event)
        tournament.prepare()
        cpu0, wall0 = _cpu(), time.perf_counter()
        outcome = asyncio.run(tournament.run())
        wall, cpu = time.perf_counter() - wall0, _cpu() - cpu0
    finally:
        db.close()
    assert outcome.played_now == games, outcome
    sent = started if scheduler is None else scheduler.sent
    overheads = sorted(stored[i] - sent[i] - seconds[i] for i in stored)
    steady = max(stored.values()) - min(started.values())
    return {"wall": wall, "per_minute": 60 * games / wall, "steady_per_minute": 60 * games / steady,
            "cpu_per_game_ms": 1000 * cpu / games,
            "overhead_median_ms": 1000 * statistics.median(overheads),
            "overhead_p90_ms": 1000 * overheads[int(0.9 * (len(overheads) - 1))],
            "game_median_s": statistics.median(seconds.values())}


def main() -> None:
    """Run the three modes one after the other and print one line each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40)
    args = parser.parse_args()
    games = args.games - args.games % 2
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{games} games, concurrency 2, depth 1; load average "
              f"{' '.join(f'{x:.1f}' for x in __import__('os').getloadavg())}")
        print(f"{'mode':<13} {'wall s':>7} {'games/min':>9} {'steady':>7} {'coord CPU/game':>14} "
              f"{'overhead med':>12} {'p90':>7} {'game med':>8}")
        # The last row restarts the engines for every game (restart=on): what keeping them up
        # across games on a worker saves.
        for label, workers, ahead, restart in (
                ("in-process", None, 2, False), ("--workers 1", 1, 2, False),
                ("--workers 2", 2, 2, False), ("w2 1 per slot", 2, 1, False),
                ("w1 restart=on", 1, 2, True)):
            cluster.AHEAD = ahead
            r = run_mode(workers, games, Path(tmp), restart)
            print(f"{label:<13} {r['wall']:7.1f} {r['per_minute']:9.0f} "
                  f"{r['steady_per_minute']:7.0f} {r['cpu_per_game_ms']:11.1f} ms "
                  f"{r['overhead_median_ms']:9.1f} ms {r['overhead_p90_ms']:4.0f} ms "
                  f"{r['game_median_s']:6.2f} s", flush=True)


if __name__ == "__main__":
    main()
