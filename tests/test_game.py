"""Whole games through `play_game` between bundled CECP engines over real pipes.

Every game is checked as `tests.bundled_games` describes (python-chess replays each record,
clocks are re-added, no process of the engines' groups survives a game).  The faults both
protocols share are in test_game_faults.py; the ones here are CECP's own (claims,
resignations) or the arbiter's.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

import chess
import pytest

from runner.clock import TimeControl
from runner.game.adjudication import AdjudicationRules, effective_score
from runner.game.play import play_game
from runner.game.record import GameRecord, GameTermination
from runner.protocol.cecp import CecpEngine
from runner.protocol.engine import ClockState, GameSetup, Side
from runner.rules import Board
from runner.types import MoveRecord, Variant
from tests.bundled_games import (
    CECP,
    RULES_ENDINGS,
    bundled,
    check_clocks,
    check_not_over,
    check_rules_ending,
    game_spec,
    leftover_processes,
    loser_won_by,
    our_children,
    own_times,
    replay,
    run_game,
)

# ------------------------------------------------------------------------------- normal games


@pytest.mark.timeout(60)
@pytest.mark.parametrize("seeds", [(1, 2), (3, 4), (5, 6)])
def test_normal_game_ends_by_the_rules_as_python_chess_replays_it(seeds):
    white = bundled("w", "--level", "1", "--seed", str(seeds[0]))
    black = bundled("b", "--level", "2", "--seed", str(seeds[1]))
    seen: list[str] = []
    played = run_game(white, black, game_spec("5+0.05"),
                      on_move=lambda move, board: seen.append(move.uci))
    record = played.record
    check_rules_ending(record)
    check_clocks(record)
    assert seen == [m.uci for m in record.moves]
    assert not record.replay
    engine_moves = [m for m in record.moves if not m.book]
    assert all(m.depth is not None and m.nodes is not None for m in engine_moves)
    assert all(m.score_cp is not None or m.mate is not None for m in engine_moves)
    assert all(text for text in record.transcripts)
    assert played.exit_codes == (0, 0)


@pytest.mark.timeout(60)
def test_fixed_time_per_move_game():
    white = bundled("w", "--level", "1", "--seed", "7")
    black = bundled("b", "--level", "1", "--seed", "8")
    played = run_game(white, black, game_spec("st=0.2", adjudication=AdjudicationRules(max_moves=15)))
    record = played.record
    assert record.termination in RULES_ENDINGS | {GameTermination.MAX_MOVES}
    if record.termination is GameTermination.MAX_MOVES:
        check_not_over(record)
        assert record.plies == 30
    else:
        check_rules_ending(record)
    assert all(m.time is not None and m.time < 0.2 for m in record.moves)


@pytest.mark.timeout(60)
def test_start_fen_and_opening_moves():
    fen = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq e6 0 2"
    opening = ("g1f3", "b8c6", "f1b5")
    spec = game_spec("5+0.05", start_fen=fen, opening_moves=opening)
    played = run_game(bundled("w", "--level", "1", "--seed", "3"),
                      bundled("b", "--level", "1", "--seed", "4"), spec)
    record = played.record
    check_rules_ending(record)
    assert [m.uci for m in record.moves[:3]] == list(opening)
    assert [m.san for m in record.moves[:3]] == ["Nf3", "Nc6", "Bb5"]
    assert all(m.book and m.time is None for m in record.moves[:3])
    assert not any(m.book for m in record.moves[3:])
    # Black moved first after the book: its engine was sent the position and the three moves.
    black_sent = [line for line in record.transcripts[1] if " > " in line]
    assert any("setboard " + fen in line for line in black_sent)
    assert any(line.endswith("usermove f1b5") for line in black_sent)
    check_clocks(record)


@pytest.mark.timeout(60)
def test_start_fen_with_black_to_move():
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 2 2"
    played = run_game(bundled("w", "--level", "1", "--seed", "1"),
                      bundled("b", "--level", "1", "--seed", "2"), game_spec(start_fen=fen))
    check_rules_ending(played.record)
    board = chess.Board(fen)
    assert board.parse_uci(played.record.moves[0].uci) in board.legal_moves


@pytest.mark.timeout(60)
@pytest.mark.parametrize("castling_output", ["oo", "kxr"])
def test_chess960_from_an_xfen_start_with_castling_both_ways(castling_output):
    # X-FEN: KQkq name the outermost rooks (g- and b-files); the kings stand on c1/c8.
    fen = "1rk3r1/pppppppp/8/8/8/8/PPPPPPPP/1RK3R1 w KQkq - 0 1"
    opening = ("c1g1", "c8b8")  # White O-O and Black O-O-O, written king-takes-rook
    spec = game_spec("5+0.05", start_fen=fen, opening_moves=opening, variant=Variant.FISCHERANDOM,
                     adjudication=AdjudicationRules(max_moves=60))
    white = bundled("w", "--level", "1", "--seed", "11", "--castling960", castling_output)
    black = bundled("b", "--level", "1", "--seed", "12", "--castling960", castling_output)
    record = run_game(white, black, spec).record
    assert [m.san for m in record.moves[:2]] == ["O-O", "O-O-O"]
    if record.termination is GameTermination.MAX_MOVES:
        check_not_over(record)
    else:
        check_rules_ending(record)
    board = replay(record)
    assert board.chess960
    for transcript in record.transcripts:
        assert any("variant fischerandom" in line for line in transcript)


_960_START = "1rk3r1/pppppppp/8/8/8/8/PPPPPPPP/1RK3R1 w KQkq - 0 1"


def _engine_castles_960(castling_output: str) -> GameRecord:
    """Seeds chosen so that White's engine castles by itself at ply 10 (depth 1 is reproducible)."""
    spec = game_spec("5+0.05", start_fen=_960_START, variant=Variant.FISCHERANDOM,
                     adjudication=AdjudicationRules(max_moves=60))
    white = bundled("w", "--level", "1", "--seed", "1", "--castling960", castling_output)
    black = bundled("b", "--level", "1", "--seed", "101", "--castling960", castling_output)
    return run_game(white, black, spec).record


