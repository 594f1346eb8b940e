"""Engine faults in whole games, each scenario written once and run over CECP and over UCI.

The bundled engine misbehaves on purpose (``--fault``, the same modes in both protocols):
every fault must give its termination and the right winner, leave no process behind, and
leave the runner working.  Faults only one protocol has (CECP's claims and resignations,
UCI's stopped process found by ``isready``) are tested in test_game.py and test_uci.py.
"""

from __future__ import annotations

import asyncio
import time
import tracemalloc

import chess
import pytest

from runner.game.play import TRANSCRIPT_LINE_LIMIT, play_game
from runner.game.record import GameRecord, GameTermination
from runner.protocol.engine import EngineStalled
from runner.protocol.factory import make_engine
from tests.bundled_games import (
    PROTOCOLS,
    RULES_ENDINGS,
    BundledProtocol,
    check_not_over,
    check_rules_ending,
    game_spec,
    leftover_processes,
    loser_won_by,
    our_children,
    run_game,
)
from tests.conftest import EVENT_TIMEOUT

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(params=PROTOCOLS, ids=lambda proto: proto.name)
def proto(request: pytest.FixtureRequest) -> BundledProtocol:
    """The bundled engine over CECP, then over UCI."""
    return request.param


# ------------------------------------------------------------------------------- start-up


@pytest.mark.parametrize("faulty", ["white", "black", "both"])
def test_an_engine_failing_the_new_game_loses_and_white_counts_first(proto, faulty):
    """Both engines get the new game at once; if both fail it, White's fault is the one."""
    fault = ("--fault", proto.sync_fault)
    white = proto.engine("w", "--level", "1", *(fault if faulty != "black" else ()), ping_timeout=1.0)
    black = proto.engine("b", "--level", "1", *(fault if faulty != "white" else ()), ping_timeout=1.0)
    record = run_game(white, black, game_spec()).record
    assert record.termination is GameTermination.STALL
    loser_won_by(record, faulty_white=faulty != "black")
    assert record.plies == 0


def test_no_synchronisation_answer_is_a_stall_loss_before_the_first_move(proto):
    black = proto.engine("b", "--level", "1", "--fault", proto.sync_fault, ping_timeout=1.5)
    record = run_game(proto.engine("w", "--level", "1"), black, game_spec()).record
    assert record.termination is GameTermination.STALL
    loser_won_by(record, faulty_white=False)
    assert proto.stalled_sync in record.reason
    assert record.plies == 0


def test_slow_start_is_waited_for_and_the_game_is_normal(proto):
    # Silent for 2.5 s (past CECP's 2 s feature wait: probed with ping, features still taken).
    black = proto.engine("b", "--level", "1", "--seed", "2", "--fault", "slow-start=2.5")

    async def scenario() -> tuple[GameRecord, float, bool, tuple[int, ...]]:
        engines = (make_engine(proto.engine("w", "--level", "1", "--seed", "1")),
                   make_engine(black))
        try:
            for engine in engines:
                await engine.start()
            slow = engines[1]
            startup = slow.startup_seconds or 0.0
            declared = proto.handshake_seen(slow)
            record = await play_game(*engines, game_spec())
        finally:
            for engine in engines:
                await engine.quit()
        return record, startup, declared, tuple(e.pid or 0 for e in engines)

    children = our_children()
    record, startup, declared, pgids = asyncio.run(scenario())
    assert leftover_processes(pgids, before=children) == []
    assert startup >= 2.4
    assert declared
    check_rules_ending(record)


