"""The old `edit` mode of CECP, for hosts that do not use `setboard` (spec section 8).

Subcommands: `c` switches the colour of the pieces being placed (white first), `Pa4` puts a
piece, `xa4` empties a square, `#` clears the board, `.` leaves.  The side to move is kept;
castling is granted to every king and rook on their home squares (in Chess960: any king on its
back rank with rooks on that rank), en passant is off and the move counters restart.
"""

from __future__ import annotations

import re

_PLACE = re.compile(r"^([PNBRQKpnbrqkx])([a-h])([1-8])$")


class PositionEditor:
    """Collects edit subcommands and turns them into a FEN."""

    def __init__(self, placement: dict[int, str], white_to_move: bool, chess960: bool) -> None:
        self._squares = dict(placement)
        self._white = True
        self._white_to_move = white_to_move
        self._chess960 = chess960

    def feed(self, line: str) -> bool:
        """Apply one subcommand; True when the edit is finished (`.`)."""
        text = line.strip()
        if text == ".":
            return True
        if text == "c":
            self._white = not self._white
        elif text == "#":
            self._squares.clear()
        else:
            match = _PLACE.match(text)
            if match:
                piece, file_char, rank_char = match.groups()
                sq = (int(rank_char) - 1) * 8 + "abcdefgh".index(file_char)
                if piece == "x":
                    self._squares.pop(sq, None)
                else:
                    self._squares[sq] = piece.upper() if self._white else piece.lower()
        return False

    def fen(self) -> str:
        """The edited position as a FEN (Shredder-style castling letters in Chess960)."""
        rows = []
        for rank in range(7, -1, -1):
            row, empty = "", 0
            for file in range(8):
                piece = self._squares.get(rank * 8 + file)
                if piece is None:
                    empty += 1
                    continue
                if empty:
                    row += str(empty)
                    empty = 0
                row += piece
            rows.append(row + (str(empty) if empty else ""))
        turn = "w" if self._white_to_move else "b"
        return f"{'/'.join(rows)} {turn} {self._castling()} - 0 1"

    def _castling(self) -> str:
        """Castling rights implied by kings and rooks on their home squares."""
        rights = ""
        for king, rook, back in (("K", "R", 0), ("k", "r", 56)):
            files = [f for f in range(8) if self._squares.get(back + f) == king]
            if not files:
                continue
            king_file = files[0]
            rooks = [f for f in range(8) if self._squares.get(back + f) == rook]
            if self._chess960:
                letters = [chr(ord("A") + f) for f in rooks if f != king_file]
                letters.sort(reverse=True)
                rights += "".join(c if king == "K" else c.lower() for c in letters)
            elif king_file == 4:
                if 7 in rooks:
                    rights += "K" if king == "K" else "k"
                if 0 in rooks:
                    rights += "Q" if king == "K" else "q"
        return rights or "-"
