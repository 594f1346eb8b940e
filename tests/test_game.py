"""Whole games through `play_game` between bundled engines over real pipes.

Every game is checked against python-chess replaying its moves (legality, SAN, and that a
rules ending really holds and was not missed earlier), its clocks are re-added from the
recorded move times, and after every game the process table must hold nothing of the
engines' process groups.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import chess
import pytest

from runner.clock import TimeControl
from runner.game.adjudication import AdjudicationRules, effective_score
from runner.game.play import (
    TRANSCRIPT_LINE_LIMIT,
    GameRecord,
    GameSpec,
    GameTermination,
    MoveRecord,
    play_game,
)
from runner.protocol.cecp import CecpEngine
from runner.protocol.engine import ClockState, EngineConfig, EngineStalled, GameSetup, Side, Variant
from runner.rules import Board

REPO = Path(__file__).resolve().parent.parent
BUNDLED = (sys.executable, "-m", "engine")
# Short stop timeouts: hung and quit-ignoring engines are killed quickly after each game.
_QUICK_STOP = {"quit_timeout": 1.0, "terminate_timeout": 1.0}

RULES_ENDINGS = {
    GameTermination.CHECKMATE, GameTermination.STALEMATE, GameTermination.INSUFFICIENT_MATERIAL,
    GameTermination.THREEFOLD_REPETITION, GameTermination.FIVEFOLD_REPETITION,
    GameTermination.FIFTY_MOVES, GameTermination.SEVENTYFIVE_MOVES,
}


# ------------------------------------------------------------------------------- helpers


def bundled(name: str, *args: str, **overrides: object) -> EngineConfig:
    """A configuration running the bundled engine with `args`."""
    settings = {**_QUICK_STOP, **overrides}
    return EngineConfig(name=name, argv=(*BUNDLED, *args), working_dir=REPO, **settings)


def game_spec(tc: str = "5+0.05", black_tc: str | None = None, **fields: object) -> GameSpec:
    """A spec with the same control for both sides unless `black_tc` is given."""
    white = TimeControl.parse(tc)
    return GameSpec(white, TimeControl.parse(black_tc) if black_tc else white, **fields)


@dataclass(frozen=True)
class Played:
    """A finished game, the engines' process-group ids and how long stopping them took."""

    record: GameRecord
    pgids: tuple[int, ...]
    quit_seconds: float
    exit_codes: tuple[int | None, ...]


async def play_engines(white: EngineConfig, black: EngineConfig, spec: GameSpec,
                       on_move: Callable[[MoveRecord, Board], None] | None = None) -> Played:
    """Start both engines, play one game, always stop both."""
    engines = (CecpEngine(white), CecpEngine(black))
    pgids: list[int] = []
    codes: list[int | None] = []
    try:
        for engine in engines:
            await engine.start()
            assert engine.pid is not None
            pgids.append(engine.pid)  # each engine leads its own session and group
        record = await play_game(*engines, spec, on_move=on_move)
    finally:
        began = time.monotonic()
        for engine in engines:
            codes.append(await engine.quit())
        stopped = time.monotonic() - began
    return Played(record, tuple(pgids), stopped, tuple(codes))


def run_game(white: EngineConfig, black: EngineConfig, spec: GameSpec, **kwargs: object) -> Played:
    """Play one game to the end and check that no engine process survives it."""
    fds_before = _open_fds()
    played = asyncio.run(play_engines(white, black, spec, **kwargs))
    assert leftover_processes(played.pgids) == []
    assert _open_fds() <= fds_before, "file descriptors leaked by the game"
    return played


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def leftover_processes(pgids: tuple[int, ...], wait: float = 3.0) -> list[str]:
    """Live processes in the given process groups, or unreaped children of ours.

    A zombie whose parent is not us is dead and about to be reaped by init; it does not
    count.  Waits up to `wait` seconds for stragglers to disappear.
    """
    ours = os.getpid()
    deadline = time.monotonic() + wait
    while True:
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    stat = handle.read()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2:].split()
            state, ppid, pgid = fields[0], int(fields[1]), int(fields[2])
            if pgid in pgids or ppid == ours:
                if state == "Z" and ppid != ours:
                    continue
                found.append(f"pid {entry} state {state} ppid {ppid} pgid {pgid}: {stat[:80]}")
        if not found or time.monotonic() >= deadline:
            return found
        time.sleep(0.05)


