"""Whether a position could arise in a legal game: python-chess's ``Status`` flags and checks.

`position_status` looks at a set-up position the way FIDE's laws and python-chess's
``Board.status()`` do: one king per side, the side not to move not in check, no pawns on the
first or last rank, castling rights that a king and rook on their home squares can still use,
an en passant square behind a pawn that has just made a double step, no check that no move
could have given, and material that promotions can explain. `problems` turns the flags into
sentences naming the FEN field and value at fault. Every entry point that reads a position
(``Board(fen)``, hence perft, books, PGN ``FEN`` tags, ``--fen`` and configs) goes through
`Position.set_fen`, which refuses a position whose status is not ``VALID``.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

from enum import IntFlag
from typing import TYPE_CHECKING

from runner.rules.fen import InvalidFenError
from runner.rules.squares import (
    BB_BACKRANKS,
    BB_LINE,
    BB_SQUARES,
    BLACK,
    SQUARE_NAMES,
    WHITE,
    Bitboard,
    Square,
    lsb,
    msb,
    scan_forward,
)

if TYPE_CHECKING:
    from runner.rules.position import Position

__all__ = ["PYTHON_CHESS_FLAGS", "InvalidPositionError", "Status", "position_status", "problems",
           "valid_ep_square"]


class Status(IntFlag):
    """What is wrong with a position; python-chess's flag names and bit values, plus one."""

    VALID = 0
    NO_WHITE_KING = 1 << 0
    NO_BLACK_KING = 1 << 1
    TOO_MANY_KINGS = 1 << 2
    TOO_MANY_WHITE_PAWNS = 1 << 3
    TOO_MANY_BLACK_PAWNS = 1 << 4
    PAWNS_ON_BACKRANK = 1 << 5
    TOO_MANY_WHITE_PIECES = 1 << 6
    TOO_MANY_BLACK_PIECES = 1 << 7
    BAD_CASTLING_RIGHTS = 1 << 8
    INVALID_EP_SQUARE = 1 << 9
    OPPOSITE_CHECK = 1 << 10
    EMPTY = 1 << 11
    TOO_MANY_CHECKERS = 1 << 15
    IMPOSSIBLE_CHECK = 1 << 16
    IMPOSSIBLE_MATERIAL = 1 << 24
    """Ours, not python-chess's: more pieces beyond the initial set than missing pawns."""


PYTHON_CHESS_FLAGS = Status(~Status.IMPOSSIBLE_MATERIAL & sum(Status))
"""The flags python-chess also reports (for comparing with it)."""

class InvalidPositionError(InvalidFenError):
    """A well-formed FEN of a position no legal game reaches; `status` says what is wrong."""

    def __init__(self, message: str, status: Status) -> None:
        super().__init__(message)
        self.status = status


# Pieces of one side in the initial position: knights, bishops, rooks, queens.
_INITIAL = (2, 2, 2, 1)


def valid_ep_square(position: Position, ep: Square | None) -> Square | None:
    """`ep` if a pawn of the side not to move can just have made a double step over it."""
    if ep is None:
        return None
    white = position.turn == WHITE
    if (ep >> 3) != (5 if white else 2):
        return None
    pushed = ep - 8 if white else ep + 8
    origin = ep + 8 if white else ep - 8
    if not position.pawns & position.occupied_co[not position.turn] & BB_SQUARES[pushed]:
        return None
    if position.occupied & (BB_SQUARES[ep] | BB_SQUARES[origin]):
        return None
    return ep


def _extra_pieces(position: Position, color: bool) -> int:
    """How many pieces of `color` exceed the initial set (each needs a promotion)."""
    own = position.occupied_co[color]
    boards = (position.knights, position.bishops, position.rooks, position.queens)
    return sum(max(0, (bb & own).bit_count() - initial)
               for bb, initial in zip(boards, _INITIAL, strict=True))


def position_status(position: Position, ep: Square | None, castling_clean: Bitboard) -> Status:
    """The flags of everything wrong with `position`, given the en passant square as written
    and the castling rights a king and rook on their squares can still use."""
    errors = Status.VALID
    occupied_co, kings = position.occupied_co, position.kings
    if not position.occupied:
        errors |= Status.EMPTY
    if not occupied_co[WHITE] & kings:
        errors |= Status.NO_WHITE_KING
    if not occupied_co[BLACK] & kings:
        errors |= Status.NO_BLACK_KING
    if (position.occupied & kings).bit_count() > 2:
        errors |= Status.TOO_MANY_KINGS
    for color, pieces, pawns in ((WHITE, Status.TOO_MANY_WHITE_PIECES, Status.TOO_MANY_WHITE_PAWNS),
                                 (BLACK, Status.TOO_MANY_BLACK_PIECES, Status.TOO_MANY_BLACK_PAWNS)):
        if occupied_co[color].bit_count() > 16:
            errors |= pieces
        pawn_count = (occupied_co[color] & position.pawns).bit_count()
        if pawn_count > 8:
            errors |= pawns
        if _extra_pieces(position, color) > max(0, 8 - pawn_count):
            errors |= Status.IMPOSSIBLE_MATERIAL
    if position.pawns & BB_BACKRANKS:
        errors |= Status.PAWNS_ON_BACKRANK
    if position.castling_rights != castling_clean:
        errors |= Status.BAD_CASTLING_RIGHTS
    valid_ep = valid_ep_square(position, ep)
    if ep != valid_ep:
        errors |= Status.INVALID_EP_SQUARE
    them = not position.turn
    if position._attackers(position.turn, position.king(them), position.occupied):
        errors |= Status.OPPOSITE_CHECK
    errors |= _check_status(position, valid_ep)
    return errors


