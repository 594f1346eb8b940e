"""The runner's own cost per move next to cutechess-cli's and fastchess's, measured in one run.

Each workload is played by every runner found, interleaved (A, B, C, A, B, C, ...), ``--repeats``
times, each run a fresh process as users start it: the peers as their docs give them, ours as
``python -m runner match ...`` with a SQLite store and ``--pgnout`` in a temporary directory.
The benchmark waits for the runner's exit without reaping it (``waitid(..., WNOWAIT)``) and
reads the zombie's ``/proc/PID/stat``: runner CPU (its own utime+stime, threads included),
engines' CPU (cutime+cstime: the children it reaped) and wall time. Plies are counted from each
run's PGN (SAN tokens of the movetext): every runner is divided by what it really played.
Printed per workload: medians over the repeats, the median load, our ratios to each peer;
``--markdown`` prints them as docs/benchmarks.md's table (this script is its one source).

Start-up is split off (issue 38): beside each run every runner plays the workload's first 2
games (``--no-split``: not); the line through a round's two runs gives the fixed CPU of a run
("start-up CPU": imports, the store) and the CPU per ply beyond it, medians over the rounds.
Start-up wall times of ``runner --help``, ``runner list`` and ``runner stats`` (and the
drop-ins' ``--version``) follow (``--no-startup``: not). ``--workloads forfeit`` runs issue
17's long check (1,000 games at 2+0.02, concurrency 2) and counts time forfeits.

Drop-in columns (issue 28): ``runner-fastchess`` and ``runner-cutechess`` run the very argv the
peer is given, as the console scripts start them (``RUNNER_DB`` in the run's directory), each
compared with its peer (``--no-dropins``: left out). ``--loops asyncio,uvloop`` runs our CLI
once per event loop (``RUNNER_LOOP``); ``--builds compiled,pure`` once per build (the mypyc
modules this tree was built with, refused when they would not run, or ``RUNNER_PURE=1``), the
columns suffixed ``/asyncio``, ``/compiled`` and so on; ``--markdown`` then has a row per build.

    python benchmarks/peers.py [--repeats 3] [--games 100] [--workloads fairymax,stockfish]
                               [--loops asyncio,uvloop] [--builds compiled,pure] [--markdown]
                               [--no-startup] [--no-split] [--peers cutechess-cli,fastchess]
                               [--forfeit-games 1000] [--keep-pgn DIR] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PEERS = REPO.parent / "shared" / "peers"
BOOK = REPO.parent / "shared" / "data" / "books" / "noob_3moves.epd"
SEED = 7
_TICK = os.sysconf("SC_CLK_TCK")
_ENGINE_DIRS = ("/usr/games", "/usr/local/games")
OURS = "cecp-runner"
"""Our column's name; with --loops, one column per loop: cecp-runner/asyncio, ..."""
DROPINS = {"runner-fastchess": "fastchess", "runner-cutechess": "cutechess-cli"}
"""The drop-in columns and the peer each stands in for (the same argv)."""
BASELINE = "baseline"
"""The suffix of a drop-in column run from the ``--baseline`` checkout."""
BUILDS = ("compiled", "pure")
"""``--builds`` choices: the compiled modules, or their source (``RUNNER_PURE=1``)."""
_ENTRY = "import sys; from runner.dropin.main import {0}; sys.argv[0] = 'runner-{0}'; {0}()"
"""What the console script ``runner-PEER`` runs (setuptools' wrapper does no more)."""


@dataclass(frozen=True)
class Workload:
    """Two copies of one engine playing games from the book, as every runner is told to."""

    name: str
    engine: str
    proto: str  # "cecp" or "uci"
    limit: dict[str, str]  # depth=1, or tc=2+0.02
    games: int
    title: str


@dataclass
class Sample:
    """One run of one runner on one workload."""

    plies: int
    runner_cpu: float
    engines_cpu: float
    wall: float
    load: float
    forfeits: int


