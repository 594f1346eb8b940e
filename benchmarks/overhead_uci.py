"""The runner's cost per move over UCI, beside CECP's measured in the same run.

Instant-move bundled engines (`--level random`) play `--games` games per row through
`play_game`, colors alternating, engines started once and reused, the rows' games
interleaved: a CECP-vs-CECP row, a UCI-vs-UCI row (`python -m engine --uci`) and a mixed
row. Printed per row:

- runner CPU per move: this process's CPU time (`time.process_time`, engine children
  excluded) inside `play_game`, divided by the plies played;
- move relay latency: from the runner reading an engine's move (``move X`` or
  ``bestmove X``) to the move written into the opponent's stdin (``usermove X``, or the
  ``position ... X`` line that goes out with ``go``), both from the protocol layer's
  transcript timestamps; it includes the referee's work (legality, SAN, game-end rules,
  adjudication, clocks) and, for UCI, formatting the whole position and the ``go`` line;
- wall time per move, engines included.

    python benchmarks/overhead_uci.py [--games 100] [--tc 2+0.02]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from runner.clock import TimeControl
from runner.game.play import play_game
from runner.game.record import GameRecord, GameSpec, GameTermination
from runner.protocol.engine import EngineConfig
from runner.protocol.factory import make_engine

REPO = Path(__file__).resolve().parent.parent
_FAULTS = frozenset({GameTermination.TIME_FORFEIT, GameTermination.STALL,
                     GameTermination.DISCONNECT, GameTermination.ILLEGAL_MOVE})


@dataclass
class Row:
    """One row of figures: what its games add up to."""

    label: str
    games: int = 0
    plies: int = 0
    cpu: float = 0.0
    wall: float = 0.0
    relays: list[float] = field(default_factory=list)
    endings: Counter[str] = field(default_factory=Counter)


def _entries(transcript: tuple[str, ...]) -> list[tuple[float, str, str]]:
    """(time, direction, text) from a record's printed transcript lines."""
    parsed = []
    for line in transcript:
        parts = line.split(None, 2)
        if len(parts) >= 2:
            parsed.append((float(parts[0]), parts[1], parts[2] if len(parts) == 3 else ""))
    return parsed


def _read_move(text: str) -> str | None:
    words = text.split()
    if len(words) >= 2 and words[0] in ("move", "bestmove"):
        return words[1]
    return None


def _written_move(text: str) -> str | None:
    words = text.split()
    if words and words[0] == "usermove" and len(words) == 2:
        return words[1]
    if words and words[0] == "position" and "moves" in words:
        return words[-1]
    return None


def relay_latencies(record: GameRecord) -> list[float]:
    """Seconds from reading each engine move to writing it to the opponent."""
    white, black = (_entries(t) for t in record.transcripts)
    latencies = []
    for mover, opponent in ((white, black), (black, white)):
        writes = [(t, _written_move(text)) for t, d, text in opponent if d == ">"]
        for read_at, direction, text in mover:
            move = _read_move(text) if direction == "<" else None
            if move is None:
                continue
            later = next((t for t, sent in writes if t >= read_at and sent == move), None)
            if later is not None:
                latencies.append(later - read_at)
    return latencies


def _config(name: str, protocol: str, seed: int) -> EngineConfig:
    argv = [sys.executable, "-m", "engine", "--level", "random", "--seed", str(seed)]
    if protocol == "uci":
        argv.append("--uci")
    return EngineConfig(name=name, argv=tuple(argv), working_dir=REPO, protocol=protocol)


async def play_rows(rows: dict[str, tuple[str, str]], games: int, tc: TimeControl) -> list[Row]:
    """Play `games` games per row, the rows interleaved game by game (so that a machine
    busy with something else for a while weighs on every row alike); add up the figures."""
    pairs = {label: [make_engine(_config(f"{p}-{i}", p, i + 1)) for i, p in enumerate(protocols)]
             for label, protocols in rows.items()}
    totals = {label: Row(label) for label in rows}
    try:
        for engines in pairs.values():
            for engine in engines:
                await engine.start()
        for number in range(games):
            for label, engines in pairs.items():
                white, black = engines if number % 2 == 0 else engines[::-1]
                row = totals[label]
                cpu0, wall0 = time.process_time(), time.perf_counter()
                record = await play_game(white, black, GameSpec(tc, tc))
                row.cpu += time.process_time() - cpu0
                row.wall += time.perf_counter() - wall0
                row.games += 1
                row.plies += record.plies
                row.relays.extend(relay_latencies(record))
                row.endings[record.termination.value] += 1
                if record.termination in _FAULTS or record.replay:
                    print(f"{label} game {number + 1}: {record.result} {record.reason}",
                          file=sys.stderr)
    finally:
        for engines in pairs.values():
            for engine in engines:
                await engine.quit()
    return list(totals.values())


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:6.0f} us"


def main(argv: list[str] | None = None) -> int:
    """Parse options, play the three rows, print them side by side."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100, help="games per row")
    parser.add_argument("--tc", default="2+0.02", help="time control for both sides")
    args = parser.parse_args(argv)
    tc = TimeControl.parse(args.tc)
    rows = asyncio.run(play_rows({"CECP vs CECP": ("cecp", "cecp"), "UCI vs UCI": ("uci", "uci"),
                                  "CECP vs UCI": ("cecp", "uci")}, args.games, tc))
    print(f"{args.games} games per row at {args.tc}, bundled engines at level random")
    print(f"{'row':14} {'plies':>6} {'CPU/move':>10} {'relay median':>13} {'relay p90':>10} "
          f"{'wall/move':>10}  forfeits")
    for row in rows:
        relays = sorted(row.relays)
        p90 = relays[int(0.9 * (len(relays) - 1))] if relays else 0.0
        print(f"{row.label:14} {row.plies:6d} {_us(row.cpu / max(row.plies, 1)):>10} "
              f"{_us(statistics.median(relays) if relays else 0.0):>13} {_us(p90):>10} "
              f"{_us(row.wall / max(row.plies, 1)):>10}  "
              f"{row.endings.get(GameTermination.TIME_FORFEIT.value, 0)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
