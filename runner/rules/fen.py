"""Reading and writing FEN, X-FEN and Shredder-FEN fields (pure functions, no board state).

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

from dataclasses import dataclass

from runner.rules.squares import (
    BB_FILE_A,
    BB_FILE_H,
    BB_RANK_1,
    BB_RANK_8,
    BB_SQUARES,
    FILE_NAMES,
    PIECE_SYMBOLS,
    SQUARE_NAMES,
    Bitboard,
    Square,
    lsb,
    msb,
    scan_forward,
)

STARTING_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
STARTING_BOARD_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"


class InvalidFenError(ValueError):
    """A FEN string that cannot describe a position; the message names the field and value."""


@dataclass(frozen=True, slots=True)
class FenFields:
    """The parsed fields of a FEN: placement as (square, symbol) pairs and the game state."""

    placement: tuple[tuple[Square, str], ...]
    turn: bool
    castling: str
    ep_square: Square | None
    halfmove_clock: int
    fullmove_number: int


def parse_placement(board_fen: str, fen: str) -> tuple[tuple[Square, str], ...]:
    """Parse the piece-placement field; raises ``InvalidFenError`` naming the rank at fault."""
    ranks = board_fen.split("/")
    if len(ranks) != 8:
        raise InvalidFenError(
            f"piece placement field {board_fen!r} has {len(ranks)} ranks, expected 8 (in {fen!r})"
        )
    pieces = []
    for index, rank_text in enumerate(ranks):
        rank = 7 - index
        file = 0
        previous_digit = False
        for ch in rank_text:
            if ch in "12345678":
                if previous_digit:
                    raise InvalidFenError(
                        f"piece placement rank {rank + 1} {rank_text!r} has two digits in a row"
                        f" (in {fen!r})"
                    )
                file += int(ch)
                previous_digit = True
            elif ch.lower() in "pnbrqk":
                if file < 8:
                    pieces.append((rank * 8 + file, ch))
                file += 1
                previous_digit = False
            else:
                raise InvalidFenError(
                    f"piece placement rank {rank + 1} {rank_text!r} has an invalid character"
                    f" {ch!r} (in {fen!r})"
                )
        if file != 8:
            raise InvalidFenError(
                f"piece placement rank {rank + 1} {rank_text!r} covers {file} files, expected 8"
                f" (in {fen!r})"
            )
    return tuple(pieces)


def parse_fen(fen: str) -> FenFields:
    """Split and check every field of a FEN or X-FEN/Shredder-FEN string."""
    if not isinstance(fen, str):
        raise InvalidFenError(f"FEN must be a string, got {type(fen).__name__}")
    parts = fen.split()
    if not parts:
        raise InvalidFenError("empty FEN")
    if len(parts) > 6:
        raise InvalidFenError(f"FEN has {len(parts)} fields, expected at most 6: {fen!r}")
    placement = parse_placement(parts[0], fen)
    turn_text = parts[1] if len(parts) > 1 else "w"
    if turn_text not in ("w", "b"):
        raise InvalidFenError(f"side to move field must be 'w' or 'b', got {turn_text!r} (in {fen!r})")
    castling = parts[2] if len(parts) > 2 else "-"
    if not _valid_castling_field(castling):
        raise InvalidFenError(f"castling field {castling!r} is not valid (in {fen!r})")
    ep_text = parts[3] if len(parts) > 3 else "-"
    ep_square: Square | None = None
    if ep_text != "-":
        if ep_text not in SQUARE_NAMES or ep_text[1] not in ("3", "6"):
            raise InvalidFenError(f"en passant field {ep_text!r} is not a square on rank 3 or 6 (in {fen!r})")
        ep_square = SQUARE_NAMES.index(ep_text)
    halfmove = _parse_counter(parts[4] if len(parts) > 4 else "0", "halfmove clock", fen, minimum=0)
    fullmove = _parse_counter(parts[5] if len(parts) > 5 else "1", "fullmove number", fen, minimum=0)
    return FenFields(placement, turn_text == "w", castling, ep_square, halfmove, max(fullmove, 1))


def _parse_counter(text: str, name: str, fen: str, minimum: int) -> int:
    """Parse a non-negative FEN counter field of ASCII digits."""
    # str.isdigit() also takes Arabic-Indic or superscript digits, which no FEN writer emits
    # and int() either converts silently or refuses with its own message.
    if not text or not all(ch in "0123456789" for ch in text):
        raise InvalidFenError(f"{name} field must be a non-negative integer, got {text!r} (in {fen!r})")
    value = int(text)
    if value < minimum:
        raise InvalidFenError(f"{name} field must be at least {minimum}, got {text!r} (in {fen!r})")
    return value


def _valid_castling_field(text: str) -> bool:
    """True for '-' or up to two white then up to two black castling flags, no repeats."""
    if text == "-":
        return True
    if not text or len(text) > 4 or len(set(text)) != len(text):
        return False
    white = [c for c in text if c.isupper()]
    black = [c for c in text if c.islower()]
    if len(white) > 2 or len(black) > 2 or text != "".join(white) + "".join(black):
        return False
    return all(c in "KQABCDEFGH" for c in white) and all(c in "kqabcdefgh" for c in black)


def castling_rights_from_field(
    castling: str, white_rooks: Bitboard, black_rooks: Bitboard, kings: dict[bool, Square | None]
) -> Bitboard:
    """Rook squares named by a castling field (KQkq as outermost rooks, or file letters)."""
    rights = 0
    for flag in "" if castling == "-" else castling:
        color = flag.isupper()
        backrank = BB_RANK_1 if color else BB_RANK_8
        rooks = (white_rooks if color else black_rooks) & backrank
        king = kings[color]
        lower = flag.lower()
        if lower == "q":
            if rooks and king is not None and lsb(rooks) < king:
                rights |= rooks & -rooks
            else:
                rights |= BB_FILE_A & backrank
        elif lower == "k":
            if rooks and king is not None and king < msb(rooks):
                rights |= BB_SQUARES[msb(rooks)]
            else:
                rights |= BB_FILE_H & backrank
        else:
            rights |= BB_SQUARES[FILE_NAMES.index(lower) + (0 if color else 56)]
    return rights


def castling_field(
    rights: Bitboard,
    white_rooks: Bitboard,
    black_rooks: Bitboard,
    kings: dict[bool, Square | None],
    shredder: bool,
) -> str:
    """Write castling rights: X-FEN (KQkq unless a rook is not the outermost) or Shredder-FEN."""
    out = []
    for color, backrank, rooks in ((True, BB_RANK_1, white_rooks), (False, BB_RANK_8, black_rooks)):
        king = kings[color]
        squares = sorted(scan_forward(rights & backrank), reverse=True)
        for rook_square in squares:
            file = rook_square & 7
            if shredder or king is None:
                ch = FILE_NAMES[file]
            else:
                a_side = file < (king & 7)
                others = rooks & backrank & ~BB_SQUARES[rook_square]
                outer = any(((o & 7) < file) == a_side for o in scan_forward(others))
                ch = FILE_NAMES[file] if outer else ("q" if a_side else "k")
            out.append(ch.upper() if color else ch)
    return "".join(out) or "-"


def placement_field(symbols: list[str | None]) -> str:
    """Write the piece-placement field from 64 symbols (a1 first), ``None`` for empty squares."""
    rows = []
    for rank in range(7, -1, -1):
        row = []
        empty = 0
        for file in range(8):
            symbol = symbols[rank * 8 + file]
            if symbol is None:
                empty += 1
            else:
                if empty:
                    row.append(str(empty))
                    empty = 0
                row.append(symbol)
        if empty:
            row.append(str(empty))
        rows.append("".join(row))
    return "/".join(rows)


__all__ = [
    "STARTING_FEN",
    "STARTING_BOARD_FEN",
    "InvalidFenError",
    "FenFields",
    "parse_fen",
    "parse_placement",
    "castling_rights_from_field",
    "castling_field",
    "placement_field",
    "PIECE_SYMBOLS",
]
