"""Many games at once at a short time control: time losses, runner CPU per ply, relay latency.

Every runner plays the same match as a user starts it (ours: ``python -m runner match``,
the peers as their docs give them; see peers.py), between two copies of an instant engine,
at each ``--concurrency`` in turn, interleaved with the other runners. Per run it prints:

- time losses, read from the PGN the run wrote (as peers.py counts them);
- runner CPU per ply: the runner process's own CPU (read from its zombie, its engines and
  any Dask worker processes it started counted apart as reaped children), start-up included;
- relay latency, median and p99: from the moment one engine's move line left it (its write
  returned) to the moment the move reached its opponent (the opponent's read returned with
  the line that lets it think: ``go`` in UCI, ``usermove`` in CECP). Both ends are stamped by
  the bundled engine itself (``ENGINE_STAMPS``, engine/channel.py) on the machine's monotonic
  clock, so the same stopwatch times every runner, whatever it reports of itself; the
  engine's reader-thread wake-up is inside every runner's figure alike.

Engines (``--engines``): ``bundled`` is ``python -m engine --level random`` (instant moves,
but each move costs the Python engine a few hundred microseconds of its own CPU, which at
high concurrency competes with the runner for the two cores); ``light`` is stockfish at
depth 1 (UCI) and fairymax at depth 1 (CECP), far cheaper per move but unstamped (no
relay figures).

    python benchmarks/concurrency.py [--concurrency 16,64,128] [--games-per-slot 2]
        [--tc 1+0.01] [--protocols uci,cecp] [--engines bundled,light]
        [--runners cecp-runner,fastchess,cutechess-cli] [--workers 0,2] [--baseline DIR]
        [--loops asyncio,uvloop]

``--concurrency 1 --protocols uci`` is the relay-latency comparison with fastchess on one game
at a time. ``--workers 0,2`` runs ours twice, in this process and on 2 local Dask workers
(without it, ours runs wherever its default puts it); its CPU is then the coordinator's alone
(the workers are reaped children, counted with the engines). ``--baseline DIR`` adds a
column ``baseline``: our CLI from another checkout (before/after in one run). ``--loops
asyncio,uvloop`` runs ours once per event loop (``RUNNER_LOOP``), interleaved, in columns
``cecp-runner/asyncio`` and ``cecp-runner/uvloop``; without it, ours runs on its default loop.
"""

from __future__ import annotations

import argparse
import bisect
import os
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from peers import BOOK, SEED, count_plies, find_program, python_env, run_split, warm_bytecode

OURS = "cecp-runner"
BASELINE = "baseline"
"""Ours from the checkout given by --baseline."""
PYTHON_GC = "cecp-runner-pygc"
"""Ours with Python's own collector thresholds (RUNNER_GC=python), for --python-gc."""
_MATCH_WINDOW = 10.0
"""Seconds: a move that reached no opponent within this was not relayed (the game's last)."""


@dataclass
class Run:
    """One runner's run at one concurrency."""

    runner: str
    protocol: str
    engines: str
    concurrency: int
    games: int
    plies: int
    forfeits: int
    runner_cpu: float
    children_cpu: float
    wall: float
    load: float
    relays: list[float]


def _wrapper(folder: Path, protocol: str, kind: str) -> Path | None:
    """A shell script starting the engine, so that every runner gets the same one-word
    command (the peers spell program arguments differently)."""
    if kind == "bundled":
        command = f"{sys.executable} -m engine --level random" + (" --uci" if protocol == "uci" else "")
    else:
        program = find_program("stockfish" if protocol == "uci" else "fairymax")
        if program is None:
            return None
        command = program
    path = folder / f"engine-{protocol}-{kind}.sh"
    path.write_text(f"#!/bin/sh\nexec {command} \"$@\"\n")
    path.chmod(0o755)
    return path


