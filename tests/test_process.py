"""Engine processes over real pipes: faults become typed errors, nothing is left behind.

The misbehaving engine is a small Python script written into tmp_path; its mode is
its first argument.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
import sys
import textwrap
import time
from pathlib import Path

import pytest

from runner.clock import TimeControl
from runner.protocol.cecp import CecpEngine
from runner.protocol.engine import (
    ClockState,
    EngineConfig,
    EngineError,
    EngineProtocolError,
    EngineStalled,
    EngineTerminated,
    GameSetup,
    Side,
)
from runner.protocol.process import EngineProcess
from tests.bundled_games import group_empty
from tests.conftest import EVENT_TIMEOUT

FAKE_ENGINE = textwrap.dedent(
    r'''
    import os, signal, subprocess, sys, time
    mode = sys.argv[1]
    out = sys.stdout
    if mode in ("hang", "child"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if mode in ("child", "child-obeys"):
        child = subprocess.Popen(["sleep", "300"])  # inherits (holds) our stdout
        out.write(f"child {child.pid}\n"); out.flush()
    if mode == "stderr":
        sys.stderr.write("e" * 300000 + "\n"); sys.stderr.flush()
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "protover 2":
            ping = "0" if mode == "noping" else "1"
            out.write(f'feature myname="fake {mode}" ping={ping} setboard=1 usermove=1 done=1\n')
        elif cmd.startswith("ping"):
            if mode != "nopong":
                out.write("pong " + cmd.split()[1] + "\n")
        elif cmd == "go" or cmd.startswith("usermove"):
            if mode == "crash":
                sys.exit(3)
            if mode == "overlong":
                out.write("x" * 100000 + "\n")
            elif mode == "badutf8":
                out.flush()
                os.write(1, b"tellusererror caf\xc3\xa9 \xff\xfe bad\n")
                out.write("move e7e5\n")
            elif mode == "split":
                # Lines cut anywhere, even inside a UTF-8 character, and a last line without
                # its newline: each piece written on its own with a pause between.
                out.flush()
                for piece in (b"tellusererror caf\xc3", b"\xa9 one\r\n# two\n thr", b"ee\n",
                              b"move e7e5\nlast words"):
                    os.write(1, piece)
                    time.sleep(0.05)
                break
            elif mode == "echo":
                # gnuchess-like: each move printed twice, the second form arriving late.
                replies = ["e7e5", "d7d5"]
                played = globals().setdefault("played", [])
                if played:
                    out.write(f"My move is : {played[-1]}\n")
                if cmd.startswith("usermove"):
                    played.append(replies[len(played)])
                    out.write(f"{len(played)}. ... {played[-1]}\n")
            elif mode != "stall":
                out.write("move e7e5\n")
        elif cmd == "quit" and mode not in ("hang", "child"):
            break
        out.flush()
    '''
)


def run_async(test):
    """Run an async test body in a fresh event loop (no asyncio plugin needed)."""

    @functools.wraps(test)
    def wrapper(*args, **kwargs):
        return asyncio.run(test(*args, **kwargs))

    return wrapper


@pytest.fixture()
def fake(tmp_path: Path):
    """A function giving the argv of the fake engine in a mode."""
    script = tmp_path / "fake_engine.py"
    script.write_text(FAKE_ENGINE)
    return lambda mode: (sys.executable, str(script), mode)


def _config(argv, **overrides) -> EngineConfig:
    settings = {"quit_timeout": 0.5, "terminate_timeout": 0.5, "ping_timeout": 2.0}
    settings.update(overrides)
    return EngineConfig(name="fake", argv=argv, **settings)


def _gone(pid: int) -> bool:
    """Whether the process is gone (no /proc entry, or only a zombie of someone else)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ")[1].startswith("Z")
    except FileNotFoundError:
        return True


