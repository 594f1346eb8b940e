"""Legal move generation: king safety, pins and checks resolved with bitboards, no trial moves.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from runner.rules.move import _MOVES, Move
from runner.rules.squares import (
    BB_BETWEEN,
    BB_BISHOP_PSEUDO,
    BB_DIAG_ATTACKS,
    BB_DIAG_MASKS,
    BB_FILE_A,
    BB_FILE_ATTACKS,
    BB_FILE_H,
    BB_FILE_MASKS,
    BB_KING_ATTACKS,
    BB_KNIGHT_ATTACKS,
    BB_LINE,
    BB_PAWN_ATTACKS,
    BB_RANK_1,
    BB_RANK_3,
    BB_RANK_6,
    BB_RANK_8,
    BB_RANK_ATTACKS,
    BB_RANK_MASKS,
    BB_ROOK_PSEUDO,
    BB_SQUARES,
    BISHOP,
    KNIGHT,
    QUEEN,
    ROOK,
    Bitboard,
    Square,
)

if TYPE_CHECKING:
    from runner.rules.position import Position

_PROMOTIONS: Final[dict[int, tuple[Move, Move, Move, Move]]] = {}
for _f in range(64):
    for _t in range(64):
        if (_f >> 3, _t >> 3) in ((6, 7), (1, 0)) and abs((_f & 7) - (_t & 7)) <= 1:
            _PROMOTIONS[_f * 64 + _t] = (
                Move(_f, _t, QUEEN), Move(_f, _t, ROOK), Move(_f, _t, BISHOP), Move(_f, _t, KNIGHT)
            )
_PROMOTION_RANKS: Final = BB_RANK_1 | BB_RANK_8
_NOT_FILE_A: Final = ~BB_FILE_A & ((1 << 64) - 1)
_NOT_FILE_H: Final = ~BB_FILE_H & ((1 << 64) - 1)
_ALL: Final = (1 << 64) - 1
_ANY: Final = -1
"""Every square, as a mask for ``&`` only: -1 is a short int where compiled code keeps the
64-bit mask `_ALL` as a Python object, and ANDing it allocates a new one each time."""



def generate_legal(board: Position, *, first: bool = False, from_mask: Bitboard = _ANY,
                   to_mask: Bitboard = _ANY) -> list[Move]:
    """Generate every legal move of the side to move.

    With `first`, stop as soon as some legal move is found: the list then holds at least one
    move if there is any, but usually not all of them (a mate or stalemate test). With
    `from_mask`/`to_mask`, only the legal moves from and to those squares (castling counts
    by its move's squares): checking one move costs a fraction of the whole list.
    """
    turn = board.turn
    occ_co = board.occupied_co
    us = occ_co[turn]
    them = occ_co[not turn]
    occ = us | them
    pawns, knights, bishops, rooks, queens, kings = (
        board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings)
    king = (kings & us).bit_length() - 1
    moves: list[Move] = []
    append = moves.append
    mv = _MOVES
    diag_att, diag_mask = BB_DIAG_ATTACKS, BB_DIAG_MASKS
    rank_att, rank_mask, file_att, file_mask = (
        BB_RANK_ATTACKS, BB_RANK_MASKS, BB_FILE_ATTACKS, BB_FILE_MASKS)
    them_diag = (bishops | queens) & them
    them_orth = (rooks | queens) & them
    them_knights = knights & them
    them_pawns = pawns & them
    them_kings = kings & them
    pawn_att = BB_PAWN_ATTACKS[turn]

    checkers = them & (
        (BB_KNIGHT_ATTACKS[king] & knights)
        | (pawn_att[king] & pawns)
        | (diag_att[king][diag_mask[king] & occ] & (bishops | queens))
        | ((rank_att[king][rank_mask[king] & occ] | file_att[king][file_mask[king] & occ])
           & (rooks | queens))
    )

    # King moves: the destination must not be attacked once the king has left its square.
    occ_nk = occ ^ (1 << king)
    base = king * 64
    targets = BB_KING_ATTACKS[king] & ~us & to_mask if (1 << king) & from_mask else 0
    while targets:
        low = targets & -targets
        t = low.bit_length() - 1
        targets ^= low
        if not (
            (BB_KNIGHT_ATTACKS[t] & them_knights)
            or (pawn_att[t] & them_pawns)
            or (BB_KING_ATTACKS[t] & them_kings)
            or (diag_att[t][diag_mask[t] & occ_nk] & them_diag)
            or ((rank_att[t][rank_mask[t] & occ_nk] | file_att[t][file_mask[t] & occ_nk])
                & them_orth)
        ):
            append(mv[base + t])
    if first and moves:
        return moves

    if checkers:
        if checkers & (checkers - 1):
            return moves  # double check: only the king may move
        checker = checkers.bit_length() - 1
        target = BB_BETWEEN[king][checker] | checkers
    else:
        target = ~us  # negative, but only ever ANDed with non-negative boards
    target &= to_mask

    # Pinned pieces may only move along the line through their king.
    pinned = 0
    snipers = ((BB_ROOK_PSEUDO[king] & them_orth) | (BB_BISHOP_PSEUDO[king] & them_diag))
    while snipers:
        low = snipers & -snipers
        snipers ^= low
        blockers = BB_BETWEEN[king][low.bit_length() - 1] & occ
        if blockers and not (blockers & (blockers - 1)) and blockers & us:
            pinned |= blockers
    line = BB_LINE[king]

    # Knights (a pinned knight never moves).
    froms = knights & us & ~pinned & from_mask
    while froms:
        low = froms & -froms
        froms ^= low
        f = low.bit_length() - 1
        base = f * 64
        targets = BB_KNIGHT_ATTACKS[f] & target
        while targets:
            tl = targets & -targets
            targets ^= tl
            append(mv[base + tl.bit_length() - 1])
    if first and moves:
        return moves

    # Sliders.
    froms = (bishops | queens) & us & from_mask
    while froms:
        low = froms & -froms
        froms ^= low
        f = low.bit_length() - 1
        targets = diag_att[f][diag_mask[f] & occ] & target
        if low & pinned:
            targets &= line[f]
        base = f * 64
        while targets:
            tl = targets & -targets
            targets ^= tl
            append(mv[base + tl.bit_length() - 1])
    froms = (rooks | queens) & us & from_mask
    while froms:
        low = froms & -froms
        froms ^= low
        f = low.bit_length() - 1
        targets = (rank_att[f][rank_mask[f] & occ] | file_att[f][file_mask[f] & occ]) & target
        if low & pinned:
            targets &= line[f]
        base = f * 64
        while targets:
            tl = targets & -targets
            targets ^= tl
            append(mv[base + tl.bit_length() - 1])
    if first and moves:
        return moves

    # Pawns: unpinned ones in bulk with shifts, pinned ones one by one.
    our_pawns = pawns & us & from_mask
    free = our_pawns & ~pinned
    empty = ~occ  # as `target`: only ANDed with non-negative boards
    if turn:
        single = (free << 8) & empty
        double = ((single & BB_RANK_3) << 8) & empty & target
        single &= target
        cap_left = ((free << 7) & _NOT_FILE_H) & them & target
        cap_right = ((free << 9) & _NOT_FILE_A) & them & target
        deltas = (8, 16, 7, 9)
    else:
        single = (free >> 8) & empty
        double = ((single & BB_RANK_6) >> 8) & empty & target
        single &= target
        cap_left = ((free >> 9) & _NOT_FILE_H) & them & target
        cap_right = ((free >> 7) & _NOT_FILE_A) & them & target
        deltas = (-8, -16, -9, -7)
    for bb, delta in ((single, deltas[0]), (double, deltas[1]), (cap_left, deltas[2]),
                      (cap_right, deltas[3])):
        while bb:
            tl = bb & -bb
            bb ^= tl
            t = tl.bit_length() - 1
            f = t - delta
            if tl & _PROMOTION_RANKS:
                moves.extend(_PROMOTIONS[f * 64 + t])
            else:
                append(mv[f * 64 + t])
    pinned_pawns = our_pawns & pinned
    while pinned_pawns:
        low = pinned_pawns & -pinned_pawns
        pinned_pawns ^= low
        f = low.bit_length() - 1
        allowed = line[f] & target
        step = 8 if turn else -8
        t = f + step
        cand = 0
        if 0 <= t < 64 and not (occ & BB_SQUARES[t]):
            cand |= BB_SQUARES[t]
            t2 = t + step
            if (f >> 3) == (1 if turn else 6) and not (occ & BB_SQUARES[t2]):
                cand |= BB_SQUARES[t2]
        cand |= pawn_att[f] & them
        cand &= allowed
        while cand:
            tl = cand & -cand
            cand ^= tl
            t = tl.bit_length() - 1
            if tl & _PROMOTION_RANKS:
                moves.extend(_PROMOTIONS[f * 64 + t])
            else:
                append(mv[f * 64 + t])
    if first and moves:
        return moves

    # En passant: test the resulting occupancy directly (covers every discovered check).
    ep = board.ep_square
    if ep is not None and BB_SQUARES[ep] & to_mask:
        capturers = BB_PAWN_ATTACKS[not turn][ep] & our_pawns
        if capturers:
            captured = ep - 8 if turn else ep + 8
            cap_bb = BB_SQUARES[captured]
            while capturers:
                low = capturers & -capturers
                capturers ^= low
                occ2 = (occ ^ low ^ cap_bb) | BB_SQUARES[ep]
                if not (
                    (BB_KNIGHT_ATTACKS[king] & them_knights)
                    or (pawn_att[king] & them_pawns & ~cap_bb)
                    or (diag_att[king][diag_mask[king] & occ2] & them_diag)
                    or ((rank_att[king][rank_mask[king] & occ2]
                         | file_att[king][file_mask[king] & occ2]) & them_orth)
                ):
                    append(mv[(low.bit_length() - 1) * 64 + ep])

    # Castling.
    if not checkers and (1 << king) & from_mask:
        rights = board.castling_rights & us
        while rights:
            low = rights & -rights
            rights ^= low
            move = _castling_move(board, king, low.bit_length() - 1, occ)
            if move is not None and BB_SQUARES[move.to_square] & to_mask:
                append(move)
    return moves

def _castling_move(board: Position, king: Square, rook: Square, occ: Bitboard) -> Move | None:
    """The castling move with the rook on ``rook`` if it is legal now (king not in check)."""
    back = king & 56
    kingside = rook > king
    king_to = back + (6 if kingside else 2)
    rook_to = back + (5 if kingside else 3)
    king_bb = BB_SQUARES[king]
    rook_bb = BB_SQUARES[rook]
    king_path = BB_BETWEEN[king][king_to] | BB_SQUARES[king_to]
    must_be_empty = (king_path | BB_BETWEEN[rook][rook_to] | BB_SQUARES[rook_to]) & ~(
        king_bb | rook_bb)
    if occ & must_be_empty:
        return None
    occ_wo = occ ^ king_bb ^ rook_bb
    them = not board.turn
    path = king_path & ~king_bb
    while path:
        low = path & -path
        path ^= low
        if board._attackers(them, low.bit_length() - 1, occ_wo):
            return None
    if board.chess960:
        return _MOVES[king * 64 + rook]
    return _MOVES[king * 64 + king_to]


def move_legality(board: Position, move: Move) -> bool | None:
    """Whether one non-null move is legal, tested on that move alone (no move list).

    The move must reach its square as its piece moves (pseudo-legal) and leave its own king
    unattacked once played. ``None`` where this short test does not apply and the caller must
    generate: castling or any king move off its neighbour squares, en passant, a side without
    exactly one king.
    """
    turn = board.turn
    occ_co = board.occupied_co
    us = occ_co[turn]
    them = occ_co[not turn]
    f = move.from_square
    t = move.to_square
    from_bb = 1 << f
    to_bb = 1 << t
    our_kings = board.kings & us
    if not our_kings or our_kings & (our_kings - 1):
        return None
    if not us & from_bb:
        return False
    occ = us | them
    promotion = move.promotion
    if our_kings & from_bb:
        if us & to_bb or not BB_KING_ATTACKS[f] & to_bb:
            return None  # castling in one of its spellings, or nonsense: the full rules decide
        if promotion:
            return False
        return not board._attackers(not turn, t, occ ^ from_bb)
    if us & to_bb:
        return False
    pawns = board.pawns
    if pawns & from_bb:
        if BB_PAWN_ATTACKS[turn][f] & to_bb:
            if not them & to_bb:
                return None if t == board.ep_square else False
        elif t == f + (8 if turn else -8):
            if occ & to_bb:
                return False
        elif t == f + (16 if turn else -16) and (f >> 3) == (1 if turn else 6):
            if occ & (to_bb | BB_SQUARES[(f + t) >> 1]):
                return False
        else:
            return False
        if to_bb & _PROMOTION_RANKS:
            if promotion not in (KNIGHT, BISHOP, ROOK, QUEEN):
                return False
        elif promotion:
            return False
    else:
        if promotion:
            return False
        if board.knights & from_bb:
            reach = BB_KNIGHT_ATTACKS[f]
        else:
            reach = 0
            if (board.bishops | board.queens) & from_bb:
                reach = BB_DIAG_ATTACKS[f][BB_DIAG_MASKS[f] & occ]
            if (board.rooks | board.queens) & from_bb:
                reach |= (BB_RANK_ATTACKS[f][BB_RANK_MASKS[f] & occ]
                          | BB_FILE_ATTACKS[f][BB_FILE_MASKS[f] & occ])
        if not reach & to_bb:
            return False
    # King safety: the opponent's pieces, less the one captured, against the new occupancy.
    king = our_kings.bit_length() - 1
    occ2 = (occ ^ from_bb) | to_bb
    queens = board.queens
    return not (them & ~to_bb & (
        (BB_KNIGHT_ATTACKS[king] & board.knights)
        | (BB_PAWN_ATTACKS[turn][king] & pawns)
        | (BB_DIAG_ATTACKS[king][BB_DIAG_MASKS[king] & occ2] & (board.bishops | queens))
        | ((BB_RANK_ATTACKS[king][BB_RANK_MASKS[king] & occ2]
            | BB_FILE_ATTACKS[king][BB_FILE_MASKS[king] & occ2]) & (board.rooks | queens))
    ))


def has_legal_move(board: Position) -> bool:
    """Whether the side to move has a legal move (a mate or stalemate test).

    Out of check, a knight or a pawn step that uncovers no line to its king is a legal move
    found in a few lookups; otherwise the generator decides, stopping at its first move.
    """
    return check_and_any_legal(board)[1]


def check_and_any_legal(board: Position) -> tuple[bool, bool]:
    """Whether the side to move is in check, and whether it has a legal move: both from one
    look at the lines through its king (`has_legal_move` answers the second alone)."""
    turn = board.turn
    occ_co = board.occupied_co
    us = occ_co[turn]
    them = occ_co[not turn]
    our_kings = board.kings & us
    if not our_kings or our_kings & (our_kings - 1):  # no king or several: set-up boards
        return board.is_check(), bool(generate_legal(board, first=True))
    king = our_kings.bit_length() - 1
    occ = us | them
    queens = board.queens
    them_diag = (board.bishops | queens) & them
    them_orth = (board.rooks | queens) & them
    diag = BB_DIAG_ATTACKS[king]
    dmask = BB_DIAG_MASKS[king]
    rank, rmask = BB_RANK_ATTACKS[king], BB_RANK_MASKS[king]
    file, fmask = BB_FILE_ATTACKS[king], BB_FILE_MASKS[king]
    if them & (
        (BB_KNIGHT_ATTACKS[king] & board.knights)
        | (BB_KING_ATTACKS[king] & board.kings)
        | (BB_PAWN_ATTACKS[turn][king] & board.pawns)
        | (diag[dmask & occ] & them_diag)
        | ((rank[rmask & occ] | file[fmask & occ]) & them_orth)
    ):
        return True, bool(generate_legal(board, first=True))
    # Not in check: an unpinned piece may make any of its moves.
    movers = board.knights & us
    while movers:
        low = movers & -movers
        movers ^= low
        if BB_KNIGHT_ATTACKS[low.bit_length() - 1] & ~us:
            occ2 = occ ^ low
            if not ((diag[dmask & occ2] & them_diag)
                    or ((rank[rmask & occ2] | file[fmask & occ2]) & them_orth)):
                return False, True
    pawns = board.pawns & us
    empty = ~occ & _ALL
    movers = pawns & ((empty >> 8) if turn else (empty << 8))
    while movers:
        low = movers & -movers
        movers ^= low
        occ2 = occ ^ low
        if not ((diag[dmask & occ2] & them_diag)
                or ((rank[rmask & occ2] | file[fmask & occ2]) & them_orth)):
            return False, True
    return False, bool(generate_legal(board, first=True))