@pytest.mark.timeout(60)
def test_chess960_engine_castling_as_king_takes_rook():
    record = _engine_castles_960("kxr")
    assert any(m.san.startswith("O-O") and not m.book for m in record.moves[:-1])
    assert not record.replay
    if record.termination is GameTermination.MAX_MOVES:
        check_not_over(record)
    else:
        check_rules_ending(record)


@pytest.mark.timeout(60)
def test_chess960_engine_castling_as_o_o():
    # The spec's 960 form: the protocol layer hands the move back in the arbiter's notation.
    record = _engine_castles_960("oo")
    assert not record.replay, record.reason
    assert any(m.san.startswith("O-O") and not m.book for m in record.moves[:-1])


@pytest.mark.timeout(60)
def test_a_runner_side_error_gives_no_result_and_a_replay_mark():
    def failing_hook(move: MoveRecord, board: Board) -> None:
        if board.fullmove_number == 4:
            raise RuntimeError("hook failed on purpose")

    played = run_game(bundled("w", "--level", "1", "--seed", "1"),
                      bundled("b", "--level", "1", "--seed", "2"), game_spec(), on_move=failing_hook)
    record = played.record
    assert record.replay
    assert (record.result, record.termination) == ("*", GameTermination.ERROR)
    assert "hook failed on purpose" in record.reason
    assert record.termination.pgn_tag == "unterminated"
    check_not_over(record)
    for transcript in record.transcripts:  # both engines were told the game is over
        assert any(line.endswith("> result * {" + record.reason + "}") for line in transcript)
    assert played.exit_codes == (0, 0)


@pytest.mark.timeout(60)
def test_max_moves_ends_the_game_as_a_draw():
    spec = game_spec("5+0.05", adjudication=AdjudicationRules(max_moves=8))
    record = run_game(bundled("w", "--level", "1", "--seed", "1"),
                      bundled("b", "--level", "1", "--seed", "2"), spec).record
    assert record.termination is GameTermination.MAX_MOVES
    assert record.result == "1/2-1/2"
    assert record.plies == 16
    check_not_over(record)


@pytest.mark.timeout(60)
def test_max_moves_counts_the_engines_plies_not_the_openings():
    # fastchess counts -maxmoves from the end of the opening (docs/adjudication.md).
    spec = game_spec("5+0.05", opening_moves=("e2e4", "e7e5", "g1f3"),
                     adjudication=AdjudicationRules(max_moves=4))
    record = run_game(bundled("w", "--level", "1", "--seed", "1"),
                      bundled("b", "--level", "1", "--seed", "2"), spec).record
    assert record.termination is GameTermination.MAX_MOVES, record.reason
    assert record.plies == 3 + 8
    assert [m.book for m in record.moves[:4]] == [True, True, True, False]


