"""The rules core: legal chess, SAN, FEN, repetition and every FIDE game end. Pure Python, no I/O.

The API follows python-chess's names (``Board``, ``Move``, ``push``, ``pop``, ``legal_moves``,
``san``, ``fen``, ``outcome``) so that readers of either feel at home. ``Board`` is built in
steps, one module each: `position` (state, setup, queries, legal moves, keys) < `makemove`
(push/pop) < `endings` (mate, draws, the outcome) < `board` (UCI, SAN, LAN and FEN text).
`outcome` holds `Result`, the one result type (PGN text and points) the whole runner uses.
This is the lowest room: it imports nothing of ours.
"""

from runner.rules.board import Board, LegalMoveGenerator
from runner.rules.fen import STARTING_BOARD_FEN, STARTING_FEN, InvalidFenError
from runner.rules.move import AmbiguousMoveError, IllegalMoveError, InvalidMoveError, Move, Piece
from runner.rules.outcome import Outcome, Result, Termination
from runner.rules.perft import perft, perft_divide
from runner.rules.squares import (
    BB_SQUARES,
    BISHOP,
    BLACK,
    COLOR_NAMES,
    FILE_NAMES,
    KING,
    KNIGHT,
    PAWN,
    PIECE_NAMES,
    PIECE_SYMBOLS,
    PIECE_TYPES,
    QUEEN,
    RANK_NAMES,
    ROOK,
    SQUARE_NAMES,
    SQUARES,
    WHITE,
    Bitboard,
    Color,
    PieceType,
    Square,
    parse_square,
    scan_forward,
    square,
    square_file,
    square_mirror,
    square_name,
    square_rank,
)
from runner.rules.status import InvalidPositionError, Status

__all__ = [
    "Board", "LegalMoveGenerator", "Move", "Piece", "Outcome", "Result", "Termination",
    "InvalidFenError", "InvalidPositionError", "Status", "IllegalMoveError", "InvalidMoveError",
    "AmbiguousMoveError",
    "STARTING_FEN", "STARTING_BOARD_FEN", "perft", "perft_divide",
    "WHITE", "BLACK", "PAWN", "KNIGHT", "BISHOP", "ROOK", "QUEEN", "KING", "PIECE_TYPES",
    "PIECE_SYMBOLS", "PIECE_NAMES", "COLOR_NAMES", "FILE_NAMES", "RANK_NAMES", "SQUARES",
    "SQUARE_NAMES", "BB_SQUARES", "Bitboard", "Color", "PieceType", "Square",
    "square", "square_file", "square_rank", "square_name", "square_mirror", "parse_square",
    "scan_forward",
]
