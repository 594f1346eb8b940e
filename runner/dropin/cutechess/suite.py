"""cutechess-cli's opening suite: its random generator, its opening order and its EPD reading.

``runner-cutechess`` plays the games cutechess-cli 1.5 plays, so the openings must come in the
order cutechess-cli deals them, and each must be the position it sets up:

- its random numbers come from its own Mersenne-twister variant (the tempering of MT19937 on a
  state update that mixes the low bit of one word with the low 31 bits of the next, unlike the
  reference generator), seeded by ``-srand``; `Mersenne` computes the same numbers;
- ``order=random`` is a Knuth shuffle of every line (EPD) or game (PGN) of the file, drawn
  from that generator once when the suite is opened; ``start=N`` then skips ``N - 1`` entries
  of the shuffled list (sequential: of the file), wrapping around at the end;
- an EPD line is read as its first four fields plus the ``hmvc``/``fmvn`` operations, so a
  line written as a whole FEN (``... w KQkq - 3 12``) starts at move 1 with a zero halfmove
  clock, as it does in cutechess-cli (``-draw movenumber=`` and ``-maxmoves`` count from
  there);
- a PGN game gives its start position and its first ``plies`` moves (default 1024).
"""

from __future__ import annotations

import bisect
import re
from pathlib import Path

from runner.books.openings import Opening, OpeningBookError, PgnBook
from runner.rules import Board

__all__ = ["CUTECHESS_PLIES", "CutechessSuite", "Mersenne", "cutechess_epd_fen", "frc_start_fen",
           "knuth_shuffle"]

CUTECHESS_PLIES = 1024
"""cutechess-cli's opening depth when ``-openings`` has no ``plies=``."""

_MASK = 0xFFFFFFFF


class Mersenne:
    """cutechess-cli's pseudorandom generator (``Mersenne::random``), number for number."""

    def __init__(self, seed: int) -> None:
        state = [seed & _MASK]
        for i in range(1, 624):
            previous = state[-1]
            state.append((0x6C078965 * (previous ^ (previous >> 30)) + i) & _MASK)
        self._state = state
        self._index = 0

    def _generate(self) -> None:
        # cutechess's update: its low-bit/low-31-bits mix is what makes its numbers differ
        # from the reference MT19937's, so it is kept as it is.
        state = self._state
        for i in range(624):
            y = (state[i] & 0x1) + (state[(i + 1) % 624] & 0x7FFFFFFF)
            value = state[(i + 397) % 624] ^ (y >> 1)
            if y % 2:
                value ^= 0x9908B0DF
            state[i] = value & _MASK

    def random(self) -> int:
        """The next number, 0 .. 2**32 - 1."""
        if self._index == 0:
            self._generate()
        y = self._state[self._index]
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        y ^= y >> 18
        self._index = (self._index + 1) % 624
        return y & _MASK


def knuth_shuffle(size: int, rng: Mersenne) -> list[int]:
    """``range(size)`` permuted as cutechess-cli permutes the entries of a random-order suite."""
    shuffle = _LazyShuffle(size, rng)
    return [shuffle[i] for i in range(size)]


class _LazyShuffle:
    """`knuth_shuffle`'s permutation, drawn only as far as it is read. Step ``i`` of the
    shuffle fixes entry ``i`` for good and draws one number, so entry ``i`` needs only the
    first ``i + 1`` steps: a run of a few hundred games from a book of 150,000 lines then
    draws a few hundred numbers, not one per line (a third of a second of CPU)."""

    def __init__(self, size: int, rng: Mersenne) -> None:
        self._size = size
        self._rng = rng
        self._order = list(range(size))
        self._done = 0
        """Steps taken: entries below this are final."""

    def __getitem__(self, position: int) -> int:
        order = self._order
        size = self._size
        random = self._rng.random
        for i in range(self._done, min(position + 1, size - 1)):
            j = i + random() % (size - i)
            order[i], order[j] = order[j], order[i]
        self._done = max(self._done, min(position + 1, size - 1))
        return order[position]


def frc_start_fen(rng: Mersenne) -> str:
    """A Chess960 start position drawn as cutechess-cli draws one (five numbers: the bishops
    on a light and a dark square, the queen, the two knights, then rook, king, rook on the
    squares left), as X-FEN with ``KQkq``."""
    back: list[str | None] = [None] * 8

    def put(piece: str, nth: int, start: int = 0, step: int = 1) -> None:
        """`piece` on the `nth` free square among start, start + step, ..."""
        free = [i for i in range(start, 8, step) if back[i] is None]
        back[free[nth]] = piece

    put("B", rng.random() % 4, 0, 2)
    put("B", rng.random() % 4, 1, 2)
    put("Q", rng.random() % 6)
    put("N", rng.random() % 5)
    put("N", rng.random() % 4)
    for piece in "RKR":
        put(piece, 0)
    white = "".join(piece or "" for piece in back)
    return f"{white.lower()}/pppppppp/8/8/8/8/PPPPPPPP/{white} w KQkq - 0 1"


