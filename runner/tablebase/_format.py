"""The Syzygy file format: index functions, the compressed-data decoder and one table file.

A Syzygy table stores one value per position of a material balance (for example KRvKP), the
positions numbered by an index that folds away the board's symmetries: a pawnless table
keeps only positions whose first piece lies in the a1-d1-d4 triangle, a table with pawns
only those whose leading pawn stands on files a-d (one sub-table per file). The values are
compressed with a canonical prefix code whose symbols expand recursively into runs of
values ("pairs" compression); the file holds, for each sub-table, an index of blocks, the
block sizes and the blocks themselves.

This module decodes one file (`WdlFile`, `DtzFile`); `runner.tablebase.probe` does the
chess around it (captures, en passant, the search over moves a DTZ table does not store).
Everything a probe needs is computed when a file is first opened, so a probe allocates
little and reads only the bytes of one block.
"""

from __future__ import annotations

import mmap
import os
import struct
import threading
from math import comb

WDL_MAGIC = b"\x71\xe8\x23\x5d"
DTZ_MAGIC = b"\xd7\x66\x0c\xa5"

PIECE_LETTERS = "PNBRQK"
"""Letter of each piece type, indexed by type - 1 (the rules core's PAWN = 1 ... KING = 6)."""


class TablebaseError(Exception):
    """A table file is corrupt or not a Syzygy file (a missing table is never an error)."""


# ---------------------------------------------------------------------- index constants
#
# The index functions number squares in a few fixed orders. Each order is built here from
# its geometric rule rather than written out, so that the rule can be read.


def _fold(sq: int) -> tuple[int, int]:
    """File and rank of a square mirrored into the a1-d4 quarter."""
    f, r = sq & 7, sq >> 3
    return min(f, 7 - f), min(r, 7 - r)


# The a1-d1-d4 triangle: 10 squares, numbered off-diagonal ones first (b1 c1 d1 c2 d2 d3),
# then the diagonal (a1 b2 c3 d4). Every square maps to the number of its image.
_TRIANGLE_ORDER = ["b1", "c1", "d1", "c2", "d2", "d3", "a1", "b2", "c3", "d4"]


def _name_to_square(name: str) -> int:
    """Square index of an algebraic name such as ``"c2"``."""
    return (ord(name[1]) - ord("1")) * 8 + ord(name[0]) - ord("a")


def _triangle() -> list[int]:
    """TRIANGLE[sq]: the triangle number of the square's image under the 8 symmetries."""
    number = {_name_to_square(n): i for i, n in enumerate(_TRIANGLE_ORDER)}
    out = []
    for sq in range(64):
        f, r = _fold(sq)
        if r > f:
            f, r = r, f
        out.append(number[r * 8 + f])
    return out


TRIANGLE = _triangle()
OFFDIAG = [(sq >> 3) - (sq & 7) for sq in range(64)]
"""Rank minus file: zero on the a1-h8 diagonal, positive above it."""
FLIPDIAG = [((sq >> 3) | (sq << 3)) & 63 for sq in range(64)]
"""The square mirrored in the a1-h8 diagonal."""


def _lower() -> list[int]:
    """LOWER[sq]: squares below the a1-h8 diagonal numbered 0..27 in square order (those
    above take their mirror's number), the diagonal numbered 28..35."""
    out = [0] * 64
    n = 0
    for sq in range(64):
        if OFFDIAG[sq] < 0:
            out[sq] = out[FLIPDIAG[sq]] = n
            n += 1
    for i in range(8):
        out[i * 9] = 28 + i
    return out


LOWER = _lower()


def _diag() -> list[int]:
    """DIAG[sq]: a1..h8 numbered 0..7, h1..a8 numbered 8..15, every other square 0."""
    out = [0] * 64
    for i in range(8):
        out[i * 9] = i
        out[(i + 1) * 7] = 8 + i
    return out


DIAG = _diag()

# Two kings, the first folded into the triangle: 462 legal placements. Placements with the
# first king on the diagonal keep the second on or below it; both on the diagonal come last.
_KING_STEPS = [(df, dr) for df in (-1, 0, 1) for dr in (-1, 0, 1)]


