"""Each machine's speed, and the time controls scaled to it.

A worker benches itself when it starts: a fixed search by the bundled engine (``python -m
engine bench``: the same positions to the same depth on every machine, so its node count is
fixed and only the time differs), run once per game slot at the same time, since the games
will share the machine so. Its nodes per second go to the service with its registration.

The service knows a reference speed (the machine its time controls are meant for) and gives
each worker the factor reference / speed: a batch's clocks (base time, increment, time per
move, and the ceiling of an untimed move) are multiplied by it, so a machine half as fast gets
twice the time and both search about as deep, as fishtest and OpenBench scale their workers'
time controls. Depth and node limits need no scaling. A machine so slow that its factor would
pass the service's limit is refused at registration: its games would measure the machine
rather than the engines.

An engine with a bench of its own (its ``bench`` words in the worker's engines file, e.g.
``stockfish bench``) is a better measure of the machine for its games than the bundled
engine: the worker benches each such engine once at start, the same way, and registers its
nodes per second. The service's engines file declares each engine's ``reference_nps`` (its
bench on the reference machine, as OpenBench's engine configurations carry one and fishtest
one for Stockfish). A game's factor is then `SpeedTerms.scaling`'s: each side's engine's
reference over its measured speed where both are known, else the machine's factor; the game's
factor is the geometric mean of its two sides' (one clock for both: see docs/workers.md).
Pure functions but `bench_speed`, which runs a bench, and `EngineBenches`, which keeps them.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import signal
import statistics
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from runner.build.bench import read_bench
from runner.clock import TimeControl, TimePeriod
from runner.config.engines import BenchDeclaration
from runner.config.recipes import DEFAULT_BENCH_PATTERN
from runner.game.job import GameJob
from runner.protocol.engine import EngineConfig
from runner.text import shown

__all__ = ["BENCH_ARGV", "MACHINE", "NOT_SCALED", "EngineBenches", "EngineSpeed",
           "MachineSpeed", "Scaling", "SpeedTerms", "bench_speed", "own_factor", "parse_bench",
           "scale_control", "scale_job"]

BENCH_ARGV = (sys.executable, "-m", "engine", "bench")
"""The bundled engine's fixed search (its default depth), as this Python runs it."""
_BENCH_SECONDS = 120.0
"""The longest a bench may take before the worker gives up on it."""
_OUTPUT_LIMIT = 1 << 20
"""The end of each output stream a bench's figures are read from."""
MACHINE = "machine"
"""The source of a factor from the bundled engine's bench (the machine's speed)."""


@dataclass(frozen=True)
class MachineSpeed:
    """What a machine's bench found: its nodes per second per game slot (the median of the
    slots' runs), the bench's node count, and how many ran at once."""

    nps: int
    nodes: int
    runs: int


@dataclass(frozen=True)
class EngineSpeed:
    """What a worker's bench of one engine of its allow-list found: its nodes per second
    per game slot (0: it failed), its node count, and why it failed."""

    engine: str
    nps: int = 0
    nodes: int = 0
    failed: str | None = None


@dataclass(frozen=True)
class Scaling:
    """A game's clock factor and the benches it comes from: ``machine`` (the bundled
    engine's), ``bench:NAME`` (an engine's own), both joined by ``+`` when the two sides
    differ, or ``none`` (the service scales nothing)."""

    factor: float = 1.0
    source: str = "none"


NOT_SCALED = Scaling()
"""The scaling of a service without a reference: every clock as the tournament says."""