@dataclass
class Column:
    """Everything one runner did on one workload."""

    runner: str
    samples: list[Sample] = field(default_factory=list)
    short: list[Sample] = field(default_factory=list)
    """The 2-game runs beside the samples, one a round (start-up split off)."""

    def median(self, per_ply: Callable[[Sample], float]) -> float:
        """Median over the runs of a per-ply figure."""
        return statistics.median(per_ply(s) / max(s.plies, 1) for s in self.samples)

    def split(self) -> tuple[float, float] | None:
        """(fixed runner CPU seconds of a run, runner CPU per ply beyond it), medians over
        the rounds of the line through each round's short and full run; None without them."""
        if not self.short:  # --no-split
            return None
        rounds = list(zip(self.samples, self.short, strict=False))
        slopes = [(f.runner_cpu - s.runner_cpu) / max(f.plies - s.plies, 1) for f, s in rounds]
        fixed = [s.runner_cpu - slope * s.plies for (_, s), slope in zip(rounds, slopes, strict=True)]
        return statistics.median(fixed), statistics.median(slopes)


def find_program(name: str) -> str | None:
    """A peer in ../shared/peers, else on PATH; an engine on PATH, else in /usr/games."""
    local = PEERS / name
    if local.is_file() and os.access(local, os.X_OK):
        return str(local)
    path = os.environ.get("PATH", "") + os.pathsep + os.pathsep.join(_ENGINE_DIRS)
    return shutil.which(name, path=path)


