"""Squares, colors, piece types and the precomputed bitboard attack tables.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

Color = bool
Square = int
PieceType = int
Bitboard = int

WHITE: Final[Color] = True
BLACK: Final[Color] = False
COLOR_NAMES = ("black", "white")

PAWN: Final[PieceType] = 1
KNIGHT: Final[PieceType] = 2
BISHOP: Final[PieceType] = 3
ROOK: Final[PieceType] = 4
QUEEN: Final[PieceType] = 5
KING: Final[PieceType] = 6
PIECE_TYPES = (PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING)
PIECE_SYMBOLS: Final = (None, "p", "n", "b", "r", "q", "k")
PIECE_NAMES = (None, "pawn", "knight", "bishop", "rook", "queen", "king")

FILE_NAMES = "abcdefgh"
RANK_NAMES = "12345678"
SQUARES = range(64)
SQUARE_NAMES: Final = tuple(f + r for r in RANK_NAMES for f in FILE_NAMES)

A1, B1, C1, D1, E1, F1, G1, H1 = range(8)
A8, B8, C8, D8, E8, F8, G8, H8 = range(56, 64)

BB_EMPTY: Final[Bitboard] = 0
BB_ALL: Final[Bitboard] = (1 << 64) - 1
BB_SQUARES: Final[tuple[Bitboard, ...]] = tuple(1 << s for s in SQUARES)
BB_FILES: Final[tuple[Bitboard, ...]] = tuple(0x0101010101010101 << f for f in range(8))
BB_RANKS: Final[tuple[Bitboard, ...]] = tuple(0xFF << (8 * r) for r in range(8))
BB_FILE_A: Final[Bitboard] = BB_FILES[0]
BB_FILE_H: Final[Bitboard] = BB_FILES[7]
BB_RANK_1: Final[Bitboard] = BB_RANKS[0]
BB_RANK_2: Final[Bitboard] = BB_RANKS[1]
BB_RANK_3: Final[Bitboard] = BB_RANKS[2]
BB_RANK_4: Final[Bitboard] = BB_RANKS[3]
BB_RANK_5: Final[Bitboard] = BB_RANKS[4]
BB_RANK_6: Final[Bitboard] = BB_RANKS[5]
BB_RANK_7: Final[Bitboard] = BB_RANKS[6]
BB_RANK_8: Final[Bitboard] = BB_RANKS[7]
BB_BACKRANKS: Final[Bitboard] = BB_RANK_1 | BB_RANK_8
BB_LIGHT_SQUARES: Final[Bitboard] = 0x55AA55AA55AA55AA
BB_DARK_SQUARES: Final[Bitboard] = 0xAA55AA55AA55AA55
BB_CORNERS: Final[Bitboard] = BB_SQUARES[A1] | BB_SQUARES[H1] | BB_SQUARES[A8] | BB_SQUARES[H8]


def square(file_index: int, rank_index: int) -> Square:
    """The square on a file (0 = a) and rank (0 = 1)."""
    return rank_index * 8 + file_index


def square_file(sq: Square) -> int:
    """File index (0 = a) of a square."""
    return sq & 7


def square_rank(sq: Square) -> int:
    """Rank index (0 = first rank) of a square."""
    return sq >> 3


def square_name(sq: Square) -> str:
    """Algebraic name of a square, e.g. ``e4``."""
    return SQUARE_NAMES[sq]


def parse_square(name: str) -> Square:
    """Square from its algebraic name; raises ``ValueError`` for anything else."""
    try:
        return SQUARE_NAMES.index(name)
    except ValueError:
        raise ValueError(f"not a square name: {name!r}") from None


def square_mirror(sq: Square) -> Square:
    """The square mirrored vertically (a1 <-> a8)."""
    return sq ^ 0x38


def scan_forward(bb: Bitboard) -> Iterator[Square]:
    """Yield the squares of a bitboard from a1 upwards."""
    while bb:
        low = bb & -bb
        yield low.bit_length() - 1
        bb ^= low


def popcount(bb: Bitboard) -> int:
    """Number of squares in a bitboard."""
    return bb.bit_count()


def msb(bb: Bitboard) -> Square:
    """Highest square of a non-empty bitboard."""
    return bb.bit_length() - 1


def lsb(bb: Bitboard) -> Square:
    """Lowest square of a non-empty bitboard."""
    return (bb & -bb).bit_length() - 1


def _step_attacks(sq: Square, deltas: tuple[tuple[int, int], ...]) -> Bitboard:
    """Squares reached by single steps (knight or king jumps) from a square."""
    f, r = sq & 7, sq >> 3
    bb = 0
    for df, dr in deltas:
        nf, nr = f + df, r + dr
        if 0 <= nf < 8 and 0 <= nr < 8:
            bb |= 1 << (nr * 8 + nf)
    return bb


_KNIGHT_DELTAS = ((1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2))
_KING_DELTAS = ((1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1))

BB_KNIGHT_ATTACKS: Final[tuple[Bitboard, ...]] = tuple(_step_attacks(s, _KNIGHT_DELTAS) for s in SQUARES)
BB_KING_ATTACKS: Final[tuple[Bitboard, ...]] = tuple(_step_attacks(s, _KING_DELTAS) for s in SQUARES)
# BB_PAWN_ATTACKS[color][sq]: squares a pawn of that color on sq attacks.
BB_PAWN_ATTACKS: Final[tuple[tuple[Bitboard, ...], tuple[Bitboard, ...]]] = (
    tuple(_step_attacks(s, ((-1, -1), (1, -1))) for s in SQUARES),
    tuple(_step_attacks(s, ((-1, 1), (1, 1))) for s in SQUARES),
)


def _ray_attacks(sq: Square, occupied: Bitboard, directions: tuple[tuple[int, int], ...]) -> Bitboard:
    """Slider attacks from a square, stopping at the first occupied square in each direction."""
    bb = 0
    f0, r0 = sq & 7, sq >> 3
    for df, dr in directions:
        f, r = f0 + df, r0 + dr
        while 0 <= f < 8 and 0 <= r < 8:
            bit = 1 << (r * 8 + f)
            bb |= bit
            if occupied & bit:
                break
            f += df
            r += dr
    return bb


def _edge_trimmed_mask(sq: Square, directions: tuple[tuple[int, int], ...]) -> Bitboard:
    """The squares whose occupancy changes a slider's attacks (each ray without its last square)."""
    bb = 0
    f0, r0 = sq & 7, sq >> 3
    for df, dr in directions:
        f, r = f0 + df, r0 + dr
        ray = []
        while 0 <= f < 8 and 0 <= r < 8:
            ray.append(1 << (r * 8 + f))
            f += df
            r += dr
        for bit in ray[:-1]:
            bb |= bit
    return bb