@pytest.mark.timeout(60)
def test_moves_per_session_control_carries_the_game_through_several_sessions():
    spec = game_spec("6/2", adjudication=AdjudicationRules(max_moves=20))
    record = run_game(bundled("w", "--level", "1", "--seed", "1"),
                      bundled("b", "--level", "1", "--seed", "2"), spec).record
    assert record.termination in RULES_ENDINGS | {GameTermination.MAX_MOVES}, record.reason
    assert record.plies > 2 * 6, "the game ended inside the first session"
    for white in (True, False):
        spent = own_times(record, white)
        # 2 s per 6 moves, unused time carried over: the clock never went below zero.
        used = 0.0
        for number, seconds in enumerate(spent, start=1):
            used += seconds
            assert used <= 2.0 * -(-number // 6)
    assert any(" > level 6 0:02 0" in line for line in record.transcripts[0])


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "fen,termination,result",
    [("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", GameTermination.STALEMATE, "1/2-1/2"),
     ("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1", GameTermination.CHECKMATE, "1-0"),
     ("8/8/4k3/8/8/3BK3/8/8 w - - 0 1", GameTermination.INSUFFICIENT_MATERIAL, "1/2-1/2")],
)
def test_a_start_position_that_is_already_over_ends_without_a_move(fen, termination, result):
    record = run_game(bundled("w", "--level", "1"), bundled("b", "--level", "1"),
                      game_spec(start_fen=fen)).record
    assert (record.termination, record.result, record.plies) == (termination, result, 0)
    check_rules_ending(record)


def test_an_illegal_opening_move_is_a_configuration_error():
    spec = game_spec(opening_moves=("e2e4", "e7e5", "e1e3"))

    async def scenario() -> None:
        engines = (CecpEngine(bundled("w")), CecpEngine(bundled("b")))  # never started
        await play_game(*engines, spec)

    with pytest.raises(ValueError, match="e1e3"):
        asyncio.run(scenario())


# ------------------------------------------------------------------------------- adjudication


@pytest.mark.timeout(60)
def test_draw_adjudication_with_real_engine_scores():
    # Locked pawns no king can reach: equal scores, and no capture or pawn move is possible.
    fen = "4k3/8/8/p1p1p1p1/P1P1P1P1/8/8/4K3 w - - 0 40"
    rules = AdjudicationRules(draw_move_number=40, draw_move_count=3, draw_score=150)
    spec = game_spec("5+0.05", start_fen=fen, adjudication=rules)
    record = run_game(bundled("w", "--level", "2", "--seed", "1"),
                      bundled("b", "--level", "2", "--seed", "2"), spec).record
    assert record.termination is GameTermination.ADJUDICATION, record.reason
    assert record.result == "1/2-1/2"
    board = check_not_over(record)
    # The last six plies carried small scores and no capture or pawn move.
    tail = record.moves[-6:]
    assert all(m.score_cp is not None and abs(m.score_cp) <= 150 for m in tail)
    replayed = chess.Board(fen)
    zeroing = []
    for played in record.moves:
        move = replayed.parse_uci(played.uci)
        zeroing.append(replayed.is_zeroing(move))
        replayed.push(move)
    assert not any(zeroing[-6:])
    assert replayed.fen() == board.fen()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("two_sided", [False, True])
def test_resign_adjudication_with_real_engine_scores(two_sided):
    # White has two extra queens; Black's own scores are hopeless from the first move.
    fen = "4k3/pppp4/8/8/8/8/8/QQ2K3 b - - 0 1"
    rules = AdjudicationRules(resign_move_count=2, resign_score=700, resign_two_sided=two_sided)
    spec = game_spec("5+0.05", start_fen=fen, adjudication=rules)
    record = run_game(bundled("w", "--level", "2", "--seed", "1"),
                      bundled("b", "--level", "2", "--seed", "2"), spec).record
    if record.termination is GameTermination.CHECKMATE:
        pytest.fail(f"mate came before the adjudication: {[m.san for m in record.moves]}")
    assert record.termination is GameTermination.ADJUDICATION, record.reason
    assert record.result == "1-0"
    check_not_over(record)
    black_scores = [effective_score(m.score_cp, m.mate) for m in record.moves[0::2]]
    assert all(s is not None and s <= -700 for s in black_scores[-2:])
    if two_sided:
        white_scores = [effective_score(m.score_cp, m.mate) for m in record.moves[1::2]]
        assert all(s is not None and s >= 700 for s in white_scores[-2:])


# ------------------------------------------------------------------------------- CECP's own faults


