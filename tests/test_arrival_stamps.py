"""Engine lines are stamped when the loop's poll found them in our pipe, not when the turn's
read callback got round to them (runner/protocol/loop.py, ArrivalSelector).

A busy turn (here: a callback that blocks the loop, standing for the referee and store work
of many games) runs between the poll and the read; what the engine wrote before the poll must
not be charged with it, and what it wrote after the poll must not be stamped before it came.
The engine is a small script over real pipes; it marks files so that the test knows, without
reading the pipe, when a line is in it. Nothing here bounds a wall-clock duration: the
assertions order stamps against moments the test itself took.
"""

from __future__ import annotations

import asyncio
import os
import selectors
import sys
import textwrap
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

import pytest

from runner.protocol.engine import EngineError, EngineTerminated
from runner.protocol.loop import LOOP_ENV, arrival_selector, run
from runner.protocol.process import EngineProcess
from runner.protocol.reading import LineReader
from runner.protocol.streamio import _read_directly, _StdoutProtocol
from runner.protocol.transport import Line
from tests.conftest import EVENT_TIMEOUT

SCRIPT = textwrap.dedent(
    r'''
    import os, sys, time
    folder = sys.argv[1]

    def mark(name):
        open(os.path.join(folder, name), "w").close()

    def await_mark(name):
        while not os.path.exists(os.path.join(folder, name)):
            time.sleep(0.005)

    for line in sys.stdin:
        word = line.strip()
        if word == "ping":
            sys.stdout.write("pong\n"); sys.stdout.flush(); mark("pong-sent")
        elif word == "two":
            sys.stdout.write("first\n"); sys.stdout.flush(); mark("first-sent")
            await_mark("go-on")
            sys.stdout.write("second\n"); sys.stdout.flush(); mark("second-sent")
        elif word == "quit":
            break
    '''
)


def _await_file(path: Path) -> None:
    """Block (the whole loop: that is the point) until `path` exists."""
    end = time.monotonic() + EVENT_TIMEOUT
    while not path.exists():
        if time.monotonic() > end:
            raise TimeoutError(f"{path.name} never appeared")
        time.sleep(0.005)


async def _exchange(folder: Path, command: str, marked: str,
                    busy: Callable[[], None], count: int) -> tuple[float, list[Line]]:
    """Send `command`; once the engine has marked `marked` (its line is in our pipe), queue
    `busy` so that it runs in the next turn between the poll and the read. The write's time
    and the first `count` lines read."""
    loop = asyncio.get_running_loop()
    assert arrival_selector(loop) is not None, "the runner's loop polls through ArrivalSelector"
    script = folder / "engine.py"
    script.write_text(SCRIPT)
    proc = EngineProcess([sys.executable, str(script), str(folder)])
    await proc.start()
    got: list[Line] = []
    enough: asyncio.Future[None] = loop.create_future()

    def on_lines(lines: list[Line]) -> None:
        got.extend(lines)
        if len(got) >= count and not enough.done():
            enough.set_result(None)

    def on_end(exc: EngineError) -> None:
        if not enough.done():
            enough.set_exception(exc)

    def hold_until_written() -> None:
        _await_file(folder / marked)  # the loop stands still: nothing is read meanwhile
        loop.call_soon(busy)  # runs first in the next turn, after its poll, before the read

    try:
        proc.listen(on_lines, on_end)
        sent = proc.write_nowait([command])
        loop.call_soon(hold_until_written)
        await asyncio.wait_for(enough, EVENT_TIMEOUT)
    finally:
        await proc.stop()
    return sent, got


@pytest.fixture(autouse=True)
def _asyncio_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stamps come from asyncio's loop as the runner makes it (uvloop has no poll hook)."""
    monkeypatch.setenv(LOOP_ENV, "asyncio")


def test_a_busy_turn_is_not_charged_to_the_engine(tmp_path: Path) -> None:
    """The reply was in the pipe before the busy turn began: its stamp precedes that work."""
    moments: dict[str, float] = {}

    def busy() -> None:
        moments["busy"] = time.monotonic()
        time.sleep(0.2)  # another game's referee and store work, say

    sent, lines = run(_exchange(tmp_path, "ping", "pong-sent", busy, 1))
    assert [line.text for line in lines] == ["pong"]
    assert sent <= lines[0].time <= moments["busy"]


