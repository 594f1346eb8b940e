"""The engine process layer on both event loops: asyncio's own and uvloop.

The rest of the suite runs on the loop the CLI would use (asyncio's, or uvloop with
``RUNNER_LOOP=uvloop``; see runner/protocol/loop.py). These tests run a few things on each
loop whatever that choice is, so that both stay working (``runner serve``'s uvicorn, too,
would pick uvloop when it is installed):
a game between real engines, a child holding the pipe after its engine died, output nobody
reads pausing the engine, and the runner's signals (Ctrl-C, SIGKILL) through the CLI.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.protocol.cecp import CecpEngine
from runner.protocol.engine import EngineConfig, EngineTerminated
from runner.protocol.loop import LOOP_ENV, LoopChoiceError, loop_name, run
from runner.protocol.process import EngineProcess
from tests.bundled_games import check_finished, game_spec, group_empty, run_game
from tests.conftest import EVENT_TIMEOUT, require_binary, warm_uvloop
from tests.test_process import FAKE_ENGINE
from tests.test_signals import Runner, bundled, children_of, gone, match, processes_with

LOOPS = ["asyncio", "uvloop"]


@pytest.fixture(params=LOOPS)
def loop(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Run the test's asyncio.run calls, and the CLI it starts, on one loop or the other."""
    name: str = request.param
    previous = asyncio.get_event_loop_policy()
    if name == "uvloop":
        uvloop = pytest.importorskip("uvloop", reason="uvloop is not installed (the test extra has it)")
        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
        warm_uvloop()
    else:
        asyncio.set_event_loop_policy(None)  # asyncio's own
    monkeypatch.setenv(LOOP_ENV, name)
    try:
        yield name
    finally:
        asyncio.set_event_loop_policy(previous)


@pytest.fixture()
def marker() -> Iterator[str]:
    """A seed for the bundled engines, found again in their command lines (as in
    test_signals.py); whatever still carries it at the end is killed."""
    word = str(uuid.uuid4().int % 10**12 + 10**12)
    yield word
    for pid in processes_with(word):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _running_loop_module() -> str:
    return type(asyncio.get_running_loop()).__module__.split(".")[0]


# ------------------------------------------------------------------------------- the choice


@pytest.fixture()
def own_policy() -> Iterator[None]:
    """asyncio's default policy for the test (the suite may have put uvloop's in place): with
    RUNNER_LOOP=asyncio, `run` takes the policy's loop, as the CLI does."""
    previous = asyncio.get_event_loop_policy()
    asyncio.set_event_loop_policy(None)
    try:
        yield
    finally:
        asyncio.set_event_loop_policy(previous)


@pytest.mark.usefixtures("own_policy")
def test_runner_loop_chooses_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    async def which() -> str:
        return _running_loop_module()

    monkeypatch.delenv(LOOP_ENV, raising=False)
    assert (loop_name(), run(which())) == ("asyncio", "asyncio")  # the default, uvloop or not
    monkeypatch.setenv(LOOP_ENV, "asyncio")
    assert (loop_name(), run(which())) == ("asyncio", "asyncio")
    monkeypatch.setenv(LOOP_ENV, "bogus")
    with pytest.raises(LoopChoiceError, match=r"RUNNER_LOOP='bogus': expected one of asyncio, "):
        run(which())
    monkeypatch.setenv(LOOP_ENV, "uvloop")
    monkeypatch.setitem(sys.modules, "uvloop", None)  # as if not installed: import fails
    with pytest.raises(LoopChoiceError, match=r"RUNNER_LOOP=uvloop, but uvloop is not installed"):
        run(which())
    monkeypatch.delitem(sys.modules, "uvloop")
    pytest.importorskip("uvloop", reason="uvloop is not installed (the test extra has it)")
    assert (loop_name(), run(which())) == ("uvloop", "uvloop")


def test_a_bad_runner_loop_is_a_user_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          marker: str) -> None:
    monkeypatch.setenv(LOOP_ENV, "tokio")
    runner = Runner(["play", *bundled("a", marker), *bundled("b", marker), "--each", "tc=60+0"],
                    tmp_path)
    assert runner.finish() == 2
    said = " ".join(runner.stderr().split())  # rich wraps long lines
    assert "environment variable RUNNER_LOOP='tokio': expected one of asyncio, uvloop" in said
    assert processes_with(marker) == []


# ------------------------------------------------------------------------------- engines


@pytest.mark.timeout(60)
def test_real_engines_play_a_game(loop: str) -> None:
    """fairymax (CECP) against stockfish (UCI), then nothing left running, no descriptor kept
    (run_game checks both)."""
    fairymax, stockfish = require_binary("fairymax"), require_binary("stockfish")
    white = EngineConfig(name="fairymax", argv=(fairymax,), protocol="cecp")
    black = EngineConfig(name="stockfish", argv=(stockfish,), protocol="uci")
    played = run_game(white, black, game_spec("depth=1"))
    check_finished(played.record)
    assert len(played.record.moves) >= 2


@pytest.fixture()
def fake(tmp_path: Path):
    """The misbehaving engine of test_process.py, by mode."""
    script = tmp_path / "fake_engine.py"
    script.write_text(FAKE_ENGINE)
    return lambda mode: (sys.executable, str(script), mode)