def replay(record: GameRecord) -> chess.Board:
    """Replay the record with python-chess; every move legal, every SAN as python-chess writes it.

    Also asserts that no position before the last one had already ended the game by rule
    (mate, stalemate, dead position, threefold, fifty moves).
    """
    chess960 = record.spec.variant is Variant.FISCHERANDOM
    board = chess.Board(record.spec.start_fen or chess.STARTING_FEN, chess960=chess960)
    for number, played in enumerate(record.moves):
        assert not _ended_by_rule(board), f"game should have ended before ply {number}: {board.fen()}"
        move = board.parse_uci(played.uci)
        assert board.san(move) == played.san, (number, played)
        board.push(move)
    assert record.final_fen.split()[:4] == board.fen(en_passant="fen").split()[:4] or \
        record.final_fen.split()[:3] == board.fen().split()[:3]
    return board


def _ended_by_rule(board: chess.Board) -> bool:
    return board.outcome() is not None or board.is_repetition(3) or board.halfmove_clock >= 100


def check_rules_ending(record: GameRecord) -> None:
    """A rules termination must be what python-chess finds in the final position."""
    board = replay(record)
    term = record.termination
    assert term in RULES_ENDINGS, record.reason
    if term is GameTermination.CHECKMATE:
        assert board.is_checkmate()
        assert record.result == ("0-1" if board.turn == chess.WHITE else "1-0")
        return
    assert record.result == "1/2-1/2"
    holds = {
        GameTermination.STALEMATE: board.is_stalemate(),
        GameTermination.INSUFFICIENT_MATERIAL: board.is_insufficient_material(),
        GameTermination.THREEFOLD_REPETITION: board.is_repetition(3),
        GameTermination.FIVEFOLD_REPETITION: board.is_fivefold_repetition(),
        GameTermination.FIFTY_MOVES: board.halfmove_clock >= 100,
        GameTermination.SEVENTYFIVE_MOVES: board.is_seventyfive_moves(),
    }
    assert holds[term], (record.reason, board.fen())


def check_not_over(record: GameRecord) -> chess.Board:
    """For endings other than by rule: the final position had not ended the game."""
    board = replay(record)
    assert not _ended_by_rule(board), (record.reason, board.fen())
    return board


def check_clocks(record: GameRecord) -> None:
    """Re-add the recorded move times: only a time forfeit may leave a clock below zero."""
    for white in (True, False):
        control = record.spec.white_tc if white else record.spec.black_tc
        if not control.periods:
            continue
        period = control.periods[0]
        assert period.moves == 0, "this check handles incremental controls only"
        spent = _own_times(record, white)
        remaining = period.base + period.increment * len(spent) - sum(spent)
        assert all(t is not None and t >= 0 for t in spent)
        if record.termination is not GameTermination.TIME_FORFEIT:
            assert remaining + control.margin >= -period.increment, (white, remaining)


def _own_times(record: GameRecord, white: bool) -> list[float]:
    first_white = record.spec.start_fen is None or record.spec.start_fen.split()[1] == "w"
    times = []
    for ply, played in enumerate(record.moves):
        if played.book:
            continue
        if (ply % 2 == 0) == (first_white == white):
            assert played.time is not None
            times.append(played.time)
    return times


def loser_won_by(record: GameRecord, faulty_white: bool) -> None:
    """The result is a win for the side that did not misbehave."""
    assert record.result == ("0-1" if faulty_white else "1-0"), record.reason
    assert ("White" if faulty_white else "Black") in record.reason


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
def test_moves_per_session_control_carries_the_game_through_several_sessions():
    spec = game_spec("6/2", adjudication=AdjudicationRules(max_moves=20))
    record = run_game(bundled("w", "--level", "1", "--seed", "1"),
                      bundled("b", "--level", "1", "--seed", "2"), spec).record
    assert record.termination in RULES_ENDINGS | {GameTermination.MAX_MOVES}, record.reason
    assert record.plies > 2 * 6, "the game ended inside the first session"
    for white in (True, False):
        spent = _own_times(record, white)
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