def test_a_line_written_after_the_poll_keeps_the_read_time(tmp_path: Path) -> None:
    """Of one read, the line there at the poll is stamped then; the line the engine wrote
    during the busy turn is stamped when it was read, never earlier than it came."""
    moments: dict[str, float] = {}

    def busy() -> None:
        moments["busy"] = time.monotonic()
        (tmp_path / "go-on").touch()
        _await_file(tmp_path / "second-sent")
        moments["second in pipe"] = time.monotonic()

    sent, lines = run(_exchange(tmp_path, "two", "first-sent", busy, 2))
    assert [line.text for line in lines] == ["first", "second"]
    assert sent <= lines[0].time <= moments["busy"]
    assert lines[1].time >= moments["second in pipe"]


UCI_SCRIPT = textwrap.dedent(
    r'''
    import os, sys, time
    folder = sys.argv[1]
    for line in sys.stdin:
        word = line.split()[0] if line.split() else ""
        if word == "uci":
            sys.stdout.write("id name marks\nuciok\n"); sys.stdout.flush()
        elif word == "isready":
            sys.stdout.write("readyok\n"); sys.stdout.flush()
        elif word == "go":
            while not os.path.exists(os.path.join(folder, "answer")):
                time.sleep(0.005)
            sys.stdout.write("bestmove e7e5\n"); sys.stdout.flush()
            open(os.path.join(folder, "answered"), "w").close()
        elif word == "quit":
            break
    '''
)


def test_the_clock_is_not_charged_for_a_busy_turn(tmp_path: Path) -> None:
    """A UCI engine's reply, in the pipe before a busy turn of the runner began, is charged
    up to that moment at the latest: `EngineReply.elapsed` is what the game's clock spends."""
    from runner.clock import TimeControl
    from runner.protocol.engine import ClockState, EngineConfig, GameSetup, Side
    from runner.protocol.uci import UciEngine

    script = tmp_path / "engine.py"
    script.write_text(UCI_SCRIPT)
    moments: dict[str, float] = {}

    def busy() -> None:
        moments["busy"] = time.monotonic()
        time.sleep(0.2)  # other games' work in the same turn

    async def scenario() -> tuple[float, float, float]:
        loop = asyncio.get_running_loop()
        engine = UciEngine(EngineConfig(name="marks", argv=[sys.executable, str(script),
                                                            str(tmp_path)]))
        await engine.start()
        try:
            await engine.new_game(GameSetup(time_control=TimeControl.parse("10+0.1"),
                                            side=Side.BLACK))
            move = asyncio.ensure_future(engine.play(["e2e4"], ClockState(10.0, 10.0),
                                                     timeout=EVENT_TIMEOUT))
            while not any(entry.text.startswith("go") for entry in engine.transcript):
                await asyncio.sleep(0.001)

            def hold_until_answered() -> None:
                (tmp_path / "answer").touch()
                _await_file(tmp_path / "answered")  # the reply is in our pipe, unread
                loop.call_soon(busy)

            loop.call_soon(hold_until_answered)
            reply = await asyncio.wait_for(move, EVENT_TIMEOUT)
        finally:
            await engine.quit()
        return reply.sent_at, reply.received_at, reply.elapsed

    sent_at, received_at, charged = run(scenario())
    assert sent_at <= received_at <= moments["busy"]
    assert charged <= moments["busy"] - sent_at


def test_output_that_ended_before_the_takeover_stays_with_asyncio() -> None:
    """A program that exits at once can have its stdout at its end, and the pipe closed,
    before the process takes the reads over: the takeover then leaves asyncio's protocol in
    charge (it has already handed everything on) instead of failing on the closed pipe."""

    class Sink(asyncio.Protocol):
        def __init__(self, lost: asyncio.Future[None]) -> None:
            self.lost = lost

        def connection_lost(self, exc: Exception | None) -> None:
            self.lost.set_result(None)

    async def scenario() -> tuple[bool, bool]:
        loop = asyncio.get_running_loop()
        selector = arrival_selector(loop)
        assert selector is not None, "the runner's loop polls through an ArrivalSelector"
        read_end, write_end = os.pipe()
        os.close(write_end)
        sink = Sink(loop.create_future())
        transport, _ = await loop.connect_read_pipe(lambda: sink, os.fdopen(read_end, "rb", 0))
        await asyncio.wait_for(sink.lost, EVENT_TIMEOUT)

        async def never() -> EngineTerminated:
            raise AssertionError("the reader is not used")

        reader = LineReader(deque(), line_limit=1024, entry_limit=16, note=lambda text: None,
                            terminated=never, returncode=lambda: None, label="gone")
        _read_directly(transport, reader, selector)
        return transport.is_closing(), isinstance(transport.get_protocol(), _StdoutProtocol)

    closing, taken_over = run(scenario())
    assert closing and not taken_over