def _attack_table(
    directions: tuple[tuple[int, int], ...],
) -> tuple[tuple[Bitboard, ...], tuple[dict[Bitboard, Bitboard], ...]]:
    """Per-square relevance masks and maps from masked occupancy to attacks."""
    masks = []
    tables = []
    for sq in SQUARES:
        mask = _edge_trimmed_mask(sq, directions)
        table: dict[Bitboard, Bitboard] = {}
        subset = 0
        while True:  # enumerate every subset of the mask (carry-rippler)
            table[subset] = _ray_attacks(sq, subset, directions)
            subset = (subset - mask) & mask
            if subset == 0:
                break
        masks.append(mask)
        tables.append(table)
    return tuple(masks), tuple(tables)


_DIAG_DIRS = ((1, 1), (1, -1), (-1, 1), (-1, -1))
_FILE_DIRS = ((0, 1), (0, -1))
_RANK_DIRS = ((1, 0), (-1, 0))

# One name per table, each `Final`: compiled code then reads them from C statics instead of
# looking them up in the module's dict on every use.
_DIAG_TABLE = _attack_table(_DIAG_DIRS)
_FILE_TABLE = _attack_table(_FILE_DIRS)
_RANK_TABLE = _attack_table(_RANK_DIRS)
BB_DIAG_MASKS: Final[tuple[Bitboard, ...]] = _DIAG_TABLE[0]
BB_DIAG_ATTACKS: Final[tuple[dict[Bitboard, Bitboard], ...]] = _DIAG_TABLE[1]
BB_FILE_MASKS: Final[tuple[Bitboard, ...]] = _FILE_TABLE[0]
BB_FILE_ATTACKS: Final[tuple[dict[Bitboard, Bitboard], ...]] = _FILE_TABLE[1]
BB_RANK_MASKS: Final[tuple[Bitboard, ...]] = _RANK_TABLE[0]
BB_RANK_ATTACKS: Final[tuple[dict[Bitboard, Bitboard], ...]] = _RANK_TABLE[1]

# Attacks on an empty board, used to find pinning and checking sliders quickly.
BB_BISHOP_PSEUDO: Final[tuple[Bitboard, ...]] = tuple(BB_DIAG_ATTACKS[s][0] for s in SQUARES)
BB_ROOK_PSEUDO: Final[tuple[Bitboard, ...]] = tuple(
    BB_FILE_ATTACKS[s][0] | BB_RANK_ATTACKS[s][0] for s in SQUARES
)


def bishop_attacks(sq: Square, occupied: Bitboard) -> Bitboard:
    """Squares a bishop on ``sq`` attacks given the occupied squares."""
    return BB_DIAG_ATTACKS[sq][BB_DIAG_MASKS[sq] & occupied]


def rook_attacks(sq: Square, occupied: Bitboard) -> Bitboard:
    """Squares a rook on ``sq`` attacks given the occupied squares."""
    return BB_RANK_ATTACKS[sq][BB_RANK_MASKS[sq] & occupied] | BB_FILE_ATTACKS[sq][
        BB_FILE_MASKS[sq] & occupied
    ]


def _lines_and_betweens() -> tuple[tuple[tuple[Bitboard, ...], ...], tuple[tuple[Bitboard, ...], ...]]:
    """LINE[a][b]: the whole line through a and b (0 if not aligned); BETWEEN[a][b]: strictly between."""
    lines = [[0] * 64 for _ in SQUARES]
    betweens = [[0] * 64 for _ in SQUARES]
    for a in SQUARES:
        f0, r0 = a & 7, a >> 3
        for df, dr in _DIAG_DIRS + _FILE_DIRS + _RANK_DIRS:
            full = _ray_attacks(a, 0, ((df, dr), (-df, -dr))) | BB_SQUARES[a]
            between = 0
            f, r = f0 + df, r0 + dr
            while 0 <= f < 8 and 0 <= r < 8:
                b = r * 8 + f
                lines[a][b] = full
                betweens[a][b] = between
                between |= BB_SQUARES[b]
                f += df
                r += dr
    return tuple(tuple(row) for row in lines), tuple(tuple(row) for row in betweens)


_LINES_AND_BETWEENS = _lines_and_betweens()
BB_LINE: Final[tuple[tuple[Bitboard, ...], ...]] = _LINES_AND_BETWEENS[0]
BB_BETWEEN: Final[tuple[tuple[Bitboard, ...], ...]] = _LINES_AND_BETWEENS[1]
