"""Whole games: the engine against itself through force/go, and under CECP hosts nobody here
wrote (python-chess's `popen_xboard`) against itself and against Debian engines."""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import chess
import chess.engine
import pytest
from test_engine_support import REPO, EnginePipe, our_engine, play_cecp_game

from engine.config import EngineConfig
from engine.player import Player
from engine.selfplay import play_game

_ENGINE = [sys.executable, "-m", "engine"]


def _debian_engine(name: str) -> str:
    """Path of a Debian engine (they live in /usr/games, often not on PATH), or skip."""
    found = shutil.which(name) or (f"/usr/games/{name}" if Path(f"/usr/games/{name}").exists()
                                   else None)
    if found is None:
        pytest.skip(f"{name} is not installed (apt-get install {name})")
    return found


def _popen(*args: str) -> chess.engine.SimpleEngine:
    return chess.engine.SimpleEngine.popen_xboard([*_ENGINE, *args], cwd=REPO, timeout=20)


def _play_hosted(white, black, board: chess.Board, limit_for, *, max_plies: int = 300):
    """python-chess hosts a game; returns the final board, the smallest clock left and the
    number of castling moves played."""
    lowest_clock = float("inf")
    castles = 0
    clocks = {chess.WHITE: None, chess.BLACK: None}
    for _ in range(max_plies):
        if board.is_game_over(claim_draw=True):
            break
        engine = white if board.turn else black
        limit, clocks = limit_for(board, clocks)
        t0 = time.monotonic()
        played = engine.play(board, limit, game="hosted")
        spent = time.monotonic() - t0
        if clocks[board.turn] is not None:
            clocks[board.turn] -= spent
            lowest_clock = min(lowest_clock, clocks[board.turn])
            clocks[board.turn] += limit.white_inc if board.turn else limit.black_inc
        assert played.move in board.legal_moves, (played, board.fen())
        castles += board.is_castling(played.move)
        board.push(played.move)
    return board, lowest_clock, castles


def _incremental(base: float, inc: float):
    def limit_for(board, clocks):
        clocks = {c: (base if v is None else v) for c, v in clocks.items()}
        return chess.engine.Limit(white_clock=clocks[chess.WHITE], black_clock=clocks[chess.BLACK],
                                  white_inc=inc, black_inc=inc), clocks
    return limit_for


@pytest.mark.timeout(120)
def test_full_game_against_itself_through_force_and_go():
    board = chess.Board()
    claims = []
    with our_engine("--depth", "2", "--seed", "1") as engine:
        engine.start_protocol()
        engine.send("new", "force")
        for _ in range(600):
            engine.send("go")
            line, _ = engine.expect(lambda text: text.startswith(("move ", "1-0", "0-1", "1/2")), 20)
            if not line.startswith("move "):
                claims.append(line)
                break
            board.push_xboard(line.split()[1])
            engine.send("force")
            following = engine.sync(len(board.move_stack))
            claims.extend(following)
            if following:
                break
    assert claims, "the game did not end by rule"
    outcome = board.outcome(claim_draw=True)
    assert outcome is not None
    assert claims[0].split()[0] == outcome.result()


@pytest.mark.timeout(120)
def test_python_chess_hosts_a_complete_game_with_a_time_control():
    white, black = _popen("--level", "3"), _popen("--level", "2", "--version", "v1")
    try:
        board, lowest, _ = _play_hosted(white, black, chess.Board(), _incremental(20.0, 0.2))
    finally:
        white.quit()
        black.quit()
    assert board.is_game_over(claim_draw=True) or len(board.move_stack) >= 300
    assert lowest > 0, f"an engine overstepped its clock ({lowest:.2f} s)"


@pytest.mark.timeout(120)
def test_python_chess_hosts_a_game_from_setboard_with_depth_limits():
    fen = "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP2BPPP/R2QKB1R w KQ - 0 8"
    white, black = _popen(), _popen("--version", "v1")
    try:
        board, _, _ = _play_hosted(white, black, chess.Board(fen),
                                lambda b, c: (chess.engine.Limit(depth=2), c))
    finally:
        white.quit()
        black.quit()
    assert board.move_stack and (board.is_game_over(claim_draw=True)
                                 or len(board.move_stack) >= 300)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("position", [518, 0, 959])