@pytest.mark.timeout(120)
def test_an_unfinished_handshake_fails_start_up_within_the_configured_limit(proto):
    async def scenario(fault: str) -> tuple[int | None, float, bool]:
        config = proto.engine("b", "--level", "1", "--fault", fault, **{proto.start_limit: 1.5})
        engine = make_engine(config)
        began = time.monotonic()
        try:
            with pytest.raises(EngineStalled, match=proto.stalled_start):
                await engine.start()
            # The declarations made before the missing end of the handshake were read.
            return engine.pid, time.monotonic() - began, proto.handshake_seen(engine)
        finally:
            await engine.quit()

    for fault in proto.start_faults:
        children = our_children()
        pid, waited, declared = asyncio.run(scenario(fault))
        assert pid is not None
        assert waited > 1.4, fault  # the start limit was waited for
        assert declared, fault
        assert leftover_processes((pid,), before=children) == []


# ------------------------------------------------------------------------------- during the game


@pytest.mark.parametrize("faulty_white", [True, False])
def test_crash_is_a_disconnect_loss(proto, faulty_white):
    white, black = proto.pair("crash@3", faulty_white)
    record = run_game(white, black, game_spec()).record
    assert record.termination is GameTermination.DISCONNECT
    loser_won_by(record, faulty_white)
    assert "exit code 3" in record.reason
    assert record.plies == (4 if faulty_white else 5)
    check_not_over(record)


@pytest.mark.parametrize("faulty_white", [True, False])
def test_crash_hidden_by_a_child_holding_the_pipe_is_a_disconnect_within_a_second(
        proto, faulty_white):
    """The engine's child keeps its stdout open, so no end of output comes: the process's own
    exit must end the game (issue 21 item 2: it used to be a time forfeit after the clock)."""
    white, black = proto.pair("spawn-child,crash@2", faulty_white)
    played = run_game(white, black, game_spec("16+0"))  # no process (child included) survives
    record = played.record
    assert record.termination is GameTermination.DISCONNECT, record.reason
    loser_won_by(record, faulty_white)
    assert "exit code 3" in record.reason  # a time forfeit (after the 16 s clock) otherwise


@pytest.mark.parametrize("faulty_white", [True, False])
def test_hang_under_a_clock_loses_on_time(proto, faulty_white):
    white, black = proto.pair("hang@2", faulty_white)
    record = run_game(white, black, game_spec("1+0.05")).record
    assert record.termination is GameTermination.TIME_FORFEIT
    loser_won_by(record, faulty_white)
    assert record.plies == (2 if faulty_white else 3)


def test_hang_without_a_clock_is_a_stall_loss(proto):
    spec = game_spec("depth=1", untimed_move_timeout=1.5)
    record = run_game(proto.engine("w", "--level", "1"),
                      proto.engine("b", "--level", "1", "--fault", "hang@2"), spec).record
    assert record.termination is GameTermination.STALL
    loser_won_by(record, faulty_white=False)
    assert record.termination.pgn_tag == "stalled connection"
    assert proto.stalled_move in record.reason


@pytest.mark.parametrize("faulty_white", [True, False])
def test_illegal_move_loses(proto, faulty_white):
    white, black = proto.pair("illegal@3", faulty_white)
    record = run_game(white, black, game_spec()).record
    assert record.termination is GameTermination.ILLEGAL_MOVE
    loser_won_by(record, faulty_white)
    board = check_not_over(record)
    illegal = record.reason.rsplit(" ", 1)[-1]
    assert chess.Move.from_uci(illegal) not in board.legal_moves
    assert record.plies == (4 if faulty_white else 5)


_GARBAGE_GAMES: dict[str, GameRecord] = {}
"""The game against garbage output per protocol: the two tests below read the same game, so
it is played once (a file's tests run in one process)."""


def _garbage_game(proto: BundledProtocol) -> GameRecord:
    if proto.name not in _GARBAGE_GAMES:
        white = proto.engine("w", "--level", "1", "--seed", "1")
        black = proto.engine("b", "--level", "2", "--seed", "2", "--fault", "garbage@2")
        _GARBAGE_GAMES[proto.name] = run_game(white, black, game_spec()).record
    return _GARBAGE_GAMES[proto.name]


