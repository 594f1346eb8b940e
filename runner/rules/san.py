"""Standard Algebraic Notation: writing SAN/LAN for a legal move and reading SAN tolerantly.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from runner.rules.move import _MOVES, AmbiguousMoveError, IllegalMoveError, InvalidMoveError, Move
from runner.rules.squares import (
    BB_DIAG_ATTACKS,
    BB_DIAG_MASKS,
    BB_FILE_ATTACKS,
    BB_FILE_MASKS,
    BB_FILES,
    BB_KNIGHT_ATTACKS,
    BB_RANK_ATTACKS,
    BB_RANK_MASKS,
    BB_RANKS,
    BB_SQUARES,
    BISHOP,
    FILE_NAMES,
    KING,
    KNIGHT,
    PAWN,
    PIECE_SYMBOLS,
    RANK_NAMES,
    ROOK,
    SQUARE_NAMES,
    Bitboard,
    PieceType,
    Square,
)

if TYPE_CHECKING:
    from runner.rules.board import Board

_SAN_RE = re.compile(
    r"^([NBRQK])?([a-h])?([1-8])?[\-x:]?([a-h][1-8])(?:=?([nbrqkNBRQK]))?[+#]*(?:[!?]+)?$"
)
_CASTLE_RE = re.compile(r"^([O0o])-?\1(-?\1)?[+#]*(?:[!?]+)?$")
_NULL_SAN = ("--", "Z0", "0000", "@@@@")


def move_to_san(board: Board, move: Move, *, long: bool = False) -> str:
    """SAN (or LAN with ``long=True``) of a legal move, with ``+``/``#`` suffixes."""
    text = san_body(board, move, long)
    board.push(move)
    try:
        if board.is_check():
            text += "#" if board.is_checkmate() else "+"
    finally:
        board.pop()
    return text


def san_and_push(board: Board, move: Move) -> str:
    """SAN of a legal move, which is then left played on `board`."""
    text = san_body(board, move, False)
    board.push(move)
    if board.is_check():
        text += "#" if board.is_checkmate() else "+"
    return text


def san_body(board: Board, move: Move, long: bool = False) -> str:
    """SAN (or LAN with `long`) of a legal move without its check suffix."""
    if not move:
        return "--"
    if board.is_castling(move):
        return "O-O" if move.to_square > move.from_square else "O-O-O"
    piece_type = board.piece_type_at(move.from_square)
    if piece_type is None:
        raise IllegalMoveError(
            f"no piece on {SQUARE_NAMES[move.from_square]} for {move.uci()} in {board.fen()}"
        )
    capture = board.is_capture(move)
    to_name = SQUARE_NAMES[move.to_square]
    if piece_type == PAWN:
        if long:
            text = SQUARE_NAMES[move.from_square] + ("x" if capture else "-") + to_name
        elif capture:
            text = FILE_NAMES[move.from_square & 7] + "x" + to_name
        else:
            text = to_name
        if move.promotion:
            text += "=" + str(PIECE_SYMBOLS[move.promotion]).upper()
        return text
    letter = str(PIECE_SYMBOLS[piece_type]).upper()
    if long:
        return letter + SQUARE_NAMES[move.from_square] + ("x" if capture else "-") + to_name
    text = letter
    if piece_type != KING:
        others = 0
        rivals = board.pieces_mask(piece_type, board.turn) & ~BB_SQUARES[move.from_square]
        if rivals:  # other pieces of the same kind that may legally reach the square too
            to_square = move.to_square
            rivals &= _reach(piece_type, to_square, board.occupied)
            while rivals:
                low = rivals & -rivals
                rivals ^= low
                if board.is_legal(_MOVES[(low.bit_length() - 1) * 64 + to_square]):
                    others |= low
        if others:
            need_file = need_rank = False
            if others & BB_RANKS[move.from_square >> 3]:
                need_file = True
            if others & BB_FILES[move.from_square & 7]:
                need_rank = True
            else:
                need_file = True
            if need_file:
                text += FILE_NAMES[move.from_square & 7]
            if need_rank:
                text += RANK_NAMES[move.from_square >> 3]
    return text + ("x" if capture else "") + to_name


def _reach(piece_type: PieceType, square: Square, occupied: Bitboard) -> Bitboard:
    """The squares from which a knight, bishop, rook or queen attacks `square` (attacks are
    symmetric: the piece's own attack set from `square`)."""
    if piece_type == KNIGHT:
        return BB_KNIGHT_ATTACKS[square]
    reach = 0
    if piece_type != ROOK:
        reach = BB_DIAG_ATTACKS[square][BB_DIAG_MASKS[square] & occupied]
    if piece_type != BISHOP:
        reach |= (BB_RANK_ATTACKS[square][BB_RANK_MASKS[square] & occupied]
                  | BB_FILE_ATTACKS[square][BB_FILE_MASKS[square] & occupied])
    return reach


def parse_san(board: Board, san: str) -> Move:
    """The legal move a SAN string names; tolerant of common variants (``e8Q``, ``0-0``, ``Nge2``).

    Raises ``InvalidMoveError`` for bad syntax, ``IllegalMoveError`` when no legal move matches
    and ``AmbiguousMoveError`` when several do; messages name the move and the position.
    """
    text = san.strip()
    if text.endswith("e.p."):
        text = text[:-4].rstrip()
    if text in _NULL_SAN:
        return Move.null()
    castle = _CASTLE_RE.match(text)
    if castle:
        long_side = castle.group(2) is not None
        for move in board._legal():
            if board.is_castling(move) and (move.to_square < move.from_square) == long_side:
                return move
        raise IllegalMoveError(f"illegal san: {san!r} in {board.fen()}")
    match = _SAN_RE.match(text)
    if not match:
        raise InvalidMoveError(f"invalid san: {san!r} in {board.fen()}")
    piece_letter, from_file, from_rank, to_name, promotion_letter = match.groups()
    to_square = SQUARE_NAMES.index(to_name)
    piece_type = PIECE_SYMBOLS.index(piece_letter.lower()) if piece_letter else PAWN
    promotion = PIECE_SYMBOLS.index(promotion_letter.lower()) if promotion_letter else None
    if promotion == KING or (promotion is not None and piece_type != PAWN):
        raise IllegalMoveError(f"illegal san: {san!r} in {board.fen()}")
    found: Move | None = None
    for move in board._legal():
        if move.to_square != to_square or board.is_castling(move):
            continue
        if board.piece_type_at(move.from_square) != piece_type:
            continue
        if from_file is not None and (move.from_square & 7) != FILE_NAMES.index(from_file):
            continue
        if from_rank is not None and (move.from_square >> 3) != RANK_NAMES.index(from_rank):
            continue
        if move.promotion != promotion:
            continue
        if found is not None:
            raise AmbiguousMoveError(f"ambiguous san: {san!r} in {board.fen()}")
        found = move
    if found is None:
        raise IllegalMoveError(f"illegal san: {san!r} in {board.fen()}")
    return found
