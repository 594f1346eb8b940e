"""Opening books for tournaments: EPD/FEN lines and PGN games, served in order or shuffled.

Big books cost nothing to open: the file is memory-mapped and a sparse index of where entries
start is built only as far as it is needed (the whole file only for ``len`` and random order),
and an entry is parsed when it is served. ``OpeningCursor`` serves openings sequentially or in a
seeded random order from a ``start`` position, and its ``state`` is plain data from which a
resumed tournament continues exactly where it stopped.
"""

from __future__ import annotations

import mmap
import random
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Protocol

from runner.books.index import SparseIndex
from runner.pgn.castling import needs_chess960
from runner.rules import Board

__all__ = [
    "CursorState",
    "EpdBook",
    "Opening",
    "OpeningBook",
    "OpeningBookError",
    "OpeningCursor",
    "Order",
    "PgnBook",
    "PolyglotOpenings",
    "chess960_start_fen",
    "open_book",
]


class OpeningBookError(ValueError):
    """A book that cannot be used: unreadable, empty, or an entry that is not a position."""


_EXCERPT = 40
"""The most characters of a book's text an error quotes: a file that is not a book (anything a
service's books directory holds) must not be disclosed line by line through its errors."""

_REASON = 400
"""The most characters of a parser's complaint an error repeats."""

_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_WHOLE_FEN = re.compile(r"\s*\(in (?:'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")\)")


def _excerpt(text: str, limit: int = _EXCERPT) -> str:
    """`text` quoted, at most `limit` characters of it, control characters shown as '?'."""
    shown = "".join(c if c.isprintable() else "?" for c in text[:limit])
    return repr(shown + ("..." if len(text) > limit else ""))


