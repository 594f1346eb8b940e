"""The rules core against third-party corpora: perft counts, SAN cases and FIDE game ends."""

from __future__ import annotations

import json

import pytest

from runner.rules import Board, InvalidFenError, Move, Termination, perft
from tests.conftest import SHARED_DATA, shared_file


def _perft_cases(name: str, chess960: bool, max_depth: int) -> list:
    path = SHARED_DATA / name
    if not path.exists():
        return [pytest.param(None, None, None, None, marks=pytest.mark.skip(reason=f"{path} absent"))]
    cases = []
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        fen, *depths = line.split(";")
        for item in depths:
            key, value = item.split()
            depth = int(key[1:])
            if depth == max_depth:
                cases.append(pytest.param(fen.strip(), chess960, depth, int(value), id=f"{name}:{lineno}"))
    return cases


@pytest.mark.parametrize(("fen", "chess960", "depth", "expected"),
                         _perft_cases("perft.epd", False, 3) + _perft_cases("perft960.epd", True, 3))
def test_perft_depth3(fen: str, chess960: bool, depth: int, expected: int) -> None:
    chess = pytest.importorskip("chess")
    if chess.Board(fen, chess960=chess960).status():
        # A move-generator corner case no legal game reaches (python-chess flags it too):
        # refused by default, still countable when asked for explicitly.
        with pytest.raises(InvalidFenError, match="no legal move can have given"):
            Board(fen, chess960=chess960)
        board = Board(fen, chess960=chess960, strict=False)
    else:
        board = Board(fen, chess960=chess960)
    assert perft(board, depth) == expected


CLASSIC = [
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 5, 4865609),
    ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 4, 4085603),
    ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 5, 674624),
    ("r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", 4, 422333),
    ("rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", 4, 2103487),
    ("r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", 4, 3894594),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("fen", "depth", "expected"), CLASSIC, ids=["start", "kiwipete", "pos3", "pos4", "pos5", "pos6"]
)
def test_perft_classic_deep(fen: str, depth: int, expected: int) -> None:
    assert perft(Board(fen), depth) == expected


def _corpus_board(fen: str, chess960: bool) -> Board:
    """A corpus position; one that python-chess flags as unreachable must be refused by
    default (and is then set up unchecked, for the move-generation question it asks)."""
    chess = pytest.importorskip("chess")
    if chess.Board(fen, chess960=chess960).status():
        with pytest.raises(InvalidFenError):
            Board(fen, chess960=chess960)
        return Board(fen, chess960=chess960, strict=False)
    return Board(fen, chess960=chess960)


def _san_cases() -> list:
    path = SHARED_DATA / "san.json"
    if not path.exists():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{path} absent"))]
    cases = json.loads(path.read_text())["cases"]
    return [pytest.param(c, id=f"{i}-{c['kind']}") for i, c in enumerate(cases)]


@pytest.mark.parametrize("case", _san_cases())
def test_san_corpus(case: dict) -> None:
    board = _corpus_board(case["fen"], case["chess960"])
    move = board.parse_uci(case["uci"])
    assert board.san(move) == case["san"]
    assert board.lan(move) == case["lan"]
    assert board.parse_san(case["san"]) == move
    assert board.parse_san(case["lan"]) == move
    reread = _corpus_board(board.fen(), case["chess960"])
    assert reread.fen() == board.fen()
    assert reread.fen(shredder=True) == board.fen(shredder=True)
    # The game loop's form: the same SAN, and the move left played (as push would leave it).
    pushed = _corpus_board(case["fen"], case["chess960"])
    assert pushed.san_and_push(move) == case["san"]
    board.push(move)
    assert pushed.fen() == board.fen() and pushed.move_stack == board.move_stack
    assert pushed.is_repetition(1) and pushed.peek() == move


def _outcome_cases() -> list:
    path = SHARED_DATA / "outcomes.json"
    if not path.exists():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{path} absent"))]
    return [pytest.param(c, id=c["name"]) for c in json.loads(path.read_text())]


@pytest.mark.parametrize("case", _outcome_cases())
def test_fide_outcomes(case: dict) -> None:
    board = _corpus_board(case["fen"], case.get("chess960", False))
    for uci in case["moves"]:
        board.push_uci(uci)
    exp = case["expected"]
    assert board.is_checkmate() == exp["checkmate"]
    assert board.is_stalemate() == exp["stalemate"]
    assert board.is_check() == exp["check"]
    assert board.can_claim_threefold_repetition() == exp["threefold_claimable"]
    assert board.is_fivefold_repetition() == exp["fivefold"]
    assert board.can_claim_fifty_moves() == exp["fifty_claimable"]
    assert board.is_seventyfive_moves() == exp["seventyfive"]
    assert board.is_insufficient_material() == exp["insufficient_material"]
    assert board.has_insufficient_material(True) == exp["white_insufficient"]
    assert board.has_insufficient_material(False) == exp["black_insufficient"]
    assert board.is_repetition(3) == exp["threefold_on_board"]
    assert board.is_fifty_moves() == exp["fifty_on_board"]
    assert board.repetition_count() == exp["repetition_count"]
    assert board.halfmove_clock == exp["halfmove_clock"]
    assert board.fen(en_passant="fen") == exp["fen_after"]
    assert board.fen() == exp["fen_after_legal_ep"]
    assert sorted(m.uci() for m in board.legal_moves) == sorted(exp["legal_moves"])
    outcome = board.outcome()
    assert (outcome.result if outcome else None) == exp["outcome"]
    assert (outcome.termination.value if outcome else None) == exp["termination"]
    claimed = board.outcome(claim_draw=True)
    assert (claimed.result if claimed else None) == exp["outcome_if_claimed"]
    assert (claimed.termination.value if claimed else None) == exp["termination_if_claimed"]
    for uci in case.get("illegal_moves", []):
        assert not board.is_legal(Move.from_uci(uci))


def test_corpus_files_present_or_skip() -> None:
    shared_file("perft.epd")
    assert Termination.CHECKMATE.value == "checkmate"