_OPERATION = re.compile(r'\s*([^\s;"]+)((?:\s+(?:"[^"]*"|[^\s;"]+))*)\s*;')


def cutechess_epd_fen(line: str) -> str:
    """The FEN cutechess-cli sets up for an EPD line: its four position fields, then the
    ``hmvc`` and ``fmvn`` operations' values, else ``0 1`` (counters written as plain FEN
    fields 5 and 6 are not operations: they are dropped)."""
    fields = line.split(None, 4)
    if len(fields) < 4:
        raise ValueError("an EPD line needs at least 4 fields")
    rest = fields[4] if len(fields) > 4 else ""
    halfmove, fullmove = "0", "1"
    seen: set[str] = set()
    for opcode, operand in _OPERATION.findall(rest):
        words = operand.split()
        if opcode in ("hmvc", "fmvn") and opcode not in seen and words:
            seen.add(opcode)
            if opcode == "hmvc":
                halfmove = words[0]
            else:
                fullmove = words[0]
    return " ".join([*fields[:4], halfmove, fullmove])


class CutechessSuite:
    """A book served in cutechess-cli's order: `opening(k)` is the k-th opening it deals."""

    def __init__(self, path: str | Path, *, epd: bool, random_order: bool, start: int,
                 seed: int, plies: int = CUTECHESS_PLIES, chess960: bool = False) -> None:
        if start < 1:
            raise OpeningBookError(f"{path}: start must be 1 or more")
        self.path = Path(path)
        self.epd = epd
        self.chess960 = chess960
        self._pgn: PgnBook | None = None
        self._lines: list[str] = []
        self._entries_found: list[int] | None = None
        if epd:
            self._lines = self._read_lines()
            size = len(self._lines)
            if not any(line.strip() for line in self._lines):
                raise OpeningBookError(f"{self.path}: the book has no position")
        else:
            self._pgn = PgnBook(self.path, plies=plies, chess960=chess960 or None)
            size = len(self._pgn)
            if size == 0:
                raise OpeningBookError(f"{self.path}: the book has no game")
        self._order: _LazyShuffle | None = None
        if random_order:
            # Every line counts as an entry here (cutechess indexes lines, blank or not).
            self._order = _LazyShuffle(size, Mersenne(seed))
        self._first = (start - 1) % size
        self._size = size

    def _read_lines(self) -> list[str]:
        try:
            with open(self.path, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise OpeningBookError(f"{self.path}: cannot open the book ({exc.strerror})") from exc
        text = data.decode("utf-8", "replace")
        return text.splitlines()

    @property
    def _entries(self) -> list[int]:
        """The 0-based numbers of the lines that hold a position (not blank), found once
        and only when asked: a random order never needs them all."""
        if self._entries_found is None:
            self._entries_found = [i for i, line in enumerate(self._lines) if line.strip()]
        return self._entries_found

    def __len__(self) -> int:
        return self._size

    def entry(self, served: int) -> int:
        """The 0-based line (EPD) or game (PGN) of the file the `served`-th opening is."""
        position = (self._first + served) % self._size
        if self._order is not None:
            return self._order[position]
        if self.epd:
            # Sequential EPD reading skips blank lines: the start lands on a raw line, then
            # positions follow one per non-blank line, wrapping around.
            first = bisect.bisect_left(self._entries, self._first) % len(self._entries)
            return self._entries[(first + served) % len(self._entries)]
        return position

    def opening(self, served: int) -> Opening:
        """The `served`-th opening (0-based) cutechess-cli deals from this suite."""
        index = self.entry(served)
        if self._pgn is not None:
            return self._pgn.opening(index)
        # A blank line's entry is read from the next line that holds a position.
        lines = self._lines
        found = index
        while found < len(lines) and not lines[found].strip():
            found += 1
        if found == len(lines):
            return Opening(fen=Board(chess960=self.chess960).fen(), chess960=self.chess960,
                           index=index, source=f"{self.path}:{index + 1}")
        number = found + 1  # 1-based, as an editor shows it
        try:
            board = Board(cutechess_epd_fen(lines[found]), chess960=self.chess960)
        except ValueError as exc:
            raise OpeningBookError(f"{self.path}:{number}: bad position: {exc}") from exc
        return Opening(fen=board.fen(), chess960=bool(board.chess960), index=index,
                       source=f"{self.path}:{number}")
