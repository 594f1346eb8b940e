"""The runner's own cost per move, measured on games between two instant-move bundled engines.

Two `python -m engine --level random` processes (they answer at once) play `--games` games
through `play_game`, colors alternating, engines started once and reused. Printed:

- runner CPU per move: this process's CPU time (`time.process_time`, which excludes the engine
  children) spent inside `play_game`, divided by the plies played;
- move relay latency: from the moment the runner has read an engine's ``move`` line to the
  moment the same move has been written into the opponent's stdin (transcript timestamps of
  the protocol layer: ``<`` read time to the ``>`` write-and-drain time of ``usermove``); this
  is the part of "engine writes its move -> opponent's stdin has it" that the runner controls,
  and includes the referee work (legality, SAN, game-end rules, adjudication, clocks);
- wall time per move (engines included) and per game, and how the games ended (time forfeits
  are expected to be zero between well-behaved engines).

    python benchmarks/overhead.py [--games 200] [--tc 2+0.02] [--level random]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from runner.clock import TimeControl
from runner.game.play import play_game
from runner.game.record import GameRecord, GameSpec, GameTermination
from runner.protocol.cecp import CecpEngine
from runner.protocol.engine import EngineConfig

REPO = Path(__file__).resolve().parent.parent
_FAULTS = frozenset({GameTermination.TIME_FORFEIT, GameTermination.STALL, GameTermination.DISCONNECT,
                     GameTermination.ILLEGAL_MOVE, GameTermination.FALSE_CLAIM})


@dataclass
class Totals:
    """What the games add up to."""

    games: int = 0
    plies: int = 0
    cpu: float = 0.0
    wall: float = 0.0
    relays: list[float] = field(default_factory=list)
    endings: Counter[str] = field(default_factory=Counter)
    results: Counter[str] = field(default_factory=Counter)
    game_cpu: list[float] = field(default_factory=list)


def _entries(transcript: tuple[str, ...]) -> list[tuple[float, str, str]]:
    """(time, direction, text) from the transcript's printed form."""
    parsed = []
    for line in transcript:
        parts = line.split(None, 2)
        if len(parts) >= 2:
            parsed.append((float(parts[0]), parts[1], parts[2] if len(parts) == 3 else ""))
    return parsed


def relay_latencies(record: GameRecord) -> list[float]:
    """Seconds from reading each engine move to writing it to the opponent (last move excluded)."""
    white, black = (_entries(t) for t in record.transcripts)
    latencies = []
    for mover, opponent in ((white, black), (black, white)):
        writes = [(t, text.split()[-1]) for t, d, text in opponent
                  if d == ">" and text.startswith("usermove ")]
        for read_at, direction, text in mover:
            if direction != "<" or not text.startswith("move "):
                continue
            move = text.split()[1]
            later = next((t for t, sent in writes if t >= read_at and sent == move), None)
            if later is not None:
                latencies.append(later - read_at)
    return latencies


async def run(games: int, tc: TimeControl, level: str) -> Totals:
    """Play the games and add up the measurements."""
    configs = [
        EngineConfig(name=f"random-{seed}",
                     argv=(sys.executable, "-m", "engine", "--level", level, "--seed", str(seed)),
                     working_dir=REPO)
        for seed in (1, 2)
    ]
    engines = [CecpEngine(config) for config in configs]
    totals = Totals()
    try:
        for engine in engines:
            await engine.start()
        for number in range(games):
            white, black = engines if number % 2 == 0 else engines[::-1]
            spec = GameSpec(tc, tc, tags={"Round": str(number + 1)})
            cpu0, wall0 = time.process_time(), time.perf_counter()
            record = await play_game(white, black, spec)
            cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
            totals.games += 1
            totals.plies += record.plies
            totals.cpu += cpu
            totals.wall += wall
            totals.game_cpu.append(cpu / max(record.plies, 1))
            totals.relays.extend(relay_latencies(record))
            totals.endings[record.termination.value] += 1
            totals.results[record.result] += 1
            if record.termination in _FAULTS or record.replay:
                print(f"game {number + 1}: {record.result} {record.reason}", file=sys.stderr)
    finally:
        for engine in engines:
            await engine.quit()
    return totals


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.0f} us"


def main(argv: list[str] | None = None) -> int:
    """Parse options, play, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--tc", default="2+0.02", help="time control for both sides")
    parser.add_argument("--level", default="random", help="bundled engine level (instant: random)")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    totals = asyncio.run(run(args.games, TimeControl.parse(args.tc), args.level))
    # On a shared 2-core machine the latency follows the load: 160-200 us near load 1,
    # 250-350 us near load 3-4 for the same code.  Quote the load with the figures.
    print(f"load average (1 min): {load_before:.2f} before, {os.getloadavg()[0]:.2f} after")
    relays = sorted(totals.relays)
    print(f"games: {totals.games} at {args.tc}, level {args.level}; plies: {totals.plies} "
          f"({totals.plies / max(totals.games, 1):.0f} per game)")
    print(f"runner CPU per move: mean {_us(totals.cpu / max(totals.plies, 1))}, "
          f"median of per-game means {_us(statistics.median(totals.game_cpu))}")
    if relays:
        p90 = relays[int(0.9 * (len(relays) - 1))]
        print(f"move relay latency (read -> written to opponent): median {_us(statistics.median(relays))}, "
              f"p90 {_us(p90)}, max {_us(relays[-1])} over {len(relays)} moves")
    print(f"wall per move (engines included): {_us(totals.wall / max(totals.plies, 1))}; "
          f"per game {totals.wall / max(totals.games, 1):.2f} s")
    print(f"time forfeits: {totals.endings.get(GameTermination.TIME_FORFEIT.value, 0)}")
    print("endings: " + ", ".join(f"{name} {count}" for name, count in totals.endings.most_common()))
    print("results: " + ", ".join(f"{name} {count}" for name, count in sorted(totals.results.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