# ------------------------------------------------------------------------------- faults


@pytest.mark.timeout(60)
@pytest.mark.parametrize("faulty", ["white", "black", "both"])
def test_an_engine_failing_the_new_game_loses_and_white_counts_first(faulty):
    """Both engines get the new game at once; if both fail it, White's fault is the one."""
    fault = ("--fault", "no-pong")
    white = bundled("w", "--level", "1", *(fault if faulty != "black" else ()), ping_timeout=1.0)
    black = bundled("b", "--level", "1", *(fault if faulty != "white" else ()), ping_timeout=1.0)
    record = run_game(white, black, game_spec()).record
    assert record.termination is GameTermination.STALL
    loser_won_by(record, faulty_white=faulty != "black")
    assert record.plies == 0


@pytest.mark.timeout(60)
@pytest.mark.parametrize("faulty_white", [True, False])
def test_crash_is_a_disconnect_loss(faulty_white):
    fault = ("--fault", "crash@3")
    white = bundled("w", "--level", "1", *(fault if faulty_white else ()))
    black = bundled("b", "--level", "1", *(() if faulty_white else fault))
    played = run_game(white, black, game_spec())
    record = played.record
    assert record.termination is GameTermination.DISCONNECT
    loser_won_by(record, faulty_white)
    assert "exit code 3" in record.reason
    assert record.plies == (4 if faulty_white else 5)
    check_not_over(record)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("faulty_white", [True, False])
def test_hang_under_a_clock_loses_on_time(faulty_white):
    fault = ("--fault", "hang@2")
    white = bundled("w", "--level", "1", *(fault if faulty_white else ()))
    black = bundled("b", "--level", "1", *(() if faulty_white else fault))
    began = time.monotonic()
    record = run_game(white, black, game_spec("1+0.05")).record
    assert record.termination is GameTermination.TIME_FORFEIT
    loser_won_by(record, faulty_white)
    assert record.plies == (2 if faulty_white else 3)
    assert time.monotonic() - began < 15


@pytest.mark.timeout(60)
def test_hang_without_a_clock_is_a_stall_loss():
    spec = game_spec("depth=1", untimed_move_timeout=1.5)
    record = run_game(bundled("w", "--level", "1"),
                      bundled("b", "--level", "1", "--fault", "hang@2"), spec).record
    assert record.termination is GameTermination.STALL
    loser_won_by(record, faulty_white=False)
    assert record.termination.pgn_tag == "stalled connection"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("faulty_white", [True, False])
def test_illegal_move_loses(faulty_white):
    fault = ("--fault", "illegal@3")
    white = bundled("w", "--level", "1", *(fault if faulty_white else ()))
    black = bundled("b", "--level", "1", *(() if faulty_white else fault))
    record = run_game(white, black, game_spec()).record
    assert record.termination is GameTermination.ILLEGAL_MOVE
    loser_won_by(record, faulty_white)
    board = check_not_over(record)
    illegal = record.reason.rsplit(" ", 1)[-1]
    assert chess.Move.from_uci(illegal) not in board.legal_moves
    assert record.plies == (4 if faulty_white else 5)


@pytest.mark.timeout(60)
def test_garbage_output_is_ignored_and_the_game_goes_on():
    # Decision: lines that are not protocol (free text, invalid UTF-8, NULs, an unknown
    # feature) are chatter. They are kept in the transcript, never cost the engine the game.
    white = bundled("w", "--level", "1", "--seed", "1")
    black = bundled("b", "--level", "2", "--seed", "2", "--fault", "garbage@2")
    record = run_game(white, black, game_spec()).record
    assert record.termination in RULES_ENDINGS, record.reason
    check_rules_ending(record)


