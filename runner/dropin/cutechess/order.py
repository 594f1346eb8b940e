"""cutechess-cli 1.5's order: its schedule, its opening deal and its way of counting moves for
adjudication, and its clocks (each starts with one increment added): `OrderStyle.STEPPED`.

The schedule is runner.dropin.cutechess.schedule's, the book order
runner.dropin.cutechess.suite's; without a book, a Chess960 tournament draws each new
opening's start position from cutechess-cli's generator. Adjudication counts every ply on the
board from the start position and checks the draw before resignation, and a two-sided
resignation counts each side's moves on its own. runner-cutechess hands `STEPPED_STYLE` to its
runs; a stored tournament of this style finds it again on resume through pyproject's entry
point (runner.tournament.styles).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from runner.books.openings import Opening
from runner.config.model import (
    BookFormat,
    OpeningOrder,
    OrderStyle,
    PlayOrder,
    TournamentConfig,
)
from runner.dropin.cutechess.results import cute_result
from runner.dropin.cutechess.schedule import CutechessPairing, cutechess_pairing
from runner.dropin.cutechess.suite import CUTECHESS_PLIES, CutechessSuite, Mersenne, frc_start_fen
from runner.game.adjudication import AdjudicationRules
from runner.game.termination import GameTermination
from runner.rules import Board, Result
from runner.tournament.styles import OrderImplementation
from runner.types import Variant

__all__ = ["STEPPED_STYLE", "CutechessDealer", "cutechess_order"]


def cutechess_order(*, tournament: str = "round-robin", games: int = 1, rounds: int = 1,
                    repeat: int = 1, policy: str = "default", swap: bool = True,
                    reverse: bool = False, seeds: int = 0, srand: int = 0) -> PlayOrder:
    """The order of cutechess-cli's ``-tournament``, ``-games``, ``-rounds``, ``-repeat``,
    ``-openings policy=``, ``-noswap``, ``-reverse``, ``-seeds`` and ``-srand``."""
    return PlayOrder(style=OrderStyle.STEPPED, tournament=tournament, games=games,
                     rounds=rounds, repeat=repeat, policy=policy, swap=swap, reverse=reverse,
                     seeds=seeds, srand=srand)


class CutechessDealer:
    """cutechess-cli's deal: the suite's order of the book; without one, a Chess960
    tournament's start positions drawn from its generator, five numbers each, in game
    order; otherwise the standard start position."""

    def __init__(self, config: TournamentConfig) -> None:
        assert config.order is not None
        self.srand = config.order.srand
        self.chess960 = config.variant is Variant.FISCHERANDOM
        self.suite: CutechessSuite | None = None
        cfg = config.openings
        if cfg is not None:
            self.suite = CutechessSuite(
                cfg.file, epd=cfg.format is BookFormat.EPD,
                random_order=cfg.order is OpeningOrder.RANDOM, start=cfg.start,
                seed=cfg.seed, plies=CUTECHESS_PLIES if cfg.plies is None else cfg.plies,
                chess960=self.chess960)
        self._rng960: Mersenne | None = None
        self._drawn960: list[str] = []

    def deal(self, pair: int) -> Opening | None:
        """The `pair`-th opening cutechess-cli deals."""
        if self.suite is not None:
            return self.suite.opening(pair)
        if not self.chess960:
            return None
        while len(self._drawn960) <= pair:
            if self._rng960 is None:
                self._rng960 = Mersenne(self.srand)
            self._drawn960.append(frc_start_fen(self._rng960))
        fen = Board(self._drawn960[pair], chess960=True).fen()
        return Opening(fen=fen, chess960=True, index=pair, source=f"chess960 draw {pair + 1}")

    def pairs_to_check(self, pairs: int) -> int:
        """Every opening number is dealt anew."""
        return pairs

    def state(self, pairs_served: int) -> dict[str, Any] | None:
        """Nothing: the suite's order is recomputed from the configuration."""
        return None


def _schedule(config: TournamentConfig, names: list[str], max_games: int | None,
              ) -> CutechessPairing:
    assert config.order is not None
    return cutechess_pairing(config.order, names, max_games)


def _adjudication(rules: AdjudicationRules) -> AdjudicationRules:
    return dataclasses.replace(rules, board_plies=True, resign_per_side=True)


def _result_words(result: Result, termination: GameTermination, reason: str) -> str:
    """The end as cutechess-cli tells its engines (``Draw by adjudication: maximal game
    length``): the words of its ``Finished game`` line."""
    return cute_result(result, termination, reason).description


# cutechess-cli puts the first increment on each clock before the first move
# (TimeControl::initialize), so its engines are told, and may use, one increment more.
STEPPED_STYLE = OrderImplementation(schedule=_schedule, dealer=CutechessDealer,
                                    adjudication=_adjudication, clock_head_start=True,
                                    result_words=_result_words)
"""`OrderStyle.STEPPED`: handed by runner-cutechess to its runs, and declared under that
style's value in pyproject's runner.order_styles entry points for a run rebuilt from the
store."""