def cutechess_argv(program: str, engine: str, w: Workload, pgn: Path) -> list[str]:
    """cutechess-cli's command line for a workload."""
    proto = "xboard" if w.proto == "cecp" else "uci"
    each = [f"{k}={v}" for k, v in w.limit.items()]
    if "tc" not in w.limit:
        each.append("tc=inf")
    return [program, "-engine", f"cmd={engine}", f"proto={proto}", "name=a",
            "-engine", f"cmd={engine}", f"proto={proto}", "name=b", "-each", *each,
            "-games", "2", "-rounds", str(w.games // 2), "-repeat", "-concurrency", "2",
            "-openings", f"file={BOOK}", "format=epd", "order=random", "-srand", str(SEED),
            "-pgnout", str(pgn)]


def fastchess_argv(program: str, engine: str, w: Workload, pgn: Path) -> list[str]:
    """fastchess's command line for a workload (UCI only)."""
    each = [f"{k}={v}" for k, v in w.limit.items()]
    if "tc" not in w.limit:
        each.append("tc=inf")
    return [program, "-engine", f"cmd={engine}", "name=a", "-engine", f"cmd={engine}", "name=b",
            "-each", *each, "-games", "2", "-rounds", str(w.games // 2), "-repeat",
            "-concurrency", "2", "-openings", f"file={BOOK}", "format=epd", "order=random",
            "-srand", str(SEED), "-pgnout", f"file={pgn}"]


def ours_argv(engine: str, w: Workload, pgn: Path) -> list[str]:
    """Our CLI's command line for a workload: SQLite store next to the PGN."""
    each = [f"{k}={v}" for k, v in w.limit.items()]
    return [sys.executable, "-m", "runner", "match",
            "--engine", f"cmd={engine}", "name=a", "--engine", f"cmd={engine}", "name=b",
            "--each", f"proto={w.proto}", *each, "--games", "2", "--rounds", str(w.games // 2),
            "--concurrency", "2", "--openings", f"file={BOOK}", "order=random", f"seed={SEED}",
            "--pgnout", str(pgn), "--db", str(pgn.with_suffix(".db")), "--quiet"]


def base_name(runner: str) -> str:
    """A column's runner without its loop and build suffixes (``runner-fastchess/pure``)."""
    return runner.split("/", 1)[0]


def build_of(runner: str) -> str | None:
    """The build a column of ours runs (``compiled``, ``pure``), None when not chosen."""
    return next((part for part in runner.split("/")[1:] if part in BUILDS), None)


def check_compiled() -> None:
    """Exit unless this tree's compiled modules run (a pure or stale build would not)."""
    env = {k: v for k, v in python_env().items() if k != "RUNNER_PURE"}
    done = subprocess.run([sys.executable, "-m", "runner", "--version"], env=env,
                          capture_output=True, text=True, check=False)
    if "compiled: yes" not in done.stdout:
        sys.exit(f"--builds compiled: this tree's compiled modules do not run ({done.stdout.strip()}"
                 f" {done.stderr.strip()}); build with RUNNER_COMPILE=1 pip install -e .")


def dropin_argv(column: str, peer_argv: list[str]) -> list[str]:
    """The drop-in's command line: the peer's argv with the program swapped for the entry."""
    peer = base_name(column).removeprefix("runner-")
    return [sys.executable, "-c", _ENTRY.format(peer), *peer_argv[1:]]


def dropin_ready(column: str) -> bool:
    """Whether this tree has the drop-in's parser (its package is importable)."""
    peer = column.removeprefix("runner-")
    done = subprocess.run([sys.executable, "-c", f"import runner.dropin.{peer}"],
                          env=python_env(), capture_output=True, check=False)
    return done.returncode == 0


def run_split(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, float]:
    """(own CPU, reaped children's CPU, wall) of one process, read from its zombie."""
    started = time.monotonic()
    with open(cwd / "stdout.txt", "wb") as out:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT)
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
    wall = time.monotonic() - started
    stat = Path(f"/proc/{proc.pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    # fields[0] is field 3 (state): utime, stime, cutime, cstime are fields 14..17.
    utime, stime, cutime, cstime = (int(x) / _TICK for x in fields[11:15])
    code = proc.wait()
    if code != 0:
        tail = (cwd / "stdout.txt").read_text(errors="replace")[-2000:]
        raise RuntimeError(f"{argv[0]} exited with {code}:\n{tail}")
    return utime + stime, cutime + cstime, wall


_COMMENT = re.compile(r"\{[^}]*\}|;[^\n]*|\([^()]*\)")
_TAG = re.compile(r"^\[.*\]\s*$", re.M)
_NOT_A_MOVE = re.compile(r"^(\d+\.+|\$\d+|1-0|0-1|1/2-1/2|\*)$")


def count_plies(pgn: str) -> tuple[int, int, int]:
    """(games, plies, time forfeits) in a PGN text, counting the SAN tokens of the movetext."""
    games = len(re.findall(r'^\[Result "', pgn, re.M))
    forfeits = sum(1 for game in re.split(r"^\[Event ", pgn, flags=re.M)
                   if re.search(r"time forfeit|loses on time|on time\b", game, re.I))
    movetext = _COMMENT.sub(" ", _TAG.sub("", pgn))
    tokens = re.sub(r"(\d+)\.+", r" ", movetext).split()
    plies = sum(1 for token in tokens if not _NOT_A_MOVE.match(token))
    return games, plies, forfeits


_STALE_LINE = "compiled modules are older than their sources"
"""What `runner.compiled` prints on stderr when it runs the source of a stale build."""
_PYCACHE = tempfile.mkdtemp(prefix="peers-pycache-")
_CACHES = tempfile.mkdtemp(prefix="peers-cache-")
"""The runner's caches (its compiled store statements), one directory per tree measured: the
user's own is shared with every other checkout and session on the machine, and holds one
version's statements at a time."""
# The modules a run of our CLI imports, compiled once before anything is timed.
_WARM_IMPORTS = ("import runner.cli.app, runner.cli.tournament, runner.tournament.run, "
                 "runner.store, runner.store.db, runner.game.play, runner.protocol.factory, "
                 "runner.books.openings, runner.report.build, sqlalchemy.orm, alembic.command, "
                 "typer, rich.console, rich.progress, rich.live, asyncio, sqlite3")


_WARM_STATEMENTS = ("import sys\n"
                    "from runner.store.store import Store\n"
                    "with Store.open('sqlite:///' + sys.argv[1]) as store:\n"
                    "    getattr(store, 'statements', lambda: None)()\n")
"""Compile a tree's store statements into its cache (trees before issue 38's have none)."""


def python_env(tree: str | None = None) -> dict[str, str]:
    """The environment our CLI runs in: `tree` first on the path, and bytecode cached as an
    installed package has it. A machine that sets PYTHONDONTWRITEBYTECODE would otherwise
    compile every module on every start (about 0.1 s of CPU per run, 15 us per ply here)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = _PYCACHE
    env["PYTHONPATH"] = (tree or str(REPO)) + os.pathsep + env.get("PYTHONPATH", "")
    env["XDG_CACHE_HOME"] = os.path.join(_CACHES, hashlib.sha256((tree or str(REPO)).encode())
                                         .hexdigest()[:12])
    return env


def warm_bytecode(trees: list[str | None]) -> None:
    """Compile each tree and the libraries it imports into the benchmark's bytecode cache."""
    for tree in trees:
        env = python_env(tree)
        root = Path(tree or REPO)
        subprocess.run([sys.executable, "-m", "compileall", "-q", "-j0",
                        str(root / "runner"), str(root / "engine")],
                       env=env, check=True, stdout=subprocess.DEVNULL)
        subprocess.run([sys.executable, "-c", _WARM_IMPORTS], env=env, check=True)
        # The store's statements compiled once, as a first run after an install does.
        with tempfile.TemporaryDirectory(prefix="peers-warm-") as scratch:
            subprocess.run([sys.executable, "-c", _WARM_STATEMENTS, f"{scratch}/w.db"], env=env,
                           check=True)


def kept_pgn(directory: Path, w: Workload, runner: str, repeat: int) -> Path:
    """Where ``--keep-pgn`` keeps one run's PGN file: workload, runner and round in its name."""
    return directory / f"{w.name}-{runner.replace('/', '-')}-{repeat}.pgn"


def run_once(runner: str, program: str | None, w: Workload, engine: str,
             keep: Path | None = None) -> Sample:
    """Play the workload once with one runner and measure it; `keep`: copy its PGN there."""
    with tempfile.TemporaryDirectory(prefix=f"peers-{runner.replace('/', '-')}-") as tmp:
        cwd = Path(tmp)
        pgn = cwd / "out.pgn"
        env = python_env(program) if runner not in ("cutechess-cli", "fastchess") else dict(os.environ)
        for part in runner.split("/")[1:]:
            if part == BASELINE:
                continue  # the checkout is `program`
            if part in BUILDS:
                env.pop("RUNNER_PURE", None)
                if part == "pure":
                    env["RUNNER_PURE"] = "1"
            else:
                env["RUNNER_LOOP"] = part
        kind = base_name(runner)
        if runner == "cutechess-cli":
            argv = cutechess_argv(program or "", engine, w, pgn)
        elif runner == "fastchess":
            argv = fastchess_argv(program or "", engine, w, pgn)
        elif kind in DROPINS:  # the peer's own argv, the database beside the PGN file
            peer_argv = (fastchess_argv if kind == "runner-fastchess" else cutechess_argv)
            argv = dropin_argv(runner, peer_argv(kind, engine, w, pgn))
            env["RUNNER_DB"] = str(cwd / "runner.db")
        else:  # ours, from this tree or (--baseline) from another checkout given as program
            argv = ours_argv(engine, w, pgn)
        load = os.getloadavg()[0]
        own, children, wall = run_split(argv, cwd, env)
        if build_of(runner) == "compiled" and _STALE_LINE in (cwd / "stdout.txt").read_text(
                errors="replace"):
            # The tree changed under the run (a merge into the checkout, say): the compiled
            # column ran the Python source. Once undetected, it made two runs differ.
            raise RuntimeError(f"{runner}: the compiled modules went stale during the run"
                               " (sources edited since the build): rebuild, or run from a"
                               " snapshot that does not change")
        if keep is not None:
            shutil.copyfile(pgn, keep)  # before the check below: a short run is worth reading
        games, plies, forfeits = count_plies(pgn.read_text(errors="replace"))
        if games != w.games:
            raise RuntimeError(f"{runner} on {w.name}: {games} games in {pgn}, expected {w.games}")
        return Sample(plies, own, children, wall, load, forfeits)


def workloads(games: int, forfeit_games: int = 1000) -> dict[str, Workload]:
    """The workloads by name: issue 17's two, and the long forfeit check."""
    return {
        "fairymax": Workload("fairymax", "fairymax", "cecp", {"depth": "1"}, games,
                             "fairymax depth 1 vs itself, CECP"),
        "stockfish": Workload("stockfish", "stockfish", "uci", {"depth": "1"}, games,
                              "stockfish depth 1 vs itself, UCI"),
        "forfeit": Workload("forfeit", "stockfish", "uci", {"tc": "2+0.02"}, forfeit_games,
                            f"stockfish 2+0.02 vs itself, UCI, {forfeit_games:,} games"),
    }


def runners_for(w: Workload, baseline: str | None, loops: list[str] | None = None,
                peers: tuple[str, ...] = ("cutechess-cli", "fastchess"),
                dropins: tuple[str, ...] = (), builds: list[str] | None = None,
                ) -> list[tuple[str, str | None]]:
    """(runner, program) pairs for a workload, ours last (one per loop in `loops`), then the
    drop-ins in `dropins` (runner-fastchess for UCI workloads only, as fastchess), each of ours
    once per build in `builds`; absent peers are reported and left out."""
    found: list[tuple[str, str | None]] = []
    if baseline is not None:
        found.append(("baseline", baseline))
    for peer in peers:
        if peer == "fastchess" and w.proto != "uci":
            continue
        program = find_program(peer)
        if program is None:
            print(f"# skip {peer} on {w.name}: not in {PEERS} nor on PATH", flush=True)
        else:
            found.append((peer, program))
    suffixes = [f"/{build}" for build in builds] if builds else [""]
    ours = [f"{OURS}/{loop}" for loop in loops] if loops else [OURS]
    found += [(name + suffix, None) for suffix in suffixes for name in ours]
    found += [(column + suffix, None) for suffix in suffixes for column in dropins
              if not (column == "runner-fastchess" and w.proto != "uci")]
    if baseline is not None:  # the drop-ins A/B too: each from the baseline checkout
        found += [(f"{column}/{BASELINE}", baseline) for column in dropins
                  if not (column == "runner-fastchess" and w.proto != "uci")]
    return found


def measure(chosen: list[Workload], repeats: int, baseline: str | None = None,
            loops: list[str] | None = None,
            peers: tuple[str, ...] = ("cutechess-cli", "fastchess"),
            dropins: tuple[str, ...] = (),
            builds: list[str] | None = None,
            keep_pgn: Path | None = None, split: bool = True) -> dict[str, list[Column]]:
    """Every runner on every workload, interleaved, `repeats` times (PGNs kept in `keep_pgn`);
    with `split`, each run beside a 2-game run of the same runner (`Column.split`)."""
    plan: dict[str, list[tuple[str, str | None]]] = {}
    results: dict[str, list[Column]] = {}
    engines: dict[str, str] = {}
    for w in chosen:
        engine = find_program(w.engine)
        if engine is None:
            print(f"# skip workload {w.name}: engine {w.engine} not found", flush=True)
            continue
        engines[w.name] = engine
        plan[w.name] = runners_for(w, baseline, loops, peers, dropins, builds)
        results[w.name] = [Column(r) for r, _ in plan[w.name]]
    for repeat in range(repeats):
        for w in chosen:
            for column, (runner, program) in zip(results.get(w.name, []), plan.get(w.name, []),
                                                 strict=True):
                keep = None if keep_pgn is None else kept_pgn(keep_pgn, w, runner, repeat + 1)
                s = run_once(runner, program, w, engines[w.name], keep)
                column.samples.append(s)
                if split:
                    column.short.append(run_once(runner, program, replace(w, games=2),
                                                 engines[w.name]))
                print(f"# run {repeat + 1}/{repeats} {w.name:9} {runner:26} plies {s.plies:6d}"
                      f"  runner {s.runner_cpu:7.2f}s  engines {s.engines_cpu:7.2f}s"
                      f"  wall {s.wall:7.2f}s  load {s.load:5.2f}  forfeits {s.forfeits}",
                      flush=True)
    return results


def startup_times(repeats: int, dropins: tuple[str, ...] = ()) -> dict[str, float]:
    """Median wall seconds of the commands that should start fast (with `dropins`, their
    ``--version`` too: frameworks ask for it on every start)."""
    env = python_env()
    times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="peers-startup-") as tmp:
        db = str(Path(tmp, "empty.db"))
        # 'runner list' only reads: it refuses a database that is not there.
        subprocess.run([sys.executable, "-m", "runner", "db", "upgrade", "--db", db], cwd=tmp,
                       env=env, check=True, capture_output=True)
        commands = {
            "runner --help": ["--help"],
            "runner list": ["list", "--db", db],
            "runner stats --wdl 120 60 100": ["stats", "--wdl", "120", "60", "100"],
        }
        argvs = {label: [sys.executable, "-m", "runner", *args]
                 for label, args in commands.items()}
        for column in dropins:
            argvs[f"{column} --version"] = dropin_argv(column, [column, "--version"])
        for _ in range(repeats):
            for label, argv in argvs.items():
                started = time.monotonic()
                done = subprocess.run(argv, cwd=tmp, env=env, capture_output=True, check=False)
                times.setdefault(label, []).append(time.monotonic() - started)
                if done.returncode != 0:
                    raise RuntimeError(f"{label}: exit {done.returncode}: {done.stderr[-500:]!r}")
    return {label: statistics.median(values) for label, values in times.items()}


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f} us"


def print_text(w: Workload, columns: list[Column]) -> None:
    """Medians and ratios of one workload as plain lines."""
    mine = [c for c in columns if c.runner.startswith(OURS)]
    load = statistics.median(s.load for c in columns for s in c.samples)
    print(f"\n{w.title}, {w.games} games, concurrency 2, medians of {len(mine[0].samples)}"
          f" (load average {load:.2f})")
    for c in columns:
        forfeits = sum(s.forfeits for s in c.samples)
        print(f"  {c.runner:26}  runner CPU/ply {_us(c.median(lambda s: s.runner_cpu)):>9}"
              f"  wall/ply {_us(c.median(lambda s: s.wall)):>9}"
              f"  engines CPU/ply {_us(c.median(lambda s: s.engines_cpu)):>9}"
              f"  plies {statistics.median(s.plies for s in c.samples):,.0f}"
              f"  time forfeits {forfeits}")
        parts = c.split()
        if parts is not None:
            print(f"  {'':26}  start-up CPU {parts[0]:.3f} s  CPU/ply beyond start-up"
                  f" {_us(parts[1]):>9}")
    dropins = [c for c in columns if base_name(c.runner) in DROPINS]
    mine = [c for c in mine if c not in dropins]
    by_name = {c.runner: c for c in columns}
    for column in dropins:  # each drop-in against the peer whose argv it ran, and our CLI
        same_build = [c for c in mine if build_of(c.runner) == build_of(column.runner)]
        for other in (by_name.get(DROPINS[base_name(column.runner)]), *same_build):
            if other is None:
                continue
            cpu = column.median(lambda s: s.runner_cpu) / other.median(lambda s: s.runner_cpu)
            wall = column.median(lambda s: s.wall) / other.median(lambda s: s.wall)
            print(f"  {column.runner} / {other.runner}: runner CPU {cpu:.2f}x, wall {wall:.2f}x")
    for index, ours in enumerate(mine):
        for peer in [c for c in columns if c not in mine and c not in dropins] + mine[:index]:
            cpu = ours.median(lambda s: s.runner_cpu) / peer.median(lambda s: s.runner_cpu)
            wall = ours.median(lambda s: s.wall) / peer.median(lambda s: s.wall)
            own_split, their_split = ours.split(), peer.split()
            beyond = (f", beyond start-up {own_split[1] / their_split[1]:.2f}x"
                      if own_split and their_split and their_split[1] > 0 else "")
            print(f"  {ours.runner} / {peer.runner}: runner CPU {cpu:.2f}x, wall {wall:.2f}x{beyond}")


def _without_build(runner: str) -> str:
    """A column's name without its build suffix: the docs/benchmarks.md table's column."""
    return "/".join(part for part in runner.split("/") if part not in BUILDS)


def print_markdown(chosen: list[Workload], results: dict[str, list[Column]],
                   startup: dict[str, float]) -> None:
    """docs/benchmarks.md's performance table; with ``--builds``, one row per build and figure."""
    names = [c.runner for c in next(iter(results.values()), [])
             if c.runner.startswith(OURS)] or [OURS]
    builds = list(dict.fromkeys(build_of(name) for name in names))  # [None] without --builds
    ours_names = list(dict.fromkeys(_without_build(name) for name in names))
    print(f"\n| workload | cutechess-cli | fastchess | {' | '.join(ours_names)} |")
    print("|---|---|---|" + "---|" * len(ours_names))
    for w in chosen:
        columns = results.get(w.name)
        if not columns:
            continue
        by_name = {c.runner: c for c in columns}
        load = statistics.median(s.load for c in columns for s in c.samples)
        for label, figure in (("runner CPU per ply", lambda s: s.runner_cpu),
                              ("wall time per ply", lambda s: s.wall),
                              ("engines' CPU per ply", lambda s: s.engines_cpu)):
            for build in builds:
                cells = []
                for peer in ("cutechess-cli", "fastchess"):
                    c = by_name.get(peer)
                    cells.append(_us(c.median(figure)) if c else "–")
                for name in ours_names:
                    mine = by_name[name if build is None else f"{name}/{build}"].median(figure)
                    ratios = [f"{mine / by_name[p].median(figure):.2f}x {p}"
                              for p in ("cutechess-cli", "fastchess") if p in by_name]
                    cells.append(f"{_us(mine)} ({', '.join(ratios)})" if ratios else _us(mine))
                row = label if build is None else f"{label}, {build}"
                print(f"| {w.title}, load {load:.1f}: {row} | {' | '.join(cells)} |")
        peers = [by_name[p].split() if p in by_name else None for p in ("cutechess-cli", "fastchess")]
        for index, label in ((1, "runner CPU per ply beyond start-up"), (0, "runner start-up CPU")):
            for build in builds:
                split = [by_name[n if build is None else f"{n}/{build}"].split() for n in ours_names]
                if all(split):
                    shown = [("–" if x is None else _us(x[1]) if index else f"{x[0]:.3f} s")
                             for x in (*peers, *split)]
                    row = label if build is None else f"{label}, {build}"
                    print(f"| {w.title}, load {load:.1f}: {row} | {' | '.join(shown)} |")
    for label, seconds in startup.items():
        print(f"| `{label}` wall | | | {seconds:.2f} s |" + " |" * (len(ours_names) - 1))


def print_dropin_markdown(chosen: list[Workload], results: dict[str, list[Column]]) -> None:
    """The drop-ins' table: each against the peer whose argv it ran (a row per build)."""
    rows = []
    for w in chosen:
        by_name = {c.runner: c for c in results.get(w.name, [])}
        load = statistics.median(s.load for c in by_name.values() for s in c.samples) \
            if by_name else 0.0
        for column in [name for name in by_name if base_name(name) in DROPINS]:
            peer = DROPINS[base_name(column)]
            build = build_of(column)
            shown = base_name(column) + (f" ({build})" if build else "")
            for label, figure in (("runner CPU per ply", lambda s: s.runner_cpu),
                                  ("wall time per ply", lambda s: s.wall)):
                mine = by_name[column].median(figure)
                other = by_name.get(peer)
                theirs = other.median(figure) if other else None
                ratio = f" ({mine / theirs:.2f}x)" if theirs else ""
                rows.append(f"| {w.title}, load {load:.1f}: {label} | {peer}: "
                            f"{_us(theirs) if theirs else '-'} | {shown}: {_us(mine)}{ratio} |")
    if rows:
        print("\n| workload, same argv | peer | drop-in |\n|---|---|---|")
        print("\n".join(rows))


def main() -> None:
    """Parse the flags, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs of each runner per workload")
    parser.add_argument("--games", type=int, default=100, help="games per run (even)")
    parser.add_argument("--workloads", default="fairymax,stockfish",
                        help="comma-separated: fairymax, stockfish, forfeit")
    parser.add_argument("--markdown", action="store_true", help="also print the table of docs/benchmarks.md")
    parser.add_argument("--no-startup", action="store_true", help="skip the start-up timings")
    parser.add_argument("--no-split", action="store_true",
                        help="no 2-game runs: start-up not split off the CPU per ply")
    parser.add_argument("--loops", metavar="LOOPS",
                        help="comma-separated event loops to run our CLI on, one column each: "
                             "asyncio, uvloop (default: its default loop)")
    parser.add_argument("--builds", metavar="BUILDS",
                        help="comma-separated builds to run our CLI and drop-ins as, one column "
                             "each: compiled, pure (RUNNER_PURE=1) (default: as installed)")
    parser.add_argument("--baseline", metavar="DIR",
                        help="also run our CLI from this checkout (an A/B column named baseline)")
    parser.add_argument("--peers", default="cutechess-cli,fastchess",
                        help="comma-separated peers to run ('' for ours alone)")
    parser.add_argument("--no-dropins", action="store_true",
                        help="leave out the runner-fastchess and runner-cutechess columns")
    parser.add_argument("--forfeit-games", type=int, default=1000,
                        help="games of the forfeit workload (issue 17 asks for 1,000)")
    parser.add_argument("--keep-pgn", metavar="DIR", type=Path,
                        help="copy each run's PGN file into DIR (to read time losses afterwards)")
    args = parser.parse_args()
    if args.keep_pgn is not None:
        args.keep_pgn.mkdir(parents=True, exist_ok=True)
    peers = tuple(p for p in args.peers.split(",") if p)
    if not set(peers) <= {"cutechess-cli", "fastchess"}:
        sys.exit(f"--peers: {args.peers!r}: expected cutechess-cli and/or fastchess")
    if not BOOK.is_file():
        sys.exit(f"the book {BOOK} is missing (shared data)")
    table = workloads(args.games, args.forfeit_games)
    unknown = [n for n in args.workloads.split(",") if n not in table]
    if unknown:
        sys.exit(f"--workloads: unknown {', '.join(unknown)} (known: {', '.join(table)})")
    chosen = [table[n] for n in args.workloads.split(",")]
    print(f"# {time.strftime('%Y-%m-%d %H:%M:%S')}, {os.cpu_count()} CPUs,"
          f" load average {os.getloadavg()[0]:.2f}", flush=True)
    baseline = str(Path(args.baseline).resolve()) if args.baseline else None
    warm_bytecode([None] if baseline is None else [None, baseline])
    loops = args.loops.split(",") if args.loops else None
    if loops and not set(loops) <= {"asyncio", "uvloop"}:
        sys.exit(f"--loops: {args.loops!r}: expected asyncio and/or uvloop")
    builds = args.builds.split(",") if args.builds else None
    if builds and not set(builds) <= set(BUILDS):
        sys.exit(f"--builds: {args.builds!r}: expected compiled and/or pure")
    if builds and "compiled" in builds:
        check_compiled()
    dropins: tuple[str, ...] = ()
    if not args.no_dropins:
        dropins = tuple(c for c in DROPINS if dropin_ready(c))
        for column in sorted(set(DROPINS) - set(dropins)):
            print(f"# skip {column}: runner.dropin.{column.removeprefix('runner-')} is not in "
                  "this tree", flush=True)
    results = measure(chosen, args.repeats, baseline, loops, peers, dropins, builds,
                      args.keep_pgn, not args.no_split)
    for w in chosen:
        if w.name in results:
            print_text(w, results[w.name])
    startup = {} if args.no_startup else startup_times(max(args.repeats, 5), dropins)
    if startup:
        print(f"\nstart-up, median of {max(args.repeats, 5)} (load average {os.getloadavg()[0]:.2f})")
        for label, seconds in startup.items():
            print(f"  {label:32} {seconds:.3f} s")
    if args.markdown:
        print_markdown(chosen, results, startup)
        print_dropin_markdown(chosen, results)


if __name__ == "__main__":
    main()
