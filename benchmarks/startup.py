"""How long each ``runner`` command takes to start: wall and CPU, median and p90 over N runs.

Every run is a fresh ``python -m runner ...`` process, as a user starts it, with its bytecode
cached (as an installed package has it; `peers.python_env`). The commands are run interleaved
(A, B, C, A, B, C, ...), so that a change of load on a shared machine spreads over all of
them; the load average is printed with the figures. CPU is the child's user+system time, a
figure that moves less with the load than wall time does.

Measured commands:

- ``python -c pass``: the interpreter's own start, the floor of every figure below;
- ``runner --help``, ``runner --version``;
- ``runner list`` on a database holding a few tournaments, its compiled statements cached
  (`runner.store.quick`: the first list after an install or upgrade compiles them, and costs
  what a list cost before them);
- ``runner stats --wdl 120 60 100``;
- ``runner fastchess --help`` and ``runner cutechess --help`` (the drop-in entry points),
  and ``runner-fastchess --version`` / ``runner-cutechess --version`` as their console
  scripts run them, when the tree under test has them;
- ``runner run`` of a small copy of ``configs/demo.toml`` already played to its end: the
  start-up of a run up to its "nothing to play" answer (the config read and checked, the
  database opened and asked), no game played;
- with ``--commands ...,match,fastchess-run`` (stockfish installed): ``runner match`` of 2
  games and ``runner-fastchess`` of 1 game, stockfish at depth 1, each into a new database
  (removed before every run, untimed): a short run whole, its fixed cost beside two games.

``--baseline DIR`` measures another checkout beside this one (interleaved too) and prints both
with their ratio; ``--markdown`` prints the rows of docs/benchmarks.md's performance table.

    python benchmarks/startup.py [--repeats 20] [--baseline DIR] [--markdown]
                                 [--commands help,list,...]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from peers import REPO, python_env, warm_bytecode


@dataclass(frozen=True)
class Command:
    """One command line to time, and what it needs to exist in the tree under test."""

    key: str
    label: str
    args: tuple[str, ...]
    needs: str | None = None
    """A command ``runner --help`` must list for this one to be measured (None: always)."""
    entry: str | None = None
    """A drop-in console script (``runner-fastchess``) run as its entry point, or ``python``
    (the bare interpreter), rather than ``python -m runner`` (None)."""
    fresh: Path | None = None
    """A database file removed (with its -wal and -shm) before each run, untimed: a run that
    plays its games from a new database every time."""

    def argv(self) -> list[str]:
        """The process's command line."""
        if self.entry is None:
            return [sys.executable, "-m", "runner", *self.args]
        if self.entry == "python":
            return [sys.executable, "-c", "pass", *self.args]
        peer = self.entry.removeprefix("runner-")
        return [sys.executable, "-c", _ENTRY.format(peer), *self.args]


_ENTRY = "import sys; from runner.dropin.main import {0}; sys.argv[0] = 'runner-{0}'; {0}()"
"""What the console script ``runner-PEER`` runs."""