def test_garbage_output_is_ignored_and_the_game_goes_on(proto):
    # Decision: lines that are not protocol (free text, invalid UTF-8, NULs, an unknown
    # feature, "1. ... ???") are chatter. They are kept in the transcript, never cost the
    # engine the game.
    record = _garbage_game(proto)
    assert record.termination in RULES_ENDINGS, record.reason
    assert record.plies > 4
    check_rules_ending(record)


def test_garbage_output_leaves_the_runner_working(proto):
    # Whatever the verdict on the garbage, the runner survives it: the game gets a result,
    # decoding errors never escape, and the invalid bytes reach the transcript replaced.
    record = _garbage_game(proto)
    assert record.result in ("1-0", "0-1", "1/2-1/2")
    assert not record.replay
    black_lines = "\n".join(record.transcripts[1])
    assert "Hello from a confused engine" in black_lines
    assert "\ufffd" in black_lines
    for answer in proto.garbage_answers:
        assert answer in black_lines


async def _flood_game(proto: BundledProtocol) -> tuple[GameRecord, int, int, tuple[int, ...]]:
    """A game against a 4 MiB newline-free line: the record, the traced peak during the game,
    the flooding engine's transcript size after it was stopped, and the process groups."""
    engines = (make_engine(proto.engine("w", "--level", "1")),
               make_engine(proto.engine("b", "--level", "1", "--fault", "flood@2")))
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


def test_flood_is_a_protocol_loss_without_memory_blowup(proto):
    children = our_children()
    record, peak, _, pgids = asyncio.run(_flood_game(proto))
    assert leftover_processes(pgids, before=children) == []
    assert record.termination is GameTermination.DISCONNECT
    loser_won_by(record, faulty_white=False)
    assert "longer than" in record.reason
    # The reader is bounded at 1 MiB (asyncio buffers up to twice that); the flood is 4 MiB.
    assert peak < 3 * 2**20, f"peak traced memory during the game {peak / 2**20:.1f} MiB"
    assert all(len(line) < TRANSCRIPT_LINE_LIMIT + 100 for t in record.transcripts for line in t)


def test_a_flooding_engine_s_transcript_stays_small(proto):
    _, _, kept, _ = asyncio.run(_flood_game(proto))
    assert kept < 256 * 1024, f"{kept / 2**20:.1f} MiB of transcript kept"


@pytest.mark.parametrize("tc", ["1+0.05", "st=1"])
def test_time_abuse_loses_on_time(proto, tc):
    # The abuser also ignores UCI's "stop".
    record = run_game(proto.engine("w", "--level", "1"),
                      proto.engine("b", "--level", "8", "--fault", "time-abuse"),
                      game_spec(tc)).record
    assert record.termination is GameTermination.TIME_FORFEIT
    loser_won_by(record, faulty_white=False)
    assert record.plies == 1
    assert record.termination.pgn_tag == "time forfeit"


# ------------------------------------------------------------------------------- stopping


def test_spawned_child_is_not_left_behind(proto):
    played = run_game(proto.engine("w", "--level", "1"),
                      proto.engine("b", "--level", "1", "--fault", "spawn-child"), game_spec())
    check_rules_ending(played.record)


def test_engine_that_obeys_quit_stops_promptly_despite_its_child(proto):
    config = proto.engine("b", "--level", "1", "--fault", "spawn-child", quit_timeout=2 * EVENT_TIMEOUT)
    played = run_game(proto.engine("w", "--level", "1"), config, game_spec())
    assert played.exit_codes[1] == 0
    assert played.quit_seconds < EVENT_TIMEOUT, f"stopping took {played.quit_seconds:.2f} s"


def test_engine_ignoring_quit_is_killed(proto):
    config = proto.engine("b", "--level", "1", "--fault", "ignore-quit", quit_timeout=0.5)
    played = run_game(proto.engine("w", "--level", "1"), config, game_spec())
    check_rules_ending(played.record)
    assert played.exit_codes[1] == proto.quit_ignored_exit  # killed by a signal