@pytest.mark.timeout(60)
@pytest.mark.parametrize("faulty_white", [True, False])
def test_false_claim_loses(faulty_white):
    white, black = CECP.pair("false-claim@2", faulty_white)
    record = run_game(white, black, game_spec()).record
    assert record.termination is GameTermination.FALSE_CLAIM
    loser_won_by(record, faulty_white)
    assert "false claim" in record.reason
    check_not_over(record)


@pytest.mark.timeout(60)
def test_false_claim_ignored_when_configured():
    rules = AdjudicationRules(false_claim_loses=False, max_moves=20)
    record = run_game(bundled("w", "--level", "1", "--seed", "1"),
                      bundled("b", "--level", "1", "--seed", "2", "--fault", "false-claim@2"),
                      game_spec(adjudication=rules)).record
    assert record.termination is not GameTermination.FALSE_CLAIM, record.reason
    assert record.plies > 4  # play went on past the claim
    if record.termination is GameTermination.MAX_MOVES:
        check_not_over(record)
    else:
        check_rules_ending(record)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("faulty_white", [True, False])
def test_resign(faulty_white):
    white, black = CECP.pair("resign@3", faulty_white)
    record = run_game(white, black, game_spec()).record
    assert record.termination is GameTermination.RESIGNATION
    loser_won_by(record, faulty_white)
    assert record.plies == (4 if faulty_white else 5)


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("fen", "result"), [
    ("4k3/8/8/8/8/8/8/R3K3 w - - 0 1", "1/2-1/2"),
    ("4k3/4p3/8/8/8/8/8/R3K3 w - - 0 1", "0-1"),
])
def test_time_forfeit_against_a_lone_king_is_a_draw_against_a_pawn_a_loss(fen, result):
    """FIDE 6.9: the flag falls, but a draw if the opponent cannot mate by any legal series."""
    record = run_game(bundled("w", "--level", "1", "--fault", "hang@1"),
                      bundled("b", "--level", "1"), game_spec("1+0", start_fen=fen)).record
    assert record.termination is GameTermination.TIME_FORFEIT
    assert record.result == result
    assert ("cannot mate" in record.reason) == (result == "1/2-1/2")


# ------------------------------------------------------------------------------- across games


@pytest.mark.timeout(60)
def test_a_claim_after_the_last_move_does_not_leak_into_the_next_game():
    mate_in_one = "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"
    control = TimeControl.parse("5+0.05")

    async def scenario() -> list[str]:
        engine = CecpEngine(bundled("e", "--level", "1"))
        leaked = []
        try:
            await engine.start()
            for _ in range(20):
                await engine.new_game(GameSetup(control, Side.WHITE, start_fen=mate_in_one))
                mating = await engine.play([], ClockState(5.0, 5.0), timeout=5)
                assert mating.move == "a1a8"
                await engine.end_game("1-0", "White mates")  # as play_game does, at once
                await engine.new_game(GameSetup(control, Side.WHITE))
                first = await engine.play([], ClockState(5.0, 5.0), timeout=5)
                if first.move is None:
                    leaked.append(f"{first.claim}")
                await engine.end_game("*")
        finally:
            await engine.quit()
        return leaked

    assert asyncio.run(scenario()) == []


@pytest.mark.timeout(60)
def test_engines_are_reusable_for_a_second_game_after_a_fault():
    """A game lost to a fault leaves the runner (and the healthy engine) fit for the next."""

    async def scenario() -> tuple[GameRecord, GameRecord, tuple[int, ...]]:
        healthy = CecpEngine(bundled("h", "--level", "1", "--seed", "1"))
        faulty = CecpEngine(bundled("f", "--level", "1", "--seed", "2", "--fault", "illegal@2"))
        try:
            await healthy.start()
            await faulty.start()
            pgids = (healthy.pid or 0, faulty.pid or 0)
            first = await play_game(healthy, faulty, game_spec())
            second = await play_game(faulty, healthy, game_spec())
        finally:
            await healthy.quit()
            await faulty.quit()
        return first, second, pgids

    children = our_children()
    first, second, pgids = asyncio.run(scenario())
    assert first.termination is second.termination is GameTermination.ILLEGAL_MOVE
    assert (first.result, second.result) == ("1-0", "0-1")
    assert leftover_processes(pgids, before=children) == []


def test_spec_rejects_a_non_positive_untimed_timeout():
    with pytest.raises(ValueError):
        replace(game_spec(), untimed_move_timeout=0)
