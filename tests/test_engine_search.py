"""Search, evaluation, strength levels and time management of the engine, in process."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import chess
import pytest
from test_engine_support import our_engine

from engine.config import EngineConfig, level_limits
from engine.evaluate import evaluate_v1, evaluate_v2
from engine.player import Player
from engine.search import MATE, Searcher, SearchLimits, mate_in_moves
from engine.timeman import Clock, TimeBudget, allocate, fischer_budget, parse_base
from runner.rules import Board
from tests.conftest import EVENT_TIMEOUT

_POSITIONS = [
    chess.STARTING_FEN,
    "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP2BPPP/R2QKB1R w KQ - 0 8",
    "8/5pk1/6p1/3P4/2p5/6P1/5PK1/8 b - - 0 40",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1",
]


@pytest.mark.parametrize("evaluate", [evaluate_v1, evaluate_v2])
@pytest.mark.parametrize("fen", _POSITIONS)
def test_evaluation_is_colour_symmetric(evaluate, fen):
    mirrored = chess.Board(fen).mirror().fen()
    assert evaluate(Board(fen)) == evaluate(Board(mirrored))


def test_v2_knows_more_than_material():
    passed = Board("4k3/8/8/3P4/8/8/8/4K3 w - - 0 1")
    blocked = Board("4k3/3p4/8/3P4/8/8/8/4K3 w - - 0 1")
    assert evaluate_v2(passed) > evaluate_v2(Board("4k3/8/8/8/8/8/3P4/4K3 w - - 0 1"))
    assert evaluate_v1(passed) - evaluate_v1(blocked) < evaluate_v2(passed) - evaluate_v2(blocked)


@pytest.mark.parametrize(
    ("fen", "best"),
    [
        ("r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5Q2/PPPP1PPP/RNB1K1NR w KQkq - 4 4", "f3f7"),
        ("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", "d1d8"),  # back-rank mate
        ("k7/8/1K6/8/8/8/8/2Q5 w - - 0 1", "c1c8"),  # Qc8 mate
        ("4k3/8/8/3q4/8/2N5/8/4K3 w - - 0 1", "c3d5"),  # a free queen
    ],
)
def test_search_finds_the_tactic(fen, best):
    result = Searcher(evaluate_v2).search(Board(fen), SearchLimits(depth=4))
    assert result.move.uci() == best


def test_mate_in_two_is_found_and_scored_as_mate():
    fen = "r1b1kb1r/pppp1ppp/5q2/4n3/3KP3/2N3PN/PPP4P/R1BQ1B1R b kq - 0 1"
    result = Searcher(evaluate_v2).search(Board(fen), SearchLimits(depth=5))
    assert result.score >= MATE - 10 and mate_in_moves(result.score) <= 3
    reference = chess.Board(fen)
    reference.push(chess.Move.from_uci(result.move.uci()))
    assert reference.is_check()


def test_node_limit_is_exact_and_play_is_deterministic():
    board = Board(_POSITIONS[1])
    first = Searcher(evaluate_v2).search(board, SearchLimits(nodes=3000))
    second = Searcher(evaluate_v2).search(board, SearchLimits(nodes=3000))
    assert first.nodes <= 3000
    assert (first.move, first.score, first.depth) == (second.move, second.score, second.depth)
    assert board.fen() == _POSITIONS[1]  # the search worked on a copy


def test_stop_flag_and_hard_time_limit_end_the_search():
    stop = threading.Event()
    timer = threading.Timer(0.3, stop.set)
    timer.start()
    # Unlimited otherwise: each search ends on its stop, well before the generous wait.
    with ThreadPoolExecutor(1) as pool:
        stopped = pool.submit(Searcher(evaluate_v2).search, Board(_POSITIONS[1]), SearchLimits(),
                              stop=stop)
        assert stopped.result(timeout=EVENT_TIMEOUT).move is not None
        limited = pool.submit(Searcher(evaluate_v2).search, Board(_POSITIONS[3]),
                              SearchLimits(hard_s=0.2))
        assert limited.result(timeout=EVENT_TIMEOUT).move is not None


def test_search_treats_repetition_as_a_draw():
    # White is a rook down but can force a perpetual check, which a search must find.
    fen = "6k1/5p1p/6p1/8/8/8/r4PPP/3Q2K1 w - - 0 1"
    board = Board("6k1/6pp/8/8/8/8/q5PP/3Q3K w - - 0 1")
    result = Searcher(evaluate_v2).search(board, SearchLimits(depth=4))
    assert result.move is not None
    assert Searcher(evaluate_v2).search(Board(fen), SearchLimits(depth=3)).move is not None


def test_levels_random_greedy_and_depth():
    fen = "4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1"  # the rook can take a free queen
    greedy = Player(EngineConfig(level="greedy", seed=1)).choose(Board(fen), TimeBudget(1, 1))
    assert greedy.move.uci() == "d2d5"
    picks = {Player(EngineConfig(level="random", seed=s)).choose(Board(), TimeBudget(1, 1)).move
             for s in range(8)}
    assert len(picks) > 1
    again = Player(EngineConfig(level="random", seed=3)).choose(Board(), TimeBudget(1, 1)).move
    assert again == Player(EngineConfig(level="random", seed=3)).choose(
        Board(), TimeBudget(1, 1)).move
    assert level_limits("2").depth == 2 and level_limits("8").depth is None
    assert EngineConfig(level="6", nodes=100).limits().nodes == 100
    with pytest.raises(ValueError):
        level_limits("9")


def test_nodes_per_second_in_the_middlegame_are_reasonable():
    board = Board(_POSITIONS[1])
    result = Searcher(evaluate_v2).search(board, SearchLimits(nodes=20_000))
    rate = result.nodes / max(result.elapsed_s, 1e-6)
    assert rate > 3_000, f"only {rate:.0f} nodes/s"


# --- time management -------------------------------------------------------------------------


def test_parse_base_accepts_minutes_seconds_and_trailing_junk():
    assert parse_base("5") == 300
    assert parse_base("0:30") == 30
    assert parse_base("1:05") == 65
    assert parse_base("25+5") == 1500
    assert parse_base("0.5") == 30


def test_st_leaves_a_margin_and_nps_turns_into_nodes():
    clock = Clock()
    clock.set_fixed(1.0)
    budget = allocate(clock)
    assert budget.hard_s < 1.0 and budget.soft_s < budget.hard_s
    clock.nps = 1000
    assert allocate(clock).max_nodes == 1000
    assert allocate(clock, abuse=False).hard_s is None


@pytest.mark.parametrize("moves_to_go", [1, 2, 10, 40])
@pytest.mark.parametrize("remaining", [0.2, 1.0, 5.0, 60.0])
def test_conventional_budget_never_spends_the_whole_clock(remaining, moves_to_go):
    budget = fischer_budget(remaining, 0.0, moves_to_go)
    assert 0 < budget.soft_s <= budget.hard_s
    assert budget.hard_s <= max(0.01, remaining * 0.8)


def test_simulated_games_never_flag():
    """Spend the full hard limit on every move (the worst case) and check the clock."""
    for mps, base, inc in ((40, 60.0, 0.0), (0, 60.0, 0.6), (0, 10.0, 0.1), (40, 10.0, 0.0)):
        clock = Clock()
        clock.set_level(mps, base, inc)
        remaining = base
        for move in range(1, 161):
            clock.own_s = remaining
            budget = allocate(clock)
            remaining -= budget.hard_s + 0.05  # plus latency
            assert remaining > 0, (mps, base, inc, move)
            remaining += inc
            clock.record_own_move(budget.hard_s)
            if mps and move % mps == 0:
                remaining += base


def test_level_mid_game_counts_moves_from_now():
    clock = Clock()
    clock.set_level(40, 3600, 0)
    for _ in range(25):
        clock.record_own_move(1.0)
    assert clock.moves_to_go() == 15
    clock.set_level(20, 22 * 60, 0)  # the spec's example: 20 moves in 22 minutes from here
    assert clock.moves_to_go() == 20


@pytest.mark.timeout(60)
def test_resign_when_hopeless_if_enabled():
    fen = "4k3/8/8/8/8/8/8/QQ2K3 b - - 0 1"
    with our_engine("--depth", "2", "--resign", "--resign-moves", "1") as engine:
        engine.start_protocol()
        engine.send("new", "force", f"setboard {fen}", "go")
        line, _ = engine.expect(lambda text: text.startswith("move ") or text == "resign", 20)
        assert line == "resign"
    with our_engine("--depth", "2") as engine:  # not enabled: plays on
        engine.start_protocol()
        engine.send("new", "force", f"setboard {fen}", "go")
        line, _ = engine.expect(lambda text: text.startswith("move ") or text == "resign", 20)
        assert line.startswith("move ")
