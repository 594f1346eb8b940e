"""Tournament throughput: the workload cutechess-cli was measured on, played by our runner.

100 games of fairymax at depth 1 against itself, openings from noob_3moves.epd in random
order (each opening played twice, colors swapped), two games at a time, into a fresh SQLite
database. Prints wall time, games per minute, plies, and the runner's own CPU per ply: this
process's user+system time (children excluded: getrusage(RUSAGE_SELF) counts only the runner,
its event loop and its writer thread, not the engines it reaps), measured around the run.

cutechess-cli is not installable here (not in Debian 12), so its figures are the ones the issue
quotes for this workload on this kind of machine: 5.5 s wall and 238 us of runner CPU per ply
(6,940 plies). Run: python benchmarks/tournament_bench.py [--games 100] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from runner.config.parse import parse_config
from runner.store import open_database
from runner.tournament.run import Tournament

BOOK = Path(__file__).resolve().parents[2] / "shared" / "data" / "books" / "noob_3moves.epd"
CUTECHESS_WALL = 5.5
CUTECHESS_CPU_PER_PLY_US = 238.0
CUTECHESS_PLIES = 6940


def _cpu(who: int = resource.RUSAGE_SELF) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def run_once(games: int, workdir: Path) -> tuple[float, float, int]:
    """One tournament; returns (wall seconds, runner CPU seconds, plies)."""
    fairymax = shutil.which("fairymax") or "/usr/games/fairymax"
    table = {
        "name": "bench", "format": "match", "rounds": games // 2, "games": 2,
        "tc": "inf depth=1", "concurrency": 2,
        "engines": [{"name": "fm1", "command": [fairymax]}, {"name": "fm2", "command": [fairymax]}],
        "openings": {"file": str(BOOK), "format": "epd", "order": "random", "seed": 1},
    }
    config = parse_config(table, source="benchmark", base_dir=workdir)
    db_path = workdir / f"bench-{time.monotonic_ns()}.db"
    db = open_database(f"sqlite:///{db_path}")
    try:
        tournament = Tournament(config, db)
        tournament.prepare()
        cpu0, wall0 = _cpu(), time.perf_counter()
        engines0 = _cpu(resource.RUSAGE_CHILDREN)
        outcome = asyncio.run(tournament.run())
        wall, cpu = time.perf_counter() - wall0, _cpu() - cpu0
        engines = _cpu(resource.RUSAGE_CHILDREN) - engines0
        usage = resource.getrusage(resource.RUSAGE_SELF)
        print(f"  engines' CPU (reaped children): {engines:.2f} s; runner user {usage.ru_utime:.2f} s, "
              f"system {usage.ru_stime:.2f} s (whole process), "
              f"context switches {usage.ru_nvcsw} voluntary, {usage.ru_nivcsw} involuntary")
        with db.engine.connect() as conn:
            from sqlalchemy import func, select

            from runner.store.models import GameRow

            plies = int(conn.execute(select(func.sum(GameRow.plies))).scalar() or 0)
        assert outcome.done == games, outcome
        return wall, cpu, plies
    finally:
        db.close()


def workload_arguments(description: str) -> argparse.Namespace:
    """--games and --repeat for this workload (relay_floor.py shares it); exits without the book."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not BOOK.exists():
        raise SystemExit(f"{BOOK} is missing (the shared corpora beside the repository)")
    return args


def main() -> None:
    """Run the benchmark and print medians against cutechess-cli's figures."""
    args = workload_arguments(__doc__.splitlines()[0])
    walls, per_ply, wall_per_ply = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for attempt in range(args.repeat):
            wall, cpu, plies = run_once(args.games, Path(tmp))
            walls.append(wall)
            per_ply.append(cpu / plies * 1e6)
            wall_per_ply.append(wall / plies * 1e6)
            print(f"run {attempt + 1}: {wall:.2f} s wall, {args.games / wall * 60:.0f} games/min, "
                  f"{plies} plies, runner CPU {cpu:.2f} s = {cpu / plies * 1e6:.0f} us/ply")
    wall, cpu_us = statistics.median(walls), statistics.median(per_ply)
    print(f"median: {wall:.2f} s wall ({wall / CUTECHESS_WALL:.2f}x cutechess-cli's "
          f"{CUTECHESS_WALL} s), runner CPU {cpu_us:.0f} us/ply "
          f"({cpu_us / CUTECHESS_CPU_PER_PLY_US:.2f}x cutechess-cli's {CUTECHESS_CPU_PER_PLY_US:.0f})")
    # The games differ from cutechess-cli's (another random opening sequence), so their
    # length does too: wall time per ply compares the two runs on equal terms.
    theirs = CUTECHESS_WALL / CUTECHESS_PLIES * 1e6
    ours = statistics.median(wall_per_ply)
    print(f"wall per ply: {ours:.0f} us ({ours / theirs:.2f}x cutechess-cli's {theirs:.0f} us)")


if __name__ == "__main__":
    main()
