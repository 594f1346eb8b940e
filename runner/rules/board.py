"""The chess board: python-chess's ``Board`` API over the position, moves and game-end rules.

The class stack, each a step of its own: `Position` (state, setup, queries, legal moves,
keys) < `MoveMaker` (push/pop) < `GameEndRules` (mate, draws, outcome) < `Board` (moves and
positions as text: UCI, SAN, LAN, FEN, and copies).

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

from runner.rules.endings import GameEndRules
from runner.rules.fen import castling_field, placement_field
from runner.rules.move import _MOVES, IllegalMoveError, Move
from runner.rules.outcome import Termination
from runner.rules.position import LegalMoveGenerator
from runner.rules.san import move_to_san, parse_san, san_and_push, san_body
from runner.rules.squares import BB_SQUARES, BLACK, PIECE_SYMBOLS, SQUARE_NAMES, WHITE, scan_forward

__all__ = ["Board", "LegalMoveGenerator"]


class Board(GameEndRules):
    """A chess position with its move history; python-chess-like API.

    ``Board()`` is the starting position, ``Board(fen)`` any FEN/X-FEN/Shredder-FEN position,
    ``Board(None)`` an empty board. With ``chess960=True`` castling moves are king-takes-rook.
    """

    __slots__ = ()

    def copy(self, *, stack: bool = True) -> Board:
        """An independent copy; with ``stack=False`` the copy starts its history here."""
        board = Board.__new__(Board)
        if stack:
            self._synced_counts()
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
            board._counted = self._counted
        else:
            board.move_stack = []
            board._stack = []
            board._counts = {self._key: 1}
            board._counted = 1
            board._repeated = 0
        return board

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

    def push_refereed(self, move: Move) -> tuple[str, Termination | None]:
        """Play a legal move as the game loop's arbiter does, in one step: its SAN, and the
        end the rules declare after it (`arbiter_ending`: mate, stalemate, dead material,
        75 moves, fivefold and threefold repetition, fifty moves), or None to play on.

        One look at the lines through the king after the move answers both the check and
        the legal-move test, which serve the SAN suffix and the game end alike
        (``san_and_push`` then ``outcome`` would make each again).
        """
        text = san_body(self, move)
        self.push(move)
        check, has_moves = self.check_and_any_legal()
        if check:
            text += "+" if has_moves else "#"
        return text, self.arbiter_ending(check, has_moves)

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

