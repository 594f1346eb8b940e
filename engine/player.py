"""A player: the strength settings, the evaluation version and the searcher, behind one call.

Protocol front ends (CECP today, UCI later) and the in-process match harness all choose moves
through `Player.choose`; none of them touches the searcher directly.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable

from engine.config import EngineConfig
from engine.evaluate import evaluator_for
from engine.search import Searcher, SearchInfo, SearchLimits, SearchResult
from engine.timeman import TimeBudget

SKEW_OPTIMUM = 60
"""The value of the ``Skew`` option at which the evaluation is undisturbed: a known optimum
for tuning tests (runner tune must find it); each unit away adds noise to every evaluation."""
SKEW_MIN, SKEW_MAX = 0, 200
"""The ``Skew`` option's bounds, as both protocols declare them."""


class Player:
    """Chooses moves for one engine configuration; keeps its table between moves of a game."""

    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self._strength = config.limits()
        self._evaluate = evaluator_for(config.version)
        self._searcher = Searcher(self._evaluate, tt_entries=config.hash_entries)
        self._rng = random.Random(config.seed)
        self.random_mode = False
        self.skew = SKEW_OPTIMUM

    def set_skew(self, value: int) -> None:
        """Set the ``Skew`` option: away from `SKEW_OPTIMUM` the evaluation gets a fixed
        pseudo-random error per position, as large as the distance (a weaker engine by
        construction, with its best value known)."""
        self.skew = value
        distance = abs(value - SKEW_OPTIMUM)
        base = self._evaluate
        if distance == 0:
            self._searcher.set_evaluator(base)
            return

        def skewed(position) -> int:
            return base(position) + ((position.zobrist_hash() % 201) - 100) * distance // 20

        self._searcher.set_evaluator(skewed)

    def new_game(self) -> None:
        """Start a new game: clear learned tables and random mode (as `new` asks)."""
        self._searcher.new_game()
        self.random_mode = False

    def resize_table(self, entries: int) -> None:
        """Bound the transposition table to about `entries` positions."""
        self._searcher.resize(entries)

    def choose(
        self,
        board,
        budget: TimeBudget,
        *,
        max_depth: int | None = None,
        stop: threading.Event | None = None,
        on_info: Callable[[SearchInfo], None] | None = None,
    ) -> SearchResult:
        """Pick a move in `board` within the budget and the configured strength."""
        moves = sorted(board.generate_legal_moves(), key=lambda m: m.uci())
        if not moves:
            return self._searcher.search(board, SearchLimits(depth=1))
        if self._strength.random_mover:
            move = self._rng.choice(moves)
            return SearchResult(move, 0, 0, 0, 0.0, (move,))
        if self._strength.greedy:
            return self._greedy(board, moves)
        depth = _tightest(self._strength.depth, max_depth)
        nodes = _tightest(self._strength.nodes, budget.max_nodes)
        limits = SearchLimits(depth=depth, nodes=nodes, soft_s=budget.soft_s, hard_s=budget.hard_s)
        if self.random_mode:
            return self._noisy(board, limits, stop, on_info)
        return self._searcher.search(board, limits, stop=stop, on_info=on_info)

    def _greedy(self, board, moves: list) -> SearchResult:
        """One ply, no look-ahead: the move whose resulting position evaluates best."""
        best, best_score = [], None
        for move in moves:
            board.push(move)
            try:
                score = -self._evaluate(board)
                if board.is_checkmate():
                    score = 100_000
            finally:
                board.pop()
            if best_score is None or score > best_score:
                best, best_score = [move], score
            elif score == best_score:
                best.append(move)
        move = self._rng.choice(best)
        return SearchResult(move, best_score or 0, 1, len(moves), 0.0, (move,))

    def _noisy(self, board, limits: SearchLimits, stop, on_info) -> SearchResult:
        """Random mode (the `random` command): perturb the evaluation a little, reproducibly."""
        base = self._evaluate
        salt = self._rng.getrandbits(32)

        def noisy(position) -> int:
            return base(position) + ((position.zobrist_hash() ^ salt) % 21) - 10

        searcher = Searcher(noisy, tt_entries=self.config.hash_entries)
        return searcher.search(board, limits, stop=stop, on_info=on_info)


def _tightest(a: int | None, b: int | None) -> int | None:
    """The smaller of two optional limits."""
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)