def _kk_index() -> list[list[int]]:
    """KK_IDX[triangle number of king 1][square of king 2] -> 0..461, or -1 when unused."""
    out = [[-1] * 64 for _ in range(10)]
    last: list[tuple[int, int]] = []
    code = 0
    for t, name in enumerate(_TRIANGLE_ORDER):
        s1 = _name_to_square(name)
        f1, r1 = s1 & 7, s1 >> 3
        near = {(f1 + df) + 8 * (r1 + dr) for df, dr in _KING_STEPS
                if 0 <= f1 + df < 8 and 0 <= r1 + dr < 8}
        for s2 in range(64):
            if s2 in near:
                continue
            if OFFDIAG[s1] == 0 and OFFDIAG[s2] > 0:
                continue
            if OFFDIAG[s1] == 0 and OFFDIAG[s2] == 0:
                last.append((t, s2))
            else:
                out[t][s2] = code
                code += 1
    for t, s2 in last:
        out[t][s2] = code
        code += 1
    return out


KK_IDX = _kk_index()


def _flap() -> list[int]:
    """FLAP[sq]: a pawn square of ranks 2-7 folded to files a-d, numbered file by file."""
    out = [0] * 64
    for sq in range(8, 56):
        f, r = _fold(sq)[0], sq >> 3
        out[sq] = f * 6 + r - 1
    return out


