"""Syzygy index functions: how a placement of pieces becomes a position number.

A table numbers the placements of its material with the board's symmetries folded away: a
pawnless table keeps only placements whose first piece lies in the a1-d1-d4 triangle, a table
with pawns only those whose leading pawn stands on files a-d. The square orders those numbers
use are built here from their geometric rules (tests compare them with python-chess's
written-out tables), then the group sizes and multipliers of a stored piece order, and the
encoders `runner.tablebase.probe` calls for each probe. Pure functions over lists of squares.
"""

from __future__ import annotations

from math import comb

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


# ---------------------------------------------------------------------- groups and multipliers


def norm_pieces(pieces: list[int], first: int) -> list[int]:
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


def factors_piece(norm: list[int], order: int, enc: int, n_pieces: int) -> tuple[list[int], int]:
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


def factors_pawn(norm: list[int], order: int, order2: int, file: int,
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


# ---------------------------------------------------------------------- encoders


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
