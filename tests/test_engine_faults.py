"""Every fault mode of the engine, observed from outside over real pipes."""

from __future__ import annotations

import os
import signal
import time

import chess
import pytest
from test_engine_support import our_engine

from engine.faults import CRASH_EXIT_CODE, FLOOD_BYTES, FaultKind, FaultPlan, FaultSpecError

pytestmark = pytest.mark.timeout(60)


def _playing_white(*faults: str, depth: str = "1"):
    """A started engine with the given faults, set up to move first as White."""
    args = ["--depth", depth]
    for fault in faults:
        args += ["--fault", fault]
    engine = our_engine(*args)
    engine.start_protocol()
    engine.send("new", "force")
    return engine


def _moves_as_white(engine, count: int) -> list[str]:
    """Let the engine play `count` moves as White against fixed replies; return its lines."""
    board = chess.Board()
    replies = iter(["e7e6", "d7d6", "g8f6", "b8c6", "a7a6", "h7h6"])
    engine.send("go")
    lines = []
    for n in range(count):
        line, _ = engine.expect_prefix("move ", 20)
        lines.append(line)
        board.push_xboard(line.split()[1])
        if n + 1 < count:
            reply = next(m for m in replies if chess.Move.from_uci(m) in board.legal_moves)
            board.push_uci(reply)
            engine.send(f"usermove {reply}")
    return lines


def test_fault_specs_parse_and_reject_nonsense():
    plan = FaultPlan.parse(["crash@3,slow-start=1.5", "flood", "no-pong"])
    assert plan.strikes(FaultKind.CRASH, 3) and not plan.strikes(FaultKind.CRASH, 2)
    assert plan.value(FaultKind.SLOW_START) == 1.5
    assert plan.strikes(FaultKind.FLOOD, 1)
    assert plan.has(FaultKind.NO_PONG)
    for bad in ("crash@0", "crash@x", "explode", "no-pong@2", "slow-start", "hang=3"):
        with pytest.raises(FaultSpecError):
            FaultPlan.parse([bad])


def test_crash_at_second_move_exits_without_moving():
    with _playing_white("crash@2") as engine:
        engine.send("go")
        engine.expect_prefix("move ", 20)
        engine.send("usermove e7e5")
        with pytest.raises(EOFError):
            engine.expect_prefix("move ", 20)
        assert engine.wait(5) == CRASH_EXIT_CODE


def test_hang_stops_answering_everything():
    with _playing_white("hang@1") as engine:
        engine.send("go", "ping 4")
        assert engine.quiet_for(2.0) == []
        engine.send("quit")
        assert engine.wait(1.0) is None  # still alive: the host must kill it


def test_illegal_move_is_well_formed_but_illegal():
    with _playing_white("illegal@1") as engine:
        engine.send("go")
        line, _ = engine.expect_prefix("move ", 20)
        text = line.split()[1]
        move = chess.Move.from_uci(text)  # well-formed coordinate notation
        assert move not in chess.Board().legal_moves


def test_garbage_is_printed_before_a_legal_move():
    with _playing_white("garbage@1") as engine:
        engine.send("go")
        line, before = engine.expect_prefix("move ", 20)
        chess.Board().parse_xboard(line.split()[1])
        assert any("not a command" in text for text in before)
        with pytest.raises(UnicodeDecodeError):
            bytes(engine.raw).decode("utf-8")


def test_flood_writes_megabytes_without_a_newline():
    with _playing_white("flood@1") as engine:
        engine.send("go")
        engine.expect(lambda text: "move " in text, 30)
        assert engine.longest_line >= FLOOD_BYTES
        flood_start = bytes(engine.raw).index(b"flood")
        assert b"\n" not in bytes(engine.raw)[flood_start:flood_start + FLOOD_BYTES]


def test_slow_start_delays_the_features():
    with our_engine("--fault", "slow-start=1.5") as engine:
        t0 = time.monotonic()
        engine.send("xboard", "protover 2")
        engine.expect(lambda text: text == "feature done=0", 10)
        assert time.monotonic() - t0 >= 1.4


def test_no_done_never_finishes_the_feature_list():
    with our_engine("--fault", "no-done") as engine:
        engine.send("xboard", "protover 2")
        lines = engine.quiet_for(1.5)
        assert lines[0] == "feature done=0"
        assert "feature done=1" not in lines
        assert engine.sync(1) == []  # otherwise alive and answering


def test_ignore_quit_keeps_running_until_terminated():
    with our_engine("--fault", "ignore-quit") as engine:
        engine.start_protocol()
        engine.send("quit")
        assert engine.wait(1.5) is None
        engine.proc.terminate()
        assert engine.wait(5) == -signal.SIGTERM


def test_spawn_child_leaves_a_process_that_outlives_the_engine():
    with our_engine("--fault", "spawn-child") as engine:
        engine.start_protocol()
        engine.send("quit")
        assert engine.wait(5) == 0
        # The child is still in the engine's process group after the engine has gone.
        time.sleep(0.2)
        os.killpg(engine.proc.pid, 0)  # raises ProcessLookupError if nobody is left
        os.killpg(engine.proc.pid, signal.SIGKILL)


def test_false_claim_announces_a_mate_that_is_not_there():
    with _playing_white("false-claim@1") as engine:
        engine.send("go")
        line, _ = engine.expect_prefix("move ", 20)
        board = chess.Board()
        board.push_xboard(line.split()[1])
        assert engine.read(5) == "1-0 {White mates}"
        assert not board.is_game_over(claim_draw=True)


def test_resign_at_second_move():
    with _playing_white("resign@2") as engine:
        engine.send("go")
        engine.expect_prefix("move ", 20)
        engine.send("usermove e7e5")
        line, _ = engine.expect(lambda text: text.startswith("move ") or text == "resign", 20)
        assert line == "resign"


def test_time_abuse_thinks_far_past_its_time_and_ignores_move_now():
    with our_engine("--fault", "time-abuse") as engine:
        engine.start_protocol()
        engine.send("new", "force", "st 0.5")
        engine.sync(1)
        t0 = time.monotonic()
        engine.send("go", "?")
        engine.expect_prefix("move ", 20)
        assert time.monotonic() - t0 > 2.5


def test_no_pong_ignores_ping_but_still_plays():
    with _playing_white("no-pong") as engine:
        engine.send("ping 5")
        assert engine.quiet_for(1.0) == []
        lines = _moves_as_white(engine, 2)
        assert len(lines) == 2


def test_faults_can_be_combined():
    with _playing_white("garbage@1", "crash@2") as engine:
        lines = _moves_as_white(engine, 1)
        assert lines
        engine.send("usermove e7e5")
        assert engine.wait(10) == CRASH_EXIT_CODE
