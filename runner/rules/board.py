"""The chess board: position state, legal move generation, push/pop and the game-end rules.

Bitboards (Python ints, bit 0 = a1) hold the position; pushes keep an undo stack of plain
tuples, an incrementally updated Polyglot piece hash, and a map from position key to number of
occurrences so that repetition questions are answered without replaying the game.
"""

from __future__ import annotations

from collections.abc import Iterator

from runner.rules._polyglot import POLYGLOT_RANDOM
from runner.rules.fen import (
    STARTING_FEN,
    InvalidFenError,
    castling_field,
    castling_rights_from_field,
    parse_fen,
    placement_field,
)
from runner.rules.move import _MOVES, IllegalMoveError, Move, Piece
from runner.rules.outcome import Outcome, Termination
from runner.rules.squares import (
    BB_BETWEEN,
    BB_BISHOP_PSEUDO,
    BB_DARK_SQUARES,
    BB_DIAG_ATTACKS,
    BB_DIAG_MASKS,
    BB_FILE_A,
    BB_FILE_ATTACKS,
    BB_FILE_H,
    BB_FILE_MASKS,
    BB_KING_ATTACKS,
    BB_KNIGHT_ATTACKS,
    BB_LIGHT_SQUARES,
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
    BLACK,
    KING,
    KNIGHT,
    PAWN,
    PIECE_SYMBOLS,
    QUEEN,
    ROOK,
    SQUARE_NAMES,
    WHITE,
    Bitboard,
    Color,
    PieceType,
    Square,
    scan_forward,
)

_TURN_KEY = POLYGLOT_RANDOM[780]
_EP_KEYS = POLYGLOT_RANDOM[772:780]
# _PIECE_KEYS[color][piece_type][square]
_PIECE_KEYS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
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
_ROOK_RIGHT_KEYS: dict[Square, int] = {sq: _splitmix64(sq + 1000) for sq in list(range(8)) + list(range(56, 64))}
_ROOK_RIGHT_KEYS.update({7: POLYGLOT_RANDOM[768], 0: POLYGLOT_RANDOM[769],
                         63: POLYGLOT_RANDOM[770], 56: POLYGLOT_RANDOM[771]})
_CASTLING_KEY_CACHE: dict[Bitboard, int] = {}


def _castling_key(rights: Bitboard) -> int:
    """XOR of the keys of every castling rook square in ``rights`` (cached)."""
    key = _CASTLING_KEY_CACHE.get(rights)
    if key is None:
        key = 0
        for sq in scan_forward(rights):
            key ^= _ROOK_RIGHT_KEYS[sq]
        _CASTLING_KEY_CACHE[rights] = key
    return key


def _polyglot_castling_key(rights: Bitboard) -> int:
    """Castling part of the Polyglot key: only rights of rooks on the corner squares count."""
    key = 0
    if rights & BB_SQUARES[7]:
        key ^= POLYGLOT_RANDOM[768]
    if rights & BB_SQUARES[0]:
        key ^= POLYGLOT_RANDOM[769]
    if rights & BB_SQUARES[63]:
        key ^= POLYGLOT_RANDOM[770]
    if rights & BB_SQUARES[56]:
        key ^= POLYGLOT_RANDOM[771]
    return key


_PROMOTIONS: dict[int, tuple[Move, Move, Move, Move]] = {}
for _f in range(64):
    for _t in range(64):
        if (_f >> 3, _t >> 3) in ((6, 7), (1, 0)) and abs((_f & 7) - (_t & 7)) <= 1:
            _PROMOTIONS[_f * 64 + _t] = (
                Move(_f, _t, QUEEN), Move(_f, _t, ROOK), Move(_f, _t, BISHOP), Move(_f, _t, KNIGHT)
            )
_PROMOTION_RANKS = BB_RANK_1 | BB_RANK_8
_NOT_FILE_A = ~BB_FILE_A & ((1 << 64) - 1)
_NOT_FILE_H = ~BB_FILE_H & ((1 << 64) - 1)
_ALL = (1 << 64) - 1


class LegalMoveGenerator:
    """A live view of a board's legal moves: iterable, sized, supports ``in`` and ``bool``."""

    __slots__ = ("_board",)

    def __init__(self, board: Board):
        self._board = board

    def __iter__(self) -> Iterator[Move]:
        return iter(self._board._legal())

    def __len__(self) -> int:
        return len(self._board._legal())

    def __bool__(self) -> bool:
        return bool(self._board._legal())

    def __contains__(self, move: object) -> bool:
        return isinstance(move, Move) and self._board.is_legal(move)

    def __repr__(self) -> str:
        return f"<LegalMoveGenerator ({', '.join(m.uci() for m in self)})>"


