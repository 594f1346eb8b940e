"""Static evaluation, two versions: v1 (material and simple placement) and v2 (tapered, richer).

Both read only the board's bitboard attributes (`pawns knights bishops rooks queens kings
occupied_co turn`) so that they stay cheap in the node loop, and both return centipawns from
the point of view of the side to move.  Piece-square tables are computed from a few formulas
(distance from the centre, advancement, home rank) rather than typed in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

PAWN_VALUE, KNIGHT_VALUE, BISHOP_VALUE, ROOK_VALUE, QUEEN_VALUE = 100, 320, 330, 500, 900
PIECE_VALUES = (0, PAWN_VALUE, KNIGHT_VALUE, BISHOP_VALUE, ROOK_VALUE, QUEEN_VALUE, 0)
# Game phase weight of each piece type (a full board sums to 24).
_PHASE_WEIGHT = (0, 0, 1, 1, 2, 4, 0)
_MAX_PHASE = 24


class BitboardPosition(Protocol):
    """The part of the rules core's Board that evaluation reads."""

    pawns: int
    knights: int
    bishops: int
    rooks: int
    queens: int
    kings: int
    occupied_co: list[int]
    turn: bool


Evaluator = Callable[[BitboardPosition], int]

_FILES = tuple(0x0101010101010101 << f for f in range(8))
_RANKS = tuple(0xFF << (8 * r) for r in range(8))


def _centre_distance(sq: int) -> float:
    """Chebyshev-like distance from the four central squares (0 in the centre, 3 in a corner)."""
    f, r = sq & 7, sq >> 3
    return max(abs(f - 3.5), abs(r - 3.5)) - 0.5


def _manhattan_centre(sq: int) -> float:
    """Manhattan distance from the centre (1 on the central squares, 7 in a corner)."""
    f, r = sq & 7, sq >> 3
    return abs(f - 3.5) + abs(r - 3.5)


def _pawn_mg(sq: int) -> int:
    """Midgame pawn: advance, especially in the centre; keep the king's wing pawns home."""
    f, r = sq & 7, sq >> 3
    if r in (0, 7):
        return 0
    central = f in (3, 4)
    bonus = (r - 1) * 4
    if central:
        bonus += (10, 0, 8, 22, 26, 20, 10, 0)[r] - (8 if r == 1 else 0)
    if f in (5, 6, 7) and r == 1:
        bonus += 6
    return bonus


def _pawn_eg(sq: int) -> int:
    """Endgame pawn: the closer to promotion, the better (quadratically)."""
    r = sq >> 3
    if r in (0, 7):
        return 0
    return (r - 1) * (r - 1) * 5


def _knight(sq: int) -> int:
    """Knights love the centre and hate the rim."""
    return int(25 - 10 * _manhattan_centre(sq) * 0.75 - (8 if (sq >> 3) == 0 else 0))


def _bishop(sq: int) -> int:
    """Bishops want long diagonals, mildly central."""
    return int(10 - 6 * _centre_distance(sq) - (6 if (sq >> 3) == 0 else 0))


def _rook_mg(sq: int) -> int:
    """Rooks: the seventh rank, and the central files a little."""
    f, r = sq & 7, sq >> 3
    return (18 if r == 6 else 0) + (4 if f in (3, 4) else 0) - (4 if f in (0, 7) else 0)


def _queen(sq: int) -> int:
    """Queens: slightly central."""
    return int(4 - 3 * _centre_distance(sq))


def _king_mg(sq: int) -> int:
    """Midgame king: stay home, preferably castled to a wing."""
    f, r = sq & 7, sq >> 3
    home = (20, 30, 10, 0, 0, 10, 30, 20)[f]
    return home - 25 * r if r <= 1 else -50 - 10 * r


def _king_eg(sq: int) -> int:
    """Endgame king: come to the centre."""
    return int(20 - 12 * _centre_distance(sq) - 2 * _manhattan_centre(sq))


def _mirror(sq: int) -> int:
    """The square seen from Black's side (a1 <-> a8)."""
    return sq ^ 56


def _tables(fns: tuple[Callable[[int], int], ...]) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """Per colour (index 0 black, 1 white) and piece type, a 64-entry table (Black mirrored)."""
    white = tuple(tuple(fn(sq) for sq in range(64)) for fn in fns)
    black = tuple(tuple(fn(_mirror(sq)) for sq in range(64)) for fn in fns)
    return (black, white)


def _zero(sq: int) -> int:
    """Placeholder table for the unused piece type 0."""
    return 0


# v1: one table per piece, no phase.
_V1 = _tables((_zero, _pawn_mg, _knight, _bishop, _rook_mg, _queen, _king_mg))
# v2: separate midgame and endgame tables.
_V2_MG = _tables((_zero, _pawn_mg, _knight, _bishop, _rook_mg, _queen, _king_mg))
_V2_EG = _tables((_zero, _pawn_eg, _knight, _bishop, lambda sq: 0, _queen, _king_eg))


