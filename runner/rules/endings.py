"""The game-end rules of the FIDE Laws: mate, stalemate, dead positions, draws, the outcome.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

from runner.rules.makemove import MoveMaker
from runner.rules.movegen import check_and_any_legal as _check_and_any_legal
from runner.rules.outcome import Outcome, Result, Termination
from runner.rules.squares import BB_DARK_SQUARES, BB_LIGHT_SQUARES, BLACK, WHITE, Color

__all__ = ["GameEndRules"]


class GameEndRules(MoveMaker):
    """Checkmate, stalemate, dead positions, repetitions and the 50/75-move rules."""

    __slots__ = ()

    def is_checkmate(self) -> bool:
        """Whether the side to move is checkmated."""
        return self.is_check() and not self._any_legal()

    def check_and_any_legal(self) -> tuple[bool, bool]:
        """Whether the side to move is in check, and whether it has a legal move (both false
        or the first alone: stalemate or mate), from one look at the king's lines."""
        if self._cache_key == self._key:
            return self.is_check(), bool(self._cache_moves)
        return _check_and_any_legal(self)

    def is_stalemate(self) -> bool:
        """Whether the side to move has no legal move and is not in check."""
        return not self.is_check() and not self._any_legal()

    def has_insufficient_material(self, color: Color) -> bool:
        """Whether ``color`` cannot possibly mate, whatever the opponent plays."""
        own = self.occupied_co[color]
        if own & (self.pawns | self.rooks | self.queens):
            return False
        if own & self.knights:
            # A lone knight can mate only with help from opposing pieces other than queens.
            return own.bit_count() <= 2 and not (
                self.occupied_co[not color] & ~self.kings & ~self.queens
            )
        if own & self.bishops:
            same_color = not (self.bishops & BB_DARK_SQUARES) or not (self.bishops & BB_LIGHT_SQUARES)
            return same_color and not self.pawns and not self.knights
        return True

    def is_insufficient_material(self) -> bool:
        """Whether neither side can mate (a dead position by material, FIDE 5.2.2)."""
        return self.has_insufficient_material(WHITE) and self.has_insufficient_material(BLACK)

    def is_repetition(self, count: int = 3) -> bool:
        """Whether the current position has occurred at least ``count`` times (O(1))."""
        counts = self._counts if self._counted > len(self._stack) else self._synced_counts()
        return counts.get(self._key, 0) >= count

    def repetition_count(self) -> int:
        """How many times the current position has occurred in the game so far."""
        return self._synced_counts().get(self._key, 0)

    def is_fivefold_repetition(self) -> bool:
        """Whether the position has occurred five times (the game ends by itself, FIDE 9.6.1)."""
        return self._synced_counts().get(self._key, 0) >= 5

    def can_claim_threefold_repetition(self) -> bool:
        """Whether a threefold repetition draw can be claimed now or with the next move (9.2)."""
        counts = self._synced_counts()
        if counts.get(self._key, 0) >= 3:
            return True
        if not self._repeated:
            return False  # no position has occurred twice: no move can make one occur thrice
        for move in self._legal():
            if self.is_zeroing(move) or self.is_castling(move):
                continue  # an irreversible move always leads to a new position
            self.push(move)
            try:
                if self._synced_counts().get(self._key, 0) >= 3:
                    return True
            finally:
                self.pop()
        return False

    def is_fifty_moves(self) -> bool:
        """Whether 50 moves by each side have passed without pawn move or capture (and no mate)."""
        return self.halfmove_clock >= 100 and self._any_legal()

    def can_claim_fifty_moves(self) -> bool:
        """Whether the fifty-move draw can be claimed now or with the next move (9.3)."""
        if self.is_fifty_moves():
            return True
        if self.halfmove_clock >= 99:
            for move in self._legal():
                if self.is_zeroing(move):
                    continue
                self.push(move)
                try:
                    if self.is_fifty_moves():
                        return True
                finally:
                    self.pop()
        return False

    def is_seventyfive_moves(self) -> bool:
        """Whether 75 moves by each side passed without pawn move or capture (ends the game, 9.6.2)."""
        return self.halfmove_clock >= 150 and self._any_legal()

    def can_claim_draw(self) -> bool:
        """Whether a draw by fifty moves or threefold repetition can be claimed."""
        return self.can_claim_fifty_moves() or self.can_claim_threefold_repetition()

    def outcome(self, *, claim_draw: bool = False) -> Outcome | None:
        """How the game ends by the rules here, or ``None``; claimable draws with ``claim_draw``."""
        has_moves = self._any_legal()
        if not has_moves and self.is_check():
            return Outcome(Termination.CHECKMATE, not self.turn)
        if self.is_insufficient_material():
            return Outcome(Termination.INSUFFICIENT_MATERIAL, None)
        if not has_moves:
            return Outcome(Termination.STALEMATE, None)
        if self.halfmove_clock >= 150:
            return Outcome(Termination.SEVENTYFIVE_MOVES, None)
        # Five occurrences take at least eight plies without a pawn move or capture (two a
        # round trip when both sides pass with null moves, four otherwise): before that the
        # occurrence map need not be brought up to date.
        if self.halfmove_clock >= 8 and self._synced_counts().get(self._key, 0) >= 5:
            return Outcome(Termination.FIVEFOLD_REPETITION, None)
        if claim_draw:
            if self.can_claim_fifty_moves():
                return Outcome(Termination.FIFTY_MOVES, None)
            if self.can_claim_threefold_repetition():
                return Outcome(Termination.THREEFOLD_REPETITION, None)
        return None

    def arbiter_ending(self, check: bool, has_moves: bool) -> Termination | None:
        """The end the game loop declares here, given whether the side to move is in check
        and has a legal move: `outcome` without claims, then threefold repetition and the
        fifty-move rule, which the runner applies without a claim (as cutechess-cli does)."""
        if not has_moves:
            if check:
                return Termination.CHECKMATE
            return (Termination.INSUFFICIENT_MATERIAL if self.is_insufficient_material()
                    else Termination.STALEMATE)
        if self.is_insufficient_material():
            return Termination.INSUFFICIENT_MATERIAL
        halfmove = self.halfmove_clock
        if halfmove >= 150:
            return Termination.SEVENTYFIVE_MOVES
        # A third occurrence takes at least four plies without a pawn move or capture (two
        # round trips of two plies): before that the occurrence map need not be asked.
        if halfmove >= 4:
            occurrences = self._synced_counts().get(self._key, 0)
            if occurrences >= 5 and halfmove >= 8:
                return Termination.FIVEFOLD_REPETITION
            if occurrences >= 3:
                return Termination.THREEFOLD_REPETITION
        if halfmove >= 100:
            return Termination.FIFTY_MOVES
        return None

    def is_game_over(self, *, claim_draw: bool = False) -> bool:
        """Whether the game is over by the rules."""
        return self.outcome(claim_draw=claim_draw) is not None

    def result(self, *, claim_draw: bool = False) -> Result:
        """The PGN result by the rules, ``*`` while the game goes on."""
        outcome = self.outcome(claim_draw=claim_draw)
        return outcome.result if outcome else Result.UNFINISHED