def test_python_chess_hosts_a_chess960_game(position):
    board = chess.Board.from_chess960_pos(position)
    board.chess960 = True
    white, black = _popen("--seed", "3"), _popen("--version", "v1")
    try:
        board, _, _ = _play_hosted(white, black, board,
                                lambda b, c: (chess.engine.Limit(depth=2), c), max_plies=160)
    finally:
        white.quit()
        black.quit()
    assert len(board.move_stack) > 10


_CASTLING_MATE_960 = "2rkr3/2p1p3/8/8/8/8/8/RK6 w A - 0 1"  # only O-O-O (Kc1, Rd1) mates


@pytest.mark.timeout(60)
def test_python_chess_reads_our_chess960_castling_and_we_read_its():
    board = chess.Board(_CASTLING_MATE_960, chess960=True)
    engine = _popen("--depth", "2")
    try:
        played = engine.play(board, chess.engine.Limit(depth=2))
        assert board.is_castling(played.move)
        board.push(played.move)
        assert board.is_checkmate()
        # And the other way: python-chess sends its own castling (O-O) in a game it hosts.
        start = chess.Board("rk4r1/pppppppp/8/8/8/8/PPPPPPPP/RK4R1 w GAga - 0 1", chess960=True)
        start.push_san("O-O")  # king b1->g1, rook g1->f1
        reply = engine.play(start, chess.engine.Limit(depth=1))
        assert reply.move in start.legal_moves
    finally:
        engine.quit()


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("style", "text"), [("oo", "O-O-O"), ("kxr", "b1a1")])
def test_castling960_output_styles_over_pipes(style, text):
    with our_engine("--depth", "2", "--castling960", style) as engine:
        engine.start_protocol()
        engine.send("new", "variant fischerandom", "force", f"setboard {_CASTLING_MATE_960}",
                    "go")
        line, _ = engine.expect_prefix("move ", 20)
        assert line == f"move {text}"
        assert engine.read(5) == "1-0 {White mates}"


def test_fixed_depth_play_is_deterministic_and_v2_beats_v1_in_a_sample():
    config = EngineConfig(depth=2, seed=5)
    first = play_game(Player(config), Player(config), chess.STARTING_FEN, max_plies=40)
    again = play_game(Player(config), Player(config), chess.STARTING_FEN, max_plies=40)
    assert first == again
    v2, v1 = Player(EngineConfig(depth=2, version="v2")), Player(EngineConfig(depth=2, version="v1"))
    record = play_game(v2, v1, "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2")
    assert record.result in ("1-0", "0-1", "1/2-1/2")


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_python_chess_hosts_our_engine_against_a_debian_engine():
    opponent_path = _debian_engine("hoichess")
    ours = _popen("--level", "8")
    theirs = chess.engine.SimpleEngine.popen_xboard([opponent_path], timeout=20)
    try:
        board, lowest, _ = _play_hosted(theirs, ours, chess.Board(), _incremental(15.0, 0.1),
                                     max_plies=300)
    finally:
        ours.quit()
        theirs.quit()
    assert board.is_game_over(claim_draw=True) or len(board.move_stack) >= 300


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_game_against_fairymax_through_our_pipe_host():
    # python-chess cannot host fairymax: it requires feature setboard=1, which fairymax lacks.
    fairymax = _debian_engine("fairymax")
    ours, theirs = our_engine("--level", "8"), EnginePipe([fairymax])
    try:
        outcome = play_cecp_game(ours, theirs, moves_per_session=40, base_s=8.0)
    finally:
        ours.close()
        theirs.close()
    assert outcome.result in ("1-0", "0-1", "1/2-1/2"), outcome
    assert "forfeit" not in outcome.reason and "illegal" not in outcome.reason, outcome


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize(("moves", "base", "inc"), [(0, 10.0, 0.1), (40, 10.0, 0.0)])
def test_no_time_forfeit_in_fast_games_through_our_pipe_host(moves, base, inc):
    white, black = our_engine("--level", "8"), our_engine("--level", "8", "--version", "v1")
    try:
        outcome = play_cecp_game(white, black, moves_per_session=moves, base_s=base,
                                 increment_s=inc, max_plies=200)
    finally:
        white.close()
        black.close()
    assert "forfeit" not in outcome.reason and "no move" not in outcome.reason, outcome
    assert outcome.max_overrun_s == 0.0