def _check_status(position: Position, valid_ep: Square | None) -> Status:
    """Checks that no legal last move could have given: too many checkers, or two checkers
    on one line through the king, or (after a double step) a check the pawn did not give."""
    checkers = position.checkers_mask()
    if not checkers:
        return Status.VALID
    errors = Status.VALID
    count = checkers.bit_count()
    if count > 2:
        errors |= Status.TOO_MANY_CHECKERS | Status.IMPOSSIBLE_CHECK
    # Every king of the side to move, not only the one the checks were counted against: a
    # position with two kings of one colour is already flagged, and python-chess (the oracle)
    # tests the lines and the uncovered check against all of them.
    kings = position.kings & position.occupied_co[position.turn]
    if valid_ep is not None:
        # The last move was the double step: the pawn gave the check, or uncovered it.
        pushed_to = valid_ep ^ 8
        pushed_from = valid_ep ^ 24
        before = (position.occupied & ~BB_SQUARES[pushed_to]) | BB_SQUARES[pushed_from]
        if count > 1 or (msb(checkers) != pushed_to and any(
                position._attackers(not position.turn, square, before)
                for square in range(64) if kings >> square & 1)):
            errors |= Status.IMPOSSIBLE_CHECK
    elif count == 2 and kings:
        first, second = lsb(checkers), msb(checkers)
        if BB_LINE[first][second] & kings:
            # Two checkers on one line through the king: one move cannot open both.
            errors |= Status.IMPOSSIBLE_CHECK
    return errors


def problems(status: Status, position: Position, fields: tuple[str, ...]) -> list[str]:
    """One sentence per flag in `status`, naming the FEN field (of `fields`) and its value."""
    placement = fields[0]
    turn = fields[1] if len(fields) > 1 else "w"
    castling = fields[2] if len(fields) > 2 else "-"
    ep = fields[3] if len(fields) > 3 else "-"
    out: list[str] = []
    kings = position.kings
    for color, flag, name in ((WHITE, Status.NO_WHITE_KING, "white"),
                              (BLACK, Status.NO_BLACK_KING, "black")):
        count = (kings & position.occupied_co[color]).bit_count()
        if status & flag or count > 1:
            out.append(f"piece placement must have exactly one {name} king, found {count}"
                       f" (field {placement!r})")
    for color, flag, name in ((WHITE, Status.TOO_MANY_WHITE_PAWNS, "white"),
                              (BLACK, Status.TOO_MANY_BLACK_PAWNS, "black")):
        if status & flag:
            count = (position.pawns & position.occupied_co[color]).bit_count()
            out.append(f"piece placement has {count} {name} pawns, at most 8 (field {placement!r})")
    for color, flag, name in ((WHITE, Status.TOO_MANY_WHITE_PIECES, "white"),
                              (BLACK, Status.TOO_MANY_BLACK_PIECES, "black")):
        if status & flag:
            count = position.occupied_co[color].bit_count()
            out.append(f"piece placement has {count} {name} pieces, at most 16"
                       f" (field {placement!r})")
    if status & Status.IMPOSSIBLE_MATERIAL:
        for color, name in ((WHITE, "white"), (BLACK, "black")):
            extra = _extra_pieces(position, color)
            gone = 8 - min(8, (position.pawns & position.occupied_co[color]).bit_count())
            if extra > gone:
                out.append(f"piece placement gives {name} {extra} pieces beyond the initial set"
                           f" but only {gone} of its pawns can have promoted"
                           f" (field {placement!r})")
    if status & Status.PAWNS_ON_BACKRANK:
        squares = ", ".join(SQUARE_NAMES[s] for s in scan_forward(position.pawns & BB_BACKRANKS))
        out.append(f"piece placement has a pawn on the first or eighth rank ({squares})"
                   f" (field {placement!r})")
    if status & Status.BAD_CASTLING_RIGHTS:
        out.append(f"castling field {castling!r} gives a right that no king and rook on their"
                   " home squares can use")
    if status & Status.INVALID_EP_SQUARE:
        out.append(f"en passant field {ep!r} is not the square a pawn of the side not to move"
                   " has just passed with a double step")
    if status & Status.OPPOSITE_CHECK:
        mover = "white" if position.turn == WHITE else "black"
        other = "black" if position.turn == WHITE else "white"
        out.append(f"side to move field {turn!r} gives the move to {mover} while {other}, not"
                   " to move, is in check")
    if status & (Status.TOO_MANY_CHECKERS | Status.IMPOSSIBLE_CHECK):
        count = position.checkers_mask().bit_count()
        out.append(f"piece placement gives a check by {count} piece{'s' if count != 1 else ''}"
                   f" that no legal move can have given (field {placement!r})")
    if status & Status.EMPTY and not out:
        out.append(f"piece placement field {placement!r} is empty")
    return out