@pytest.mark.timeout(20)
def test_the_exit_ends_the_engine_although_its_child_holds_stdout(loop: str, fake) -> None:
    """Issue 21 item 2, on each loop: the process's exit, not the end of its output, ends the
    engine (a child holding the pipe used to make the ping wait its whole timeout)."""

    async def scenario() -> tuple[str, float, float, bool]:
        engine = CecpEngine(EngineConfig(name="fake", argv=fake("child"), ping_timeout=2 * EVENT_TIMEOUT,
                                         quit_timeout=2 * EVENT_TIMEOUT,
                                         terminate_timeout=2 * EVENT_TIMEOUT))
        await engine.start()
        pgid = engine.pid
        assert pgid is not None
        os.kill(pgid, signal.SIGKILL)
        began = time.monotonic()
        with pytest.raises(EngineTerminated):
            await engine.ping()
        waited = time.monotonic() - began
        began = time.monotonic()
        await engine.quit()
        quitting = time.monotonic() - began
        return _running_loop_module(), waited, quitting, await group_empty(pgid)

    used, waited, quitting, empty = asyncio.run(scenario())
    assert used == loop
    assert waited < EVENT_TIMEOUT, "the end was taken from the pipe, not the exit"
    assert quitting < EVENT_TIMEOUT, "quit waited for a process already gone"
    assert empty, "the engine's child survived"


FLOOD = r'''
import sys
from pathlib import Path
out = sys.stdout
for n in range(60000):
    out.write(f"line {n}\n")
out.flush()
Path(sys.argv[1]).write_text("all written")
sys.stdin.readline()
'''


@pytest.mark.timeout(30)
def test_output_nobody_reads_pauses_the_engine(loop: str, tmp_path: Path) -> None:
    """Past the reader's queue limit reading stops, so the engine blocks on its full pipe
    instead of the runner holding all it writes; reading the lines lets it go on."""
    script, done = tmp_path / "flood.py", tmp_path / "written"
    script.write_text(FLOOD)

    async def scenario() -> tuple[bool, int, bool]:
        process = EngineProcess((sys.executable, str(script), str(done)))
        await process.start()
        try:
            await asyncio.sleep(1.5)  # nobody reads meanwhile
            blocked = not done.exists()
            numbers = []
            while len(numbers) < 60000:
                numbers += [int(line.text.split()[1]) for line in await process.read_lines()]
            deadline = time.monotonic() + 5
            while not done.exists() and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            return blocked, numbers == list(range(60000)), done.exists()
        finally:
            await process.stop(quit_timeout=1.0)

    blocked, in_order, finished = asyncio.run(scenario())
    assert blocked, "the engine wrote 60,000 lines unread: reading was never paused"
    assert in_order
    assert finished


@pytest.mark.timeout(20)
def test_asyncio_pipes_are_read_in_64_kib_chunks(tmp_path: Path, fake) -> None:
    """On asyncio's own loop the pipes read 64 KiB at a time (see process._shrink_reads)."""
    previous = asyncio.get_event_loop_policy()
    asyncio.set_event_loop_policy(None)

    async def sizes() -> list[int]:
        process = EngineProcess(fake("good"), raw=False)  # the fallback: asyncio's pipes
        await process.start()
        try:
            transport = process._pipes.transport
            assert transport is not None
            return [transport.get_pipe_transport(fd).max_size for fd in (1, 2)]
        finally:
            await process.stop(quit_timeout=1.0)

    try:
        assert asyncio.run(sizes()) == [65536, 65536]
    finally:
        asyncio.set_event_loop_policy(previous)


# ------------------------------------------------------------------------------- the CLI


@pytest.mark.timeout(60)
def test_ctrl_c_finishes_the_game_and_stops_the_engines(loop: str, tmp_path: Path,
                                                        marker: str) -> None:
    runner = Runner(match(tmp_path, bundled("a", marker, "--level", "1"),
                          bundled("b", marker, "--level", "1"), tc="5+0.05", games=4), tmp_path)
    runner.wait_for("Started game 1")
    engines = processes_with(marker)
    assert len(engines) == 2
    runner.signal(signal.SIGINT)
    assert runner.finish() == 130, runner.stderr()
    assert "Finished game 1" in runner.stderr()
    assert gone(engines, 1.0) == []


@pytest.mark.timeout(60)
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_engines_die_with_a_runner_killed_by_sigkill(loop: str, tmp_path: Path,
                                                     marker: str) -> None:
    """The death signal is set between fork and exec (a preexec_fn), on either loop."""
    runner = Runner(match(tmp_path, bundled("a", marker, "--fault", "hang@1"),
                          bundled("b", marker), tc="60+0"), tmp_path)
    runner.wait_for("Started game 1")
    engines = children_of(runner.proc.pid)
    assert len(engines) == 2, engines
    runner.signal(signal.SIGKILL)
    runner.finish()
    left = gone(engines, 3.0)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == [], "an engine outlived the runner killed with SIGKILL"


def test_games_run_with_the_runners_collector_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    """While a command's coroutine runs, the young generation is collected at GC_THRESHOLDS
    (fewer pauses in play); afterwards, and with RUNNER_GC=python, Python's own."""
    import gc

    from runner.protocol.loop import GC_ENV, GC_THRESHOLDS

    async def thresholds() -> tuple[int, int, int]:
        return gc.get_threshold()

    before = gc.get_threshold()
    monkeypatch.delenv(GC_ENV, raising=False)
    assert run(thresholds()) == GC_THRESHOLDS
    assert gc.get_threshold() == before
    monkeypatch.setenv(GC_ENV, "python")
    assert run(thresholds()) == before