@dataclass(frozen=True)
class SpeedTerms:
    """How a service scales its workers' time controls: its reference speed (nodes per
    second of the bundled engine's bench; None: no machine scaling, its factor 1), the
    largest factor it accepts (a slower machine is refused), and each allow-listed
    engine's own reference (its bench's nodes per second on the reference machine)."""

    reference_nps: int | None = None
    max_factor: float = 4.0
    engines: Mapping[str, int] = field(default_factory=dict)
    """The reference speed of each engine whose own bench scales its games, by name."""

    def factor(self, nps: int) -> float:
        """The factor of a machine benching `nps` (1.0 without a reference or a bench)."""
        if self.reference_nps is None or nps <= 0:
            return 1.0
        return round(self.reference_nps / nps, 3)

    def refusal(self, nps: int) -> str | None:
        """Why a machine benching `nps` is too slow for this service, or None."""
        if self.reference_nps is None:
            return None
        if nps <= 0:
            return ("this worker sent no bench speed, and this service scales time controls "
                    f"to a reference of {self.reference_nps} nodes/s: update runner")
        factor = self.factor(nps)
        if factor > self.max_factor:
            return (f"this machine benches {nps} nodes/s per game slot, under a "
                    f"1/{self.max_factor:g} of this service's reference "
                    f"({self.reference_nps} nodes/s): too slow to play its time controls "
                    "(fewer --concurrency slots bench faster)")
        return None


    def engine_factors(self, measured: Iterable[EngineSpeed]) -> dict[str, float]:
        """The factor of each engine a worker benched (a reference declared, a speed
        measured), by name."""
        return {speed.engine: own_factor(self.engines[speed.engine], speed.nps)
                for speed in measured if speed.nps > 0 and speed.engine in self.engines}

    def too_slow(self, measured: Iterable[EngineSpeed]) -> list[str]:
        """The engines a worker benched too slowly for their reference (a factor past the
        gate): it gets no game of them."""
        return sorted(name for name, factor in self.engine_factors(measured).items()
                      if factor > self.max_factor)

    def scaling(self, machine_nps: int, engine_factors: Mapping[str, float],
                sides: Iterable[str]) -> Scaling:
        """A game's scaling on a machine benching `machine_nps` whose engines' own factors
        are `engine_factors`: each side (an engine name, both counted once when the same)
        by its engine's factor, or by the machine's when its engine has none and the
        service has a machine reference; the geometric mean of the sides' factors."""
        factors: list[float] = []
        sources: list[str] = []
        for name in dict.fromkeys(sides):
            if name in engine_factors:
                factors.append(engine_factors[name])
                sources.append(f"bench:{name}")
            elif self.reference_nps is not None:
                factors.append(self.factor(machine_nps))
                sources.append(MACHINE)
        if not factors:
            return NOT_SCALED
        mean = math.exp(sum(math.log(f) for f in factors) / len(factors))
        return Scaling(round(mean, 3), "+".join(sorted(set(sources))))


def own_factor(reference_nps: int, nps: int) -> float:
    """An engine's factor on a machine benching it at `nps` (its reference over that)."""
    return round(reference_nps / nps, 3)


def parse_bench(text: str, nodes_pattern: str = DEFAULT_BENCH_PATTERN) -> tuple[int, int]:
    """(nodes, nodes per second) from a bench's output, as Stockfish spells its lines (or
    its node count as `nodes_pattern` finds it); ValueError naming what is missing."""
    bench = read_bench(text, nodes_pattern)
    if bench is None or bench.nps is None:
        missing = (f"line matching {nodes_pattern!r}" if bench is None
                   else "'Nodes/second : N' line")
        raise ValueError(f"the bench printed no {missing}")
    return bench.nodes, bench.nps


@dataclass(frozen=True)
class _Bench:
    """How to run one bench: its argv, directory, environment, how to read it, how long."""

    argv: tuple[str, ...]
    cwd: Path | None = None
    env: Mapping[str, str] | None = None
    nodes_pattern: str = DEFAULT_BENCH_PATTERN
    timeout: float = _BENCH_SECONDS


async def bench_speed(slots: int, argv: Sequence[str] = BENCH_ARGV, *,
                      cwd: Path | None = None, env: Mapping[str, str] | None = None,
                      nodes_pattern: str = DEFAULT_BENCH_PATTERN,
                      timeout: float = _BENCH_SECONDS) -> MachineSpeed:
    """Run the bench once per slot at the same time (no shell; in `cwd`, with `env` over
    this process's environment; each cut after `timeout` seconds) and take the median
    speed; RuntimeError with the command and what went wrong."""
    bench = _Bench(tuple(argv), cwd, env, nodes_pattern, timeout)
    runs = await asyncio.gather(*(_one_bench(bench) for _ in range(max(1, slots))))
    return MachineSpeed(nps=int(statistics.median(nps for _nodes, nps in runs)),
                        nodes=runs[0][0], runs=len(runs))


async def _one_bench(bench: _Bench) -> tuple[int, int]:
    shown = " ".join(bench.argv)
    process = await asyncio.create_subprocess_exec(
        *bench.argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, cwd=bench.cwd, start_new_session=True,
        env=None if bench.env is None else {**os.environ, **bench.env})
    try:
        out, err = await asyncio.wait_for(process.communicate(), bench.timeout)
    except TimeoutError:
        raise RuntimeError(f"{shown}: no answer in {bench.timeout:g} s") from None
    finally:
        # The whole group: an engine's helpers go with it, whatever ended the wait.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        if process.returncode is None:
            await process.wait()
    if process.returncode != 0:
        tail = err.decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
        raise RuntimeError(f"{shown}: exit status {process.returncode} ({tail[0][:200]})")
    # Engines print their bench to either stream (Stockfish: standard error).
    text = (out[-_OUTPUT_LIMIT:] + b"\n" + err[-_OUTPUT_LIMIT:]).decode(errors="replace")
    try:
        return parse_bench(text, bench.nodes_pattern)
    except ValueError as exc:
        raise RuntimeError(f"{shown}: {exc}") from None


