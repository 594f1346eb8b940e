"""``runner report`` over a database of 100,000 synthetic games: wall time and memory.

Builds a SQLite database (through the alembic migrations, like the CLI does) holding one
tournament of `--games` synthetic games, bulk-inserted with SQLAlchemy Core ``insert()``
executemany (not one ORM object per game): by default an SPRT match of two engines, the
heaviest report (an LLR per plotted point); ``--format`` and ``--kind round-robin`` vary it.
Each game has a PGN text of about 400 bytes, so the database is ~50 MB and loading the games
would show in memory.

Measured:
- ``runner report`` as a fresh process (imports, migration check, queries, rendering): wall
  and CPU time (median of ``--repeat``) and its peak RSS (``wait4``'s usage of that child),
  the same over a 10,000-game database for comparison (memory flat: the same peak);
- ``build_report`` in this process: time and the peak of Python allocations (tracemalloc),
  which would grow with the number of games if anything held them.

    python benchmarks/report_bench.py [--games N] [--format text|json|html]
                                      [--kind match|round-robin] [--repeat N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import insert

from runner.report.build import build_report
from runner.report.render import render
from runner.store import EngineRowValues, GameStatus, create_tournament, open_database
from runner.store.models import EngineRow, GameRow
from runner.store.store import ReportRows
from runner.tournament.pairing import match, round_robin

T0 = datetime(2026, 1, 1, tzinfo=UTC)
_ENDINGS = (("checkmate", 0.30), ("adjudication", 0.30), ("threefold repetition", 0.15),
            ("resignation", 0.12), ("fifty moves", 0.05), ("stalemate", 0.03),
            ("time forfeit", 0.03), ("disconnect", 0.01), ("illegal move", 0.01))
_DRAWN = {"threefold repetition", "fifty moves", "stalemate"}
_PGN_BODY = "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 " * 12


def build_database(path: Path, games: int, kind: str, seed: int = 7) -> int:
    """A database with one tournament of `games` synthetic games; returns the tournament id."""
    rng = random.Random(seed)
    names = ["new", "old"] if kind == "match" else ["a", "b", "c", "d", "e", "f"]
    schedule = (match(*names, rounds=games // 2) if kind == "match"
                else round_robin(names, rounds=games // 30 + 1))
    config = {"name": f"bench {kind}", "format": kind,
              "engines": [{"name": n} for n in names], "games": 2}
    if kind == "match":
        config["sprt"] = {"elo0": 0.0, "elo1": 5.0, "alpha": 0.05, "beta": 0.05,
                          "model": "normalized", "maxgames": None}
    strength = {n: 15.0 * i for i, n in enumerate(reversed(names))}
    db = open_database(f"sqlite:///{path}")
    try:
        with db.session() as session:
            tid = create_tournament(
                session, name=config["name"], config=config, fingerprint="bench",
                engines=[EngineRowValues(n, ["engine", n]) for n in names], total_games=games).id
            ids = {row.name: row.id for row in session.query(EngineRow)}
        endings, weights = zip(*_ENDINGS, strict=True)
        with db.engine.begin() as connection:
            for chunk in range(0, games, 10_000):
                rows = []
                for index in range(chunk, min(chunk + 10_000, games)):
                    job = schedule.job(index)
                    ending = rng.choices(endings, weights)[0]
                    edge = (strength[job.white] - strength[job.black] + 20) / 400
                    if ending in _DRAWN or (ending == "adjudication" and rng.random() < 0.6):
                        result = "1/2-1/2"
                    else:
                        result = "1-0" if rng.random() < 0.5 + edge else "0-1"
                    start = T0 + timedelta(seconds=10 * index)
                    rows.append({
                        "tournament_id": tid, "job_index": index, "round": job.round,
                        "pair_index": job.pair, "game_in_pair": job.game_in_pair,
                        "white_id": ids[job.white], "black_id": ids[job.black],
                        "opening_index": job.pair, "status": GameStatus.DONE,
                        "result": result, "termination": ending, "reason": ending,
                        "plies": rng.randint(20, 200), "started_at": start,
                        "ended_at": start + timedelta(seconds=rng.randint(5, 25)),
                        "pgn": f'[Round "{index}"]\n\n{_PGN_BODY}{result}\n',
                    })
                connection.execute(insert(GameRow.__table__), rows)
    finally:
        db.close()
    return tid


def _cli_run(path: Path, fmt: str, out: Path) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and peak RSS (bytes) of one ``runner report`` process."""
    command = [sys.executable, "-m", "runner", "report", "--db", f"sqlite:///{path}",
               "--format", fmt, "--out", str(out)]
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # wait4 reaps the child with its own resource usage (peak RSS of this child alone).
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0 or out.stat().st_size == 0:
        raise RuntimeError(f"runner report failed (exit {process.returncode})")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def _cli_export(path: Path, out: Path) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and peak RSS of one ``runner export`` of every game to a file."""
    command = [sys.executable, "-m", "runner", "export", "--db", f"sqlite:///{path}",
               "--out", str(out)]
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0 or out.stat().st_size == 0:
        raise RuntimeError("runner export failed")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def _in_process(path: Path, fmt: str) -> tuple[float, int, int]:
    """build_report + render in this process: seconds, tracemalloc peak, games played."""
    db = open_database(f"sqlite:///{path}")
    try:
        tracemalloc.start()
        started = time.perf_counter()
        with db.session() as session:
            report = build_report(ReportRows(session))
        render(report, fmt)
        seconds = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return seconds, peak, report.games_played
    finally:
        db.close()


def main() -> None:
    """Build the database, run the measurements, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--format", default="html", choices=("text", "json", "html"))
    parser.add_argument("--kind", default="match", choices=("match", "round-robin"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="build the database in this directory")
    parser.add_argument("--small", type=int, default=10_000,
                        help="games of a second database, to compare peak memory with")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"report-bench-{args.kind}-{args.games}.db"
        if path.exists():
            path.unlink()
        started = time.perf_counter()
        build_database(path, args.games, args.kind)
        built = time.perf_counter() - started
        size = path.stat().st_size
        print(f"database: {args.games} games ({args.kind}), {size / 1e6:.1f} MB, "
              f"built in {built:.1f} s")
        out = folder / f"report.{args.format}"
        runs = [_cli_run(path, args.format, out) for _ in range(args.repeat)]
        walls = [wall for wall, _, _ in runs]
        cpus = [cpu for _, cpu, _ in runs]
        print(f"runner report --format {args.format}: median {statistics.median(walls):.2f} s "
              f"wall (runs: {', '.join(f'{w:.2f}' for w in walls)}), median "
              f"{statistics.median(cpus):.2f} s CPU, peak RSS {max(r for _, _, r in runs) / 1e6:.1f} MB, "
              f"output {out.stat().st_size} bytes")
        exported = folder / "export.pgn"
        runs = [_cli_export(path, exported) for _ in range(args.repeat)]
        print(f"runner export (all games): median {statistics.median(w for w, _, _ in runs):.2f} s "
              f"wall, {statistics.median(c for _, c, _ in runs):.2f} s CPU, peak RSS "
              f"{max(r for _, _, r in runs) / 1e6:.1f} MB, {exported.stat().st_size / 1e6:.1f} MB "
              "of PGN")
        load = os.getloadavg()[0]
        print(f"(load average during the runs: {load:.2f} on {os.cpu_count()} CPUs)")
        if args.small:
            small = folder / f"report-bench-{args.kind}-{args.small}.db"
            if small.exists():
                small.unlink()
            build_database(small, args.small, args.kind)
            runs = [_cli_run(small, args.format, out) for _ in range(2)]
            print(f"same over {args.small} games: median "
                  f"{statistics.median(w for w, _, _ in runs):.2f} s wall, "
                  f"{statistics.median(c for _, c, _ in runs):.2f} s CPU, peak RSS "
                  f"{max(r for _, _, r in runs) / 1e6:.1f} MB")
        seconds, peak, played = _in_process(path, args.format)
        print(f"build_report + render in process: {seconds:.2f} s, tracemalloc peak "
              f"{peak / 1e6:.2f} MB over {played} games")


if __name__ == "__main__":
    main()
