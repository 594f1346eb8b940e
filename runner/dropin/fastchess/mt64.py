"""The 64-bit Mersenne Twister (C++'s ``std::mt19937_64``) and fastchess's opening shuffle.

fastchess (the match runner) orders a book at random by a Fisher-Yates pass whose draws are the
raw 64-bit outputs of ``std::mt19937_64`` seeded with ``-srand``: to play the same openings in
the same order from the same seed, both are reproduced here bit for bit. Python's own
``random`` is a 32-bit Mersenne Twister with another seeding, so it cannot stand in.
"""

from __future__ import annotations

__all__ = ["FastchessShuffle", "Mt19937_64"]

_N = 312
_M = 156
_MATRIX_A = 0xB5026F5AA96619E9
_UPPER = 0xFFFFFFFF80000000
_LOWER = 0x7FFFFFFF
_MASK = 0xFFFFFFFFFFFFFFFF
_INIT_MULT = 6364136223846793005


class Mt19937_64:
    """``std::mt19937_64``: the same 64-bit numbers as the C++ engine for the same seed."""

    def __init__(self, seed: int = 5489) -> None:
        self._state = [0] * _N
        self._out: list[int] = []
        self._index = _N
        self.seed(seed)

    def seed(self, seed: int) -> None:
        """Restart the sequence from `seed` (taken modulo 2**64, as the C++ engine does)."""
        state = self._state
        state[0] = seed & _MASK
        for i in range(1, _N):
            prev = state[i - 1]
            state[i] = (_INIT_MULT * (prev ^ (prev >> 62)) + i) & _MASK
        self._index = _N

    def _twist(self) -> None:
        """Regenerate the state and temper all of its words at once (outputs come in 312s)."""
        s = self._state
        upper, lower, matrix = _UPPER, _LOWER, _MATRIX_A
        for i in range(_N - _M):
            y = (s[i] & upper) | (s[i + 1] & lower)
            s[i] = s[i + _M] ^ (y >> 1) ^ (matrix if y & 1 else 0)
        for i in range(_N - _M, _N - 1):
            y = (s[i] & upper) | (s[i + 1] & lower)
            s[i] = s[i + _M - _N] ^ (y >> 1) ^ (matrix if y & 1 else 0)
        y = (s[_N - 1] & upper) | (s[0] & lower)
        s[_N - 1] = s[_M - 1] ^ (y >> 1) ^ (matrix if y & 1 else 0)
        out = []
        for y in s:
            y ^= (y >> 29) & 0x5555555555555555
            y ^= (y << 17) & 0x71D67FFFEDA60000
            y ^= (y << 37) & 0xFFF7EEE000000000
            out.append(y ^ (y >> 43))
        self._out = out
        self._index = 0

    def __call__(self) -> int:
        """The next 64-bit output."""
        if self._index >= _N:
            self._twist()
        value = self._out[self._index]
        self._index += 1
        return value

    def discard(self, count: int) -> None:
        """Skip `count` outputs."""
        for _ in range(count):
            self()


class FastchessShuffle:
    """The book order fastchess deals from a seed: its Fisher-Yates pass, computed lazily.

    fastchess swaps position ``i`` with ``i + rand() % (n - i)`` for ``i`` from 0 while
    ``i + 2 <= n`` (``rand`` one raw mt19937_64 output per step). Position ``i`` holds its final
    entry once step ``i`` is done, so only as many steps run as the highest position asked for
    needs, and only displaced positions are remembered: a two-million-line book dealt for a
    hundred rounds costs a hundred draws.
    """

    def __init__(self, size: int, seed: int) -> None:
        self.size = size
        self._rng = Mt19937_64(seed)
        self._done = 0
        self._moved: dict[int, int] = {}

    def __getitem__(self, position: int) -> int:
        """The book index at `position` (0-based) of the shuffled order."""
        if not 0 <= position < self.size:
            raise IndexError(position)
        size, moved, rng = self.size, self._moved, self._rng
        while self._done <= position and self._done + 2 <= size:
            i = self._done
            j = i + rng() % (size - i)
            moved[i], moved[j] = moved.get(j, j), moved.get(i, i)
            self._done += 1
        return moved.get(position, position)