async def _wait_gone(pid: int, seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if _gone(pid):
            return True
        await asyncio.sleep(0.02)
    return _gone(pid)


async def _one_move(engine: CecpEngine) -> None:
    tc = TimeControl.parse("10+0.1")
    await engine.new_game(GameSetup(time_control=tc, side=Side.BLACK))
    return await engine.play(["e2e4"], ClockState(10.0, 10.0), timeout=2.0)


@pytest.mark.timeout(20)
@run_async
async def test_well_behaved_fake_plays_and_quits_cleanly(fake):
    engine = CecpEngine(_config(fake("good")))
    await engine.start()
    pid = engine.pid
    reply = await _one_move(engine)
    assert reply.move == "e7e5" and not reply.move_is_san
    assert reply.received_at >= reply.sent_at > 0
    assert await engine.quit() == 0
    assert await _wait_gone(pid)
    sent = [e.text for e in engine.transcript if e.direction == ">"]
    assert "usermove e2e4" in sent and sent[-1] == "quit"


@pytest.mark.timeout(20)
@run_async
async def test_crash_is_engine_terminated_with_exit_code(fake):
    engine = CecpEngine(_config(fake("crash")))
    await engine.start()
    with pytest.raises(EngineTerminated) as info:
        await _one_move(engine)
    assert info.value.exit_code == 3
    # The fault is sticky: the engine stays unusable, with the same error.
    with pytest.raises(EngineTerminated):
        await engine.ping()
    await engine.quit()


@pytest.mark.timeout(20)
@run_async
async def test_stalled_move_is_engine_stalled(fake):
    engine = CecpEngine(_config(fake("stall")))
    await engine.start()
    await engine.new_game(GameSetup(time_control=TimeControl.parse("st=1"), side=Side.BLACK))
    began = time.monotonic()
    with pytest.raises(EngineStalled) as info:
        await engine.play(["e2e4"], ClockState(1.0, 1.0), timeout=0.3)
    assert time.monotonic() - began >= 0.3
    assert info.value.waited >= 0.3
    await engine.kill()


@pytest.mark.timeout(20)
@run_async
async def test_missing_pong_is_engine_stalled(fake):
    engine = CecpEngine(_config(fake("nopong"), ping_timeout=0.3))
    await engine.start()
    with pytest.raises(EngineStalled, match="no pong"):
        await engine.new_game(GameSetup(time_control=TimeControl.parse("st=1"), side=Side.WHITE))
    await engine.quit()


@pytest.mark.timeout(20)
@run_async
async def test_engine_without_ping_gets_a_conservative_pause(fake):
    engine = CecpEngine(_config(fake("noping"), no_ping_delay=0.2))
    await engine.start()
    assert await engine.ping() is None
    began = time.monotonic()
    await engine.new_game(GameSetup(time_control=TimeControl.parse("st=1"), side=Side.BLACK))
    assert time.monotonic() - began >= 0.2
    await engine.quit()


@pytest.mark.timeout(20)
@run_async
async def test_overlong_line_is_a_protocol_error_not_a_crash(fake):
    engine = CecpEngine(_config(fake("overlong"), line_limit=4096))
    await engine.start()
    with pytest.raises(EngineProtocolError, match="longer than 4096"):
        await _one_move(engine)
    assert await engine.kill() is not None


@pytest.mark.timeout(20)
@run_async
async def test_invalid_utf8_is_decoded_with_replacement(fake):
    engine = CecpEngine(_config(fake("badutf8")))
    await engine.start()
    reply = await _one_move(engine)
    assert reply.move == "e7e5"
    assert any("caf\u00e9 \ufffd\ufffd bad" in message for message in reply.messages)
    await engine.quit()


@pytest.mark.timeout(20)
@run_async
async def test_lines_are_assembled_across_reads(fake):
    process = EngineProcess(fake("split"))
    await process.start()
    await process.write_lines(["go"])
    texts = []
    with pytest.raises(EngineTerminated):
        while True:
            texts.extend(line.text for line in await process.read_lines())
    assert texts == ["tellusererror caf\u00e9 one", "# two", " three", "move e7e5", "last words"]
    read = [e.text for e in process.transcript if e.direction == "<"]
    assert read == texts
    await process.stop(quit_timeout=0.5, terminate_timeout=0.5)


@pytest.mark.timeout(20)
@run_async
async def test_engine_ignoring_quit_and_sigterm_is_killed_with_its_children(fake):
    process = EngineProcess(fake("child"))
    await process.start()
    line = await process.read_line()
    child_pid = int(line.text.split()[1])
    pgid = process.pid
    code = await process.stop(quit_timeout=0.3, terminate_timeout=0.3)
    assert code == -signal.SIGKILL
    assert await _wait_gone(pgid)
    assert await _wait_gone(child_pid), "the engine's child survived"
    assert await group_empty(pgid)
    notes = [e.text for e in process.transcript if e.direction == "!"]
    assert any("SIGTERM" in n for n in notes) and any("SIGKILL" in n for n in notes)


@pytest.mark.timeout(20)
@run_async
async def test_stderr_is_drained_and_bounded(fake, tmp_path):
    log = tmp_path / "stderr.log"
    engine = CecpEngine(_config(fake("stderr"), stderr_limit=10000, stderr_log=log))
    await engine.start()
    reply = await _one_move(engine)  # a full stderr pipe would have blocked the engine
    assert reply.move == "e7e5"
    await engine.quit()
    assert log.stat().st_size == 10000
    assert engine._proc is not None and len(engine._proc.stderr_tail) <= 10000


@pytest.mark.timeout(20)
@run_async
async def test_missing_program_is_an_engine_error(tmp_path):
    engine = CecpEngine(_config((str(tmp_path / "no-such-engine"),)))
    with pytest.raises(EngineError, match="cannot start"):
        await engine.start()


@pytest.mark.timeout(30)
@run_async
async def test_no_file_descriptor_or_process_leaks_over_many_engines(fake):
    # A first engine opens what the loop keeps for all of them (uvloop keeps /dev/null open
    # once it has started a process); the count after it is what must not grow.
    warm = CecpEngine(_config(fake("good")))
    await warm.start()
    await warm.quit()
    before = len(os.listdir("/proc/self/fd"))
    pids = [warm.pid]
    for mode in ("good", "crash", "hang", "good", "stall") * 2:
        engine = CecpEngine(_config(fake(mode)))
        await engine.start()
        pids.append(engine.pid)
        with contextlib.suppress(EngineError):
            await _one_move(engine)
        await engine.quit()
    await asyncio.sleep(0.1)
    assert len(os.listdir("/proc/self/fd")) <= before
    assert all(_gone(pid) for pid in pids)


@pytest.mark.timeout(20)
@run_async
async def test_late_echo_of_the_previous_move_is_not_taken_as_the_next(fake):
    engine = CecpEngine(_config(fake("echo")))
    await engine.start()
    tc = TimeControl.parse("10+0.1")
    await engine.new_game(GameSetup(time_control=tc, side=Side.BLACK))
    first = await engine.play(["e2e4"], ClockState(10.0, 10.0), timeout=2.0)
    second = await engine.play(["e2e4", "e7e5", "g1f3"], ClockState(10.0, 10.0), timeout=2.0)
    assert (first.move, second.move) == ("e7e5", "d7d5")
    await engine.quit()


@pytest.mark.timeout(20)
@run_async
async def test_transcript_entries_are_clipped_but_lines_are_read_whole(fake):
    process = EngineProcess(fake("overlong"), entry_limit=1000)
    await process.start()
    await process.write_lines(["go"])
    line = await process.read_line()
    assert line.text == "x" * 100000  # the protocol layer sees the whole line
    # A second long line, written while stop() already drains: no event-loop turn passes
    # between the write and the start of stop(), so it is recorded the draining way.
    await process.write_lines(["go"])
    await process.stop(quit_timeout=0.5, terminate_timeout=0.5)
    long_entries = [e.text for e in process.transcript if e.text.startswith("xxx")]
    assert len(long_entries) == 2, [t[:40] for t in long_entries]
    assert long_entries[0] == "x" * 1000 + " [... 100000 characters in all]"
    assert long_entries[1] == "x" * 1000 + " [... 100000 bytes in all]"


@pytest.mark.timeout(20)
@run_async
async def test_engine_pipes_are_read_in_64_kib_chunks(fake):
    """asyncio's 256 KiB reads cost about an eighth of the runner's CPU per move; if a Python
    release moves the pipe transports, this says so instead of the runner silently slowing."""
    if not isinstance(asyncio.get_running_loop(), asyncio.BaseEventLoop):
        pytest.skip("not asyncio's own loop: uvloop reads into one buffer it keeps per loop "
                    "(tests/test_loop.py runs this check on asyncio's loop)")
    process = EngineProcess(fake("good"), raw=False)  # the fallback: asyncio's pipes
    await process.start()
    try:
        transport = process._pipes.transport
        sizes = [transport.get_pipe_transport(fd).max_size for fd in (1, 2)]
        assert sizes == [65536, 65536]
    finally:
        await process.stop(quit_timeout=1.0)


@pytest.mark.timeout(20)
@run_async
async def test_drained_lines_split_across_reads_are_kept_line_by_line(fake):
    process = EngineProcess(fake("good"), entry_limit=1000, transcript_size=20000)
    await process.start()
    await process.write_lines(["protover 2", *(f"ping {n}" for n in range(12000))])
    await asyncio.sleep(0.3)
    await process.stop(quit_timeout=1.0)
    pongs = [e.text for e in process.transcript if e.text.startswith("pong")]
    assert pongs == [f"pong {n}" for n in range(12000)]


@pytest.mark.timeout(20)
@run_async
async def test_engine_obeying_quit_stops_at_once_although_its_child_holds_stdout(fake):
    process = EngineProcess(fake("child-obeys"))
    await process.start()
    child_pid = int((await process.read_line()).text.split()[1])
    began = time.monotonic()
    code = await process.stop(quit_timeout=2 * EVENT_TIMEOUT, terminate_timeout=1.0)
    assert code == 0
    assert time.monotonic() - began < EVENT_TIMEOUT  # not the quit timeout
    assert await _wait_gone(child_pid), "the engine's child survived"
    assert await group_empty(process.pid or 0)


@pytest.mark.timeout(20)
@run_async
async def test_a_stop_cancelled_while_waiting_for_quit_still_kills_the_engine(fake):
    """Issue 21 item 8: a second Ctrl-C cancels the task stopping an engine that ignores quit
    and SIGTERM; the engine (and its child) must still die, at once."""
    process = EngineProcess(fake("child"))
    await process.start()
    child_pid = int((await process.read_line()).text.split()[1])
    stopping = asyncio.create_task(process.stop(quit_timeout=2 * EVENT_TIMEOUT,
                                                 terminate_timeout=2 * EVENT_TIMEOUT))
    await asyncio.sleep(0.3)
    stopping.cancel()
    began = time.monotonic()
    with pytest.raises(asyncio.CancelledError):
        await stopping
    assert time.monotonic() - began < EVENT_TIMEOUT  # neither the quit nor the term timeout
    assert await _wait_gone(process.pid or 0, 1.0)
    assert await _wait_gone(child_pid, 1.0)
    assert not process.running


@pytest.mark.timeout(20)
def test_a_stop_left_running_when_the_event_loop_ends_still_kills_the_engine(fake):
    """asyncio.run cancels whatever is still running when its main coroutine returns (as after
    a KeyboardInterrupt): a stop under way must finish with SIGKILL, not leave the engine."""
    pids: list[int] = []

    async def main() -> None:
        process = EngineProcess(fake("hang"))
        await process.start()
        pids.append(process.pid or 0)
        asyncio.get_running_loop().create_task(process.stop(quit_timeout=30.0))
        await asyncio.sleep(0.2)  # the quit is sent and being waited for

    asyncio.run(main())
    assert asyncio.run(_wait_gone(pids[0], 2.0)), "the engine survived the event loop"


THREADED = r'''
import sys, threading, time
threads = [threading.Thread(target=time.sleep, args=(30,), daemon=True) for _ in range(3)]
for thread in threads:
    thread.start()
print("ready", flush=True)
sys.stdin.readline()
'''


def _allowed(pid: int) -> set[str]:
    """The CPU lists of every thread of `pid`."""
    found = set()
    for tid in os.listdir(f"/proc/{pid}/task"):
        for line in Path(f"/proc/{pid}/task/{tid}/status").read_text().splitlines():
            if line.startswith("Cpus_allowed_list:"):
                found.add(line.split(":", 1)[1].strip())
    return found


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs to tell pinned apart")
@pytest.mark.timeout(20)
@run_async
async def test_a_start_on_one_cpu_gives_every_thread_all_cpus_back(tmp_path):
    """A restart after a stuck start runs on one CPU (gnuchess's start-up race) and gets the
    runner's CPUs back afterwards, in every thread it started meanwhile."""
    script = tmp_path / "threads.py"
    script.write_text(THREADED)
    cpu = min(os.sched_getaffinity(0))
    proc = EngineProcess([sys.executable, str(script)], start_cpu=cpu)
    await proc.start()
    try:
        line = await proc.read_line()
        assert line.text == "ready"
        assert proc.pid is not None
        assert _allowed(proc.pid) == {str(cpu)}  # all 4 threads started pinned
        proc.release_cpu()
        assert len(_allowed(proc.pid)) == 1 and _allowed(proc.pid) != {str(cpu)}
    finally:
        await proc.kill()
