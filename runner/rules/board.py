"""The chess board: position state, legal move generation, push/pop and the game-end rules.

Bitboards (Python ints, bit 0 = a1) hold the position; pushes keep an undo stack of plain
tuples, an incrementally updated Polyglot piece hash, and a map from position key to number of
occurrences so that repetition questions are answered without replaying the game.
"""

from __future__ import annotations

from collections.abc import Iterator

from runner.rules.endings import GameEndRules
from runner.rules.fen import (
    STARTING_FEN,
    InvalidFenError,
    castling_field,
    castling_rights_from_field,
    parse_fen,
    placement_field,
)
from runner.rules.move import _MOVES, IllegalMoveError, Move, Piece
from runner.rules.movegen import generate_legal
from runner.rules.san import move_to_san, parse_san, san_and_push
from runner.rules.squares import (
    BB_DIAG_ATTACKS,
    BB_DIAG_MASKS,
    BB_FILE_ATTACKS,
    BB_FILE_MASKS,
    BB_KING_ATTACKS,
    BB_KNIGHT_ATTACKS,
    BB_PAWN_ATTACKS,
    BB_RANK_1,
    BB_RANK_8,
    BB_RANK_ATTACKS,
    BB_RANK_MASKS,
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
from runner.rules.zobrist import (
    EP_KEYS,
    PIECE_KEYS,
    TURN_KEY,
    castling_key,
    polyglot_castling_key,
)


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


class Board(GameEndRules):
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

    def _any_legal(self) -> bool:
        """Whether the side to move has a legal move: the cached list if there is one, else a
        generation that stops at the first move found (and is not cached)."""
        if self._cache_key == self._key:
            return bool(self._cache_moves)
        return bool(generate_legal(self, first=True))

    def generate_legal_moves(self) -> Iterator[Move]:
        """Iterate over the legal moves."""
        return iter(self._legal())

    @property
    def legal_moves(self) -> LegalMoveGenerator:
        """The legal moves, as a live view (``len``, ``in``, iteration)."""
        return LegalMoveGenerator(self)

    def _generate(self) -> list[Move]:
        """Generate every legal move of the side to move."""
        return generate_legal(self)

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
        keys_us = PIECE_KEYS[turn]
        keys_them = PIECE_KEYS[not turn]
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
            keys = PIECE_KEYS[color]
            for piece_type, bb in ((PAWN, self.pawns), (KNIGHT, self.knights),
                                   (BISHOP, self.bishops), (ROOK, self.rooks),
                                   (QUEEN, self.queens), (KING, self.kings)):
                for sq in scan_forward(bb & self.occupied_co[color]):
                    h ^= keys[piece_type][sq]
        return h

    def _compute_key(self) -> int:
        """The repetition key: placement, side to move, castling rights, legal en passant file."""
        key = self._phash ^ castling_key(self.castling_rights)
        if self.turn:
            key ^= TURN_KEY
        if self.ep_square is not None and self.has_legal_en_passant():
            key ^= EP_KEYS[self.ep_square & 7]
        return key

    def repetition_key(self) -> int:
        """Hash identifying the position for repetition (FIDE 9.2.3), not the Polyglot key."""
        return self._key

    def zobrist_hash(self) -> int:
        """The Polyglot opening-book key of the position."""
        key = self._phash ^ polyglot_castling_key(
            self.castling_rights, self.kings & self.occupied_co[WHITE], self.kings & self.occupied_co[BLACK])
        if self.turn:
            key ^= TURN_KEY
        if self.has_pseudo_legal_en_passant():
            key ^= EP_KEYS[self.ep_square & 7]  # type: ignore[operator]
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
        if not move:
            return False
        if self._cache_key == self._key:
            return move in self._cache_moves
        return move in generate_legal(self, from_mask=BB_SQUARES[move.from_square],
                                      to_mask=BB_SQUARES[move.to_square])

    def _legal_between(self, from_mask: Bitboard, to_mask: Bitboard) -> list[Move]:
        """The legal moves from `from_mask` squares to `to_mask` squares (from the cached
        list when there is one, else generated for those squares only)."""
        if self._cache_key == self._key:
            return [m for m in self._cache_moves
                    if BB_SQUARES[m.from_square] & from_mask and BB_SQUARES[m.to_square] & to_mask]
        return generate_legal(self, from_mask=from_mask, to_mask=to_mask)

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
        return move_to_san(self, move)

    def san_and_push(self, move: Move) -> str:
        """SAN of a legal move, then play it (one push instead of a trial push and pop)."""
        return san_and_push(self, move)

    def lan(self, move: Move) -> str:
        """Long Algebraic Notation of a legal move (``Ng1-f3``, ``e4xd5``)."""
        return move_to_san(self, move, long=True)

    def parse_san(self, san: str) -> Move:
        """The legal move named by a SAN string (read tolerantly)."""
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
            if en_passant == "legal":
                if not self.has_legal_en_passant():
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

