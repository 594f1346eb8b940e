"""A runner that stood still (SIGSTOP, a VM pause, a starved loop) never scores a time
forfeit for it: with a real ``runner run`` of the bundled engine, and the loop's monitor.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from runner.game.play import play_game
from runner.game.record import GameRecord, GameTermination
from runner.protocol.engine import EngineStalled
from runner.protocol.factory import make_engine
from runner.protocol.freeze import FreezeMonitor
from runner.protocol.loop import new_asyncio_loop
from runner.protocol.process import EngineProcess
from runner.protocol.transport import Line
from runner.protocol.waiting import ReplyCall, Watchdog
from runner.rules import Board
from runner.types import MoveRecord
from tests.bundled_games import bundled, game_spec

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
RUN = [sys.executable, "-m", "runner"]


def _config(path: Path, rounds: int) -> Path:
    """A match of the bundled engine against itself at 2+0.05 (games cut at 40 moves), at
    full strength: it thinks by its clock, so a game lasts a few seconds."""
    engine = '["python", "-m", "engine", "--level", "8"]'
    path.write_text(
        f'name = "frozen"\nformat = "match"\nrounds = {rounds}\ngames = 2\ntc = "2+0.05"\n'
        f'[[engines]]\nname = "a"\ncommand = {engine}\n'
        f'[[engines]]\nname = "b"\ncommand = {engine}\n[adjudication]\nmaxmoves = 40\n')
    return path


def _rows(db: Path, query: str) -> list[tuple]:
    try:
        with contextlib.closing(sqlite3.connect(db, timeout=30)) as connection:
            return connection.execute(query).fetchall()
    except sqlite3.OperationalError:  # the tables are not there yet
        return []


def _wait(predicate, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_a_runner_stopped_mid_game_scores_no_time_forfeit(tmp_path: Path) -> None:
    """SIGSTOP the runner (not its engines) for 8 s while a game is in flight, then SIGCONT:
    the engine on move answered meanwhile, its reply waiting in the pipe, but by the
    runner's clock it took 8 s of its 2. No game is stored as a time forfeit, the game in
    flight is played again (and said so), and the tournament finishes with all its games."""
    config = _config(tmp_path / "t.toml", rounds=2)
    db = tmp_path / "r.db"
    runner = subprocess.Popen([*RUN, "run", str(config), "--db", f"sqlite:///{db}"],
                              cwd=tmp_path, env=ENV, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _wait(lambda: _rows(db, "SELECT count(*) FROM games WHERE status = 'running'")
              == [(1,)], "the first game in flight")
        time.sleep(1.5)  # some moves into it
        os.kill(runner.pid, signal.SIGSTOP)  # the runner only: its engines go on
        time.sleep(8)
        os.kill(runner.pid, signal.SIGCONT)
        out, err = runner.communicate(timeout=300)
    finally:
        if runner.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(runner.pid, signal.SIGKILL)
        runner.wait()
    assert runner.returncode == 0, err
    games = _rows(db, "SELECT job_index, status, termination, reason FROM games "
                  "ORDER BY job_index")
    assert [game[0] for game in games] == [0, 1, 2, 3], games  # every game, once
    assert all(game[1] == "done" for game in games), games
    assert not any(game[2] == "time forfeit" for game in games), games
    # The game in flight was reported (with the game's reason) and played again.
    assert re.search(r"\{the runner was frozen for [\d.]+ s while \w+ was on move, and its "
                     r"flag fell: not scored\} \(will be replayed\)", " ".join(err.split())), err
    assert "Traceback" not in err


def test_the_monitor_sees_a_blocked_loop_while_overdue_and_after() -> None:
    """A loop blocked for a while (as a stopped process is) is one stall, counted within the
    stretch asked about, also while its tick is still overdue (timers due together run in
    deadline order, the game's may run first); stretches before it do not count it."""

    async def scenario() -> tuple[float, float, float, float]:
        monitor = FreezeMonitor(period=0.02, threshold=0.25)
        monitor.acquire()
        try:
            await asyncio.sleep(0.1)
            blocked_at = time.monotonic()
            time.sleep(1.5)  # the loop stands still, as under SIGSTOP
            overdue = monitor.frozen(blocked_at)  # before the tick has run again
            await asyncio.sleep(0.1)
            after = monitor.frozen(blocked_at)
            half = monitor.frozen(blocked_at + 0.75)
            before = monitor.frozen(blocked_at - 0.1, blocked_at)
            return overdue, after, half, before
        finally:
            monitor.release()
            assert not monitor.running

    overdue, after, half, before = asyncio.run(scenario())
    assert overdue >= 1.4  # the block, less one period at most
    assert after >= 1.4
    assert 0.7 <= half < after  # only the part of the stall inside the stretch
    assert before <= 0.1  # none of the block: it began after the stretch (load may lag it)


def test_a_shared_monitor_ticks_until_its_last_user_is_done() -> None:
    """Two users, one timer: the first release leaves it ticking."""

    async def scenario() -> tuple[bool, bool]:
        monitor = FreezeMonitor()
        monitor.acquire()
        monitor.acquire()
        monitor.release()
        still = monitor.running
        monitor.release()
        return still, monitor.running

    assert asyncio.run(scenario()) == (True, False)


def _on(loop: str) -> Callable[[], asyncio.AbstractEventLoop]:
    """A loop factory for asyncio.Runner: asyncio's own as the runner makes it, or uvloop's."""
    if loop == "uvloop":
        uvloop = pytest.importorskip("uvloop", reason="uvloop is not installed (not on Windows)")
        factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
        return factory
    return new_asyncio_loop


@pytest.mark.timeout(60)
@pytest.mark.parametrize("loop_kind", ["asyncio", "uvloop"])
def test_a_reply_reaching_the_pipe_at_the_deadline_is_read_not_lost_to_the_timer(loop_kind: str) -> None:
    """The loop stands still past a move's deadline (as a stopped runner's does); as it goes
    on, the reply lands in the pipe at the deadline, and the overdue deadline comes due in
    the same loop turn, before the pipe is polled again: the reply still wins. A bare future
    read by its own reader: the watchdog has no pipe to look at, and waits a loop turn."""

    async def scenario() -> str:
        loop = asyncio.get_running_loop()
        read_end, write_end = os.pipe()
        reply: asyncio.Future[bytes] = loop.create_future()
        loop.add_reader(read_end, lambda: reply.done() or reply.set_result(os.read(read_end, 100)))
        try:
            deadline = loop.time() + 0.3
            loop.call_at(deadline - 0.01, os.write, write_end, b"move e2e4\n")  # the engine
            loop.call_later(0.1, time.sleep, 0.6)  # the standstill, over both of them
            try:
                return (await Watchdog().wait(reply, 0.3, lambda: "no move")).decode().strip()
            except EngineStalled as exc:
                return f"stalled: {exc}"
        finally:
            loop.remove_reader(read_end)
            os.close(read_end)
            os.close(write_end)

    with asyncio.Runner(loop_factory=_on(loop_kind)) as runner:
        assert runner.run(scenario()) == "move e2e4"


REPLIER = """
import sys, time
print("ready", flush=True)
sys.stdin.readline()
time.sleep(0.2)
print("move e2e4", flush=True)
sys.stdin.readline()
"""


@pytest.mark.timeout(60)
@pytest.mark.parametrize("loop_kind", ["asyncio", "uvloop"])
def test_an_engines_reply_in_its_raw_pipe_at_an_overdue_deadline_answers_the_move(
        loop_kind: str, tmp_path: Path) -> None:
    """An engine on raw pipes answers within its time while the runner stands still in a
    read callback (a long turn, or stopped there); when the loop goes on, the deadline is
    overdue and the reply unread. uvloop runs due timers before it polls again: the
    watchdog reads the pipe first (`look_with`), and the reply answers the move. An engine
    that did not answer still stalls."""
    script = tmp_path / "replier.py"
    script.write_text(REPLIER)

    def stand_still(fd: int) -> None:
        os.read(fd, 1)
        time.sleep(1.5)  # past the deadline, in the poll's callbacks

    async def scenario(answer: bool) -> str:
        loop = asyncio.get_running_loop()
        process = EngineProcess((sys.executable, str(script)))
        await process.start()
        assert process.raw_pipes
        lines: list[str] = []
        result: asyncio.Future[str] = loop.create_future()
        call = ReplyCall(result.set_result, result.set_exception)

        def on_lines(chunk: list[Line]) -> None:
            for line in chunk:
                lines.append(line.text)
                if line.text.startswith("move"):
                    call.set_result(line.text)

        process.listen(on_lines, lambda exc: call.set_exception(exc))
        watchdog = Watchdog()
        watchdog.look_with(process.read_waiting)
        busy_read, busy_write = os.pipe()
        loop.add_reader(busy_read, stand_still, busy_read)
        try:
            while lines != ["ready"]:
                await asyncio.sleep(0.01)
            if answer:
                process.write_nowait(["go"])
            call.open()
            watchdog.arm(loop, call, 0.3, lambda: "no move")
            loop.call_later(0.05, os.write, busy_write, b"x")  # the standstill's cue
            try:
                return await result
            except EngineStalled as exc:
                return f"stalled: {exc}"
        finally:
            loop.remove_reader(busy_read)
            os.close(busy_read)
            os.close(busy_write)
            watchdog.cancel()
            await process.stop(quit_timeout=1.0)

    with asyncio.Runner(loop_factory=_on(loop_kind)) as runner:
        assert runner.run(scenario(True)) == "move e2e4"
        assert runner.run(scenario(False)).startswith("stalled: no move")


async def _play_frozen(freezes: FreezeMonitor | None, fault: str | None = None,
                       block: float = 4.0) -> GameRecord:
    """A game of the bundled engine at 2+0.05; with `block`, the loop stands still for that
    long while the engine on move thinks, a few moves in."""
    loop = asyncio.get_running_loop()
    faulty = ("--fault", fault) if fault else ()
    engines = (make_engine(bundled("w", "--level", "8", *faulty)),
               make_engine(bundled("b", "--level", "8")))
    blocked = False

    def on_move(move: MoveRecord, board: Board) -> None:
        nonlocal blocked
        if block and not blocked and len(board.move_stack) >= 6:
            blocked = True  # once the next move is asked for, while the engine thinks
            loop.call_later(0.02, time.sleep, block)

    if freezes is not None:
        freezes.acquire()
    try:
        for engine in engines:
            await engine.start()
        return await play_game(*engines, game_spec("2+0.05"), on_move=on_move, freezes=freezes)
    finally:
        if freezes is not None:
            freezes.release()
        for engine in engines:
            await engine.quit()


@pytest.mark.timeout(120)
def test_a_flag_that_fell_while_the_loop_stood_still_is_not_scored() -> None:
    """The same standstill loses on time without the monitor (what the runner did before),
    and with it ends the game unfinished, marked for replay, the reason saying why."""
    without = asyncio.run(_play_frozen(None))
    assert without.termination is GameTermination.TIME_FORFEIT, without.reason
    record = asyncio.run(_play_frozen(FreezeMonitor()))
    assert record.replay and record.result == "*", record.reason
    assert record.termination is GameTermination.ERROR
    assert re.fullmatch(r"the runner was frozen for [\d.]+ s while (White|Black) was on move, "
                        r"and its flag fell: not scored", record.reason), record.reason


@pytest.mark.timeout(120)
def test_an_engine_that_hangs_still_loses_on_time_with_the_monitor_watching() -> None:
    """No standstill of the runner: a real overrun is scored as before."""
    record = asyncio.run(_play_frozen(FreezeMonitor(), fault="hang@2", block=0.0))
    assert record.termination is GameTermination.TIME_FORFEIT, record.reason
    assert not record.replay and record.result == "0-1"
