"""Polyglot opening books (``.bin``): probe by position, decode moves, choose one.

A Polyglot book is a file of 16-byte big-endian entries sorted by key: the position's Polyglot
hash (64 bits), the move (16 bits), a weight (16 bits) and a learn field (32 bits). The move
packs the target square in bits 0-5, the origin square in bits 6-11 and a promotion piece in
bits 12-14 (1 knight ... 4 queen); castling is written as the king taking its own rook (e1h1).
The file is memory-mapped and searched by bisection, so opening a book costs nothing.
"""

from __future__ import annotations

import mmap
import os
import random
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from runner.rules import KING, ROOK, STARTING_FEN, Board, Move

__all__ = [
    "ENTRY_SIZE",
    "BookEntry",
    "PolyglotBook",
    "PolyglotError",
    "ProbeLine",
    "RawEntry",
    "decode_move",
    "probe",
]

ENTRY_SIZE = 16
"""Bytes per book entry."""

_ENTRY = struct.Struct(">QHHI")
_KEY = struct.Struct(">Q")


class PolyglotError(ValueError):
    """A file that is not a Polyglot book (its size is not a whole number of entries)."""


@dataclass(frozen=True, slots=True)
class RawEntry:
    """One entry as stored: key, packed move, weight and learn field."""

    key: int
    raw_move: int
    weight: int
    learn: int


@dataclass(frozen=True, slots=True)
class BookEntry:
    """A book move for a given board: the decoded move (castling as the board writes it)."""

    move: Move
    weight: int
    learn: int
    raw_move: int


def decode_move(raw_move: int) -> Move:
    """The move packed in a Polyglot entry, castling still written king-takes-rook."""
    to_square = raw_move & 0x3F
    from_square = (raw_move >> 6) & 0x3F
    promotion_code = (raw_move >> 12) & 0x7
    return Move(from_square, to_square, promotion_code + 1 if promotion_code else None)


def _for_board(board: Board, move: Move) -> Move:
    """Write a king-takes-rook castling move the way a standard-chess board expects (e1g1)."""
    if board.chess960 or board.piece_type_at(move.from_square) != KING:
        return move
    target = board.piece_at(move.to_square)
    if target is None or target.piece_type != ROOK or target.color != board.turn:
        return move
    if move.from_square not in (4, 60):
        return move
    step = 2 if move.to_square > move.from_square else -2
    return Move(move.from_square, move.from_square + step)


class PolyglotBook:
    """A Polyglot book file, memory-mapped; use as a context manager or call ``close``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        size = os.path.getsize(self.path)
        if size % ENTRY_SIZE:
            raise PolyglotError(
                f"{self.path}: size {size} is not a multiple of {ENTRY_SIZE}: not a Polyglot book"
            )
        self._count = size // ENTRY_SIZE
        self._map: mmap.mmap | None = None
        if size:
            with open(self.path, "rb") as handle:
                self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)

    def __enter__(self) -> PolyglotBook:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Unmap the file."""
        if self._map is not None:
            self._map.close()
            self._map = None

    def __len__(self) -> int:
        return self._count

    def raw_entry(self, index: int) -> RawEntry:
        """The entry at a position in the file."""
        if not 0 <= index < self._count or self._map is None:
            raise IndexError(index)
        return RawEntry(*_ENTRY.unpack_from(self._map, index * ENTRY_SIZE))

    def _first_at_or_after(self, key: int) -> int:
        assert self._map is not None
        low, high = 0, self._count
        while low < high:
            middle = (low + high) // 2
            if _KEY.unpack_from(self._map, middle * ENTRY_SIZE)[0] < key:
                low = middle + 1
            else:
                high = middle
        return low

    def raw_entries(self, key: int) -> Iterator[RawEntry]:
        """All entries stored under a Polyglot key, in file order."""
        if self._map is None:
            return
        index = self._first_at_or_after(key)
        while index < self._count:
            entry = self.raw_entry(index)
            if entry.key != key:
                return
            yield entry
            index += 1

    def entries(self, board: Board, *, minimum_weight: int = 1) -> list[BookEntry]:
        """The legal book moves for a position, in file order (weight-0 entries skipped)."""
        found: list[BookEntry] = []
        for raw in self.raw_entries(board.zobrist_hash()):
            if raw.weight < minimum_weight:
                continue
            move = _for_board(board, decode_move(raw.raw_move))
            if board.is_legal(move):
                found.append(BookEntry(move, raw.weight, raw.learn, raw.raw_move))
        return found

    def choose(
        self, board: Board, *, rng: random.Random | None = None, best_only: bool = False
    ) -> BookEntry | None:
        """A book move for the position, or None when the book has none.

        ``best_only`` takes the first entry of highest weight; otherwise a move is drawn with
        probability proportional to its weight, from ``rng`` (seed it for repeatable choices).
        """
        found = self.entries(board)
        if not found:
            return None
        if best_only:
            return max(found, key=lambda entry: entry.weight)
        total = sum(entry.weight for entry in found)
        ticket = (rng or random.Random()).randint(0, total - 1)
        running = 0
        for entry in found:
            running += entry.weight
            if running > ticket:
                return entry
        raise AssertionError("weights did not add up")  # pragma: no cover

    def line(
        self,
        board: Board,
        *,
        depth: int,
        rng: random.Random | None = None,
        best_only: bool = False,
    ) -> list[Move]:
        """Up to ``depth`` plies of book moves from a position (the board is left unchanged)."""
        work = board.copy()
        moves: list[Move] = []
        while len(moves) < depth:
            entry = self.choose(work, rng=rng, best_only=best_only)
            if entry is None:
                break
            work.push(entry.move)
            moves.append(entry.move)
        return moves


@dataclass(frozen=True, slots=True)
class ProbeLine:
    """One book move for a position, for display: SAN, coordinates, weight and share."""

    san: str
    uci: str
    weight: int
    share: float
    """Fraction of the position's total weight."""
    learn: int


def probe(path: str | Path, fen: str, *, chess960: bool = False) -> list[ProbeLine]:
    """The book moves for a FEN (``startpos`` allowed), heaviest first."""
    board = Board(STARTING_FEN if fen == "startpos" else fen, chess960=chess960)
    with PolyglotBook(path) as book:
        found = book.entries(board)
    total = sum(entry.weight for entry in found) or 1
    ordered = sorted(found, key=lambda entry: -entry.weight)
    return [
        ProbeLine(board.san(entry.move), entry.move.uci(), entry.weight, entry.weight / total,
                  entry.learn)
        for entry in ordered
    ]
