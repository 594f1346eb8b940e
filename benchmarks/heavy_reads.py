"""Heavy reads against the referee's loop: report.html readers while games are played.

Starts the real service (`runner serve` as a subprocess, from `--repo`: this checkout by
default, another one to compare the code before a change) over a SQLite database that already
holds a large synthetic round-robin (`benchmarks/report_bench.py`'s generator, `--games`
games), submits a live tournament of the bundled engine against its v1 at a short time
control, then lets `--readers` anonymous clients read that round-robin's ``report.html`` over
and over for `--seconds` while a probe asks for a cheap static file every `--probe` seconds.

With `--grow` (seconds), this script also adds one game to the large round-robin that often,
as a second runner sharing the database would: every report read then finds a new number of
games, so no cached page can be reused and the worst case, a page built again and again, is
what is measured.

Figures: the probe's latency (median, p99, max: the service's loop cannot answer while it is
blocked), the report reads completed and their statuses, the live games stored meanwhile and
how many were lost on time, and the 1-minute load average before and at its highest.

Run: python benchmarks/heavy_reads.py [--games 60000] [--readers 6] [--seconds 40] [--grow 1]
                                      [--repo /path/to/other/checkout]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import service_load  # noqa: E402  (a sibling script, not a package)
from service_load import HOST, TOKEN, Connection, Service  # noqa: E402


class RepoService(Service):
    """`runner serve` run from the code of `repo` (PYTHONPATH and working directory)."""

    def __init__(self, workdir: Path, repo: Path) -> None:
        """The database `workdir`/service.db, the code and engines file of `repo`."""
        super().__init__(workdir)
        self.repo = repo

    def start(self, timeout: float = 60.0) -> None:
        """Start the service from `repo` and wait until it listens."""
        import socket

        env = {**os.environ, "RUNNER_TOKEN": TOKEN, "PYTHONPATH": str(self.repo)}
        env.pop("RUNNER_DB", None)
        command = [sys.executable, "-c", "from runner.cli.app import main; main()", "serve",
                   "--host", HOST, "--port", str(self.port), "--db", str(self.db),
                   "--engines", str(self.repo / "configs" / "engines.toml")]
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(command, cwd=self.repo, env=env, stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"runner serve exited with {self.process.returncode}:\n"
                                   + self.log_path.read_text(errors="replace")[-3000:])
            with contextlib.suppress(OSError), socket.create_connection((HOST, self.port), 1):
                return
            time.sleep(0.1)
        raise RuntimeError(f"runner serve did not listen on {self.port} in {timeout} s")


def build(repo: Path, db: Path, games: int) -> int:
    """The synthetic round-robin, built by `repo`'s own code (its schema); its id."""
    code = ("import sys; from pathlib import Path; sys.path.insert(0, 'benchmarks'); "
            "from report_bench import build_database; "
            f"print(build_database(Path({str(db)!r}), {games}, 'round-robin'))")
    out = subprocess.run([sys.executable, "-c", code], cwd=repo, check=True, text=True,
                         capture_output=True, env={**os.environ, "PYTHONPATH": str(repo)})
    return int(out.stdout.strip().splitlines()[-1])


@dataclass
class Figures:
    """What one run measured."""

    probe: list[float] = field(default_factory=list)
    reads: Counter[int] = field(default_factory=Counter)
    read_seconds: list[float] = field(default_factory=list)
    games: list[dict[str, Any]] = field(default_factory=list)
    load_before: float = 0.0
    load_max: float = 0.0


async def _reader(port: int, path: str, figures: Figures, stop: asyncio.Event) -> None:
    connection = Connection(port)
    try:
        while not stop.is_set():
            began = time.monotonic()
            try:
                status, _ = await connection.call("GET", path)
            except (OSError, service_load.HttpError, asyncio.IncompleteReadError):
                status = 0
            figures.reads[status] += 1
            figures.read_seconds.append(time.monotonic() - began)
            if status == 429:
                await asyncio.sleep(0.2)  # told to come back: an honest client waits a little
    finally:
        await connection.close()


def _add_game(db: Path, tournament_id: int) -> None:
    """One more stored game in the tournament: a copy of its last, at the next index."""
    import sqlite3

    connection = sqlite3.connect(db, timeout=30)
    try:
        columns = [row[1] for row in connection.execute("PRAGMA table_info(games)")
                   if row[1] != "id"]
        picked = ", ".join("(SELECT max(job_index) + 1 FROM games WHERE tournament_id = ?)"
                           if c == "job_index" else c for c in columns)
        with connection:
            connection.execute(
                f"INSERT INTO games ({', '.join(columns)}) SELECT {picked} FROM games "
                "WHERE tournament_id = ? ORDER BY job_index DESC LIMIT 1",
                (tournament_id, tournament_id))
    finally:
        connection.close()