FLAP = _flap()
INVFLAP = [(j % 6 + 1) * 8 + j // 6 for j in range(24)]
"""The a-d file pawn square of each FLAP number."""


def _ptwist() -> list[int]:
    """PTWIST[sq]: the order of the other leading pawns: central files and advanced ranks
    first, the d-e pair split by side (queen side one higher)."""
    out = [0] * 64
    for sq in range(8, 56):
        f, r = sq & 7, sq >> 3
        out[sq] = (3 - min(f, 7 - f)) * 12 + (6 - r) * 2 + (1 if f <= 3 else 0)
    return out


PTWIST = _ptwist()
FILE_TO_FILE = [0, 1, 2, 3, 3, 2, 1, 0]


def _pawn_tables() -> tuple[list[list[int]], list[list[int]]]:
    """PAWNIDX[k][flap] (start of a leading-pawn square's range for k + 1 leading pawns) and
    PFACTOR[k][file] (the range's size per file)."""
    idx = [[0] * 24 for _ in range(6)]
    factor = [[0] * 4 for _ in range(6)]
    for k in range(6):
        for f in range(4):
            s = 0
            for j in range(f * 6, f * 6 + 6):
                idx[k][j] = s
                s += 1 if k == 0 else comb(PTWIST[INVFLAP[j]], k)
            factor[k][f] = s
    return idx, factor


PAWNIDX, PFACTOR = _pawn_tables()

# BINOM[k][n] = C(n, k) for the piece groups (n may come out negative for an impossible
# placement: C is then 0, as the reference code's factorial arithmetic gives).
BINOM = [[comb(n, k) if n >= 0 else 0 for n in range(64)] for k in range(8)]

# Values per placement of the first pieces: 3 unique pieces (one in the triangle), 2 kings.
_PIVOT_FACTOR = {0: 31332, 2: 462}

WDL_TO_MAP = (1, 3, 0, 2, 0)
"""DTZ value map slot of each WDL (indexed by wdl + 2)."""
PA_FLAGS = (8, 0, 0, 0, 4)
"""DTZ flag bit saying a loss (-2) or win (2) is stored in plies, not halved."""


# ---------------------------------------------------------------------- one file


_U16 = struct.Struct("<H").unpack_from
_U32 = struct.Struct("<I").unpack_from
_U64_BE = struct.Struct(">Q").unpack_from
_U32_BE = struct.Struct(">I").unpack_from


class Pairs:
    """The decoder of one compressed sub-table (one side to move, one pawn file)."""

    __slots__ = ("constant", "value", "idxbits", "blocksize", "indextable", "sizetable",
                 "data", "base", "lowsym", "symlen", "left", "right", "leaf", "min_len",
                 "fast_len", "fast_sym", "skip_bits", "skip_run", "run")

    def __init__(self) -> None:
        self.constant = False
        self.value = 0
        self.idxbits = 0
        self.blocksize = 0
        self.indextable = 0
        self.sizetable = 0
        self.data = 0
        self.min_len = 0
        self.base: list[int] = []
        self.lowsym: list[int] = []
        self.symlen: list[int] = []
        self.left: list[int] = []
        self.right: list[int] = []
        self.leaf: list[int] = []
        self.run: list[int] = []
        self.fast_len: list[int] = []
        self.fast_sym: list[int] = []
        self.skip_bits: list[int] = []
        self.skip_run: list[int] = []


def _read_pairs(mm: mmap.mmap, ptr: int, tb_size: int, wdl: bool) -> tuple[Pairs, int, tuple[int, int, int]]:
    """Read a sub-table's decoder header at `ptr`: the decoder, where the next header
    starts, and the byte sizes of its index table, size table and data."""
    d = Pairs()
    flags = mm[ptr]
    if flags & 0x80:
        # The whole sub-table holds one value (a DTZ one stores 0 here: every entry is 0).
        d.constant = True
        d.value = mm[ptr + 1] if wdl else 0
        return d, ptr + 2, (0, 0, 0)
    d.blocksize = mm[ptr + 1]
    d.idxbits = mm[ptr + 2]
    real_blocks = _U32(mm, ptr + 4)[0]
    blocks = real_blocks + mm[ptr + 3]
    max_len = mm[ptr + 8]
    min_len = mm[ptr + 9]
    h = max_len - min_len + 1
    nsyms = _U16(mm, ptr + 10 + 2 * h)[0]
    d.min_len = min_len
    # lowsym[l]: the first symbol of code length l; base[l]: the smallest left-aligned
    # 64-bit code of length l (canonical prefix code, longest codes numerically smallest).
    low = [_U16(mm, ptr + 10 + 2 * i)[0] for i in range(h)]
    base = [0] * h
    for i in range(h - 2, -1, -1):
        base[i] = (base[i + 1] + low[i] - low[i + 1]) // 2
    if any(b < 0 for b in base):
        raise TablebaseError("bad code lengths in a pairs header")
    d.base = [0] * min_len + [b << (64 - (min_len + i)) for i, b in enumerate(base)]
    d.lowsym = [0] * min_len + low
    # Each symbol is a leaf (one value) or a pair of two earlier symbols; symlen is the
    # number of values it expands to, minus one.
    sympat = ptr + 12 + 2 * h
    # Three bytes per symbol: two 12-bit halves, the left (or, for a leaf, the value: its low
    # byte in a WDL table) and the right (0xFFF for a leaf).
    pattern = mm[sympat:sympat + 3 * nsyms]
    if len(pattern) != 3 * nsyms:
        raise TablebaseError("symbol table runs past the end of the file")
    b0, b1, b2 = pattern[0::3], pattern[1::3], pattern[2::3]
    left = [x | ((y & 0x0F) << 8) for x, y in zip(b0, b1, strict=True)]
    right = [(z << 4) | (y >> 4) for y, z in zip(b1, b2, strict=True)]
    leaf = list(b0) if wdl else left
    # Pairs are made of earlier symbols, so one pass in order usually does; a file that
    # refers forward is still read right, by the slower walk.
    symlen = [-1] * nsyms
    for s in range(nsyms):
        a, b = left[s], right[s]
        if b == 0xFFF:
            symlen[s] = 0
        elif a < s and b < s:
            symlen[s] = symlen[a] + symlen[b] + 1
        else:
            _symbol_length(s, symlen, left, right)
    d.symlen, d.left, d.right, d.leaf = symlen, left, right, leaf
    d.run = [n + 1 for n in symlen]
    _fast_table(d, max_len)
    nxt = sympat + 3 * nsyms + (nsyms & 1)
    indices = (tb_size + (1 << d.idxbits) - 1) >> d.idxbits
    return d, nxt, (6 * indices, 2 * blocks, (1 << d.blocksize) * real_blocks)


_FAST_BITS = 12
_NONE = 1 << 62
"""Skip run of a prefix holding no whole code: more than any index, so never skipped."""
_UNKNOWN = 1 << 63
"""Skip run of a prefix not yet worked out (on its first use, by `_fill_skip`)."""


def _fast_table(d: Pairs, max_len: int) -> None:
    """Decode tables for the top `_FAST_BITS` bits of the code window.

    For the first code in those bits: its length and symbol when it is that short, else the
    length its search starts from. And, filled in when a probe first meets the prefix, for
    all the whole codes in those bits together: how many bits they take and how many values
    they expand to, so that a probe skips them in one step when the value it wants lies
    further on (most codes are a few bits long).
    """
    width = _FAST_BITS
    shift = 64 - width
    top = 1 << width
    base, lowsym = d.base, d.lowsym
    lengths = [max_len] * top
    symbols = [-1] * top
    # Codes of length n are the windows in [base[n], base[n - 1]): the prefixes whose
    # largest window falls there start their search at n, and know their code when n fits.
    upper = 1 << 64
    for n in range(d.min_len, max_len + 1):
        lower = base[n]
        first, end = lower >> shift, upper >> shift
        if first < end:
            lengths[first:end] = [n] * (end - first)
            if n <= width:
                symbols[first:end] = [lowsym[n] + ((t - first) >> (width - n)) for t in range(first, end)]
        upper = min(upper, lower)
    d.fast_len, d.fast_sym = lengths, symbols
    d.skip_bits = [0] * top
    d.skip_run = [_UNKNOWN] * top


def _fill_skip(d: Pairs, top: int) -> int:
    """Work out the skip entry of one prefix: the whole codes in its bits, one after another
    (the bits after the prefix read as zero: a code that fits is still found right, one that
    does not ends the run). Returns its run."""
    width = _FAST_BITS
    used = total = 0
    while True:
        t = (top << used) & ((1 << width) - 1)
        n = d.fast_len[t]
        sym = d.fast_sym[t]
        if sym < 0 or used + n > width:
            break
        total += d.run[sym]
        used += n
    d.skip_bits[top] = used
    run = d.skip_run[top] = total if used else _NONE
    return run


def _symbol_length(s: int, symlen: list[int], left: list[int], right: list[int]) -> int:
    """Fill symlen[s] (and what it depends on) without deep recursion."""
    stack = [s]
    while stack:
        t = stack[-1]
        if symlen[t] >= 0:
            stack.pop()
            continue
        if right[t] == 0xFFF:
            symlen[t] = 0
            stack.pop()
            continue
        a, b = left[t], right[t]
        if a >= len(symlen) or b >= len(symlen) or len(stack) > len(symlen):
            raise TablebaseError("bad symbol tree in a pairs header")
        if symlen[a] < 0:
            stack.append(a)
        elif symlen[b] < 0:
            stack.append(b)
        else:
            symlen[t] = symlen[a] + symlen[b] + 1
            stack.pop()
    return symlen[s]


def decompress(mm: mmap.mmap, d: Pairs, idx: int) -> int:
    """The value stored at index `idx` of a sub-table."""
    if d.constant:
        return d.value
    idxbits = d.idxbits
    main = idx >> idxbits
    lit = (idx & ((1 << idxbits) - 1)) - (1 << (idxbits - 1))
    entry = d.indextable + 6 * main
    block = _U32(mm, entry)[0]
    lit += _U16(mm, entry + 4)[0]
    sizetable = d.sizetable
    # The index entry names a block and an offset from the middle of the index range; walk
    # to the block that holds the value.
    if lit < 0:
        while lit < 0:
            block -= 1
            lit += _U16(mm, sizetable + 2 * block)[0] + 1
    else:
        size = _U16(mm, sizetable + 2 * block)[0]
        while lit > size:
            lit -= size + 1
            block += 1
            size = _U16(mm, sizetable + 2 * block)[0]
    ptr = d.data + (block << d.blocksize)
    code = _U64_BE(mm, ptr)[0]
    ptr += 8
    bits = 0
    base, lowsym, runs = d.base, d.lowsym, d.run
    fast_len, fast_sym, skip_bits, skip_run = d.fast_len, d.fast_sym, d.skip_bits, d.skip_run
    while True:
        top = code >> 52
        run = skip_run[top]
        if run == _UNKNOWN:
            run = _fill_skip(d, top)
        if lit >= run:
            # The value lies past every code in the top bits: skip them all at once.
            lit -= run
            n = skip_bits[top]
        else:
            n = fast_len[top]
            sym = fast_sym[top]
            if sym < 0:
                while code < base[n]:
                    n += 1
                sym = lowsym[n] + ((code - base[n]) >> (64 - n))
            run = runs[sym]
            if lit < run:
                break
            lit -= run
        code = (code << n) & 0xFFFFFFFFFFFFFFFF
        bits += n
        if bits >= 32:
            bits -= 32
            code |= _U32_BE(mm, ptr)[0] << bits
            ptr += 4
    left, right, symlen = d.left, d.right, d.symlen
    while symlen[sym]:
        a = left[sym]
        run = symlen[a] + 1
        if lit < run:
            sym = a
        else:
            lit -= run
            sym = right[sym]
    return d.leaf[sym]


class SideTable:
    """How to index one sub-table: piece order, group sizes and factors."""

    __slots__ = ("pieces", "groups", "norm", "factor", "size")

    def __init__(self, pieces: list[int], norm: list[int], factor: list[int], size: int) -> None:
        self.pieces = pieces
        self.norm = norm
        self.factor = factor
        self.size = size
        # (piece type, color bit) of each run of equal pieces, in table order: how to fill the
        # square list from a board's bitboards.
        groups: list[tuple[int, int]] = []
        i = 0
        while i < len(pieces):
            groups.append((pieces[i] & 7, pieces[i] >> 3))
            j = i
            while j < len(pieces) and pieces[j] == pieces[i]:
                j += 1
            i = j
        self.groups = groups


def _encoding(white: str, black: str) -> int:
    """Pawnless encoding: 0 when three or more pieces are unique (one goes in the triangle
    and two more fix the rest), 2 when only the kings are."""
    unique = sum(1 for part in (white, black) for c in PIECE_LETTERS if part.count(c) == 1)
    return 0 if unique >= 3 else 2


def _norm_pieces(pieces: list[int], first: int) -> list[int]:
    """Group sizes: norm[0] = `first` (the pivot block), then each run of equal pieces."""
    n = len(pieces)
    norm = [0] * n
    norm[0] = first
    i = first
    while i < n:
        j = i
        while j < n and pieces[j] == pieces[i]:
            norm[i] += 1
            j += 1
        i += norm[i]
    return norm


def _factors_piece(norm: list[int], order: int, enc: int, n_pieces: int) -> tuple[list[int], int]:
    """Index multipliers of each group of a pawnless table, in the stored group `order`."""
    factor = [0] * n_pieces
    free = 64 - norm[0]
    f = 1
    i = norm[0]
    k = 0
    while i < n_pieces or k == order:
        if k == order:
            factor[0] = f
            f *= _PIVOT_FACTOR[enc]
        else:
            factor[i] = f
            f *= comb(free, norm[i])
            free -= norm[i]
            i += norm[i]
        k += 1
    return factor, f


def _factors_pawn(norm: list[int], order: int, order2: int, file: int,
                  n_pieces: int) -> tuple[list[int], int]:
    """Index multipliers of each group of a table with pawns, for one leading-pawn file."""
    factor = [0] * n_pieces
    i = norm[0]
    if order2 < 0x0F:
        i += norm[i]
    free = 64 - i
    f = 1
    k = 0
    while i < n_pieces or k in (order, order2):
        if k == order:
            factor[0] = f
            f *= PFACTOR[norm[0] - 1][file]
        elif k == order2:
            factor[norm[0]] = f
            f *= comb(48 - norm[0], norm[norm[0]])
        else:
            factor[i] = f
            f *= comb(free, norm[i])
            free -= norm[i]
            i += norm[i]
        k += 1
    return factor, f


def material_key(white: str, black: str) -> int:
    """An integer naming a material balance: 4 bits per piece count, white's below black's."""
    key = 0
    for c in white:
        key += 1 << (4 * PIECE_LETTERS.index(c))
    for c in black:
        key += 1 << (24 + 4 * PIECE_LETTERS.index(c))
    return key


def mirror_key(key: int) -> int:
    """The material key with the colours swapped."""
    return (key >> 24) | ((key & 0xFFFFFF) << 24)


def _pieces_key(pieces: list[int]) -> int:
    """The material key of a stored piece list (colour bit 8 = black)."""
    key = 0
    for p in pieces:
        key += 1 << ((24 if p & 8 else 0) + 4 * ((p & 7) - 1))
    return key


class TableFile:
    """One `.rtbw` or `.rtbz` file: opened and parsed on first use, memory-mapped read-only."""

    magic = b""
    is_wdl = True

    def __init__(self, path: str, name: str) -> None:
        self.path = path
        self.name = name
        white, black = name.split("v")
        self.num = len(name) - 1
        self.has_pawns = "P" in name
        self.key = material_key(white, black)
        self.mirrored_key = mirror_key(self.key)
        self.symmetric = self.key == self.mirrored_key
        # Leading pawns: the side with fewer (but some) pawns, the second part on a tie.
        lead, other = black.count("P"), white.count("P")
        if other > 0 and (lead == 0 or other < lead):
            lead, other = other, lead
        self.pawns = (lead, other)
        self.enc = 0 if self.has_pawns else _encoding(white, black)
        self.mm: mmap.mmap | None = None
        self._lock = threading.Lock()
        self.ready = False

    def _open(self) -> mmap.mmap:
        """Map the file and check its size and magic number."""
        fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        try:
            size = os.fstat(fd).st_size
            if size < 64 or size % 64 != 16:
                raise TablebaseError(f"{self.path}: size {size} is not that of a Syzygy table (64n + 16)")
            mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        finally:
            os.close(fd)
        if hasattr(mm, "madvise") and hasattr(mmap, "MADV_RANDOM"):
            mm.madvise(mmap.MADV_RANDOM)  # probes touch single blocks: no read-ahead
        if mm[:4] != self.magic:
            mm.close()
            raise TablebaseError(f"{self.path}: bad magic number (not a Syzygy {self.kind} table)")
        return mm

    @property
    def kind(self) -> str:
        """"WDL" or "DTZ"."""
        return "WDL" if self.is_wdl else "DTZ"

    def ensure(self) -> None:
        """Open and parse the file once (thread-safe)."""
        if self.ready:
            return
        with self._lock:
            if self.ready:
                return
            mm = self._open()
            try:
                self._parse(mm)
            except (IndexError, ValueError, struct.error, KeyError, ZeroDivisionError) as exc:
                mm.close()
                raise TablebaseError(f"{self.path}: corrupt {self.kind} table ({exc})") from exc
            except TablebaseError as exc:
                mm.close()
                raise TablebaseError(f"{self.path}: {exc}") from exc
            self.mm = mm
            self.ready = True

    def _parse(self, mm: mmap.mmap) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Unmap the file; the next probe maps it again."""
        with self._lock:
            if self.mm is not None:
                self.mm.close()
                self.mm = None
            self.ready = False

    def _side_piece(self, mm: mmap.mmap, ptr: int, high: bool) -> SideTable:
        """The pawnless ordering of one side stored at `ptr` (low or high nibbles)."""
        shift = 4 if high else 0
        order = (mm[ptr] >> shift) & 0x0F
        pieces = [(mm[ptr + 1 + i] >> shift) & 0x0F for i in range(self.num)]
        norm = _norm_pieces(pieces, 3 if self.enc == 0 else 2)
        factor, size = _factors_piece(norm, order, self.enc, self.num)
        return SideTable(pieces, norm, factor, size)

    def _side_pawn(self, mm: mmap.mmap, ptr: int, high: bool, file: int) -> SideTable:
        """The ordering of one side and leading-pawn file of a table with pawns."""
        shift = 4 if high else 0
        lead, other = self.pawns
        skip = 1 + (other > 0)
        order = (mm[ptr] >> shift) & 0x0F
        order2 = (mm[ptr + 1] >> shift) & 0x0F if other else 0x0F
        pieces = [(mm[ptr + skip + i] >> shift) & 0x0F for i in range(self.num)]
        norm = [0] * self.num
        norm[0] = lead
        if other:
            norm[lead] = other
        i = lead + other
        while i < self.num:
            j = i
            while j < self.num and pieces[j] == pieces[i]:
                norm[i] += 1
                j += 1
            i += norm[i]
        factor, size = _factors_pawn(norm, order, order2, file, self.num)
        return SideTable(pieces, norm, factor, size)


class WdlFile(TableFile):
    """A WDL table: both sides to move (unless symmetric), values 0..4 = wdl + 2."""

    magic = WDL_MAGIC
    is_wdl = True

    def _parse(self, mm: mmap.mmap) -> None:
        split = mm[4] & 0x01
        sides = 2 if split else 1
        ptr = 5
        # sides_by_file[f][bside] and pairs_by_file[f][bside]; pawnless tables have one "file".
        self.side: list[list[SideTable]] = []
        self.pairs: list[list[Pairs]] = []
        if not self.has_pawns:
            self.side.append([self._side_piece(mm, ptr, False), self._side_piece(mm, ptr, True)])
            ptr += self.num + 1
            files = 1
            # The stored piece order says which colour is the table's "white".
            self.key = _pieces_key(self.side[0][0].pieces)
            self.mirrored_key = mirror_key(self.key)
        else:
            skip = 1 + (self.pawns[1] > 0)
            for f in range(4):
                self.side.append([self._side_pawn(mm, ptr, False, f), self._side_pawn(mm, ptr, True, f)])
                ptr += self.num + skip
            files = 4
        ptr += ptr & 1
        sizes: list[list[tuple[int, int, int]]] = []
        for f in range(files):
            row_pairs, row_sizes = [], []
            for s in range(sides):
                d, ptr, size = _read_pairs(mm, ptr, self.side[f][s].size, True)
                row_pairs.append(d)
                row_sizes.append(size)
            self.pairs.append(row_pairs)
            sizes.append(row_sizes)
        for f in range(files):
            for s in range(sides):
                self.pairs[f][s].indextable = ptr
                ptr += sizes[f][s][0]
        for f in range(files):
            for s in range(sides):
                self.pairs[f][s].sizetable = ptr
                ptr += sizes[f][s][1]
        for f in range(files):
            for s in range(sides):
                ptr = (ptr + 0x3F) & ~0x3F
                self.pairs[f][s].data = ptr
                ptr += sizes[f][s][2]
        if ptr > len(mm):
            raise TablebaseError(f"data runs past the end of the file ({ptr} > {len(mm)})")
        if sides == 1:
            for row in self.pairs:
                row.append(row[0])


class DtzFile(TableFile):
    """A DTZ table: one side to move per file (flag bit 0), values possibly remapped."""

    magic = DTZ_MAGIC
    is_wdl = False

    def _parse(self, mm: mmap.mmap) -> None:
        ptr = 5
        self.side: list[SideTable] = []
        self.pairs: list[Pairs] = []
        self.flags: list[int] = []
        self.map_idx: list[list[int]] = []
        if not self.has_pawns:
            self.side.append(self._side_piece(mm, ptr, False))
            ptr += self.num + 1
            files = 1
            self.key = _pieces_key(self.side[0].pieces)
            self.mirrored_key = mirror_key(self.key)
        else:
            skip = 1 + (self.pawns[1] > 0)
            for f in range(4):
                self.side.append(self._side_pawn(mm, ptr, False, f))
                ptr += self.num + skip
            files = 4
        ptr += ptr & 1
        sizes = []
        for f in range(files):
            self.flags.append(mm[ptr])
            d, ptr, size = _read_pairs(mm, ptr, self.side[f].size, False)
            self.pairs.append(d)
            sizes.append(size)
        # Value maps: for each file, four runs (one per WDL class) translating decoded
        # symbols into DTZ values, bytes or 16-bit words.
        self.map = ptr
        for f in range(files):
            idx = [0, 0, 0, 0]
            flags = self.flags[f]
            if flags & 2:
                if not flags & 16:
                    for i in range(4):
                        idx[i] = ptr + 1 - self.map
                        ptr += 1 + mm[ptr]
                else:
                    if self.has_pawns:
                        ptr += ptr & 1
                    for i in range(4):
                        idx[i] = (ptr + 2 - self.map) // 2
                        ptr += 2 + 2 * _U16(mm, ptr)[0]
            self.map_idx.append(idx)
        ptr += ptr & 1
        for f in range(files):
            self.pairs[f].indextable = ptr
            ptr += sizes[f][0]
        for f in range(files):
            self.pairs[f].sizetable = ptr
            ptr += sizes[f][1]
        for f in range(files):
            ptr = (ptr + 0x3F) & ~0x3F
            self.pairs[f].data = ptr
            ptr += sizes[f][2]
        if ptr > len(mm):
            raise TablebaseError(f"data runs past the end of the file ({ptr} > {len(mm)})")


# ---------------------------------------------------------------------- index functions


def encode_piece(enc: int, norm: list[int], pos: list[int], factor: list[int], n: int) -> int:
    """Index of a pawnless placement (`pos` in table order; modified in place)."""
    # Fold the first piece into a1-d1-d4: mirror files, then ranks, then the diagonal.
    if pos[0] & 0x04:
        for i in range(n):
            pos[i] ^= 0x07
    if pos[0] & 0x20:
        for i in range(n):
            pos[i] ^= 0x38
    limit = 3 if enc == 0 else 2
    for i in range(n):
        od = OFFDIAG[pos[i]]
        if od:
            if i < limit and od > 0:
                for j in range(n):
                    pos[j] = FLIPDIAG[pos[j]]
            break
    p0, p1 = pos[0], pos[1]
    if enc == 0:
        p2 = pos[2]
        i = int(p1 > p0)
        j = int(p2 > p0) + int(p2 > p1)
        if OFFDIAG[p0]:
            idx = TRIANGLE[p0] * 63 * 62 + (p1 - i) * 62 + (p2 - j)
        elif OFFDIAG[p1]:
            idx = 6 * 63 * 62 + DIAG[p0] * 28 * 62 + LOWER[p1] * 62 + p2 - j
        elif OFFDIAG[p2]:
            idx = 6 * 63 * 62 + 4 * 28 * 62 + DIAG[p0] * 7 * 28 + (DIAG[p1] - i) * 28 + LOWER[p2]
        else:
            idx = (6 * 63 * 62 + 4 * 28 * 62 + 4 * 7 * 28 + DIAG[p0] * 7 * 6 + (DIAG[p1] - i) * 6
                   + (DIAG[p2] - j))
        start = 3
    else:
        idx = KK_IDX[TRIANGLE[p0]][p1]
        start = 2
    idx *= factor[0]
    return idx + _encode_groups(norm, pos, factor, start, n, 0)


def _encode_groups(norm: list[int], pos: list[int], factor: list[int], i: int, n: int, shift: int) -> int:
    """Index contribution of the groups of like pieces from position `i` on: each group's
    squares, sorted, counted as a combination among the squares the earlier pieces left."""
    idx = 0
    while i < n:
        t = norm[i]
        if t == 1:
            p = pos[i]
            below = 0
            for m in range(i):
                if p > pos[m]:
                    below += 1
            idx += (p - below - shift) * factor[i]
        else:
            group = sorted(pos[i:i + t])
            pos[i:i + t] = group
            s = 0
            for m, p in enumerate(group):
                below = 0
                for q in range(i):
                    if p > pos[q]:
                        below += 1
                s += BINOM[m + 1][p - below - shift]
            idx += s * factor[i]
        i += t
        shift = 0
    return idx


def pawn_file(pos: list[int], lead: int) -> int:
    """Move the leading pawn that comes first in FLAP order to pos[0]; its folded file."""
    for i in range(1, lead):
        if FLAP[pos[0]] > FLAP[pos[i]]:
            pos[0], pos[i] = pos[i], pos[0]
    return FILE_TO_FILE[pos[0] & 7]


def encode_pawn(lead: int, other: int, norm: list[int], pos: list[int], factor: list[int], n: int) -> int:
    """Index of a placement with pawns (`pos` in table order, pos[0] the first leading pawn)."""
    if pos[0] & 0x04:
        for i in range(n):
            pos[i] ^= 0x07
    if lead > 2:
        # The other leading pawns in PTWIST order, highest first.
        pos[1:lead] = sorted(pos[1:lead], key=PTWIST.__getitem__, reverse=True)
    t = lead - 1
    idx = PAWNIDX[t][FLAP[pos[0]]]
    for i in range(t, 0, -1):
        idx += BINOM[t - i + 1][PTWIST[pos[i]]]
    idx *= factor[0]
    i = lead
    if other:
        # The other side's pawns: squares among the 48 pawn squares left (hence the -8).
        idx += _encode_groups(norm, pos, factor, i, i + other, 8)
        i += other
    return idx + _encode_groups(norm, pos, factor, i, n, 0)
