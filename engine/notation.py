"""Move notation as CECP uses it, and result claims read off the rules core.

Coordinate notation (`e2e4`, `e7e8q`); castling as the king's two-square move in standard chess,
and in Chess960 as `O-O`/`O-O-O` (the specification's form, which hosts send and accept) or,
on request, king-takes-rook (`e1h1`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.config import Castling960
from runner.rules import Move

_COORDINATE = re.compile(r"^([a-h][1-8])([a-h][1-8])([qrbnkQRBNK]?)$")
_KINGSIDE = {"O-O", "0-0", "o-o"}
_QUEENSIDE = {"O-O-O", "0-0-0", "o-o-o"}


class NotAMoveError(ValueError):
    """The text does not look like a move at all (so it is an unknown command)."""


class IllegalMoveTextError(ValueError):
    """The text is a move, but not a legal one here."""


def looks_like_move(text: str) -> bool:
    """True when `text` has the shape of a coordinate or castling move."""
    core = text.rstrip("+#")
    return bool(_COORDINATE.match(core)) or core in _KINGSIDE or core in _QUEENSIDE


def _is_kingside(move) -> bool:
    """For a castling move (either encoding), True when it castles towards the h-file."""
    return (move.to_square & 7) > (move.from_square & 7)


def parse_move(board, text: str):
    """The legal move that `text` names in `board`.

    Accepts coordinate moves, `O-O`/`O-O-O` (also with zeros), and for castling both the king's
    two-square move and king-takes-rook, whichever the board's mode does not use natively.
    """
    core = text.strip().rstrip("+#")
    if core in _KINGSIDE or core in _QUEENSIDE:
        want_kingside = core in _KINGSIDE
        for move in board.generate_legal_moves():
            if board.is_castling(move) and _is_kingside(move) == want_kingside:
                return move
        raise IllegalMoveTextError(text)
    match = _COORDINATE.match(core)
    if not match:
        raise NotAMoveError(text)
    uci = (match.group(1) + match.group(2) + match.group(3).lower())
    try:
        move = Move.from_uci(uci)
    except ValueError as err:
        raise NotAMoveError(text) from err
    if board.is_legal(move):
        return move
    # The other castling encoding: a king move by two files, or a king onto its own rook.
    king_sq = board.king(board.turn)
    if move.from_square == king_sq and move.promotion is None:
        for legal in board.generate_legal_moves():
            if not board.is_castling(legal) or legal.from_square != king_sq:
                continue
            kingside = _is_kingside(legal)
            two_step = king_sq + (2 if kingside else -2)
            rook = legal.to_square if board.chess960 else (king_sq & 56) + (7 if kingside else 0)
            if move.to_square in (rook, two_step):
                return legal
    raise IllegalMoveTextError(text)


def format_move(board, move, style: Castling960 = Castling960.OO) -> str:
    """`move` (legal in `board`, before it is played) in CECP coordinate notation."""
    if board.chess960 and board.is_castling(move):
        if style is Castling960.OO:
            return "O-O" if _is_kingside(move) else "O-O-O"
        return move.uci()  # the rules core encodes Chess960 castling as king-takes-rook
    return move.uci()


def format_line(board, moves, style: Castling960 = Castling960.OO) -> str:
    """A sequence of moves from `board` (left unchanged) in coordinate notation."""
    words = []
    pushed = 0
    try:
        for move in moves:
            words.append(format_move(board, move, style))
            board.push(move)
            pushed += 1
    finally:
        for _ in range(pushed):
            board.pop()
    return " ".join(words)


@dataclass(frozen=True)
class Claim:
    """A game-ending result the engine announces: `1-0 {White mates}` and the like."""

    result: str
    reason: str

    def line(self) -> str:
        """The protocol line."""
        return f"{self.result} {{{self.reason}}}"


def rules_claim(board) -> Claim | None:
    """The result that the game has reached by rule in `board`, if any.

    Repetition and the fifty-move rule count only when they hold in this very position (a
    claim must be valid when made), not when the side to move could reach them.
    """
    if board.is_checkmate():
        if board.turn:
            return Claim("0-1", "Black mates")
        return Claim("1-0", "White mates")
    if board.is_stalemate():
        return Claim("1/2-1/2", "Stalemate")
    if board.is_insufficient_material():
        return Claim("1/2-1/2", "Insufficient material")
    if board.is_repetition(3):
        return Claim("1/2-1/2", "Draw by repetition")
    if board.halfmove_clock >= 100:
        return Claim("1/2-1/2", "Draw by fifty move rule")
    return None


def score_for_output(score: int, mate: int, mate_bound: int) -> int:
    """A search score as CECP thinking output wants it: centipawns, or +/-(100000 + moves)."""
    if abs(score) < mate_bound:
        return score
    moves = (mate - abs(score) + 1) // 2
    return 100_000 + moves if score > 0 else -100_000 - moves
