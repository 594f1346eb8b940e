"""Move notation and result claims of the engine, in process on the rules core."""

from __future__ import annotations

import chess
import pytest

from engine.config import Castling960
from engine.notation import (
    IllegalMoveTextError,
    NotAMoveError,
    format_move,
    parse_move,
    rules_claim,
    score_for_output,
)
from engine.search import MATE, MATE_BOUND
from runner.rules import Board

_960 = "nrbbqknr/pppppppp/8/8/8/8/PPPPPPPP/NRBBQKNR w KQkq - 0 1"
_960_READY = "nrbbqk1r/ppppp1pp/5n2/5p2/8/5N2/PPPPPPPP/NRBBQK1R w KQkq - 2 3"


def test_chess960_castling_written_as_o_o_or_king_takes_rook():
    board = Board(_960_READY, chess960=True)
    castles = [m for m in board.generate_legal_moves() if board.is_castling(m)]
    assert [m.uci() for m in castles] == ["f1h1"]
    assert format_move(board, castles[0], Castling960.OO) == "O-O"
    assert format_move(board, castles[0], Castling960.KING_TAKES_ROOK) == "f1h1"
    # Whatever we write, python-chess (a host nobody here wrote) reads the same move.
    reference = chess.Board(_960_READY, chess960=True)
    for style in Castling960:
        assert reference.parse_xboard(format_move(board, castles[0], style)).uci() == "f1h1"


def test_standard_castling_is_the_kings_two_square_move():
    board = Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    texts = sorted(format_move(board, m) for m in board.generate_legal_moves()
                   if board.is_castling(m))
    assert texts == ["e1c1", "e1g1"]


@pytest.mark.parametrize("text", ["O-O", "0-0", "O-O+", "f1h1"])
def test_parse_move_accepts_every_castling_form(text):
    board = Board(_960_READY, chess960=True)
    move = parse_move(board, text)
    assert board.is_castling(move)
    # f1g1 stays what it says: a one-square king move, not castling.
    assert not board.is_castling(parse_move(board, "f1g1"))


@pytest.mark.parametrize(("text", "uci"), [("e1g1", "e1g1"), ("e1h1", "e1g1"), ("O-O-O", "e1c1")])
def test_standard_castling_accepts_king_takes_rook_and_o_o(text, uci):
    board = Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    assert parse_move(board, text).uci() == uci


def test_parse_move_tells_non_moves_from_illegal_moves():
    board = Board()
    with pytest.raises(NotAMoveError):
        parse_move(board, "hello")
    with pytest.raises(IllegalMoveTextError):
        parse_move(board, "e2e5")
    with pytest.raises(IllegalMoveTextError):
        parse_move(board, "O-O")
    assert parse_move(board, "e2e4").uci() == "e2e4"
    promo = Board("8/P6k/8/8/8/8/8/K7 w - - 0 1")
    assert parse_move(promo, "a7a8N").promotion == 2


def test_rules_claims_match_python_chess():
    cases = {
        "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3": "0-1 {Black mates}",
        "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1": "1/2-1/2 {Stalemate}",
        "8/8/4k3/8/8/3K4/8/8 w - - 0 1": "1/2-1/2 {Insufficient material}",
        "8/8/4k3/8/8/3K4/8/R7 w - - 100 80": "1/2-1/2 {Draw by fifty move rule}",
    }
    for fen, expected in cases.items():
        claim = rules_claim(Board(fen))
        assert (claim.line() if claim else None) == expected
        reference = chess.Board(fen).outcome(claim_draw=True)
        assert reference is not None and reference.result() == expected.split()[0]
    # One short of fifty moves: the side to move could reach it, but may not claim it yet.
    assert rules_claim(Board("8/8/4k3/8/8/3K4/8/R7 w - - 99 80")) is None


def test_mate_scores_are_reported_as_100000_plus_moves():
    assert score_for_output(35, MATE, MATE_BOUND) == 35
    assert score_for_output(MATE - 1, MATE, MATE_BOUND) == 100_001
    assert score_for_output(MATE - 3, MATE, MATE_BOUND) == 100_002
    assert score_for_output(-(MATE - 2), MATE, MATE_BOUND) == -100_001
