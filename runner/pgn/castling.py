"""Whether a FEN's castling rights need Chess960, read from its text alone.

Its own module (issue 38): an EPD book asks it of every position, and importing the PGN reader
for it (the splitter's patterns, four dataclasses) cost every run with an EPD book a few
milliseconds of start-up; `runner.pgn.reader` still offers it under its old name.
"""

from __future__ import annotations

__all__ = ["needs_chess960"]


def needs_chess960(fen: str) -> bool:
    """Whether a FEN has castling rights that only Chess960 allows (decided from the text).

    A right names a rook: ``K``/``Q`` the outermost rook on that side of the king (X-FEN), a
    file letter that rook's file (Shredder-FEN). Chess960 is needed when a valid right's king
    is off the e-file or its rook off the a- or h-file; rights naming no rook are ignored, and
    malformed FENs answer False (the board reports them).
    """
    fields = fen.split()
    if len(fields) < 3 or fields[2] == "-":
        return False
    ranks = fields[0].split("/")
    if len(ranks) != 8:
        return False
    for text, king, rook, upper in ((ranks[7], "K", "R", True), (ranks[0], "k", "r", False)):
        row = "".join("." * int(ch) if ch.isdigit() else ch for ch in text)
        home = row.find(king)
        if len(row) != 8 or home < 0:
            continue
        for right in fields[2]:
            if right.isupper() != upper:
                continue
            letter = right.upper()
            if letter == "K":
                files = [f for f in range(home + 1, 8) if row[f] == rook][-1:]
            elif letter == "Q":
                files = [f for f in range(home) if row[f] == rook][:1]
            else:
                file = ord(letter) - ord("A")
                files = [file] if 0 <= file < 8 and row[file] == rook else []
            if files and (home != 4 or files[0] not in (0, 7)):
                return True
    return False