def test_a_reply_that_comes_during_a_long_turn_is_stamped_when_it_came() -> None:
    """Issue 38's time forfeits at 64 games at once: a reply that reached our pipe while a
    long turn ran (the other games' read callbacks, each refereeing a move and writing the
    next request) was stamped by the next poll, after the whole turn, and the engine was
    charged with it. Now a read callback past `LOOK_AFTER` into the turn looks at the
    watched pipes again, and the reply is stamped by that look. On a clock the test sets
    (no wall time): the turn polls at 100.000, game B's reply comes during game A's
    callback, game C's callback looks at 100.004, the turn ends at 100.080."""
    from runner.protocol.engine import EngineReply
    from runner.protocol.loop import LOOK_AFTER, ArrivalSelector

    clock = [100.0]
    selector = ArrivalSelector(clock=lambda: clock[0])
    pipes = {name: os.pipe() for name in "ABC"}
    lines: list[Line] = []

    async def never() -> EngineTerminated:
        raise AssertionError("the output does not end here")

    reader = LineReader(deque(), line_limit=1024, entry_limit=64, note=lambda text: None,
                        terminated=never, returncode=lambda: None, label="B")
    reader.listen(lambda got: lines.extend(got), lambda exc: None)
    try:
        for read_end, _ in pipes.values():
            selector.register(read_end, selectors.EVENT_READ)
            selector.watch(read_end)
        a_read, a_write = pipes["A"]
        b_read, b_write = pipes["B"]
        c_read, c_write = pipes["C"]
        os.write(a_write, b"bestmove e2e4\n")
        os.write(c_write, b"bestmove d2d4\n")
        sent_to_b = 99.999  # B's request, written in the turn before
        ready = selector.select(0)
        assert sorted(key.fd for key, _ in ready) == sorted([a_read, c_read])
        # A's read callback: its reply was there at the poll.
        chunk = os.read(a_read, 4096)
        assert list(selector.arrived(a_read, 100.0)) == [(100.0, len(chunk))]
        os.write(b_write, b"info depth 1\nbestmove e7e5\n")  # B answers during A's work
        clock[0] = 100.0 + 4 * LOOK_AFTER  # C's read callback, further into the turn
        chunk = os.read(c_read, 4096)
        assert list(selector.arrived(c_read, clock[0])) == [(100.0, len(chunk))]
        looked = clock[0]
        clock[0] = 100.080  # the rest of the turn: C's work and the others'
        ready = selector.select(0)
        assert [key.fd for key, _ in ready] == [b_read]
        chunk = os.read(b_read, 4096)
        reader.on_chunk(chunk, clock[0] + 0.001, selector.arrived(b_read, clock[0] + 0.001))
        assert [(line.text, line.time) for line in lines] == [
            ("info depth 1", looked), ("bestmove e7e5", looked)]
        reply = EngineReply(move="e7e5", sent_at=sent_to_b, received_at=lines[-1].time)
        assert reply.elapsed == pytest.approx(looked - sent_to_b)  # not 100.080 - 99.999
        # A second read in the same turn gets no mark: nothing is stamped early.
        os.write(b_write, b"bestmove e7e6\n")
        chunk = os.read(b_read, 4096)
        assert list(selector.arrived(b_read, clock[0] + 0.002)) == []
    finally:
        selector.close()
        for read_end, write_end in pipes.values():
            os.close(read_end)
            os.close(write_end)


