"""Ending games early by the engines' own scores: draw, resign and maximum-length trackers.

Each tracker is a small, pure state machine: ``update`` with one ply's facts, ``verdict`` when
the rule fires. The game loop composes them; nothing here knows about engines or clocks.
"""

from __future__ import annotations

from dataclasses import dataclass

from runner.rules import Result

MATE_SCORE_CP = 100_000
"""The centipawn value a mate score counts as when compared with thresholds."""


@dataclass(frozen=True)
class AdjudicationRules:
    """When the arbiter ends a game early; ``None`` switches a rule off.

    draw: from full move ``draw_move_number`` on, both engines' scores within
    ``draw_score`` cp for ``draw_move_count`` consecutive moves each (reset by a capture or
    pawn move). resign: a side's own score at or below ``-resign_score`` for
    ``resign_move_count`` consecutive moves (with ``resign_two_sided`` the opponent must agree
    with a score at or above ``resign_score``). ``max_moves``: full moves before a draw.
    A count of 0 switches its rule off, as None does.
    """

    draw_move_number: int | None = None
    draw_move_count: int = 8
    draw_score: int = 10
    resign_move_count: int | None = None
    resign_score: int = 600
    resign_two_sided: bool = False
    max_moves: int | None = None
    false_claim_loses: bool = True

    def __post_init__(self) -> None:
        for name in ("draw_move_number", "resign_move_count", "max_moves"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"adjudication {name} must not be negative, got {value}")
        if self.draw_move_count < 1 or self.draw_score < 0 or self.resign_score < 0:
            raise ValueError("adjudication counts must be positive and scores not negative")


@dataclass(frozen=True)
class Verdict:
    """An adjudicated end: the result and a sentence saying why."""

    result: Result
    reason: str


def effective_score(score_cp: int | None, mate: int | None) -> int | None:
    """A score in centipawns from the mover's view, mate scores mapped beyond any threshold."""
    if mate is not None:
        return MATE_SCORE_CP if mate > 0 else -MATE_SCORE_CP
    return score_cp


class DrawTracker:
    """Counts consecutive plies in which the mover's score stays near zero."""

    def __init__(self, rules: AdjudicationRules) -> None:
        self.rules = rules
        self.count = 0

    def update(self, score: int | None, fullmove: int, zeroing: bool) -> None:
        """Record one ply: the mover's score, the full move it was played in, whether it zeroed."""
        rules = self.rules
        if rules.draw_move_number is None:
            return
        if zeroing or score is None or abs(score) > rules.draw_score or fullmove < rules.draw_move_number:
            self.count = 0
        else:
            self.count += 1

    def verdict(self) -> Verdict | None:
        """A draw once both sides kept the score small for the required number of moves."""
        rules = self.rules
        if rules.draw_move_number is not None and self.count >= 2 * rules.draw_move_count:
            return Verdict(Result.DRAW, f"Draw by adjudication: scores within {rules.draw_score} cp "
                                      f"for {rules.draw_move_count} moves")
        return None


class ResignTracker:
    """Counts, per side, consecutive own moves with a losing score (and the opponent's view)."""

    def __init__(self, rules: AdjudicationRules) -> None:
        self.rules = rules
        self.losing = {True: 0, False: 0}
        self.winning = {True: 0, False: 0}

    def update(self, white_moved: bool, score: int | None) -> None:
        """Record the mover's score after one of its moves."""
        threshold = self.rules.resign_score
        if score is not None and score <= -threshold:
            self.losing[white_moved] += 1
        else:
            self.losing[white_moved] = 0
        if score is not None and score >= threshold:
            self.winning[white_moved] += 1
        else:
            self.winning[white_moved] = 0

    def verdict(self) -> Verdict | None:
        """A win for the side whose opponent's score stayed hopeless long enough."""
        rules = self.rules
        if not rules.resign_move_count:  # None or 0: off (0 used to end every game at once)
            return None
        need = rules.resign_move_count
        for loser in (True, False):
            if self.losing[loser] >= need and (
                not rules.resign_two_sided or self.winning[not loser] >= need
            ):
                winner_name = "Black" if loser else "White"
                return Verdict(Result.BLACK_WINS if loser else Result.WHITE_WINS,
                               f"{winner_name} wins by adjudication")
        return None


def max_moves_verdict(rules: AdjudicationRules, plies: int) -> Verdict | None:
    """A draw once the game reached the maximum number of full moves."""
    if rules.max_moves is not None and rules.max_moves > 0 and plies >= 2 * rules.max_moves:
        return Verdict(Result.DRAW, f"Draw by maximum game length ({rules.max_moves} moves)")
    return None