@pytest.mark.timeout(60)
def test_garbage_output_leaves_the_runner_working():
    # Whatever the verdict on the garbage, the runner survives it: the game gets a result,
    # decoding errors never escape, and the invalid bytes reach the transcript replaced.
    white = bundled("w", "--level", "1", "--seed", "1")
    black = bundled("b", "--level", "2", "--seed", "2", "--fault", "garbage@2")
    record = run_game(white, black, game_spec()).record
    assert record.result in ("1-0", "0-1", "1/2-1/2")
    assert not record.replay
    black_lines = "\n".join(record.transcripts[1])
    assert "Hello from a confused engine" in black_lines
    assert "\ufffd" in black_lines
    assert "rejected bogus" in black_lines


async def _flood_game() -> tuple[GameRecord, int, int, tuple[int, ...]]:
    """A game against a 4 MiB newline-free line: the record, the traced peak during the game,
    the flooding engine's transcript size after it was stopped, and the process groups."""
    engines = (CecpEngine(bundled("w", "--level", "1")),
               CecpEngine(bundled("b", "--level", "1", "--fault", "flood@2")))
    try:
        for engine in engines:
            await engine.start()
        tracemalloc.start()
        try:
            record = await play_game(*engines, game_spec())
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    finally:
        for engine in engines:
            await engine.quit()
    kept = sum(len(entry.text) for entry in engines[1].transcript)
    return record, peak, kept, tuple(e.pid or 0 for e in engines)


@pytest.mark.timeout(60)
def test_flood_is_a_protocol_loss_without_memory_blowup():
    record, peak, _, pgids = asyncio.run(_flood_game())
    assert leftover_processes(pgids) == []
    assert record.termination is GameTermination.DISCONNECT
    loser_won_by(record, faulty_white=False)
    assert "longer than" in record.reason
    # The reader is bounded at 1 MiB (asyncio buffers up to twice that); the flood is 4 MiB.
    assert peak < 3 * 2**20, f"peak traced memory during the game {peak / 2**20:.1f} MiB"
    assert all(len(line) < TRANSCRIPT_LINE_LIMIT + 100 for t in record.transcripts for line in t)


@pytest.mark.timeout(60)
def test_a_flooding_engine_s_transcript_stays_small():
    _, _, kept, _ = asyncio.run(_flood_game())
    assert kept < 256 * 1024, f"{kept / 2**20:.1f} MiB of transcript kept"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("faulty_white", [True, False])
def test_false_claim_loses(faulty_white):
    fault = ("--fault", "false-claim@2")
    white = bundled("w", "--level", "1", *(fault if faulty_white else ()))
    black = bundled("b", "--level", "1", *(() if faulty_white else fault))
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
    fault = ("--fault", "resign@3")
    white = bundled("w", "--level", "1", *(fault if faulty_white else ()))
    black = bundled("b", "--level", "1", *(() if faulty_white else fault))
    record = run_game(white, black, game_spec()).record
    assert record.termination is GameTermination.RESIGNATION
    loser_won_by(record, faulty_white)
    assert record.plies == (4 if faulty_white else 5)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("tc", ["1+0.05", "st=1"])
def test_time_abuse_loses_on_time(tc):
    record = run_game(bundled("w", "--level", "1"),
                      bundled("b", "--level", "8", "--fault", "time-abuse"), game_spec(tc)).record
    assert record.termination is GameTermination.TIME_FORFEIT
    loser_won_by(record, faulty_white=False)
    assert record.plies == 1
    assert record.termination.pgn_tag == "time forfeit"


@pytest.mark.timeout(60)
def test_time_forfeit_against_a_lone_king_is_a_draw():
    """FIDE 6.9: the flag falls, but the opponent cannot mate by any series of legal moves."""
    fen = "4k3/8/8/8/8/8/8/R3K3 w - - 0 1"
    record = run_game(bundled("w", "--level", "1", "--fault", "hang@1"),
                      bundled("b", "--level", "1"), game_spec("1+0", start_fen=fen)).record
    assert record.termination is GameTermination.TIME_FORFEIT
    assert record.result == "1/2-1/2"
    assert "cannot mate" in record.reason