def _squares(bb: int):
    """Yield the square numbers of the set bits of a bitboard."""
    while bb:
        lsb = bb & -bb
        yield lsb.bit_length() - 1
        bb ^= lsb


def evaluate_v1(board: BitboardPosition) -> int:
    """Material plus simple placement tables, from the side to move's point of view."""
    white_occ = board.occupied_co[1]
    score = 0
    bbs = (0, board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings)
    for pt in range(1, 7):
        bb = bbs[pt]
        if not bb:
            continue
        value = PIECE_VALUES[pt]
        wtab = _V1[1][pt]
        btab = _V1[0][pt]
        w = bb & white_occ
        b = bb & ~white_occ
        while w:
            lsb = w & -w
            score += value + wtab[lsb.bit_length() - 1]
            w ^= lsb
        while b:
            lsb = b & -b
            score -= value + btab[lsb.bit_length() - 1]
            b ^= lsb
    return score if board.turn else -score


# --- v2 extras -------------------------------------------------------------------------------

def _adjacent_files(f: int) -> int:
    """Mask of the files next to file f."""
    mask = 0
    if f > 0:
        mask |= _FILES[f - 1]
    if f < 7:
        mask |= _FILES[f + 1]
    return mask


def _front_span(color: int, sq: int) -> int:
    """Squares ahead of sq (towards promotion for `color`) on its file and the next ones."""
    f, r = sq & 7, sq >> 3
    files = _FILES[f] | _adjacent_files(f)
    ranks = 0
    rng = range(r + 1, 8) if color else range(0, r)
    for rr in rng:
        ranks |= _RANKS[rr]
    return files & ranks


_ADJ = tuple(_adjacent_files(f) for f in range(8))
_PASSED_MASK = tuple(tuple(_front_span(c, sq) for sq in range(64)) for c in (0, 1))
# Passed pawn bonus by relative rank (midgame, endgame).
_PASSED_MG = (0, 5, 8, 14, 24, 40, 60, 0)
_PASSED_EG = (0, 12, 18, 30, 50, 80, 120, 0)


def _shield(color: int, sq: int) -> int:
    """The two ranks in front of a king on its file and the neighbouring ones."""
    f, r = sq & 7, sq >> 3
    files = _FILES[f] | _ADJ[f]
    ranks = 0
    for rr in ((r + 1, r + 2) if color else (r - 1, r - 2)):
        if 0 <= rr < 8:
            ranks |= _RANKS[rr]
    return files & ranks


_SHIELD = tuple(tuple(_shield(c, sq) for sq in range(64)) for c in (0, 1))


def _knight_attacks(sq: int) -> int:
    """Squares a knight on sq attacks."""
    f, r = sq & 7, sq >> 3
    mask = 0
    for df, dr in ((1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)):
        ff, rr = f + df, r + dr
        if 0 <= ff < 8 and 0 <= rr < 8:
            mask |= 1 << (rr * 8 + ff)
    return mask


_KNIGHT_ATTACKS = tuple(_knight_attacks(sq) for sq in range(64))
_PAWN_CACHE: dict[tuple[int, int], tuple[int, int]] = {}
_PAWN_CACHE_LIMIT = 100_000


def _pawn_structure(white_pawns: int, black_pawns: int) -> tuple[int, int]:
    """(midgame, endgame) pawn-structure score for White: doubled, isolated, passed pawns."""
    key = (white_pawns, black_pawns)
    hit = _PAWN_CACHE.get(key)
    if hit is not None:
        return hit
    mg = eg = 0
    sides = ((1, white_pawns, black_pawns, 1), (0, black_pawns, white_pawns, -1))
    for color, own, other, sign in sides:
        for f in range(8):
            on_file = (own & _FILES[f]).bit_count()
            if not on_file:
                continue
            if on_file > 1:
                mg -= sign * 12 * (on_file - 1)
                eg -= sign * 20 * (on_file - 1)
            if not own & _ADJ[f]:
                mg -= sign * 12 * on_file
                eg -= sign * 14 * on_file
        for sq in _squares(own):
            if not other & _PASSED_MASK[color][sq]:
                rel = (sq >> 3) if color else 7 - (sq >> 3)
                mg += sign * _PASSED_MG[rel]
                eg += sign * _PASSED_EG[rel]
    if len(_PAWN_CACHE) > _PAWN_CACHE_LIMIT:
        _PAWN_CACHE.clear()
    _PAWN_CACHE[key] = (mg, eg)
    return mg, eg


def _pack(mg: int, eg: int) -> int:
    """One integer holding a midgame and an endgame score (endgame in the high bits)."""
    return (eg << 16) + mg


def _unpack(packed: int) -> tuple[int, int]:
    """Inverse of _pack for sums of packed scores (each half within +/-32767)."""
    mg = ((packed + 0x8000) & 0xFFFF) - 0x8000
    return mg, (packed - mg) >> 16