async def _grow(db: Path, tournament_id: int, every: float, stop: asyncio.Event) -> None:
    while not stop.is_set():
        await asyncio.to_thread(_add_game, db, tournament_id)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every)


async def _probe(port: int, every: float, figures: Figures, stop: asyncio.Event) -> None:
    connection = Connection(port)
    try:
        while not stop.is_set():
            began = time.monotonic()
            await connection.call("GET", "/static/page.css")
            figures.probe.append(time.monotonic() - began)
            figures.load_max = max(figures.load_max, os.getloadavg()[0])
            await asyncio.sleep(every)
    finally:
        await connection.close()


async def _run(service: Service, big: int, args: argparse.Namespace, figures: Figures) -> int:
    connection = Connection(service.port)
    live = {"name": "live", "engines": ["bundled", "bundled-v1"], "tc": args.tc,
            "rounds": 1000, "games": 2, "concurrency": 1,
            "adjudication": {"maxmoves": args.maxmoves}}
    status, body = await connection.call(
        "POST", "/api/tournaments", {"Authorization": f"Bearer {TOKEN}",
                                     "Content-Type": "application/json"},
        json.dumps(live).encode())
    await connection.close()
    if status != 201:
        raise RuntimeError(f"submit: HTTP {status}: {body[:300]!r}")
    live_id = int(json.loads(body)["id"])
    stop = asyncio.Event()
    tasks = [asyncio.create_task(_probe(service.port, args.probe, figures, stop))]
    await asyncio.sleep(args.warmup)
    if args.grow:
        tasks.append(asyncio.create_task(_grow(service.db, big, args.grow, stop)))
    tasks += [asyncio.create_task(_reader(service.port, f"/api/tournaments/{big}/{args.read}",
                                          figures, stop)) for _ in range(args.readers)]
    await asyncio.sleep(args.seconds)
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    return live_id


def measure(repo: Path, args: argparse.Namespace) -> Figures:
    """One run of the service from `repo`: the figures."""
    figures = Figures(load_before=os.getloadavg()[0])
    with tempfile.TemporaryDirectory(prefix="heavy-") as scratch:
        workdir = Path(scratch)
        service = RepoService(workdir, repo)
        big = build(repo, service.db, args.games)
        service.start()
        try:
            live_id = asyncio.run(_run(service, big, args, figures))
        finally:
            service.stop()
        figures.games = service_load.stored_games(service.db, live_id)
    return figures


def _q(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def summary(figures: Figures) -> list[str]:
    """The figures as lines of text."""
    probe = figures.probe
    forfeits = [g for g in figures.games if g["termination"] == "time forfeit"]
    return [
        f"probe GET /static/page.css: n={len(probe)} median {statistics.median(probe) * 1000:.1f} ms"
        f", p99 {_q(probe, 0.99) * 1000:.0f} ms, max {max(probe) * 1000:.0f} ms",
        f"reads: {dict(figures.reads)}; median "
        f"{statistics.median(figures.read_seconds or [0.0]):.2f} s each",
        f"live games stored: {len(figures.games)}, lost on time: {len(forfeits)}",
        f"load average (1 min): {figures.load_before:.2f} before, {figures.load_max:.2f} at most "
        f"({os.cpu_count()} CPUs)",
    ]


def main() -> None:
    """Parse the arguments, run, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=60_000)
    parser.add_argument("--readers", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=40.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--probe", type=float, default=0.1)
    parser.add_argument("--grow", type=float, default=0.0,
                        help="add a game to the round-robin every GROW seconds (0: never)")
    parser.add_argument("--read", default="report.html", choices=("report.html", "pgn"),
                        help="what the readers read: the report, or the PGN of every game")
    parser.add_argument("--tc", default="1+0.02")
    parser.add_argument("--maxmoves", type=int, default=40)
    parser.add_argument("--repo", type=Path, default=HERE.parent,
                        help="the checkout whose `runner serve` is measured")
    args = parser.parse_args()
    for line in summary(measure(args.repo.resolve(), args)):
        print(line)


if __name__ == "__main__":
    main()