@pytest.mark.timeout(60)
def test_time_forfeit_against_a_pawn_is_a_loss():
    fen = "4k3/4p3/8/8/8/8/8/R3K3 w - - 0 1"
    record = run_game(bundled("w", "--level", "1", "--fault", "hang@1"),
                      bundled("b", "--level", "1"), game_spec("1+0", start_fen=fen)).record
    assert record.termination is GameTermination.TIME_FORFEIT
    assert record.result == "0-1"


# ------------------------------------------------------------------------------- start-up faults


@pytest.mark.timeout(60)
def test_no_pong_is_a_stall_loss_before_the_first_move():
    black = bundled("b", "--level", "1", "--fault", "no-pong", ping_timeout=1.5)
    record = run_game(bundled("w", "--level", "1"), black, game_spec()).record
    assert record.termination is GameTermination.STALL
    loser_won_by(record, faulty_white=False)
    assert record.plies == 0


@pytest.mark.timeout(60)
def test_slow_start_is_waited_for_and_the_game_is_normal():
    # Silent for 2.5 s (past the 2 s feature wait): probed with ping, features still taken.
    black = bundled("b", "--level", "1", "--seed", "2", "--fault", "slow-start=2.5")
    engine_features: dict[str, bool] = {}

    async def scenario() -> tuple[GameRecord, tuple[int, ...]]:
        engines = (CecpEngine(bundled("w", "--level", "1", "--seed", "1")), CecpEngine(black))
        try:
            for engine in engines:
                await engine.start()
            slow = engines[1]
            engine_features["ping"] = slow.features.flag("ping", False)
            engine_features["setboard"] = slow.features.flag("setboard", False)
            assert slow.startup_seconds is not None and slow.startup_seconds >= 2.4
            record = await play_game(*engines, game_spec())
        finally:
            for engine in engines:
                await engine.quit()
        return record, tuple(e.pid or 0 for e in engines)

    record, pgids = asyncio.run(scenario())
    assert leftover_processes(pgids) == []
    assert engine_features == {"ping": True, "setboard": True}
    check_rules_ending(record)


@pytest.mark.timeout(60)
def test_no_done_fails_start_up_within_the_configured_limit_and_leaves_nothing():
    config = bundled("b", "--level", "1", "--fault", "no-done", feature_done_timeout=1.5)

    async def scenario() -> tuple[int | None, float]:
        engine = CecpEngine(config)
        began = time.monotonic()
        try:
            with pytest.raises(EngineStalled, match="done=1"):
                await engine.start()
            return engine.pid, time.monotonic() - began
        finally:
            await engine.quit()

    pid, waited = asyncio.run(scenario())
    assert pid is not None
    assert waited < 5
    assert leftover_processes((pid,)) == []


@pytest.mark.timeout(60)
def test_spawned_child_is_not_left_behind():
    played = run_game(bundled("w", "--level", "1"),
                      bundled("b", "--level", "1", "--fault", "spawn-child"), game_spec())
    check_rules_ending(played.record)


@pytest.mark.timeout(60)
def test_engine_that_obeys_quit_stops_promptly_despite_its_child():
    config = bundled("b", "--level", "1", "--fault", "spawn-child", quit_timeout=3.0)
    played = run_game(bundled("w", "--level", "1"), config, game_spec())
    assert played.exit_codes[1] == 0
    assert played.quit_seconds < 1.5, f"stopping took {played.quit_seconds:.2f} s"


@pytest.mark.timeout(60)
def test_engine_ignoring_quit_is_killed():
    config = bundled("b", "--level", "1", "--fault", "ignore-quit", quit_timeout=0.5)
    played = run_game(bundled("w", "--level", "1"), config, game_spec())
    check_rules_ending(played.record)
    assert played.exit_codes[1] is not None and played.exit_codes[1] < 0  # killed by a signal


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

    first, second, pgids = asyncio.run(scenario())
    assert first.termination is second.termination is GameTermination.ILLEGAL_MOVE
    assert (first.result, second.result) == ("1-0", "0-1")
    assert leftover_processes(pgids) == []


def test_spec_rejects_a_non_positive_untimed_timeout():
    with pytest.raises(ValueError):
        replace(game_spec(), untimed_move_timeout=0)