# Per colour and piece type: material plus placement, packed (midgame, endgame).
_V2_PACKED = tuple(
    tuple(
        tuple(_pack(PIECE_VALUES[pt] + _V2_MG[c][pt][sq], PIECE_VALUES[pt] + _V2_EG[c][pt][sq])
              for sq in range(64))
        for pt in range(7)
    )
    for c in (0, 1)
)
_BISHOP_PAIR = _pack(30, 45)
_ROOK_OPEN = _pack(20, 8)
_ROOK_HALF_OPEN = _pack(10, 0)


def evaluate_v2(board: BitboardPosition) -> int:
    """Tapered evaluation: phase-blended tables, pawn structure, bishop pair, rooks on open
    files, king shelter, knight mobility, and a drawish scale for pawnless small edges."""
    white_occ = board.occupied_co[1]
    black_occ = board.occupied_co[0]
    pawns, knights, bishops, rooks, queens = (
        board.pawns, board.knights, board.bishops, board.rooks, board.queens)
    packed = 0
    white_tables, black_tables = _V2_PACKED[1], _V2_PACKED[0]
    for pt, bb in ((1, pawns), (2, knights), (3, bishops), (4, rooks), (5, queens),
                   (6, board.kings)):
        if not bb:
            continue
        table = white_tables[pt]
        w = bb & white_occ
        while w:
            lsb = w & -w
            packed += table[lsb.bit_length() - 1]
            w ^= lsb
        table = black_tables[pt]
        b = bb & black_occ
        while b:
            lsb = b & -b
            packed -= table[lsb.bit_length() - 1]
            b ^= lsb
    wp, bp = pawns & white_occ, pawns & black_occ
    if (bishops & white_occ).bit_count() >= 2:
        packed += _BISHOP_PAIR
    if (bishops & black_occ).bit_count() >= 2:
        packed -= _BISHOP_PAIR
    # Rooks on open and half-open files.
    r = rooks
    while r:
        lsb = r & -r
        fmask = _FILES[(lsb.bit_length() - 1) & 7]
        r ^= lsb
        if lsb & white_occ:
            if not fmask & pawns:
                packed += _ROOK_OPEN
            elif not fmask & wp:
                packed += _ROOK_HALF_OPEN
        elif not fmask & pawns:
            packed -= _ROOK_OPEN
        elif not fmask & bp:
            packed -= _ROOK_HALF_OPEN
    mg, eg = _unpack(packed)
    pmg, peg = _pawn_structure(wp, bp)
    mg += pmg
    eg += peg
    # Knight mobility (squares not occupied by own pieces), a midgame term.
    n = knights
    while n:
        lsb = n & -n
        sq = lsb.bit_length() - 1
        n ^= lsb
        if lsb & white_occ:
            mg += 3 * ((_KNIGHT_ATTACKS[sq] & ~white_occ).bit_count() - 4)
        else:
            mg -= 3 * ((_KNIGHT_ATTACKS[sq] & ~black_occ).bit_count() - 4)
    # King shelter: own pawns just in front of the king.
    kings = board.kings
    wk = (kings & white_occ).bit_length() - 1
    bk = (kings & black_occ).bit_length() - 1
    if wk >= 0:
        mg += 12 * min(3, (_SHIELD[1][wk] & wp).bit_count())
    if bk >= 0:
        mg -= 12 * min(3, (_SHIELD[0][bk] & bp).bit_count())
    phase = (knights | bishops).bit_count() + 2 * rooks.bit_count() + 4 * queens.bit_count()
    if phase > _MAX_PHASE:
        phase = _MAX_PHASE
    score = (mg * phase + eg * (_MAX_PHASE - phase)) // _MAX_PHASE
    # Without pawns, a lead of less than a rook rarely wins: scale it down.
    if (score > 0 and not wp) or (score < 0 and not bp):
        lead = _material(board, white_occ) - _material(board, black_occ)
        if (score > 0 and lead < ROOK_VALUE) or (score < 0 and -lead < ROOK_VALUE):
            score = int(score / 8)
    score += 10 if board.turn else -10  # tempo
    return score if board.turn else -score


def _material(board: BitboardPosition, side: int) -> int:
    """Material of the pieces in `side` (an occupancy bitboard)."""
    return (PAWN_VALUE * (board.pawns & side).bit_count()
            + KNIGHT_VALUE * (board.knights & side).bit_count()
            + BISHOP_VALUE * (board.bishops & side).bit_count()
            + ROOK_VALUE * (board.rooks & side).bit_count()
            + QUEEN_VALUE * (board.queens & side).bit_count())


EVALUATORS: dict[str, Evaluator] = {"v1": evaluate_v1, "v2": evaluate_v2}


def evaluator_for(version: str) -> Evaluator:
    """The evaluation function of an engine version (`v1` or `v2`)."""
    try:
        return EVALUATORS[version]
    except KeyError as err:
        raise ValueError(f"unknown version {version!r} (known: {', '.join(EVALUATORS)})") from err