def scale_control(control: TimeControl, factor: float) -> TimeControl:
    """`control` with its times multiplied by `factor` (its depth and node limits kept)."""
    if factor == 1.0:
        return control
    periods = tuple(TimePeriod(p.moves, round(p.base * factor, 3),
                               round(p.increment * factor, 4)) for p in control.periods)
    move_time = None if control.move_time is None else round(control.move_time * factor, 4)
    return replace(control, periods=periods, move_time=move_time)


def scale_job(job: GameJob, factor: float) -> GameJob:
    """The job as a machine of this factor plays it: both clocks, and the ceiling of an
    untimed move, scaled."""
    if factor == 1.0:
        return job
    spec = job.spec
    ceiling = None if spec.move_ceiling is None else round(spec.move_ceiling * factor, 3)
    return replace(job, spec=replace(spec, white_tc=scale_control(spec.white_tc, factor),
                                     black_tc=scale_control(spec.black_tc, factor),
                                     move_ceiling=ceiling))


def _binary(argv: Sequence[str], cwd: Path | None) -> tuple[str, int, int] | None:
    """The program an argv starts: its resolved path, modification time and size (None:
    not found, and the bench will say so)."""
    program = Path(argv[0]) if argv else Path()
    if not program.is_absolute() and cwd is not None and (cwd / program).exists():
        program = cwd / program
    try:
        found = program.resolve()
        stat = found.stat()
    except OSError:
        return None
    return str(found), stat.st_mtime_ns, stat.st_size


class EngineBenches:
    """A worker's benches of its engines' own `bench`, each run once per process for one
    binary: kept by the program's path, modification time and size (and the bench's words,
    directory, environment and slots), so a binary replaced meanwhile is benched again at
    the next registration and two names of one binary are benched once."""

    def __init__(self, timeout: float = _BENCH_SECONDS) -> None:
        self.timeout = timeout
        """The longest one bench may take (then it failed)."""
        self._found: dict[tuple[object, ...], EngineSpeed] = {}

    async def measure(self, name: str, argv: Sequence[str], words: Sequence[str], *,
                      slots: int, cwd: Path | None = None,
                      env: Mapping[str, str] | None = None,
                      nodes_pattern: str = DEFAULT_BENCH_PATTERN) -> EngineSpeed:
        """The engine's speed per game slot (its bench once per slot at the same time);
        a failure is returned with its reason, never raised."""
        key = (_binary(argv, cwd), tuple(argv), tuple(words), str(cwd), nodes_pattern,
               tuple(sorted((env or {}).items())), slots)
        known = self._found.get(key)
        if known is not None:
            return replace(known, engine=name)
        try:
            speed = await bench_speed(slots, (*argv, *words), cwd=cwd, env=env,
                                      nodes_pattern=nodes_pattern, timeout=self.timeout)
            found = EngineSpeed(name, speed.nps, speed.nodes)
        except (RuntimeError, OSError) as exc:
            # One line, its engine's words made harmless: it is shown on two machines.
            found = EngineSpeed(name, failed=shown(" ".join(str(exc).split()))[:500])
        self._found[key] = found
        return found

    async def measure_all(self, engines: Mapping[str, EngineConfig],
                          declared: Mapping[str, BenchDeclaration], slots: int,
                          say: Callable[[str], None]) -> list[EngineSpeed]:
        """The speed of each engine of `engines` with a bench `declared`, one engine after
        another; each said, a failure with its reason (its games are scaled by the
        machine's bench)."""
        found = []
        for name, bench in sorted(declared.items()):
            config = engines.get(name)
            if config is None or not bench.words:
                continue
            speed = await self.measure(name, config.argv, bench.words, slots=slots,
                                       cwd=config.working_dir, env=config.env,
                                       nodes_pattern=bench.nodes_pattern)
            if speed.failed is None:
                say(f"benched {name}: {speed.nps} nodes/s per game slot")
            else:
                say(f"the bench of {name} failed ({speed.failed}): its games are scaled by "
                    "the machine's bench")
            found.append(speed)
        return found
