"""Moves and pieces: small immutable values shared by the board, SAN and the protocols.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

from typing import Final

from runner.rules.squares import (
    PIECE_NAMES,
    PIECE_SYMBOLS,
    SQUARE_NAMES,
    Color,
    PieceType,
    Square,
)


class InvalidMoveError(ValueError):
    """A move string that cannot be parsed at all (bad syntax)."""


class IllegalMoveError(ValueError):
    """A well-formed move that is not legal in the position."""


class AmbiguousMoveError(ValueError):
    """A SAN move that matches more than one legal move."""


class Move:
    """A move from one square to another, with an optional promotion piece type.

    Moves are immutable values: equal when their squares and promotion are equal. Castling is
    written as the king's move in standard chess (``e1g1``) and as king-takes-rook in Chess960.
    ``Move.null()`` (``0000``) is the null move.
    """

    __slots__ = ("from_square", "to_square", "promotion")

    from_square: Square
    to_square: Square
    promotion: PieceType | None

    def __init__(self, from_square: Square, to_square: Square, promotion: PieceType | None = None):
        object.__setattr__(self, "from_square", from_square)
        object.__setattr__(self, "to_square", to_square)
        object.__setattr__(self, "promotion", promotion)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Move is immutable")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Move):
            return (
                self.from_square == other.from_square
                and self.to_square == other.to_square
                and self.promotion == other.promotion
            )
        return NotImplemented

    def __hash__(self) -> int:
        return self.from_square | (self.to_square << 6) | ((self.promotion or 0) << 12)

    def __repr__(self) -> str:
        return f"Move.from_uci({self.uci()!r})"

    def __str__(self) -> str:
        return self.uci()

    def __bool__(self) -> bool:
        return bool(self.from_square or self.to_square or self.promotion)

    def __reduce__(self) -> tuple[type[Move], tuple[Square, Square, PieceType | None]]:
        return (Move, (self.from_square, self.to_square, self.promotion))

    def uci(self) -> str:
        """The move in coordinate notation (``e2e4``, ``e7e8q``; ``0000`` for the null move)."""
        if not self:
            return "0000"
        text = SQUARE_NAMES[self.from_square] + SQUARE_NAMES[self.to_square]
        if self.promotion:
            text += PIECE_SYMBOLS[self.promotion]  # type: ignore[operator]
        return text

    @classmethod
    def from_uci(cls, uci: str) -> Move:
        """Parse coordinate notation; raises ``InvalidMoveError`` naming the text on bad syntax."""
        if uci == "0000":
            return cls.null()
        if len(uci) in (4, 5):
            from_square = _SQUARE_BY_NAME.get(uci[0:2], -1)
            to_square = _SQUARE_BY_NAME.get(uci[2:4], -1)
            if from_square < 0 or to_square < 0:
                raise InvalidMoveError(f"invalid coordinate move: {uci!r}")
            if len(uci) == 4:
                if from_square == to_square:
                    raise InvalidMoveError(f"invalid coordinate move (no movement): {uci!r}")
                return _MOVES[from_square * 64 + to_square]
            symbol = uci[4].lower()
            if symbol in ("n", "b", "r", "q", "k"):
                return cls(from_square, to_square, PIECE_SYMBOLS.index(symbol))
        raise InvalidMoveError(f"invalid coordinate move: {uci!r}")

    @classmethod
    def null(cls) -> Move:
        """The null move (``0000``), which passes the turn."""
        return _NULL_MOVE


# Square by name: one hash lookup where `SQUARE_NAMES.index` compares up to 64 strings.
_SQUARE_BY_NAME: Final[dict[str, Square]] = {name: sq for sq, name in enumerate(SQUARE_NAMES)}
_MOVES: Final[tuple[Move, ...]] = tuple(Move(a, b) for a in range(64) for b in range(64))
_NULL_MOVE: Final = Move(0, 0)


def plain_move(from_square: Square, to_square: Square) -> Move:
    """The shared, preallocated ``Move`` for a non-promotion move (avoids allocating in hot loops)."""
    return _MOVES[from_square * 64 + to_square]


class Piece:
    """A piece type with a color."""

    __slots__ = ("piece_type", "color")

    piece_type: PieceType
    color: Color

    def __init__(self, piece_type: PieceType, color: Color):
        object.__setattr__(self, "piece_type", piece_type)
        object.__setattr__(self, "color", color)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Piece is immutable")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Piece):
            return self.piece_type == other.piece_type and self.color == other.color
        return NotImplemented

    def __hash__(self) -> int:
        return self.piece_type + (6 if self.color else 0)

    def __repr__(self) -> str:
        return f"Piece.from_symbol({self.symbol()!r})"

    def symbol(self) -> str:
        """FEN letter: upper case for White, lower case for Black."""
        letter = PIECE_SYMBOLS[self.piece_type]
        assert letter is not None
        return letter.upper() if self.color else letter

    def name(self) -> str:
        """Lower-case English name of the piece type, e.g. ``knight``."""
        return str(PIECE_NAMES[self.piece_type])

    @classmethod
    def from_symbol(cls, symbol: str) -> Piece:
        """Piece from a FEN letter (``P``, ``n``, ...); raises ``ValueError`` otherwise."""
        lower = symbol.lower()
        if len(symbol) != 1 or lower not in "pnbrqk":
            raise ValueError(f"not a piece symbol: {symbol!r}")
        return cls(PIECE_SYMBOLS.index(lower), symbol != lower)
