"""Hash keys: the Polyglot book key and the repetition key.

The repetition key is built like the Polyglot key from the same random numbers, but each cut
to its low 62 bits (`REP_*` names): compiled code holds an int below 2**62 as a machine word,
so the key's XORs on every push neither allocate nor go through Python's long arithmetic
(a full 64-bit number is a Python object there). 62 bits still make a collision between
positions of one game practically impossible. The Polyglot key itself (`zobrist_hash`, for
opening books) is computed from the full numbers when it is asked for.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

from typing import Final

from runner.rules._polyglot import POLYGLOT_RANDOM
from runner.rules.squares import BB_RANK_1, BB_RANK_8, Bitboard, Square, scan_forward

_REP_MASK: Final = (1 << 62) - 1

TURN_KEY: Final = POLYGLOT_RANDOM[780]
EP_KEYS: Final = POLYGLOT_RANDOM[772:780]
# PIECE_KEYS[color][piece_type][square]
PIECE_KEYS: Final[tuple[tuple[tuple[int, ...], ...], ...]] = tuple(
    (((),) + tuple(
        tuple(POLYGLOT_RANDOM[64 * (2 * (pt - 1) + int(color)) + sq] for sq in range(64))
        for pt in range(1, 7)
    ))
    for color in (False, True)
)

REP_TURN_KEY: Final = TURN_KEY & _REP_MASK
REP_EP_KEYS: Final[tuple[int, ...]] = tuple(key & _REP_MASK for key in EP_KEYS)
REP_PIECE_KEYS: Final[tuple[tuple[tuple[int, ...], ...], ...]] = tuple(
    tuple(tuple(key & _REP_MASK for key in by_square) for by_square in by_type)
    for by_type in PIECE_KEYS
)


def _splitmix64(x: int) -> int:
    """A fixed 64-bit mixer, used to derive castling keys for non-corner rook squares."""
    x = (x + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return x ^ (x >> 31)


REP_CASTLING_KEYS: Final[tuple[int, ...]] = tuple(key & _REP_MASK for key in POLYGLOT_RANDOM[768:772])

# One key per possible castling rook square: the Polyglot keys for the corners, derived keys for
# the other back-rank squares (Chess960), so repetition keys tell every set of rights apart.
_ROOK_RIGHT_KEYS: Final[dict[Square, int]] = {
    sq: _splitmix64(sq + 1000) & _REP_MASK for sq in list(range(8)) + list(range(56, 64))
}
_ROOK_RIGHT_KEYS.update({7: REP_CASTLING_KEYS[0], 0: REP_CASTLING_KEYS[1],
                         63: REP_CASTLING_KEYS[2], 56: REP_CASTLING_KEYS[3]})
_CASTLING_KEY_CACHE: Final[dict[Bitboard, int]] = {}


def castling_key(rights: Bitboard) -> int:
    """The repetition key's part for castling: XOR of the (62-bit) keys of every castling
    rook square in ``rights`` (cached)."""
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