@dataclass
class Timings:
    """The runs of one command in one tree."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    @staticmethod
    def median(values: list[float]) -> float:
        return statistics.median(values)

    @staticmethod
    def p90(values: list[float]) -> float:
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


def commands(db: Path, demo: Path) -> list[Command]:
    """The command lines measured, in the order they are printed."""
    played = db.with_name("played.db")
    stockfish = shutil.which("stockfish", path=os.environ.get("PATH", "") + ":/usr/games")
    games = [
        # A whole short run, engines included (stockfish at depth 1): what a run's fixed
        # cost is beside its games (issue 38). A new database each time, as a first run has.
        Command("match", "runner match, 2 games of stockfish depth 1 (a new database)",
                ("match", "--engine", f"cmd={stockfish}", "proto=uci", "name=a", "--engine",
                 f"cmd={stockfish}", "proto=uci", "name=b", "--each", "tc=inf", "depth=1",
                 "--games", "2", "--db", str(played), "--quiet"), fresh=played),
        Command("fastchess-run", "runner-fastchess, 1 game of stockfish depth 1 (a new database)",
                ("-engine", f"cmd={stockfish}", "name=a", "-engine", f"cmd={stockfish}", "name=b",
                 "-each", "tc=inf", "depth=1", "-rounds", "1", "-games", "1"),
                "fastchess", "runner-fastchess", fresh=played),
    ] if stockfish is not None else []
    return [
        Command("python", "python -c pass (the interpreter, for scale)", (), entry="python"),
        Command("help", "runner --help", ("--help",)),
        Command("version", "runner --version", ("--version",)),
        Command("list", "runner list", ("list", "--db", str(db))),
        Command("stats", "runner stats --wdl 120 60 100", ("stats", "--wdl", "120", "60", "100")),
        Command("fastchess", "runner fastchess --help", ("fastchess", "--help"), "fastchess"),
        Command("cutechess", "runner cutechess --help", ("cutechess", "--help"), "cutechess"),
        Command("fastchess-version", "runner-fastchess --version", ("--version",), "fastchess",
                "runner-fastchess"),
        Command("cutechess-version", "runner-cutechess --version", ("--version",), "cutechess",
                "runner-cutechess"),
        Command("run", "runner run demo.toml (played: start-up only)",
                ("run", str(demo), "--db", str(db), "--quiet")),
        *games,
    ]


def prepare(tmp: Path, tree: str) -> tuple[Path, Path]:
    """A database with a few played tournaments, and the small demo file whose tournament in
    it is finished (played here once, with `tree`)."""
    db = tmp / "startup.db"
    demo = tmp / "demo.toml"
    text = (REPO / "configs" / "demo.toml").read_text()
    # Fewer and shorter games: the file is played once here, then only started.
    text = text.replace("rounds = 8", "rounds = 1").replace("maxmoves = 120", "maxmoves = 4")
    text = text.replace('"openings/demo.epd"', repr(str(REPO / "configs" / "openings" / "demo.epd")))
    text = text.replace('pgnout = "demo.pgn"', f'pgnout = {str(tmp / "demo.pgn")!r}')
    demo.write_text(text.replace("'", '"'))
    env = _env(tree, tmp)
    for games in ("2", "4"):
        _runner(tree, env, tmp, "match", "--engine", "cmd=python", "arg=-m", "arg=engine",
                "name=a", "--engine", "cmd=python", "arg=-m", "arg=engine", "name=b",
                "--each", "tc=inf", "depth=1", "--maxmoves", "3", "--games", games,
                "--db", str(db), "--quiet")
    _runner(tree, env, tmp, "run", str(demo), "--db", str(db), "--quiet")
    return db, demo


def _env(tree: str, tmp: Path) -> dict[str, str]:
    """`peers.python_env`, with the runner's cache in the benchmark's directory, one per tree
    (the cache holds one version's compiled statements: two trees sharing it would compile
    them again on every run)."""
    return {**python_env(tree), "XDG_CACHE_HOME": str(tmp / "cache" / Path(tree).name)}


def _runner(tree: str, env: dict[str, str], cwd: Path, *args: str) -> str:
    """Run ``python -m runner ARGS`` from `tree`, its stdout (RuntimeError on failure)."""
    done = subprocess.run([sys.executable, "-m", "runner", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"runner {' '.join(args)} ({tree}): exit {done.returncode}: "
                           f"{done.stderr[-800:]}")
    return done.stdout


def time_once(env: dict[str, str], cwd: Path, argv: list[str],
              fresh: Path | None = None) -> tuple[float, float]:
    """Wall and CPU seconds of one process `argv` (the child's user+system), the database
    `fresh` removed first (its path is also the drop-in's ``RUNNER_DB``)."""
    if fresh is not None:
        for suffix in ("", "-wal", "-shm"):
            fresh.with_name(fresh.name + suffix).unlink(missing_ok=True)
        env = {**env, "RUNNER_DB": str(fresh)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[1:])}: exit {done.returncode}: "
                           f"{done.stderr[-800:]!r}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def measure(trees: dict[str, str], wanted: list[str], repeats: int,
            progress: Callable[[str], None]) -> tuple[dict[str, dict[str, Timings]],
                                                      list[Command], list[float]]:
    """Timings by tree name and command key, the commands measured, the load averages seen."""
    results: dict[str, dict[str, Timings]] = {name: {} for name in trees}
    loads: list[float] = []
    with tempfile.TemporaryDirectory(prefix="startup-bench-") as tmp_name:
        tmp = Path(tmp_name)
        first = next(iter(trees.values()))
        db, demo = prepare(tmp, first)
        chosen = [c for c in commands(db, demo) if c.key in wanted]
        listed = {name: _runner(tree, _env(tree, tmp), tmp, "--help")
                  for name, tree in trees.items()}
        for tree in trees.values() if "list" in wanted else ():  # runner list's statements,
            _runner(tree, _env(tree, tmp), tmp, "list", "--db", str(db))  # compiled and cached
        runnable = [c for c in chosen
                    if c.needs is None or all(f" {c.needs} " in text for text in listed.values())]
        for c in chosen:
            if c not in runnable:
                progress(f"# {c.label}: not in every tree measured (no '{c.needs}' command): "
                         "skipped")
        for repeat in range(repeats):
            loads.append(os.getloadavg()[0])
            for c in runnable:
                for name, tree in trees.items():
                    wall, cpu = time_once(_env(tree, tmp), tmp, c.argv(), c.fresh)
                    timing = results[name].setdefault(c.key, Timings())
                    timing.wall.append(wall)
                    timing.cpu.append(cpu)
            progress(f"# run {repeat + 1}/{repeats}, load average {loads[-1]:.2f}")
    return results, runnable, loads


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:6.0f}"