def _argv(runner: str, program: str, engine: Path, protocol: str, kind: str, tc: str,
          games: int, concurrency: int, pgn: Path, workers: int | None) -> list[str]:
    limit = [f"tc={tc}"] + (["depth=1"] if kind == "light" else [])
    rounds = str(games // 2)
    book = ["-openings", f"file={BOOK}", "format=epd", "order=random", "-srand", str(SEED)]
    if runner == "fastchess":
        return [program, "-engine", f"cmd={engine}", "name=a", "-engine", f"cmd={engine}",
                "name=b", "-each", *limit, "-games", "2", "-rounds", rounds, "-repeat",
                "-concurrency", str(concurrency), "-force-concurrency", *book,
                "-pgnout", f"file={pgn}"]
    if runner == "cutechess-cli":
        proto = "xboard" if protocol == "cecp" else "uci"
        return [program, "-engine", f"cmd={engine}", f"proto={proto}", "name=a",
                "-engine", f"cmd={engine}", f"proto={proto}", "name=b", "-each", *limit,
                "-games", "2", "-rounds", rounds, "-repeat", "-concurrency", str(concurrency),
                *book, "-pgnout", str(pgn)]
    argv = [sys.executable, "-m", "runner", "match",
            "--engine", f"cmd={engine}", "name=a", "--engine", f"cmd={engine}", "name=b",
            "--each", f"proto={protocol}", *limit, "--games", "2", "--rounds", rounds,
            "--concurrency", str(concurrency), "--openings", f"file={BOOK}", "order=random",
            f"seed={SEED}", "--pgnout", str(pgn), "--db", str(pgn.with_suffix(".db")), "--quiet"]
    if workers is not None:
        argv += ["--workers", str(workers)]
    return argv


# ------------------------------------------------------------------------ the engines' stamps


def _position_key(text: str) -> tuple[str, tuple[str, ...]]:
    """A UCI ``position`` line as (its start, its moves)."""
    words = text.split()
    if "moves" in words:
        cut = words.index("moves")
        return " ".join(words[1:cut]), tuple(words[cut + 1:])
    return " ".join(words[1:]), ()


def _events(path: Path) -> tuple[list[tuple[tuple[object, ...], float]],
                                 list[tuple[tuple[object, ...], float]]]:
    """(moves sent, moves received) of one engine process: each a key naming the game's
    position after the move, and the time in seconds."""
    sent: list[tuple[tuple[object, ...], float]] = []
    received: list[tuple[tuple[object, ...], float]] = []
    start, moves = "", ()  # CECP: the game's start and its moves so far
    position: tuple[str, tuple[str, ...]] = ("", ())  # UCI: the last position line
    lines = [raw.split(" ", 2) for raw in path.read_text(errors="replace").splitlines()]
    # In time order: the reader thread and the writer stamp independently.
    for stamp, direction, text in sorted((p for p in lines if len(p) == 3),
                                         key=lambda p: int(p[0])):
        at = int(stamp) / 1e9
        word = text.split(" ", 1)[0]
        if direction == "<":
            if word == "position":
                position = _position_key(text)
            elif word == "go" and position[0]:  # CECP's go starts a game: no move arrives
                received.append((("uci", *position), at))
            elif word == "new":
                start, moves = "startpos", ()
            elif word == "setboard":
                start, moves = text[9:].strip(), ()
            elif word == "usermove":
                moves = (*moves, text.split()[1])
                received.append((("cecp", start, moves), at))
        elif word == "bestmove":
            head, played = position
            sent.append((("uci", head, (*played, text.split()[1])), at))
        elif word == "move":
            moves = (*moves, text.split()[1])
            sent.append((("cecp", start, moves), at))
    return sent, received


def relay_latencies(folder: Path) -> list[float]:
    """Seconds from each move's write by one engine to its arrival at the other, over every
    stamp file in `folder`; a move is matched to the earliest arrival of the same position
    after it (two games with the same opening and moves so far are told apart by time)."""
    sent: list[tuple[tuple[object, ...], float]] = []
    arrivals: dict[tuple[object, ...], list[float]] = {}
    for path in folder.glob("stamps-*.txt"):
        out, into = _events(path)
        sent += out
        for key, at in into:
            arrivals.setdefault(key, []).append(at)
    for times in arrivals.values():
        times.sort()
    latencies = []
    for key, at in sorted(sent, key=lambda event: event[1]):
        times = arrivals.get(key)
        if not times:
            continue
        index = bisect.bisect_left(times, at)
        if index < len(times) and times[index] - at < _MATCH_WINDOW:
            latencies.append(times.pop(index) - at)
    return latencies


def percentile(values: list[float], share: float) -> float:
    """The value below which `share` of `values` lie (nearest rank); 0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


# ------------------------------------------------------------------------------ running


def run_one(runner: str, program: str, protocol: str, kind: str, concurrency: int, games: int,
            tc: str, workers: int | None, loop: str | None) -> Run | None:
    """One run of one runner; None when its engine is absent."""
    with tempfile.TemporaryDirectory(prefix=f"conc-{runner}-") as tmp:
        cwd = Path(tmp)
        stamps = cwd / "stamps"
        stamps.mkdir()
        engine = _wrapper(cwd, protocol, kind)
        if engine is None:
            return None
        pgn = cwd / "out.pgn"
        ours = runner in (OURS, BASELINE, PYTHON_GC)
        env = python_env(program or None) if ours else dict(os.environ)
        if runner == PYTHON_GC:
            env["RUNNER_GC"] = "python"
        if not ours:
            env["PYTHONPATH"] = python_env()["PYTHONPATH"]  # the bundled engine
        if kind == "bundled":
            env["ENGINE_STAMPS"] = str(stamps)
        if loop is not None:
            env["RUNNER_LOOP"] = loop
        argv = _argv(runner, program, engine, protocol, kind, tc, games, concurrency, pgn,
                     workers if ours else None)
        load = os.getloadavg()[0]
        try:
            own, children, wall = run_split(argv, cwd, env)
        except RuntimeError as exc:  # a run that gave up is a result too: say why, go on
            # The runner's last lines say why it stopped (the cause, then what to do about it).
            lines = [line for line in str(exc).splitlines() if line.strip()]
            print(f"# {runner} {protocol} {kind} {concurrency}: {lines[0]} ... "
                  + " | ".join(lines[1:][-4:]), flush=True)
            own = children = wall = float("nan")
        played, plies, forfeits = count_plies(pgn.read_text(errors="replace")
                                              if pgn.exists() else "")
        return Run(runner, protocol, kind, concurrency, played, plies, forfeits, own, children,
                   wall, load, relay_latencies(stamps))


def _columns(runners: str, workers: str, baseline: bool,
             python_gc: bool = False) -> list[tuple[str, int | None]]:
    """(runner, ours' --workers or None) per column: ours (and the baseline, and ours on
    Python's collector thresholds) once per entry of `workers`."""
    columns: list[tuple[str, int | None]] = []
    for runner in runners.split(","):
        names = [runner]
        if runner == OURS:
            names += [BASELINE] * baseline + [PYTHON_GC] * python_gc
        for name in names:
            if runner == OURS and workers:
                columns += [(name, None if w == "default" else int(w)) for w in workers.split(",")]
            else:
                columns.append((name, None))
    return columns


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:8.0f}"


def main() -> int:
    """Parse options, run every runner at every concurrency, print one line per run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", default="16,64,128")
    parser.add_argument("--games-per-slot", type=int, default=2,
                        help="games per concurrent slot (total games: this x concurrency)")
    parser.add_argument("--games", type=int, help="total games (overrides --games-per-slot)")
    parser.add_argument("--tc", default="1+0.01")
    parser.add_argument("--protocols", default="uci,cecp")
    parser.add_argument("--engines", default="bundled,light")
    parser.add_argument("--runners", default=f"{OURS},fastchess,cutechess-cli")
    parser.add_argument("--workers", default="",
                        help="ours once per N in this list, on N local Dask workers (0: in "
                        "this process; 'default': what the runner picks); e.g. 0,2")
    parser.add_argument("--loops", "--loop", dest="loops", default="",
                        help="ours once per event loop in this list, interleaved: asyncio, "
                        "uvloop (default: its default loop)")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--python-gc", action="store_true",
                        help="also run ours with Python's collector thresholds (RUNNER_GC=python)")
    parser.add_argument("--baseline", metavar="DIR",
                        help="also run our CLI from this checkout (a column named baseline)")
    args = parser.parse_args()
    loops: list[str | None] = [name for name in args.loops.split(",") if name] or [None]
    if not set(loops) <= {None, "asyncio", "uvloop"}:
        parser.error(f"--loops {args.loops!r}: expected asyncio and/or uvloop")
    baseline = str(Path(args.baseline).resolve()) if args.baseline else None
    warm_bytecode([None] if baseline is None else [None, baseline])
    print(f"# {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}, tc {args.tc}", flush=True)
    print(f"{'runner':20} {'proto':5} {'engines':8} {'conc':>4} {'games':>5} {'plies':>6} "
          f"{'t-loss':>6} {'CPU/ply us':>10} {'relay med':>9} {'relay p99':>9} "
          f"{'relays':>6} {'wall s':>7} {'load':>5}", flush=True)
    for _ in range(args.repeats):
        for concurrency in (int(c) for c in args.concurrency.split(",")):
            games = args.games or max(2, args.games_per_slot * concurrency)
            games += games % 2
            for kind in args.engines.split(","):
                for protocol in args.protocols.split(","):
                    for runner, workers in _columns(args.runners, args.workers,
                                                    baseline is not None, args.python_gc):
                        if runner == "fastchess" and protocol != "uci":
                            continue  # fastchess speaks UCI only
                        program = ("" if runner in (OURS, PYTHON_GC) else baseline
                                   if runner == BASELINE else find_program(runner))
                        if program is None:
                            print(f"# skip {runner}: not found", flush=True)
                            continue
                        for loop in loops if runner in (OURS, PYTHON_GC) else [None]:
                            run = run_one(runner, program, protocol, kind, concurrency,
                                          games, args.tc, workers, loop)
                            if run is None:
                                print(f"# skip {kind} {protocol}: engine not found", flush=True)
                                break
                            _print_run(run, protocol, kind, concurrency, workers, loop)
    return 0


def _print_run(run: Run, protocol: str, kind: str, concurrency: int, workers: int | None,
               loop: str | None) -> None:
    """One line of the table for `run`."""
    if workers is not None:
        run.runner = f"{run.runner}/w{workers}"
    if loop is not None:
        run.runner = f"{run.runner}/{loop}"
    relays = run.relays
    median = statistics.median(relays) if relays else 0.0
    print(f"{run.runner:20} {protocol:5} {kind:8} {concurrency:4d} "
          f"{run.games:5d} {run.plies:6d} {run.forfeits:6d} "
          f"{_us(run.runner_cpu / max(run.plies, 1)):>10} "
          f"{_us(median) if relays else '-':>9} "
          f"{_us(percentile(relays, 0.99)) if relays else '-':>9} "
          f"{len(relays):6d} {run.wall:7.1f} {run.load:5.2f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