def test_a_poll_that_waited_leaves_its_first_pipe_to_be_stamped_when_read() -> None:
    """A poll that waited had nothing queued before it, so the first descriptor it found is
    read first, at once: its bytes are not counted (no FIONREAD) and the read's own time
    stamps them. The others found in the same poll are counted as before; a poll that did
    not wait (callbacks queued before it) counts every one. On a clock the test sets."""
    from runner.protocol.loop import ArrivalSelector

    selector = ArrivalSelector(clock=lambda: 100.0)
    pipes = [os.pipe() for _ in range(2)]
    try:
        for read_end, write_end in pipes:
            selector.register(read_end, selectors.EVENT_READ)
            selector.watch(read_end)
            os.write(write_end, b"bestmove e2e4\n")
        for timeout, counted in ((5.0, 1), (None, 1), (0, 2)):
            found = [key.fd for key, _ in selector.select(timeout)]
            assert sorted(found) == sorted(read for read, _ in pipes)
            marks = [list(selector.arrived(fd, 100.0)) for fd in found]
            assert marks[0] == ([] if counted == 1 else [(100.0, 14)])
            assert marks[1] == [(100.0, 14)]
    finally:
        selector.close()
        for read_end, write_end in pipes:
            os.close(read_end)
            os.close(write_end)


def test_lines_past_a_mark_keep_a_later_stamp() -> None:
    """Of one read, each line is stamped by the earliest mark that counted its last byte;
    a line no mark counted keeps the read's time (never stamped before it came)."""
    lines: list[Line] = []

    async def never() -> EngineTerminated:
        raise AssertionError("the output does not end here")

    reader = LineReader(deque(), line_limit=1024, entry_limit=64, note=lambda text: None,
                        terminated=never, returncode=lambda: None, label="marks")
    reader.listen(lambda got: lines.extend(got), lambda exc: None)
    chunk = b"one\ntwo\nthree\nfour"
    reader.on_chunk(chunk, 9.0, [(1.0, 6), (2.0, 9), (3.0, 10)])
    reader.on_chunk(b"\n", 10.0)
    assert [(line.text, line.time) for line in lines] == [
        ("one", 1.0), ("two", 2.0), ("three", 9.0), ("four", 10.0)]


def test_on_uvloop_the_reads_look_for_replies_that_came_during_the_turn() -> None:
    """uvloop's loop has no selector to wrap: `arrival_selector` gives it looks of its own
    (one object per loop), taken from the read callbacks at most every `LOOK_AFTER`. As
    above, on times the test gives: A is read first in the poll's batch (100.000), B answers
    during A's work, C's read looks (100.004), B is read after the batch (100.081): its lines
    are stamped by that look, C's by the look A's read took."""
    from runner.protocol.loop import LOOK_AFTER, ArrivalLooks

    uvloop = pytest.importorskip("uvloop", reason="uvloop is not installed (the test extra has it)")
    loop = uvloop.new_event_loop()
    try:
        looks = arrival_selector(loop)
        assert isinstance(looks, ArrivalLooks) and arrival_selector(loop) is looks
    finally:
        loop.close()
    looks = ArrivalLooks()
    pipes = {name: os.pipe() for name in "ABC"}
    try:
        for read_end, _ in pipes.values():
            looks.watch(read_end)
        (a_read, a_write), (b_read, b_write), (c_read, c_write) = (pipes[n] for n in "ABC")
        os.write(a_write, b"bestmove e2e4\n")
        os.write(c_write, b"bestmove d2d4\n")
        os.read(a_read, 4096)
        assert list(looks.arrived(a_read, 100.0)) == []  # read at once: its own time
        os.write(b_write, b"info depth 1\nbestmove e7e5\n")  # B answers during A's work
        looked = 100.0 + 4 * LOOK_AFTER
        c_chunk = os.read(c_read, 4096)
        assert list(looks.arrived(c_read, looked)) == [(100.0, len(c_chunk))]
        b_chunk = os.read(b_read, 4096)
        assert list(looks.arrived(b_read, 100.081)) == [(looked, len(b_chunk))]
        # Within LOOK_AFTER of the last look, a read takes no look (bounded cost).
        os.write(a_write, b"bestmove g1f3\n")
        assert list(looks.arrived(c_read, 100.081 + LOOK_AFTER / 2)) == []
        assert list(looks.arrived(a_read, 100.081 + LOOK_AFTER / 2)) == []
    finally:
        looks.close()
        for read_end, write_end in pipes.values():
            os.close(read_end)
            os.close(write_end)
