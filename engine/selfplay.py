"""In-process matches between two engine configurations, with the rules core as the arbiter.

Used to measure that v2 beats v1 at equal depth:
    python -m engine.selfplay --games 100 --depth 3 --openings ../shared/data/books/noob_3moves.epd
Each opening is played twice with colours swapped.  No pipes, no clocks: depth or node limits.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

from engine.config import EngineConfig
from engine.notation import rules_claim
from engine.player import Player
from engine.timeman import TimeBudget
from runner.rules import STARTING_FEN, Board, Result
from runner.stats import elo_from_score

# A few balanced openings used when no book is given.
_BUILTIN_OPENINGS = (
    STARTING_FEN,
    "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
    "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
    "rnbqkbnr/ppp1pppp/8/3p4/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 0 2",
    "rnbqkb1r/pppppppp/5n2/8/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 1 2",
    "rnbqkbnr/pppp1ppp/4p3/8/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
    "rnbqkbnr/pp1ppppp/2p5/8/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
    "rnbqkbnr/pppppppp/8/8/2P5/8/PP1PPPPP/RNBQKBNR b KQkq - 0 1",
)
_UNBOUNDED = TimeBudget(None, None)


@dataclass(frozen=True)
class GameRecord:
    """One finished game: result from White's side, why, and its length."""

    result: str
    reason: str
    plies: int


@dataclass
class MatchScore:
    """Wins, draws and losses of the first configuration (counted as the runner counts them)."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    def add(self, points: float) -> None:
        """Count one game in which the first configuration scored `points`."""
        if points == 1.0:
            self.wins += 1
        elif points == 0.0:
            self.losses += 1
        else:
            self.draws += 1

    @property
    def games(self) -> int:
        """Games played."""
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        """Points scored by the first configuration."""
        return self.wins + 0.5 * self.draws

    def elo(self) -> float:
        """Logistic Elo difference implied by the score (0 before the first game)."""
        return elo_from_score(self.points / self.games) if self.games else 0.0


def play_game(white: Player, black: Player, fen: str, *, max_plies: int = 300) -> GameRecord:
    """Play one game from `fen`; after `max_plies` plies it is scored a draw."""
    board = Board(fen)
    white.new_game()
    black.new_game()
    for ply in range(max_plies):
        claim = rules_claim(board)
        if claim is not None:
            return GameRecord(claim.result, claim.reason, ply)
        player = white if board.turn else black
        result = player.choose(board, _UNBOUNDED)
        if result.move is None:
            raise RuntimeError(f"no move chosen in a position with no game end: {board.fen()}")
        board.push(result.move)
    claim = rules_claim(board)
    if claim is not None:
        return GameRecord(claim.result, claim.reason, max_plies)
    return GameRecord("1/2-1/2", "move limit", max_plies)


def read_openings(path: Path, count: int) -> list[str]:
    """The first `count` positions of an EPD (or one-FEN-per-line) file."""
    openings = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            fields = line.split()
            if len(fields) < 4:
                continue
            fen = " ".join(fields[:4])
            counters = fields[4:6] if len(fields) >= 6 and fields[4].isdigit() else ["0", "1"]
            openings.append(f"{fen} {' '.join(counters)}")
            if len(openings) >= count:
                break
    return openings


def run_match(
    first: EngineConfig,
    second: EngineConfig,
    openings: list[str],
    *,
    max_plies: int = 300,
    progress: bool = False,
) -> MatchScore:
    """Each opening twice, colours swapped; the score is the first configuration's."""
    score = MatchScore()
    a, b = Player(first), Player(second)
    started = time.monotonic()
    for index, fen in enumerate(openings):
        for a_is_white in (True, False):
            white, black = (a, b) if a_is_white else (b, a)
            record = play_game(white, black, fen, max_plies=max_plies)
            # An unfinished record (no claim by max_plies) is scored as the draw it is adjudicated.
            mine = Result.from_text(record.result).points(a_is_white)
            score.add(0.5 if mine is None else mine)
            if progress:
                print(f"opening {index + 1} {'white' if a_is_white else 'black'}: "
                      f"{record.result} ({record.reason}, {record.plies} plies)  "
                      f"+{score.wins} ={score.draws} -{score.losses}  "
                      f"[{time.monotonic() - started:.0f} s]", flush=True)
    return score


def main(argv: list[str] | None = None) -> int:
    """Command line: version against version at a fixed depth."""
    parser = argparse.ArgumentParser(prog="python -m engine.selfplay", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--first", default="v2", choices=("v1", "v2"))
    parser.add_argument("--second", default="v1", choices=("v1", "v2"))
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--games", type=int, default=100, help="even number of games")
    parser.add_argument("--openings", type=Path, help="EPD file (default: a built-in few)")
    parser.add_argument("--max-plies", type=int, default=300)
    args = parser.parse_args(argv)
    pairs = max(1, args.games // 2)
    if args.openings:
        openings = read_openings(args.openings, pairs)
    else:
        openings = [_BUILTIN_OPENINGS[i % len(_BUILTIN_OPENINGS)] for i in range(pairs)]
    base = EngineConfig(depth=args.depth)
    score = run_match(replace(base, version=args.first), replace(base, version=args.second),
                      openings, max_plies=args.max_plies, progress=True)
    print(f"{args.first} vs {args.second} at depth {args.depth}: +{score.wins} ={score.draws} "
          f"-{score.losses}, {score.points}/{score.games}, Elo {score.elo():+.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