def _short_reason(reason: str) -> str:
    """A parser's complaint about a book entry, without the entry in it: the position it
    repeats is dropped and anything else it quotes is cut to an excerpt."""
    reason = _WHOLE_FEN.sub("", reason)
    reason = _QUOTED.sub(lambda m: _excerpt(m.group(0)[1:-1], _EXCERPT // 2), reason)
    reason = "".join(c if c.isprintable() else "?" for c in reason)
    # The bound is loose: the parser's own words (and the file's path, which it may name)
    # must survive; the book's text in them is already cut above.
    return reason if len(reason) <= _REASON else reason[: _REASON - 3] + "..."


class Order(Enum):
    """The order in which a cursor serves a book's openings."""

    SEQUENTIAL = "sequential"
    RANDOM = "random"


@dataclass(frozen=True, slots=True)
class Opening:
    """A start position, and moves to play from it (PGN books), with where it came from."""

    fen: str
    moves: tuple[str, ...] = ()
    """Moves in coordinate notation, played from ``fen`` before the engines take over."""
    chess960: bool = False
    index: int = 0
    """Position of the opening in its book (0-based)."""
    source: str = ""
    """``file:line`` of the entry."""
    name: str = ""
    """The EPD ``id``/``c0`` operation, or the PGN Opening/ECO tag, when present."""


class OpeningBook(Protocol):
    """What a cursor needs from a book: its size and the opening at an index."""

    path: Path

    def __len__(self) -> int: ...

    def opening(self, index: int) -> Opening: ...


def _map_file(path: Path) -> mmap.mmap | bytes:
    try:
        with open(path, "rb") as handle:
            if not handle.seek(0, 2):
                return b""  # an empty file cannot be mapped
            return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise OpeningBookError(f"{path}: cannot open the book ({exc.strerror})") from exc


def _board_for(fen: str, chess960: bool | None) -> Board:
    """A board for a book position; ``chess960=None`` turns 960 on when the rights need it."""
    return Board(fen, chess960=bool(chess960) or (chess960 is None and needs_chess960(fen)))


BOOK_LINE_BYTES = 1 << 20
"""The longest line a book may have (1 MiB): a longer one is an error naming its file and line,
never read whole (a one-line PGN game of millions of plies took gigabytes)."""

DEFAULT_PLIES = 1000
"""Opening plies taken from a PGN book when ``plies`` is not given. cutechess-cli takes every
move of the game; a cap keeps a book of whole games, or a broken one, from sending an engine
thousands of moves (no opening line comes near it)."""

_NOT_STANDARD = (" (castling rights only Chess960 has: this book is read for standard chess;"
                 " play it with variant fischerandom)")
"""Said after the complaint about a Chess960 position in a book read for standard chess."""


# -- EPD --------------------------------------------------------------------------------------

_EPD_ENTRY = rb"(?:[ \t]*(?:#[^\n]*)?\r?\n)*[ \t]*[^\s#][^\n]*(?:\n|\Z)"
_EPD_EVERY = 64
_EPD_GROUP = re.compile(rb"(?m)^(?:" + _EPD_ENTRY + rb"){1,%d}" % _EPD_EVERY)
_EPD_ONE = re.compile(_EPD_ENTRY)
# A line that is an entry with no blank or comment line before it: while every line of a book
# is one (most books), a group is 64 such lines in a row, matched a third as fast as by
# `_EPD_GROUP` (see `_epd_groups`).
_EPD_LINE = rb"[^\s#][^\n]*(?:\n|\Z)"
_EPD_FULL_GROUP = re.compile(rb"(?:" + _EPD_LINE + rb"){%d}" % _EPD_EVERY)
_EPD_LAST_GROUP = re.compile(rb"(?:" + _EPD_LINE + rb"){1,%d}\Z" % _EPD_EVERY)
_EPD_SKIP = re.compile(rb"(?:[ \t]*(?:#[^\n]*)?\r?\n)*[ \t]*")
_EPD_OPERATION = re.compile(
    r'\s*([A-Za-z][A-Za-z0-9_]*)((?:\s+(?:"(?:[^"\\]|\\.)*"|[^\s;"]+))*)\s*;'
)


def _parse_epd(text: str) -> tuple[str, str]:
    """(FEN, name) from an EPD or FEN line; raises ValueError on a malformed line."""
    fields = text.split(None, 4)
    if len(fields) < 4:
        raise ValueError("an EPD line needs at least 4 fields")
    placement, side, castling, en_passant = fields[:4]
    rest = fields[4] if len(fields) > 4 else ""
    halfmove, fullmove, name = "0", "1", ""
    counters = re.match(r"(\d+)\s+(\d+)(?:\s+|$)", rest)
    if counters:
        halfmove, fullmove = counters.group(1), counters.group(2)
        rest = rest[counters.end():]
    for opcode, operand in _EPD_OPERATION.findall(rest):
        value = operand.strip()
        if opcode == "hmvc" and value.isdigit():
            halfmove = value
        elif opcode == "fmvn" and value.isdigit():
            fullmove = value
        elif opcode in ("id", "c0") and not name:
            name = value.strip('"')
    return f"{placement} {side} {castling} {en_passant} {halfmove} {fullmove}", name


def _epd_groups(data: mmap.mmap | bytes) -> Iterator[int]:
    """Where each group of `_EPD_EVERY` entries of an EPD book starts: the starts of
    `_EPD_GROUP`'s matches, found by a simpler pattern while every line is an entry (no blank
    or comment line, none indented: a 150,000-line book's count took 56 ms, now about 20),
    and by `_EPD_GROUP` itself from the first group that holds another line on. Each group
    found either way ends where the next search starts, so the two agree (a test compares)."""
    position, end = 0, len(data)
    while position < end:
        found = _EPD_FULL_GROUP.match(data, position) or _EPD_LAST_GROUP.match(data, position)
        if found is None:
            break
        yield position
        position = found.end()
    yield from (match.start() for match in _EPD_GROUP.finditer(data, position))


class EpdBook:
    """A book of positions, one EPD or FEN line each (extra EPD operations ignored or used).

    ``chess960=None`` decides for the whole book from its first entries: if any of them has
    castling rights only Chess960 allows (a Shredder-FEN file, or ``KQkq`` with the king off
    the e-file), every position is set up as Chess960, so that a Chess960 start which happens
    to look standard (king e1, rooks a1 and h1) is still played as Chess960.
    """

    def __init__(self, path: str | Path, *, chess960: bool | None = None) -> None:
        self.path = Path(path)
        self._chess960 = chess960
        self._standard = chess960 is False
        """Given as standard chess: a Chess960-only position is an error, not a 960 opening."""
        self._data = _map_file(self.path)
        self._index = SparseIndex(
            self._data,
            _epd_groups(self._data),
            _EPD_EVERY,
            _EPD_ONE,
        )

    @property
    def chess960(self) -> bool:
        """Whether the book's positions are Chess960 (given, or decided from its first lines)."""
        if self._chess960 is None:
            first_lines = (self._line_or_none(index) for index in range(_EPD_EVERY))
            self._chess960 = any(
                needs_chess960(found[0]) for found in first_lines if found is not None
            )
        return self._chess960

    def __len__(self) -> int:
        return len(self._index)

    def opening(self, index: int) -> Opening:
        """The position at ``index`` (0-based), parsed and checked now."""
        return self._read(index, True if self.chess960 else (False if self._standard else None))

    def _line_or_none(self, index: int) -> tuple[str, int] | None:
        """`_line`, with None for a line too long to read (refused when it is dealt)."""
        try:
            return self._line(index)
        except OpeningBookError:
            return None

    def _line(self, index: int) -> tuple[str, int] | None:
        """The text of entry ``index`` and its line number, or None past the end."""
        found = self._index.locate(index)
        if found is None:
            return None
        offset, line = found
        skip = _EPD_SKIP.match(self._data, offset)
        start = skip.end() if skip else offset
        line += self._data[offset:start].count(b"\n")
        end = self._data.find(b"\n", start, start + BOOK_LINE_BYTES + 1)
        if end < 0:
            end = len(self._data)
        if end - start > BOOK_LINE_BYTES:  # not copied out of the mapped file
            raise OpeningBookError(f"{self.path}:{line}: line longer than {BOOK_LINE_BYTES} bytes "
                                   "(the most a book line may have)")
        raw = self._data[start:end]
        return raw.decode("utf-8", "replace").strip(), line

    def _read(self, index: int, chess960: bool | None) -> Opening:
        found = self._line(index)
        if found is None:
            raise IndexError(f"{self.path}: no opening {index}")
        text, line = found
        fen = text
        try:
            fen, name = _parse_epd(text)
            board = _board_for(fen, chess960)
        except ValueError as exc:
            raise OpeningBookError(
                f"{self.path}:{line}: bad position {_excerpt(text)}: {_short_reason(str(exc))}"
                + (_NOT_STANDARD if chess960 is False and needs_chess960(fen) else "")
            ) from exc
        return Opening(
            fen=board.fen(), chess960=bool(board.chess960), index=index,
            source=f"{self.path}:{line}", name=name,
        )


# -- PGN --------------------------------------------------------------------------------------

# A line that is not a tag pair, any blank lines, then a tag pair: that "[" starts a game.
# (A "[%clk ...]" at the start of a line inside a comment is not a tag pair.)
_TAG_START = rb"[ \t]*\[[A-Za-z0-9][A-Za-z0-9_+#=:-]*\s+\""
_PGN_NEXT_GAME = re.compile(
    rb"(?m)^(?!" + _TAG_START + rb")[ \t]*\S[^\n]*\n(?:[ \t\r]*\n)*(?=" + _TAG_START + rb")"
)


class PgnBook:
    """A book of PGN games: each opening is a game's start position and its first ``plies``."""

    def __init__(
        self, path: str | Path, *, plies: int | None = None, chess960: bool | None = None
    ) -> None:
        if plies is not None and plies < 0:
            raise OpeningBookError(f"{path}: plies must not be negative")
        self.path = Path(path)
        self.plies = plies
        self.chess960 = chess960
        self._data = _map_file(self.path)
        self._index = SparseIndex(self._data, self._game_starts())

    def _game_starts(self) -> Iterator[int]:
        if re.search(rb"\S", self._data) is None:
            return
        yield 0
        for match in _PGN_NEXT_GAME.finditer(self._data):
            yield match.end()

    def __len__(self) -> int:
        return len(self._index)

    def opening(self, index: int) -> Opening:
        """The opening of game ``index`` (0-based): read, replayed and checked now."""
        found = self._index.locate(index)
        if found is None:
            raise IndexError(f"{self.path}: no opening {index}")
        offset, line = found
        # Here, not at the top: a run with an EPD book never loads the PGN reader (issue 38).
        from runner.pgn.reader import read_games
        from runner.pgn.splitter import PgnError

        games = read_games(self.path, offset=offset, line=line, limit=1,
                           max_line=BOOK_LINE_BYTES)
        try:
            game = next(iter(games), None)
        except PgnError as exc:
            raise OpeningBookError(str(exc)) from None
        if game is None:
            raise IndexError(f"{self.path}: no opening {index}")
        wanted = min(len(game.moves), DEFAULT_PLIES) if self.plies is None else self.plies
        if game.error is not None and (self.plies is None or len(game.moves) < wanted):
            # A broken game is refused unless the moves before the fault are all we take:
            # never fall back to the start position or a shortened line.
            raise OpeningBookError(f"bad opening game: {_short_reason(str(game.error))}")
        moves = game.moves[:wanted]
        if any(move.is_null for move in moves):
            raise OpeningBookError(f"{game.source}:{game.line}: null move in an opening")
        fen, chess960 = game.start_fen, game.chess960
        written = game.tags.get("FEN", "")
        if self.chess960 is False and chess960 and needs_chess960(written):
            field = (written.split()[2:3] or ["-"])[0]
            raise OpeningBookError(
                f"{game.source}:{game.line}: FEN tag {_excerpt(written)}: castling field "
                f"{_excerpt(field)} gives a right that no king and rook on their home squares "
                "can use" + _NOT_STANDARD)
        if self.chess960 and not chess960:
            fen, chess960 = Board(fen, chess960=True).fen(), True
        name = game.tags.get("Opening", game.tags.get("ECO", ""))
        return Opening(
            fen=fen, moves=tuple(move.uci for move in moves), chess960=chess960, index=index,
            source=f"{game.source}:{game.line}", name=name,
        )


_POLYGLOT_SIZE = 1 << 20
"""How many distinct lines a Polyglot book is taken to offer (each index is its own walk)."""


class PolyglotOpenings:
    """Openings drawn from a Polyglot ``.bin`` book: opening ``i`` is a weighted random walk
    of up to ``plies`` book moves from the start position, seeded by ``seed`` and ``i``, so a
    resumed tournament replays the same lines."""

    def __init__(self, path: str | Path, *, plies: int | None = None, seed: int = 0) -> None:
        from runner.books.polyglot import PolyglotBook  # local: only Polyglot users pay for it

        self.path = Path(path)
        self.plies = 8 if plies is None else plies
        self.seed = seed
        self._book = PolyglotBook(self.path)
        self.chess960 = False

    def __len__(self) -> int:
        return _POLYGLOT_SIZE

    def opening(self, index: int) -> Opening:
        """The book line number `index` (possibly shorter than ``plies`` where the book ends)."""
        board = Board()
        rng = random.Random(f"{self.seed}:{index}")
        line = self._book.line(board, depth=self.plies, rng=rng)
        return Opening(fen=board.fen(), moves=tuple(move.uci() for move in line), index=index,
                       source=f"{self.path}#{index}")


def open_book(
    path: str | Path, *, plies: int | None = None, chess960: bool | None = None,
    polyglot: bool | None = None, seed: int = 0,
) -> EpdBook | PgnBook | PolyglotOpenings:
    """Open an opening book: ``.pgn`` games, ``.bin`` Polyglot books (or ``polyglot=True``),
    otherwise EPD/FEN lines."""
    target = Path(path)
    if not target.is_file():
        raise OpeningBookError(f"{target}: no such book file")
    if polyglot or (polyglot is None and target.suffix.lower() == ".bin"):
        return PolyglotOpenings(target, plies=plies, seed=seed)
    if target.suffix.lower() == ".pgn":
        return PgnBook(target, plies=plies, chess960=chess960)
    return EpdBook(target, chess960=chess960)


_KNIGHT_SLOTS = ((0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4))


def chess960_start_fen(number: int) -> str:
    """The Chess960 start position with Scharnagl number `number` (0..959; 518 is the
    standard position), as Shredder-FEN (castling rights named by rook files)."""
    if not 0 <= number < 960:
        raise ValueError(f"Chess960 positions are numbered 0..959, not {number}")
    rank: list[str | None] = [None] * 8
    rest, light = divmod(number, 4)
    rank[2 * light + 1] = "B"
    rest, dark = divmod(rest, 4)
    rank[2 * dark] = "B"
    knights, queen = divmod(rest, 6)
    empty = [i for i, piece in enumerate(rank) if piece is None]
    rank[empty[queen]] = "Q"
    empty = [i for i, piece in enumerate(rank) if piece is None]
    for slot in _KNIGHT_SLOTS[knights]:
        rank[empty[slot]] = "N"
    left, king, right = (i for i, piece in enumerate(rank) if piece is None)
    rank[left], rank[king], rank[right] = "R", "K", "R"
    back = "".join(piece or "" for piece in rank)
    files = "abcdefgh"
    rights = f"{files[right].upper()}{files[left].upper()}{files[right]}{files[left]}"
    return f"{back.lower()}/pppppppp/8/8/8/8/PPPPPPPP/{back} w {rights} - 0 1"


# -- cursor -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CursorState:
    """Where a cursor is: enough to resume it (plain data, ``asdict``/``from_dict``)."""

    order: str = Order.SEQUENTIAL.value
    seed: int = 0
    start: int = 0
    served: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The state as a JSON-ready dictionary."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CursorState:
        """Rebuild a state saved with ``to_dict``."""
        return cls(
            order=str(data["order"]), seed=int(data["seed"]), start=int(data["start"]),
            served=int(data["served"]),
        )


class _LazyShuffle:
    """A seeded random permutation of range(n), drawn one element at a time.

    Fisher-Yates run lazily: only displaced positions are remembered, so memory grows with
    the number of draws, not with n.
    """

    def __init__(self, size: int, seed: str) -> None:
        self.size = size
        self.rng = random.Random(seed)
        self.drawn = 0
        self.moved: dict[int, int] = {}

    def draw(self) -> int:
        position = self.drawn
        pick = self.rng.randrange(position, self.size)
        chosen = self.moved.get(pick, pick)
        self.moved[pick] = self.moved.pop(position, position)
        self.drawn += 1
        return chosen


class OpeningCursor:
    """Serves a book's openings one after another; restartable from ``state``."""

    def __init__(
        self,
        book: OpeningBook,
        *,
        order: Order | str = Order.SEQUENTIAL,
        seed: int = 0,
        start: int = 0,
        served: int = 0,
    ) -> None:
        if start < 0 or served < 0:
            raise OpeningBookError("start and served must not be negative")
        self.book = book
        self.order = Order(order)
        self.seed = seed
        self.start = start
        self.served = served
        self._shuffle: _LazyShuffle | None = None
        self._cycle = -1

    @classmethod
    def restore(cls, book: OpeningBook, state: CursorState) -> OpeningCursor:
        """A cursor that continues from a saved state."""
        return cls(book, order=state.order, seed=state.seed, start=state.start,
                   served=state.served)

    @property
    def state(self) -> CursorState:
        """The current position, to save and later ``restore``."""
        return CursorState(self.order.value, self.seed, self.start, self.served)

    def _book_index(self, position: int) -> int:
        if self.order is Order.SEQUENTIAL:
            return position
        size = len(self.book)
        if size == 0:
            raise OpeningBookError(f"{self.book.path}: the book is empty")
        cycle, inside = divmod(position, size)
        shuffle = self._shuffle
        if shuffle is None or self._cycle != cycle or shuffle.drawn > inside:
            shuffle = self._shuffle = _LazyShuffle(size, f"{self.seed}:{cycle}")
            self._cycle = cycle
        while shuffle.drawn < inside:
            shuffle.draw()
        return shuffle.draw()

    def next(self) -> Opening:
        """The next opening (the book starts over when it runs out).

        A bad entry raises OpeningBookError with its file and line; the cursor has moved past
        it, so a caller that prefers to skip bad entries simply calls ``next`` again.
        """
        position = self.start + self.served
        index = self._book_index(position)
        self.served += 1
        try:
            return self.book.opening(index)
        except IndexError:
            size = len(self.book)
            if size == 0:
                raise OpeningBookError(f"{self.book.path}: the book is empty") from None
            return self.book.opening(index % size)

    def __iter__(self) -> Iterator[Opening]:
        while True:
            yield self.next()
