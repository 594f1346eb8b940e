"""Engine configuration: command-line options, strength levels mapped to search limits."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from enum import Enum

from engine.faults import FaultPlan

ENGINE_NAME = "cecp-runner engine"
ENGINE_VERSION = "0.1"


class Castling960(Enum):
    """How castling moves are written in Chess960 games."""

    OO = "oo"  # O-O / O-O-O, as the specification writes Fischer Random castling
    KING_TAKES_ROOK = "kxr"  # e1h1: the king "captures" its own rook


@dataclass(frozen=True)
class StrengthLimits:
    """What one strength setting means for the search."""

    depth: int | None = None
    nodes: int | None = None
    random_mover: bool = False
    greedy: bool = False


# --level 1..8: a ladder where each rung searches about three to four times the work of the one
# below, so that each level beats the one below (the SPRTs in engine/README.md show it): fixed
# depths at the weak end (depth 4 averages about 12 000 nodes), then node budgets that start
# well above that, and the clock alone at the top. No randomness: a level plays the same move
# in the same position, so its strength does not depend on luck.
_LEVELS: dict[str, StrengthLimits] = {
    "random": StrengthLimits(random_mover=True),
    "greedy": StrengthLimits(greedy=True),
    "1": StrengthLimits(depth=1),
    "2": StrengthLimits(depth=2),
    "3": StrengthLimits(depth=3),
    "4": StrengthLimits(depth=4),
    "5": StrengthLimits(nodes=40_000),
    "6": StrengthLimits(nodes=150_000),
    "7": StrengthLimits(nodes=500_000),
    "8": StrengthLimits(),
}
LEVEL_NAMES = tuple(_LEVELS)


def level_limits(level: str) -> StrengthLimits:
    """The search limits behind a `--level` name."""
    try:
        return _LEVELS[level]
    except KeyError as err:
        raise ValueError(f"unknown level {level!r} (known: {', '.join(_LEVELS)})") from err


@dataclass(frozen=True)
class EngineConfig:
    """Everything the engine process was asked for on its command line."""

    version: str = "v2"
    level: str = "8"
    depth: int | None = None
    nodes: int | None = None
    seed: int | None = None
    resign: bool = False
    resign_score: int = 800
    resign_moves: int = 3
    castling960: Castling960 = Castling960.OO
    hash_entries: int = 200_000
    faults: FaultPlan = field(default_factory=FaultPlan)

    @property
    def name(self) -> str:
        """The name announced with `feature myname`."""
        extra = "" if self.level == "8" else f" level {self.level}"
        return f"{ENGINE_NAME} {ENGINE_VERSION} {self.version}{extra}"

    def limits(self) -> StrengthLimits:
        """Level limits narrowed by explicit --depth / --nodes."""
        base = level_limits(self.level)
        depth = _narrow(base.depth, self.depth)
        nodes = _narrow(base.nodes, self.nodes)
        return StrengthLimits(depth, nodes, base.random_mover, base.greedy)


def _narrow(a: int | None, b: int | None) -> int | None:
    """The tighter of two optional limits."""
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


def build_parser() -> argparse.ArgumentParser:
    """The `python -m engine` argument parser."""
    parser = argparse.ArgumentParser(
        prog="python -m engine",
        description="A CECP (XBoard protocol v2) chess engine built on runner.rules.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "faults (--fault, repeatable or comma-separated; @N = the engine's N-th move in the\n"
            "game, default 1):\n"
            "  crash@N  hang@N  illegal@N  garbage@N  flood[@N]  false-claim@N  resign@N\n"
            "  slow-start=SECONDS  no-done  ignore-quit  spawn-child  time-abuse  no-pong\n"
            "See engine/README.md for what each one does."
        ),
    )
    parser.add_argument("--version", choices=("v1", "v2"), default="v2",
                        help="evaluation function (v2 is the stronger one)")
    parser.add_argument("--level", choices=LEVEL_NAMES, default="8",
                        help="strength: random, greedy, or 1 (weakest) .. 8 (full strength)")
    parser.add_argument("--depth", type=_positive_int, help="maximum search depth in plies")
    parser.add_argument("--nodes", type=_positive_int, help="maximum nodes per move")
    parser.add_argument("--seed", type=int, help="seed for every random choice (reproducible play)")
    parser.add_argument("--resign", action="store_true",
                        help="resign when the score stays hopeless (see --resign-score)")
    parser.add_argument("--resign-score", type=_positive_int, default=800,
                        help="centipawns below zero that count as hopeless (default 800)")
    parser.add_argument("--resign-moves", type=_positive_int, default=3,
                        help="consecutive hopeless moves before resigning (default 3)")
    parser.add_argument("--castling960", choices=[c.value for c in Castling960], default="oo",
                        help="Chess960 castling output: oo (O-O, the spec's form) or kxr (e1h1)")
    parser.add_argument("--hash", type=_positive_int, default=200_000, dest="hash_entries",
                        help="transposition table entries (default 200000)")
    parser.add_argument("--fault", action="append", default=[], metavar="FAULT",
                        help="misbehave on purpose (for testing hosts)")
    return parser


def _positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not >= 1")
    return value


def parse_config(argv: list[str] | None = None) -> EngineConfig:
    """Parse the command line into an EngineConfig (exits with a usage message on error)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        faults = FaultPlan.parse(args.fault)
    except ValueError as err:
        parser.error(str(err))
    return EngineConfig(
        version=args.version,
        level=args.level,
        depth=args.depth,
        nodes=args.nodes,
        seed=args.seed,
        resign=args.resign,
        resign_score=args.resign_score,
        resign_moves=args.resign_moves,
        castling960=Castling960(args.castling960),
        hash_entries=args.hash_entries,
        faults=faults,
    )
