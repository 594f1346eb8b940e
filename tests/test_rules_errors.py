"""Error cases of the rules core: bad FEN, bad or illegal moves, each with a message naming the fault."""

from __future__ import annotations

import subprocess
import sys

import pytest

from runner.rules import (
    AmbiguousMoveError,
    Board,
    IllegalMoveError,
    InvalidFenError,
    InvalidMoveError,
    Move,
)

BAD_FENS = [
    ("", "empty FEN"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1", "7 ranks"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNRR w KQkq - 0 1", "covers 9 files"),
    ("rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "invalid character '9'"),
    ("rnbqkbnr/ppppxppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "invalid character 'x'"),
    ("rnbqkbnr/pppppppp/44/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "two digits in a row"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", "must be 'w' or 'b', got 'x'"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQxq - 0 1", "castling field 'KQxq'"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e5 0 1", "en passant field 'e5'"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - -1 1", "halfmove clock field"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 x", "fullmove number field"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 extra", "7 fields"),
    # Only ASCII digits count: Arabic-Indic digits and a superscript two are not FEN counters.
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - \u0663 1", "halfmove clock field"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 \u0661\u0662", "fullmove number field"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - \u00b2 1", "halfmove clock field"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 \u00b2", "fullmove number field"),
    ("rnbq1bnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQ - 0 1", "exactly one black king, found 0"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBKKBNR w kq - 0 1", "exactly one white king, found 2"),
    ("rnbqkbnP/pppppppp/8/8/8/8/PPPPPPP1/RNBQKBNR w KQq - 0 1", "pawn on the first or eighth rank"),
]


@pytest.mark.parametrize(("fen", "message"), BAD_FENS)
def test_bad_fen_names_field_and_value(fen: str, message: str) -> None:
    with pytest.raises(InvalidFenError) as info:
        Board(fen)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)


def test_short_fen_fields_default() -> None:
    assert Board("8/8/8/8/8/8/8/K6k w").fen() == "8/8/8/8/8/8/8/K6k w - - 0 1"


def test_san_errors_name_move_and_position() -> None:
    board = Board("4k3/8/8/8/8/8/8/4KN1N w - - 0 1")
    with pytest.raises(AmbiguousMoveError, match=r"'Ng3'.*4k3/8"):
        board.parse_san("Ng3")
    with pytest.raises(IllegalMoveError, match=r"'Nd5'.*4k3/8"):
        board.parse_san("Nd5")
    with pytest.raises(InvalidMoveError, match=r"'Zz9'"):
        board.parse_san("Zz9")
    assert board.parse_san("Nhg3") == Move.from_uci("h1g3")


@pytest.mark.parametrize(("fen", "san", "uci"), [
    ("8/4P3/8/8/8/8/8/k6K w - - 0 1", "e8Q", "e7e8q"),
    ("8/4P3/8/8/8/8/8/k6K w - - 0 1", "e8=q", "e7e8q"),
    ("8/4P3/8/8/8/8/8/k6K w - - 0 1", "e8=N+", "e7e8n"),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "0-0", "e1g1"),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "O-O-O+", "e1c1"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "Ngf3", "g1f3"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "Ng1f3", "g1f3"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "e2-e4", "e2e4"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "Nf3#", "g1f3"),
    ("rnbqkbnr/ppp1pppp/8/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3", "exd6e.p.", "e5d6"),
])
def test_san_read_tolerantly(fen: str, san: str, uci: str) -> None:
    assert Board(fen).parse_san(san) == Move.from_uci(uci)


def test_illegal_coordinate_moves_name_move_and_position() -> None:
    board = Board()
    with pytest.raises(IllegalMoveError, match=r"'e2e5'.*rnbqkbnr"):
        board.parse_uci("e2e5")
    with pytest.raises(InvalidMoveError, match=r"'e9e4'"):
        board.parse_uci("e9e4")
    with pytest.raises(IllegalMoveError):
        board.push_uci("0000")


def test_perft_cli_counts_and_divides() -> None:
    out = subprocess.run([sys.executable, "-m", "runner", "perft", "startpos", "3"],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "8902"
    out = subprocess.run([sys.executable, "-m", "runner", "perft", "startpos", "2", "--divide"],
                         capture_output=True, text=True, check=True).stdout
    lines = dict(line.split(": ") for line in out.splitlines() if ": " in line)
    assert lines["e2e4"] == "20" and lines["Nodes"] == "400" and len(lines) == 21
    bad = subprocess.run([sys.executable, "-m", "runner", "perft", "nonsense", "1"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "bad FEN 'nonsense'" in bad.stderr
