"""Making and unmaking moves: push and pop, and what a move does (castles, captures, zeroes).

A push saves the state it changes as one plain tuple, updates the bitboards, the castling
rights and the repetition key's piece and castling hash incrementally, then counts the new
position's key; a pop restores the tuple. Push is one long function on purpose: it is the hot
path of every game, perft and replay, and a function call per step would cost more than the
step.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

from runner.rules.move import Move
from runner.rules.position import Position
from runner.rules.squares import (
    BB_RANK_1,
    BB_RANK_8,
    BB_SQUARES,
    BISHOP,
    KING,
    KNIGHT,
    PAWN,
    QUEEN,
    ROOK,
    Square,
)
from runner.rules.zobrist import REP_PIECE_KEYS, castling_key

__all__ = ["MoveMaker"]


class MoveMaker(Position):
    """A position that moves are played on and taken back."""

    __slots__ = ()

    def _castling_rook(self, move: Move) -> Square | None:
        """For a king move that castles, the square of the castling rook; otherwise ``None``."""
        f, t = move.from_square, move.to_square
        if not (self.kings & BB_SQUARES[f]):
            return None
        us = self.occupied_co[self.turn]
        if self.rooks & us & BB_SQUARES[t]:
            return t
        if not self.chess960 and (f == 4 or f == 60) and (t - f == 2 or f - t == 2):
            rook = (f & 56) + (7 if t > f else 0)
            if self.castling_rights & BB_SQUARES[rook]:
                return rook
        return None

    def push(self, move: Move) -> None:
        """Play a move (assumed legal: check with ``is_legal`` or use ``push_uci``/``push_san``)."""
        turn = self.turn
        occ_co = self.occupied_co
        self._stack.append((
            self.pawns, self.knights, self.bishops, self.rooks, self.queens, self.kings,
            occ_co[0], occ_co[1], self.castling_rights, self.ep_square, self.halfmove_clock,
            self.fullmove_number, self._phash, self._key,
        ))
        self.move_stack.append(move)
        if not turn:
            self.fullmove_number += 1
        ep_square = self.ep_square
        self.ep_square = None
        f = move.from_square
        t = move.to_square
        if f == t:  # null move
            self.halfmove_clock += 1
            self.turn = not turn
            self._after_push()
            return
        from_bb = 1 << f
        to_bb = 1 << t
        keys_us = REP_PIECE_KEYS[turn]
        keys_them = REP_PIECE_KEYS[not turn]
        phash = self._phash
        halfmove = self.halfmove_clock + 1
        rights = self.castling_rights

        if self.pawns & from_bb:
            piece = PAWN
        elif self.knights & from_bb:
            piece = KNIGHT
        elif self.bishops & from_bb:
            piece = BISHOP
        elif self.rooks & from_bb:
            piece = ROOK
        elif self.queens & from_bb:
            piece = QUEEN
        else:
            piece = KING

        if piece == KING:
            rook = self._castling_rook(move)
            if rook is not None:
                back = f & 56
                kingside = rook > f
                king_to = back + (6 if kingside else 2)
                rook_to = back + (5 if kingside else 3)
                rook_bb = 1 << rook
                self.kings = (self.kings & ~from_bb) | (1 << king_to)
                self.rooks = (self.rooks & ~rook_bb) | (1 << rook_to)
                occ_co[turn] = (occ_co[turn] & ~(from_bb | rook_bb)) | (1 << king_to) | (1 << rook_to)
                self.occupied = occ_co[0] | occ_co[1]
                rk = keys_us[ROOK]
                kk = keys_us[KING]
                new_rights = rights & ~(BB_RANK_1 if turn else BB_RANK_8)
                self._phash = (phash ^ kk[f] ^ kk[king_to] ^ rk[rook] ^ rk[rook_to]
                               ^ castling_key(rights) ^ castling_key(new_rights))
                self.castling_rights = new_rights
                self.halfmove_clock = halfmove
                self.turn = not turn
                self._after_push()
                return
            rights &= ~(BB_RANK_1 if turn else BB_RANK_8)

        them_bb = occ_co[not turn]
        if them_bb & to_bb:
            halfmove = 0
            if self.pawns & to_bb:
                self.pawns ^= to_bb
                phash ^= keys_them[PAWN][t]
            elif self.knights & to_bb:
                self.knights ^= to_bb
                phash ^= keys_them[KNIGHT][t]
            elif self.bishops & to_bb:
                self.bishops ^= to_bb
                phash ^= keys_them[BISHOP][t]
            elif self.rooks & to_bb:
                self.rooks ^= to_bb
                phash ^= keys_them[ROOK][t]
                rights &= ~to_bb
            elif self.queens & to_bb:
                self.queens ^= to_bb
                phash ^= keys_them[QUEEN][t]
            else:  # capturing a king only happens on illegal boards; keep the state consistent
                self.kings ^= to_bb
                phash ^= keys_them[KING][t]
            occ_co[not turn] = them_bb ^ to_bb

        move_bb = from_bb | to_bb
        if piece == PAWN:
            halfmove = 0
            promotion = move.promotion
            if promotion:
                self.pawns ^= from_bb
                phash ^= keys_us[PAWN][f] ^ keys_us[promotion][t]
                if promotion == QUEEN:
                    self.queens |= to_bb
                elif promotion == KNIGHT:
                    self.knights |= to_bb
                elif promotion == ROOK:
                    self.rooks |= to_bb
                elif promotion == BISHOP:
                    self.bishops |= to_bb
                else:
                    self.kings |= to_bb
            else:
                self.pawns ^= move_bb
                phash ^= keys_us[PAWN][f] ^ keys_us[PAWN][t]
                diff = t - f
                if diff == 16 or diff == -16:
                    self.ep_square = (f + t) >> 1
                elif t == ep_square and (diff & 7) != 0 and not (them_bb & to_bb):
                    captured = t - 8 if turn else t + 8
                    cap_bb = 1 << captured
                    self.pawns ^= cap_bb
                    occ_co[not turn] ^= cap_bb
                    phash ^= keys_them[PAWN][captured]
        elif piece == KNIGHT:
            self.knights ^= move_bb
            phash ^= keys_us[KNIGHT][f] ^ keys_us[KNIGHT][t]
        elif piece == BISHOP:
            self.bishops ^= move_bb
            phash ^= keys_us[BISHOP][f] ^ keys_us[BISHOP][t]
        elif piece == ROOK:
            self.rooks ^= move_bb
            phash ^= keys_us[ROOK][f] ^ keys_us[ROOK][t]
            rights &= ~from_bb
        elif piece == QUEEN:
            self.queens ^= move_bb
            phash ^= keys_us[QUEEN][f] ^ keys_us[QUEEN][t]
        else:
            self.kings ^= move_bb
            phash ^= keys_us[KING][f] ^ keys_us[KING][t]
        occ_co[turn] ^= move_bb
        self.occupied = occ_co[0] | occ_co[1]
        if rights != self.castling_rights:  # rare: the castling part of the key changes too
            phash ^= castling_key(self.castling_rights) ^ castling_key(rights)
            self.castling_rights = rights
        self._phash = phash
        self.halfmove_clock = halfmove
        self.turn = not turn
        self._after_push()

    def _after_push(self) -> None:
        """Compute the new position key (counted later, when a repetition question is asked)."""
        self._key = self._compute_key()

    def pop(self) -> Move:
        """Take back the last move and return it."""
        if self._counted > len(self._stack):  # the position taken back was counted: uncount it
            key = self._key
            counts = self._counts
            n = counts[key] - 1
            if n:
                counts[key] = n
                if n == 1:
                    self._repeated -= 1
            else:
                del counts[key]
            self._counted -= 1
        (self.pawns, self.knights, self.bishops, self.rooks, self.queens, self.kings,
         black, white, self.castling_rights, self.ep_square, self.halfmove_clock,
         self.fullmove_number, self._phash, self._key) = self._stack.pop()
        self.occupied_co[0] = black
        self.occupied_co[1] = white
        self.occupied = black | white
        self.turn = not self.turn
        return self.move_stack.pop()

    def peek(self) -> Move:
        """The last move played; raises ``IndexError`` when there is none."""
        return self.move_stack[-1]

    def forget_moves(self, keep: int = 0) -> None:
        """Drop all but the last `keep` moves from the stack: they can no longer be taken back.

        Repetition counts are kept. For readers of very long games that only ever take back
        the last move, so that memory does not grow with the undo records of the whole game.
        """
        drop = len(self.move_stack) - max(0, keep)
        if drop > 0:
            self._synced_counts()  # the dropped positions stay counted
            del self.move_stack[:drop]
            del self._stack[:drop]
            self._counted -= drop
    def is_castling(self, move: Move) -> bool:
        """Whether a move of the side to move is castling."""
        return self._castling_rook(move) is not None

    def is_kingside_castling(self, move: Move) -> bool:
        """Whether a move is castling towards the h-file."""
        rook = self._castling_rook(move)
        return rook is not None and rook > move.from_square

    def is_queenside_castling(self, move: Move) -> bool:
        """Whether a move is castling towards the a-file."""
        rook = self._castling_rook(move)
        return rook is not None and rook < move.from_square

    def is_en_passant(self, move: Move) -> bool:
        """Whether a move is an en passant capture."""
        return (
            self.ep_square == move.to_square
            and bool(self.pawns & BB_SQUARES[move.from_square])
            and (move.to_square - move.from_square) % 8 != 0
            and not (self.occupied & BB_SQUARES[move.to_square])
        )

    def is_capture(self, move: Move) -> bool:
        """Whether a move captures a piece (en passant included; castling is never a capture)."""
        to_bb = BB_SQUARES[move.to_square]
        if self.occupied_co[not self.turn] & to_bb:
            return True
        return self.is_en_passant(move)

    def is_zeroing(self, move: Move) -> bool:
        """Whether a move resets the fifty-move counter (a pawn move or a capture)."""
        return bool(self.pawns & BB_SQUARES[move.from_square]) or bool(
            self.occupied_co[not self.turn] & BB_SQUARES[move.to_square]
        )

    def gives_check(self, move: Move) -> bool:
        """Whether a legal move puts the opponent in check."""
        self.push(move)
        try:
            return self.is_check()
        finally:
            self.pop()

