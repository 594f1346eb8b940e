"""A chess position: bitboards, setup from FEN, piece and attack queries, legal moves, keys.

Bitboards (Python ints, bit 0 = a1) hold the position. The state also carries what the
subclasses keep up to date as moves are played (`runner.rules.makemove`): an undo stack of
plain tuples, an incrementally updated piece hash (the repetition key's), and a map from position key to
number of occurrences so that repetition questions are answered without replaying the game.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from runner.rules.fen import (
    STARTING_FEN,
    castling_rights_from_field,
    parse_fen,
)
from runner.rules.move import Move, Piece
from runner.rules.movegen import generate_legal, has_legal_move, move_legality
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
    WHITE,
    Bitboard,
    Color,
    PieceType,
    Square,
    scan_forward,
)
from runner.rules.status import (
    InvalidPositionError,
    Status,
    position_status,
    problems,
    valid_ep_square,
)
from runner.rules.zobrist import (
    EP_KEYS,
    PIECE_KEYS,
    REP_EP_KEYS,
    REP_PIECE_KEYS,
    REP_TURN_KEY,
    TURN_KEY,
    castling_key,
    polyglot_castling_key,
)

__all__ = ["LegalMoveGenerator", "Position", "Undo"]

_KEY_BIT: Final = 1 << 63

Undo = tuple[Bitboard, Bitboard, Bitboard, Bitboard, Bitboard, Bitboard, Bitboard, Bitboard,
             Bitboard, Square | None, int, int, int, int]
"""What a push saved: the six piece bitboards, Black's and White's occupancy, castling rights,
en passant square, halfmove clock, fullmove number, piece hash and position key."""


class LegalMoveGenerator:
    """A live view of a board's legal moves: iterable, sized, supports ``in`` and ``bool``."""

    __slots__ = ("_board",)

    def __init__(self, board: Position) -> None:
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



