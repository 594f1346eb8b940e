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
rather than the engines. Pure functions but `bench_speed`, which runs the bench.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace

from runner.build.bench import read_bench
from runner.clock import TimeControl, TimePeriod
from runner.game.job import GameJob

__all__ = ["BENCH_ARGV", "MachineSpeed", "SpeedTerms", "bench_speed", "parse_bench",
           "scale_control", "scale_job"]

BENCH_ARGV = (sys.executable, "-m", "engine", "bench")
"""The bundled engine's fixed search (its default depth), as this Python runs it."""
_BENCH_SECONDS = 120.0
"""The longest a bench may take before the worker gives up on it."""


@dataclass(frozen=True)
class MachineSpeed:
    """What a machine's bench found: its nodes per second per game slot (the median of the
    slots' runs), the bench's node count, and how many ran at once."""

    nps: int
    nodes: int
    runs: int


@dataclass(frozen=True)
class SpeedTerms:
    """How a service scales its workers' time controls: its reference speed (nodes per
    second of the bundled engine's bench; None: no scaling, every factor 1) and the largest
    factor it accepts (a slower machine is refused)."""

    reference_nps: int | None = None
    max_factor: float = 4.0

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


def parse_bench(text: str) -> tuple[int, int]:
    """(nodes, nodes per second) from a bench's output, as Stockfish spells its lines;
    ValueError naming what is missing."""
    bench = read_bench(text)
    if bench is None or bench.nps is None:
        missing = "Nodes searched" if bench is None else "Nodes/second"
        raise ValueError(f"the bench printed no '{missing} : N' line")
    return bench.nodes, bench.nps


async def bench_speed(slots: int, argv: Sequence[str] = BENCH_ARGV) -> MachineSpeed:
    """Run the bench once per slot at the same time (no shell) and take the median speed;
    RuntimeError with the command and what went wrong."""
    runs = await asyncio.gather(*(_one_bench(argv) for _ in range(max(1, slots))))
    return MachineSpeed(nps=int(statistics.median(nps for _nodes, nps in runs)),
                        nodes=runs[0][0], runs=len(runs))


async def _one_bench(argv: Sequence[str]) -> tuple[int, int]:
    process = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await asyncio.wait_for(process.communicate(), _BENCH_SECONDS)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise RuntimeError(f"{' '.join(argv)}: no answer in {_BENCH_SECONDS:g} s") from None
    except BaseException:
        if process.returncode is None:
            process.kill()
            await process.wait()
        raise
    if process.returncode != 0:
        tail = err.decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
        raise RuntimeError(f"{' '.join(argv)}: exit status {process.returncode} ({tail[0]})")
    try:
        return parse_bench(out.decode(errors="replace"))
    except ValueError as exc:
        raise RuntimeError(f"{' '.join(argv)}: {exc}") from None


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