def print_table(results: dict[str, dict[str, Timings]], chosen: list[Command],
                loads: list[float], repeats: int) -> None:
    """Median and p90 of wall and CPU per command and tree, in milliseconds."""
    print(f"\nstart-up over {repeats} runs each, interleaved; load average "
          f"{min(loads):.2f}-{max(loads):.2f} (median {statistics.median(loads):.2f})")
    names = list(results)
    head = f"{'command':46} {'tree':9} {'wall med':>8} {'p90':>6} {'CPU med':>8} {'p90':>6}"
    print(head + (f"  {names[0]}/other: wall, CPU" if len(names) > 1 else ""))
    for c in chosen:
        for name in names:
            t = results[name][c.key]
            row = (f"{c.label:46} {name:9} {_ms(t.median(t.wall)):>8} {_ms(t.p90(t.wall)):>6}"
                   f" {_ms(t.median(t.cpu)):>8} {_ms(t.p90(t.cpu)):>6}")
            if name != names[0]:
                mine = results[names[0]][c.key]
                row += (f"  {mine.median(mine.wall) / t.median(t.wall):.2f}x,"
                        f" {mine.median(mine.cpu) / t.median(t.cpu):.2f}x")
            print(row)


def print_markdown(results: dict[str, dict[str, Timings]], chosen: list[Command],
                   loads: list[float]) -> None:
    """docs/benchmarks.md's start-up rows (this checkout's figures)."""
    mine = results[next(iter(results))]
    load = statistics.median(loads)
    print()
    for c in chosen:
        t = mine[c.key]
        print(f"| `{c.label}` wall, load {load:.1f} | | | {t.median(t.wall):.3f} s "
              f"(p90 {t.p90(t.wall):.3f} s, CPU {t.median(t.cpu):.3f} s) |")


def main() -> None:
    """Parse the flags, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeats", type=int, default=20, help="runs of each command")
    parser.add_argument("--baseline", help="another checkout to measure beside this one")
    parser.add_argument("--commands", default="python,help,version,list,stats,fastchess,"
                        "cutechess,fastchess-version,cutechess-version,run",
                        help="comma-separated keys of the commands to time")
    parser.add_argument("--markdown", action="store_true", help="also print the rows of docs/benchmarks.md")
    args = parser.parse_args()
    if shutil.which("python") is None:
        sys.exit("the demo's engines are started as 'python -m engine': no python on PATH")
    trees = {"this": str(REPO)}
    if args.baseline:
        trees["baseline"] = str(Path(args.baseline).resolve())
    print(f"# {time.strftime('%Y-%m-%d %H:%M:%S')}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f}", flush=True)
    warm_bytecode(list(trees.values()))
    results, chosen, loads = measure(trees, args.commands.split(","), args.repeats,
                                     lambda line: print(line, flush=True))
    print_table(results, chosen, loads, args.repeats)
    if args.markdown:
        print_markdown(results, chosen, loads)


if __name__ == "__main__":
    main()