class Position:
    """A position with the state its move history needs; `runner.rules.Board` is the full API.

    ``Position()`` is the starting position, ``Position(fen)`` any FEN/X-FEN/Shredder-FEN
    position, ``Position(None)`` an empty board. With ``chess960=True`` castling moves are
    king-takes-rook.

    Kept whole over 300 lines (tests/test_sizes.py): it is compiled and on the per-move hot
    path, where move generation and push/pop share its slots; a collaborator would cost an
    attribute hop and a call per move.
    """

    __slots__ = (
        "pawns", "knights", "bishops", "rooks", "queens", "kings", "occupied_co", "occupied",
        "turn", "castling_rights", "ep_square", "halfmove_clock", "fullmove_number", "chess960",
        "move_stack", "_stack", "_phash", "_key", "_counts", "_counted", "_repeated",
        "_cache_key", "_cache_moves",
    )

    pawns: Bitboard
    knights: Bitboard
    bishops: Bitboard
    rooks: Bitboard
    queens: Bitboard
    kings: Bitboard
    occupied_co: list[Bitboard]
    """Occupancy by color, indexed by `Color` (Black 0, White 1)."""
    occupied: Bitboard
    turn: Color
    castling_rights: Bitboard
    """The squares of the rooks that may still castle."""
    ep_square: Square | None
    halfmove_clock: int
    fullmove_number: int
    chess960: bool
    move_stack: list[Move]
    _stack: list[Undo]
    _phash: int
    """The placement and castling-rights part of the repetition key, updated by push."""
    _key: int
    _counts: dict[int, int]
    """Occurrences by position key of the first `_counted` positions of the history (read it
    through `_synced_counts`)."""
    _counted: int
    """How many positions of the history, oldest first (the undo records' keys, then the
    current key), `_counts` holds: push leaves the new position uncounted, so that perft and
    other push/pop walks that never ask about repetition pay no map update."""
    _repeated: int
    """How many positions of `_counts` have occurred at least twice."""
    _cache_key: int
    _cache_moves: list[Move]

    def __init__(self, fen: str | None = STARTING_FEN, *, chess960: bool = False,
                 strict: bool = True) -> None:
        self.chess960 = chess960
        if fen is None:
            self._set_empty()
        else:
            self.set_fen(fen, strict=strict)

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
        self.move_stack = []
        self._stack = []
        self._phash = self._compute_piece_hash(REP_PIECE_KEYS) ^ castling_key(self.castling_rights)
        self._cache_key = -1
        self._cache_moves = []
        self._key = self._compute_key()
        self._counts = {self._key: 1}
        self._counted = 1
        self._repeated = 0

    def set_fen(self, fen: str, *, strict: bool = True) -> None:
        """Set the position from a FEN, X-FEN or Shredder-FEN string and clear the history.

        A position no legal game can reach (`status` not ``VALID``) raises `InvalidFenError`
        naming the field and value; ``strict=False`` sets it up anyway (with the castling
        rights and en passant square cleaned), for move-generator tests only. Missing or extra
        kings and pawns on the back rank are refused either way: move generation needs one
        king per side and pawns that can still move.
        """
        fields = parse_fen(fen)
        self.pawns = self.knights = self.bishops = self.rooks = self.queens = self.kings = 0
        self.occupied_co = [0, 0]
        for sq, symbol in fields.placement:
            self._put(sq, PIECE_SYMBOLS.index(symbol.lower()), symbol.isupper())
        self.occupied = self.occupied_co[0] | self.occupied_co[1]
        self.turn = fields.turn
        self.castling_rights = castling_rights_from_field(
            fields.castling,
            self.rooks & self.occupied_co[WHITE],
            self.rooks & self.occupied_co[BLACK],
            {WHITE: self.king(WHITE), BLACK: self.king(BLACK)},
        )
        ep = fields.ep_square
        clean = self._clean_castling_rights()
        status = position_status(self, ep, clean)
        if not strict:
            status &= (Status.NO_WHITE_KING | Status.NO_BLACK_KING | Status.TOO_MANY_KINGS
                       | Status.PAWNS_ON_BACKRANK)
            self.castling_rights = clean
            ep = valid_ep_square(self, ep)
        if status:
            # Refuse what no legal game can reach (python-chess would set it up and flag it).
            reasons = problems(status, self, tuple(fen.split()))
            raise InvalidPositionError(f"{'; '.join(reasons)} (in {fen!r})", status)
        self.ep_square = ep
        self.halfmove_clock = fields.halfmove_clock
        self.fullmove_number = fields.fullmove_number
        self._reset_history()

    def reset(self) -> None:
        """Restore the starting position and clear the history."""
        self.set_fen(STARTING_FEN)

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

    def status(self) -> Status:
        """What makes the position unreachable in a legal game (``Status.VALID``: nothing)."""
        return position_status(self, self.ep_square, self._clean_castling_rights())

    def is_valid(self) -> bool:
        """Whether the position could arise in a legal game (``status()`` is ``VALID``)."""
        return self.status() == Status.VALID

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
        return has_legal_move(self)

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
    # ------------------------------------------------------------------ hashing

    def _compute_piece_hash(self, piece_keys: tuple[tuple[tuple[int, ...], ...], ...]) -> int:
        """Piece-square part of a hash (`REP_PIECE_KEYS`: the repetition key's, which push
        updates as ``_phash``; `PIECE_KEYS`: the Polyglot key's), computed from scratch."""
        h = 0
        for color in (WHITE, BLACK):
            keys = piece_keys[color]
            for piece_type, bb in ((PAWN, self.pawns), (KNIGHT, self.knights),
                                   (BISHOP, self.bishops), (ROOK, self.rooks),
                                   (QUEEN, self.queens), (KING, self.kings)):
                for sq in scan_forward(bb & self.occupied_co[color]):
                    h ^= keys[piece_type][sq]
        return h

    def _compute_key(self) -> int:
        """The repetition key: placement, side to move, castling rights, legal en passant file."""
        key = self._phash
        if self.turn:
            key ^= REP_TURN_KEY
        if self.ep_square is not None and self.has_legal_en_passant():
            key ^= REP_EP_KEYS[self.ep_square & 7]
        # Bit 63 set in every key: compiled code then holds the key as one Python int, which
        # the occurrence map and the undo record take without boxing a new one each time.
        return key | _KEY_BIT

    def _synced_counts(self) -> dict[int, int]:
        """The occurrence map with every position of the history counted, the current one too."""
        counts = self._counts
        stack = self._stack
        n = len(stack)
        i = self._counted
        while i <= n:
            key = stack[i][13] if i < n else self._key
            c = counts.get(key, 0) + 1
            counts[key] = c
            if c == 2:
                self._repeated += 1
            i += 1
        self._counted = i
        return counts

    def repetition_key(self) -> int:
        """Hash identifying the position for repetition (FIDE 9.2.3), not the Polyglot key."""
        return self._key

    def zobrist_hash(self) -> int:
        """The Polyglot opening-book key of the position."""
        key = self._compute_piece_hash(PIECE_KEYS) ^ polyglot_castling_key(
            self.castling_rights, self.kings & self.occupied_co[WHITE], self.kings & self.occupied_co[BLACK])
        if self.turn:
            key ^= TURN_KEY
        ep = self.ep_square
        if ep is not None and self.has_pseudo_legal_en_passant():
            key ^= EP_KEYS[ep & 7]
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
        # Only the captures onto the en passant square: a fraction of the whole move list.
        return bool(generate_legal(self, from_mask=self.pawns & self.occupied_co[self.turn],
                                   to_mask=BB_SQUARES[ep]))
    def is_legal(self, move: Move) -> bool:
        """Whether a move is legal in the position (the null move never is)."""
        if not move:
            return False
        if self._cache_key == self._key:
            return move in self._cache_moves
        legal = move_legality(self, move)
        if legal is not None:
            return legal
        return move in generate_legal(self, from_mask=BB_SQUARES[move.from_square],
                                      to_mask=BB_SQUARES[move.to_square])

    def _legal_between(self, from_mask: Bitboard, to_mask: Bitboard) -> list[Move]:
        """The legal moves from `from_mask` squares to `to_mask` squares (from the cached
        list when there is one, else generated for those squares only)."""
        if self._cache_key == self._key:
            return [m for m in self._cache_moves
                    if BB_SQUARES[m.from_square] & from_mask and BB_SQUARES[m.to_square] & to_mask]
        return generate_legal(self, from_mask=from_mask, to_mask=to_mask)

