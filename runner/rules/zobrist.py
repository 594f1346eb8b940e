"""Hash keys: the Polyglot book key and the repetition key's castling part."""

from __future__ import annotations

from runner.rules._polyglot import POLYGLOT_RANDOM
from runner.rules.squares import BB_RANK_1, BB_RANK_8, Bitboard, Square, scan_forward

TURN_KEY = POLYGLOT_RANDOM[780]
EP_KEYS = POLYGLOT_RANDOM[772:780]
# PIECE_KEYS[color][piece_type][square]
PIECE_KEYS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    (((),) + tuple(
        tuple(POLYGLOT_RANDOM[64 * (2 * (pt - 1) + int(color)) + sq] for sq in range(64))
        for pt in range(1, 7)
    ))
    for color in (False, True)
)


def _splitmix64(x: int) -> int:
    """A fixed 64-bit mixer, used to derive castling keys for non-corner rook squares."""
    x = (x + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return x ^ (x >> 31)


# One key per possible castling rook square: the Polyglot keys for the corners, derived keys for
# the other back-rank squares (Chess960), so repetition keys tell every set of rights apart.
_ROOK_RIGHT_KEYS: dict[Square, int] = {
    sq: _splitmix64(sq + 1000) for sq in list(range(8)) + list(range(56, 64))
}
_ROOK_RIGHT_KEYS.update({7: POLYGLOT_RANDOM[768], 0: POLYGLOT_RANDOM[769],
                         63: POLYGLOT_RANDOM[770], 56: POLYGLOT_RANDOM[771]})
_CASTLING_KEY_CACHE: dict[Bitboard, int] = {}


def castling_key(rights: Bitboard) -> int:
    """XOR of the keys of every castling rook square in ``rights`` (cached)."""
    key = _CASTLING_KEY_CACHE.get(rights)
    if key is None:
        key = 0
        for sq in scan_forward(rights):
            key ^= _ROOK_RIGHT_KEYS[sq]
        _CASTLING_KEY_CACHE[rights] = key
    return key


def polyglot_castling_key(rights: Bitboard, white_king: Bitboard, black_king: Bitboard) -> int:
    """Castling part of the Polyglot key: one flag per side (h-side or a-side of the king)."""
    key = 0
    for index, backrank, king_bb in ((0, BB_RANK_1, white_king), (2, BB_RANK_8, black_king)):
        own = rights & backrank
        if not own:
            continue
        king_bb &= backrank
        king = king_bb.bit_length() - 1 if king_bb else -1
        if own >> (king + 1):
            key ^= POLYGLOT_RANDOM[768 + index]
        if own & ((1 << max(king, 0)) - 1):
            key ^= POLYGLOT_RANDOM[769 + index]
    return key