class Board:
    """A chess position with its move history; python-chess-like API.

    ``Board()`` is the starting position, ``Board(fen)`` any FEN/X-FEN/Shredder-FEN position,
    ``Board(None)`` an empty board. With ``chess960=True`` castling moves are king-takes-rook.
    """

    __slots__ = (
        "pawns", "knights", "bishops", "rooks", "queens", "kings", "occupied_co", "occupied",
        "turn", "castling_rights", "ep_square", "halfmove_clock", "fullmove_number", "chess960",
        "move_stack", "_stack", "_phash", "_key", "_counts", "_repeated", "_cache_key",
        "_cache_moves",
    )

    def __init__(self, fen: str | None = STARTING_FEN, *, chess960: bool = False):
        self.chess960 = chess960
        if fen is None:
            self._set_empty()
        else:
            self.set_fen(fen)

    # ------------------------------------------------------------------ setup

    def _set_empty(self) -> None:
        """Clear the board: no pieces, White to move, no history."""
        self.pawns = self.knights = self.bishops = self.rooks = self.queens = self.kings = 0
        self.occupied_co = [0, 0]
        self.occupied = 0
        self.turn = WHITE
        self.castling_rights = 0
        self.ep_square = None
        self.halfmove_clock = 0
        self.fullmove_number = 1
        self._reset_history()

    def _reset_history(self) -> None:
        """Forget the move stack and restart repetition counting from the current position."""
        self.move_stack: list[Move] = []
        self._stack: list[tuple] = []
        self._phash = self._compute_piece_hash()
        self._cache_key = -1
        self._cache_moves: list[Move] = []
        self._key = self._compute_key()
        self._counts: dict[int, int] = {self._key: 1}
        self._repeated = 0

    def set_fen(self, fen: str) -> None:
        """Set the position from a FEN, X-FEN or Shredder-FEN string and clear the history."""
        fields = parse_fen(fen)
        self.pawns = self.knights = self.bishops = self.rooks = self.queens = self.kings = 0
        self.occupied_co = [0, 0]
        for sq, symbol in fields.placement:
            self._put(sq, PIECE_SYMBOLS.index(symbol.lower()), symbol.isupper())
        self.occupied = self.occupied_co[0] | self.occupied_co[1]
        for color, name in ((WHITE, "white"), (BLACK, "black")):
            count = (self.kings & self.occupied_co[color]).bit_count()
            if count != 1:
                raise InvalidFenError(
                    f"piece placement must have exactly one {name} king, found {count} (in {fen!r})"
                )
        if self.pawns & (BB_RANK_1 | BB_RANK_8):
            raise InvalidFenError(f"piece placement has a pawn on the first or eighth rank (in {fen!r})")
        self.turn = fields.turn
        self.castling_rights = castling_rights_from_field(
            fields.castling,
            self.rooks & self.occupied_co[WHITE],
            self.rooks & self.occupied_co[BLACK],
            {WHITE: self.king(WHITE), BLACK: self.king(BLACK)},
        )
        self.castling_rights = self._clean_castling_rights()
        ep = fields.ep_square
        if ep is not None:
            # Keep an en passant square only where a pawn could just have made a double step.
            pushed = ep - 8 if self.turn == WHITE else ep + 8
            origin = ep + 8 if self.turn == WHITE else ep - 8
            if (
                (ep >> 3) != (5 if self.turn == WHITE else 2)
                or not (self.pawns & self.occupied_co[not self.turn] & BB_SQUARES[pushed])
                or self.occupied & (BB_SQUARES[ep] | BB_SQUARES[origin])
            ):
                ep = None
        self.ep_square = ep
        self.halfmove_clock = fields.halfmove_clock
        self.fullmove_number = fields.fullmove_number
        if self._attackers(self.turn, self.king(not self.turn), self.occupied):
            raise InvalidFenError(
                f"the side not to move is in check, so the position cannot arise (in {fen!r})"
            )
        self._reset_history()

    def reset(self) -> None:
        """Restore the starting position and clear the history."""
        self.set_fen(STARTING_FEN)

    def copy(self, *, stack: bool = True) -> Board:
        """An independent copy; with ``stack=False`` the copy starts its history here."""
        board = Board.__new__(Board)
        for name in ("pawns", "knights", "bishops", "rooks", "queens", "kings", "occupied",
                     "turn", "castling_rights", "ep_square", "halfmove_clock",
                     "fullmove_number", "chess960", "_phash", "_key", "_repeated"):
            setattr(board, name, getattr(self, name))
        board.occupied_co = list(self.occupied_co)
        board._cache_key = -1
        board._cache_moves = []
        if stack:
            board.move_stack = list(self.move_stack)
            board._stack = list(self._stack)
            board._counts = dict(self._counts)
        else:
            board.move_stack = []
            board._stack = []
            board._counts = {self._key: 1}
            board._repeated = 0
        return board

    def _put(self, sq: Square, piece_type: PieceType, color: Color) -> None:
        """Place a piece on an empty square during setup."""
        bb = BB_SQUARES[sq]
        if piece_type == PAWN:
            self.pawns |= bb
        elif piece_type == KNIGHT:
            self.knights |= bb
        elif piece_type == BISHOP:
            self.bishops |= bb
        elif piece_type == ROOK:
            self.rooks |= bb
        elif piece_type == QUEEN:
            self.queens |= bb
        else:
            self.kings |= bb
        self.occupied_co[color] |= bb

    def _clean_castling_rights(self) -> Bitboard:
        """Drop castling rights that no rook and king on their home rank can still use."""
        rights = self.castling_rights & self.rooks
        result = 0
        for color, backrank in ((WHITE, BB_RANK_1), (BLACK, BB_RANK_8)):
            own = rights & backrank & self.occupied_co[color]
            king_bb = self.kings & self.occupied_co[color] & backrank
            if not own or not king_bb:
                continue
            king = king_bb.bit_length() - 1
            if not self.chess960:
                if king != (4 if color else 60):
                    continue
                own &= BB_SQUARES[0 if color else 56] | BB_SQUARES[7 if color else 63]
                result |= own
                continue
            a_side = own & -own
            h_side = 1 << (own.bit_length() - 1)
            if a_side.bit_length() - 1 < king:
                result |= a_side
            if h_side.bit_length() - 1 > king:
                result |= h_side
        return result

    # ------------------------------------------------------------------ queries

    def piece_type_at(self, sq: Square) -> PieceType | None:
        """Type of the piece on a square, or ``None``."""
        bb = BB_SQUARES[sq]
        if not self.occupied & bb:
            return None
        if self.pawns & bb:
            return PAWN
        if self.knights & bb:
            return KNIGHT
        if self.bishops & bb:
            return BISHOP
        if self.rooks & bb:
            return ROOK
        if self.queens & bb:
            return QUEEN
        return KING

    def color_at(self, sq: Square) -> Color | None:
        """Color of the piece on a square, or ``None``."""
        bb = BB_SQUARES[sq]
        if self.occupied_co[WHITE] & bb:
            return WHITE
        if self.occupied_co[BLACK] & bb:
            return BLACK
        return None

    def piece_at(self, sq: Square) -> Piece | None:
        """The piece on a square, or ``None``."""
        piece_type = self.piece_type_at(sq)
        if piece_type is None:
            return None
        return Piece(piece_type, bool(self.occupied_co[WHITE] & BB_SQUARES[sq]))

    def piece_map(self) -> dict[Square, Piece]:
        """All pieces by square."""
        return {sq: p for sq in scan_forward(self.occupied) if (p := self.piece_at(sq)) is not None}

    def pieces_mask(self, piece_type: PieceType, color: Color) -> Bitboard:
        """Bitboard of the pieces of a type and color."""
        bb = (self.pawns, self.knights, self.bishops, self.rooks, self.queens, self.kings)[piece_type - 1]
        return bb & self.occupied_co[color]

    def pieces(self, piece_type: PieceType, color: Color) -> list[Square]:
        """Squares of the pieces of a type and color, a1 first."""
        return list(scan_forward(self.pieces_mask(piece_type, color)))

    def king(self, color: Color) -> Square | None:
        """Square of the king of a color, or ``None`` on a board without one."""
        bb = self.kings & self.occupied_co[color]
        return bb.bit_length() - 1 if bb else None

    def _attackers(self, color: Color, sq: Square | None, occupied: Bitboard) -> Bitboard:
        """Pieces of ``color`` attacking ``sq`` given the occupied squares."""
        if sq is None:
            return 0
        them = self.occupied_co[color]
        queens = self.queens
        return them & (
            (BB_KNIGHT_ATTACKS[sq] & self.knights)
            | (BB_KING_ATTACKS[sq] & self.kings)
            | (BB_PAWN_ATTACKS[not color][sq] & self.pawns)
            | (BB_DIAG_ATTACKS[sq][BB_DIAG_MASKS[sq] & occupied] & (self.bishops | queens))
            | (
                (BB_RANK_ATTACKS[sq][BB_RANK_MASKS[sq] & occupied]
                 | BB_FILE_ATTACKS[sq][BB_FILE_MASKS[sq] & occupied])
                & (self.rooks | queens)
            )
        )

    def attackers_mask(self, color: Color, sq: Square) -> Bitboard:
        """Bitboard of the pieces of ``color`` that attack ``sq``."""
        return self._attackers(color, sq, self.occupied)

    def is_attacked_by(self, color: Color, sq: Square) -> bool:
        """Whether any piece of ``color`` attacks ``sq``."""
        return bool(self._attackers(color, sq, self.occupied))

    def checkers_mask(self) -> Bitboard:
        """Bitboard of the pieces giving check to the side to move."""
        return self._attackers(not self.turn, self.king(self.turn), self.occupied)

    def is_check(self) -> bool:
        """Whether the side to move is in check."""
        return bool(self._attackers(not self.turn, self.king(self.turn), self.occupied))

    # ------------------------------------------------------------------ move generation

    def _legal(self) -> list[Move]:
        """The legal moves of the position (cached per position; do not mutate the list)."""
        if self._cache_key == self._key:
            return self._cache_moves
        moves = self._generate()
        self._cache_key = self._key
        self._cache_moves = moves
        return moves

    def generate_legal_moves(self) -> Iterator[Move]:
        """Iterate over the legal moves."""
        return iter(self._legal())

    @property
    def legal_moves(self) -> LegalMoveGenerator:
        """The legal moves, as a live view (``len``, ``in``, iteration)."""
        return LegalMoveGenerator(self)

    def _generate(self) -> list[Move]:
        """Generate every legal move of the side to move."""
        turn = self.turn
        occ_co = self.occupied_co
        us = occ_co[turn]
        them = occ_co[not turn]
        occ = us | them
        pawns, knights, bishops, rooks, queens, kings = (
            self.pawns, self.knights, self.bishops, self.rooks, self.queens, self.kings)
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
        targets = BB_KING_ATTACKS[king] & ~us
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

        if checkers:
            if checkers & (checkers - 1):
                return moves  # double check: only the king may move
            checker = checkers.bit_length() - 1
            target = BB_BETWEEN[king][checker] | checkers
        else:
            target = ~us & _ALL

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
        froms = knights & us & ~pinned
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

        # Sliders.
        froms = (bishops | queens) & us
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
        froms = (rooks | queens) & us
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

        # Pawns: unpinned ones in bulk with shifts, pinned ones one by one.
        our_pawns = pawns & us
        free = our_pawns & ~pinned
        empty = ~occ & _ALL
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

        # En passant: test the resulting occupancy directly (covers every discovered check).
        ep = self.ep_square
        if ep is not None:
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
        if not checkers:
            rights = self.castling_rights & us
            while rights:
                low = rights & -rights
                rights ^= low
                move = self._castling_move(king, low.bit_length() - 1, occ)
                if move is not None:
                    append(move)
        return moves

    def _castling_move(self, king: Square, rook: Square, occ: Bitboard) -> Move | None:
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
        them = not self.turn
        path = king_path & ~king_bb
        while path:
            low = path & -path
            path ^= low
            if self._attackers(them, low.bit_length() - 1, occ_wo):
                return None
        if self.chess960:
            return _MOVES[king * 64 + rook]
        return _MOVES[king * 64 + king_to]

    # ------------------------------------------------------------------ making moves

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
        keys_us = _PIECE_KEYS[turn]
        keys_them = _PIECE_KEYS[not turn]
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
                self._phash = phash ^ kk[f] ^ kk[king_to] ^ rk[rook] ^ rk[rook_to]
                self.castling_rights = rights & ~(BB_RANK_1 if turn else BB_RANK_8)
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
        self._phash = phash
        self.castling_rights = rights
        self.halfmove_clock = halfmove
        self.turn = not turn
        self._after_push()

    def _after_push(self) -> None:
        """Compute the new position key and count its occurrence."""
        key = self._compute_key()
        self._key = key
        counts = self._counts
        n = counts.get(key, 0) + 1
        counts[key] = n
        if n == 2:
            self._repeated += 1

    def pop(self) -> Move:
        """Take back the last move and return it."""
        key = self._key
        counts = self._counts
        n = counts[key] - 1
        if n:
            counts[key] = n
            if n == 1:
                self._repeated -= 1
        else:
            del counts[key]
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

    # ------------------------------------------------------------------ hashing

    def _compute_piece_hash(self) -> int:
        """Polyglot piece-square part of the hash, computed from scratch."""
        h = 0
        for color in (WHITE, BLACK):
            keys = _PIECE_KEYS[color]
            for piece_type, bb in ((PAWN, self.pawns), (KNIGHT, self.knights),
                                   (BISHOP, self.bishops), (ROOK, self.rooks),
                                   (QUEEN, self.queens), (KING, self.kings)):
                for sq in scan_forward(bb & self.occupied_co[color]):
                    h ^= keys[piece_type][sq]
        return h

    def _compute_key(self) -> int:
        """The repetition key: placement, side to move, castling rights, legal en passant file."""
        key = self._phash ^ _castling_key(self.castling_rights)
        if self.turn:
            key ^= _TURN_KEY
        if self.ep_square is not None and self.has_legal_en_passant():
            key ^= _EP_KEYS[self.ep_square & 7]
        return key

    def repetition_key(self) -> int:
        """Hash identifying the position for repetition (FIDE 9.2.3), not the Polyglot key."""
        return self._key

    def zobrist_hash(self) -> int:
        """The Polyglot opening-book key of the position."""
        key = self._phash ^ _polyglot_castling_key(self.castling_rights)
        if self.turn:
            key ^= _TURN_KEY
        if self.has_pseudo_legal_en_passant():
            key ^= _EP_KEYS[self.ep_square & 7]  # type: ignore[operator]
        return key

    def has_pseudo_legal_en_passant(self) -> bool:
        """Whether a pawn of the side to move stands ready to capture en passant."""
        ep = self.ep_square
        if ep is None:
            return False
        return bool(BB_PAWN_ATTACKS[not self.turn][ep] & self.pawns & self.occupied_co[self.turn])

    def has_legal_en_passant(self) -> bool:
        """Whether an en passant capture is legal in the position."""
        ep = self.ep_square
        if ep is None or not self.has_pseudo_legal_en_passant():
            return False
        return any(m.to_square == ep and self.pawns & BB_SQUARES[m.from_square]
                   for m in self._generate())

    # ------------------------------------------------------------------ move properties

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

    def is_legal(self, move: Move) -> bool:
        """Whether a move is legal in the position (the null move never is)."""
        return bool(move) and move in self._legal()

    def _normalize(self, move: Move) -> Move:
        """Accept castling both as the king's two-square step and as king-takes-rook."""
        if move.promotion or not (self.kings & self.occupied_co[self.turn] & BB_SQUARES[move.from_square]):
            return move
        rook = self._castling_rook(move)
        if rook is None:
            if self.chess960 and (move.from_square >> 3) == (move.to_square >> 3):
                # A Chess960 castling written with the king's destination (e.g. b1g1).
                for candidate in self._legal():
                    rook_sq = self._castling_rook(candidate)
                    if rook_sq is not None and candidate.from_square == move.from_square:
                        back = move.from_square & 56
                        king_to = back + (6 if rook_sq > move.from_square else 2)
                        if king_to == move.to_square and not any(
                            m == move for m in self._legal() if m is not candidate
                        ):
                            return candidate
            return move
        if self.chess960:
            return _MOVES[move.from_square * 64 + rook]
        back = move.from_square & 56
        return _MOVES[move.from_square * 64 + back + (6 if rook > move.from_square else 2)]

    def parse_uci(self, uci: str) -> Move:
        """The legal move named in coordinate notation, as CECP and UCI engines send it.

        Accepts ``e2e4``, ``e7e8q``, castling as ``e1g1``, as king-takes-rook (``e1h1``) or as
        ``O-O``/``O-O-O``/``0-0``. Raises ``InvalidMoveError`` or ``IllegalMoveError`` naming the
        move and the position.
        """
        text = uci.strip()
        if text[:1] in ("O", "0", "o") and "-" in text:
            from runner.rules.san import parse_san

            return parse_san(self, text)
        move = Move.from_uci(text)
        if not move:
            raise IllegalMoveError(f"illegal move: null move {uci!r} in {self.fen()}")
        move = self._normalize(move)
        if not self.is_legal(move):
            raise IllegalMoveError(f"illegal move: {uci!r} in {self.fen()}")
        return move

    def push_uci(self, uci: str) -> Move:
        """Parse a coordinate move, check it is legal, play it and return it."""
        move = self.parse_uci(uci)
        self.push(move)
        return move

    def san(self, move: Move) -> str:
        """Standard Algebraic Notation of a legal move."""
        from runner.rules.san import move_to_san

        return move_to_san(self, move)

    def lan(self, move: Move) -> str:
        """Long Algebraic Notation of a legal move (``Ng1-f3``, ``e4xd5``)."""
        from runner.rules.san import move_to_san

        return move_to_san(self, move, long=True)

    def parse_san(self, san: str) -> Move:
        """The legal move named by a SAN string (read tolerantly)."""
        from runner.rules.san import parse_san

        return parse_san(self, san)

    def push_san(self, san: str) -> Move:
        """Parse a SAN move, play it and return it."""
        move = self.parse_san(san)
        self.push(move)
        return move

    def variation_san(self, moves: list[Move]) -> str:
        """Numbered SAN of a line of legal moves from this position (the board is unchanged)."""
        board = self.copy(stack=False)
        parts = []
        for i, move in enumerate(moves):
            if board.turn == WHITE:
                parts.append(f"{board.fullmove_number}. {board.san(move)}")
            elif i == 0:
                parts.append(f"{board.fullmove_number}... {board.san(move)}")
            else:
                parts.append(board.san(move))
            board.push(move)
        return " ".join(parts)

    # ------------------------------------------------------------------ FEN

    def board_fen(self) -> str:
        """The piece-placement field of the FEN."""
        symbols: list[str | None] = [None] * 64
        for sq in scan_forward(self.occupied):
            letter = str(PIECE_SYMBOLS[self.piece_type_at(sq) or 0])
            symbols[sq] = letter.upper() if self.occupied_co[WHITE] & BB_SQUARES[sq] else letter
        return placement_field(symbols)

    def castling_fen(self, *, shredder: bool = False) -> str:
        """The castling field: X-FEN (``KQkq`` where unambiguous) or Shredder-FEN file letters."""
        return castling_field(
            self.castling_rights,
            self.rooks & self.occupied_co[WHITE],
            self.rooks & self.occupied_co[BLACK],
            {WHITE: self.king(WHITE), BLACK: self.king(BLACK)},
            shredder,
        )

    def fen(self, *, shredder: bool = False, en_passant: str = "legal") -> str:
        """The position as FEN (X-FEN for Chess960 rights; Shredder-FEN with ``shredder=True``).

        ``en_passant``: ``legal`` writes the square only when an en passant capture is legal,
        ``xfen`` when a capturing pawn stands ready, ``fen`` after every double step.
        """
        ep = self.ep_square
        if ep is not None:
            if en_passant == "legal" and not self.has_legal_en_passant():
                ep = None
            elif en_passant == "xfen" and not self.has_pseudo_legal_en_passant():
                ep = None
        return " ".join((
            self.board_fen(),
            "w" if self.turn else "b",
            self.castling_fen(shredder=shredder),
            SQUARE_NAMES[ep] if ep is not None else "-",
            str(self.halfmove_clock),
            str(self.fullmove_number),
        ))

    def epd(self) -> str:
        """The first four FEN fields (as in EPD lines, without operations)."""
        return " ".join(self.fen().split()[:4])

    def __repr__(self) -> str:
        return f"Board({self.fen()!r}{', chess960=True' if self.chess960 else ''})"

    def __str__(self) -> str:
        rows = []
        for rank in range(7, -1, -1):
            row = []
            for file in range(8):
                piece = self.piece_at(rank * 8 + file)
                row.append(piece.symbol() if piece else ".")
            rows.append(" ".join(row))
        return "\n".join(rows)

    # ------------------------------------------------------------------ game end

    def is_checkmate(self) -> bool:
        """Whether the side to move is checkmated."""
        return self.is_check() and not self._legal()

    def is_stalemate(self) -> bool:
        """Whether the side to move has no legal move and is not in check."""
        return not self.is_check() and not self._legal()

    def has_insufficient_material(self, color: Color) -> bool:
        """Whether ``color`` cannot possibly mate, whatever the opponent plays."""
        own = self.occupied_co[color]
        if own & (self.pawns | self.rooks | self.queens):
            return False
        if own & self.knights:
            # A lone knight can mate only with help from opposing pieces other than queens.
            return own.bit_count() <= 2 and not (
                self.occupied_co[not color] & ~self.kings & ~self.queens
            )
        if own & self.bishops:
            same_color = not (self.bishops & BB_DARK_SQUARES) or not (self.bishops & BB_LIGHT_SQUARES)
            return same_color and not self.pawns and not self.knights
        return True

    def is_insufficient_material(self) -> bool:
        """Whether neither side can mate (a dead position by material, FIDE 5.2.2)."""
        return self.has_insufficient_material(WHITE) and self.has_insufficient_material(BLACK)

    def is_repetition(self, count: int = 3) -> bool:
        """Whether the current position has occurred at least ``count`` times (O(1))."""
        return self._counts.get(self._key, 0) >= count

    def repetition_count(self) -> int:
        """How many times the current position has occurred in the game so far."""
        return self._counts.get(self._key, 0)

    def is_fivefold_repetition(self) -> bool:
        """Whether the position has occurred five times (the game ends by itself, FIDE 9.6.1)."""
        return self._counts.get(self._key, 0) >= 5

    def can_claim_threefold_repetition(self) -> bool:
        """Whether a threefold repetition draw can be claimed now or with the next move (9.2)."""
        counts = self._counts
        if counts.get(self._key, 0) >= 3:
            return True
        if not self._repeated:
            return False  # no position has occurred twice: no move can make one occur thrice
        for move in self._legal():
            if self.is_zeroing(move) or self.is_castling(move):
                continue  # an irreversible move always leads to a new position
            self.push(move)
            try:
                if counts.get(self._key, 0) >= 3:
                    return True
            finally:
                self.pop()
        return False

    def is_fifty_moves(self) -> bool:
        """Whether 50 moves by each side have passed without pawn move or capture (and no mate)."""
        return self.halfmove_clock >= 100 and bool(self._legal())

    def can_claim_fifty_moves(self) -> bool:
        """Whether the fifty-move draw can be claimed now or with the next move (9.3)."""
        if self.is_fifty_moves():
            return True
        if self.halfmove_clock >= 99:
            for move in self._legal():
                if self.is_zeroing(move):
                    continue
                self.push(move)
                try:
                    if self.is_fifty_moves():
                        return True
                finally:
                    self.pop()
        return False

    def is_seventyfive_moves(self) -> bool:
        """Whether 75 moves by each side passed without pawn move or capture (ends the game, 9.6.2)."""
        return self.halfmove_clock >= 150 and bool(self._legal())

    def can_claim_draw(self) -> bool:
        """Whether a draw by fifty moves or threefold repetition can be claimed."""
        return self.can_claim_fifty_moves() or self.can_claim_threefold_repetition()

    def outcome(self, *, claim_draw: bool = False) -> Outcome | None:
        """How the game ends by the rules here, or ``None``; claimable draws with ``claim_draw``."""
        has_moves = bool(self._legal())
        if not has_moves and self.is_check():
            return Outcome(Termination.CHECKMATE, not self.turn)
        if self.is_insufficient_material():
            return Outcome(Termination.INSUFFICIENT_MATERIAL, None)
        if not has_moves:
            return Outcome(Termination.STALEMATE, None)
        if self.halfmove_clock >= 150:
            return Outcome(Termination.SEVENTYFIVE_MOVES, None)
        if self._counts.get(self._key, 0) >= 5:
            return Outcome(Termination.FIVEFOLD_REPETITION, None)
        if claim_draw:
            if self.can_claim_fifty_moves():
                return Outcome(Termination.FIFTY_MOVES, None)
            if self.can_claim_threefold_repetition():
                return Outcome(Termination.THREEFOLD_REPETITION, None)
        return None

    def is_game_over(self, *, claim_draw: bool = False) -> bool:
        """Whether the game is over by the rules."""
        return self.outcome(claim_draw=claim_draw) is not None

    def result(self, *, claim_draw: bool = False) -> str:
        """The PGN result by the rules, ``*`` while the game goes on."""
        outcome = self.outcome(claim_draw=claim_draw)
        return outcome.result if outcome else "*"
