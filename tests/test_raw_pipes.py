"""Engines on raw pipes (runner/protocol/rawio.py) and the transports' fallback (streamio.py).

The raw path is the default wherever the loop watches descriptors; a loop that cannot (as
Windows' Proactor) gets asyncio's subprocess transports. Both play real games here.
"""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from pathlib import Path

import pytest

from runner.game.play import play_game
from runner.game.record import GameRecord
from runner.protocol.engine import EngineTerminated
from runner.protocol.factory import make_engine
from runner.protocol.loop import new_asyncio_loop
from runner.protocol.process import EngineProcess
from runner.protocol.rawio import raw_capable
from tests.bundled_games import bundled, bundled_uci, game_spec, leftover_processes
from tests.conftest import EVENT_TIMEOUT

ECHO = textwrap.dedent(
    r'''
    import sys
    sys.stderr.write("ready on stderr\n"); sys.stderr.flush()
    for line in sys.stdin:
        if line.strip() == "quit":
            break
        if line.strip() == "big":
            sys.stdout.write("x" * 200000 + "\n")
        else:
            sys.stdout.write("echo " + line)
        sys.stdout.flush()
    sys.exit(7)
    '''
)


class _NoReaderLoop(asyncio.SelectorEventLoop):
    """A loop that cannot watch a raw descriptor, as Windows' Proactor cannot."""

    def add_reader(self, fd, callback, *args):  # type: ignore[no-untyped-def]
        raise NotImplementedError("no add_reader on this loop")


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.timeout(30)
@pytest.mark.parametrize("raw", [True, False], ids=["raw", "transports"])
def test_lines_stderr_big_writes_and_the_exit_code(tmp_path: Path, raw: bool) -> None:
    """Either way: lines echoed, a write bigger than the pipe drained, stderr's tail kept,
    the exit code read, every descriptor closed."""
    script = tmp_path / "echo.py"
    script.write_text(ECHO)

    async def scenario() -> tuple[bool, list[str], int, str, int | None]:
        process = EngineProcess((sys.executable, str(script)), raw=raw)
        await process.start()
        try:
            await process.write_lines(["one", "two " + "y" * 100000, "big"])
            texts: list[str] = []
            while len(texts) < 3:
                texts += [line.text for line in await process.read_lines()]
            await process.write_line("quit")
            with pytest.raises(EngineTerminated) as ended:
                await asyncio.wait_for(process.read_line(), EVENT_TIMEOUT)
            assert ended.value.exit_code == 7
            stderr = await process.stderr_since(0)
            return process.raw_pipes, [t[:8] for t in texts], len(texts[1]), stderr, None
        finally:
            code = await process.stop(quit_timeout=1.0)
            assert code == 7

    before = _open_fds()
    was_raw, heads, long_length, stderr, _ = asyncio.run(scenario())
    assert _open_fds() <= before, "descriptors left open"
    probe = new_asyncio_loop()
    assert was_raw is (raw and raw_capable(probe))
    probe.close()
    assert heads == ["echo one", "echo two", "x" * 8]
    assert long_length == len("echo two ") + 100000
    assert stderr == "ready on stderr\n"


@pytest.mark.timeout(60)
def test_a_loop_without_add_reader_plays_on_asyncio_transports() -> None:
    """The fallback: on a loop that cannot watch descriptors a game (CECP against UCI) is
    played to its end on asyncio's transports, and both engines are gone afterwards."""
    white, black = bundled("w", "--level", "1"), bundled_uci("b", "--level", "1")

    async def scenario() -> tuple[GameRecord, list[bool], list[int]]:
        assert not raw_capable(asyncio.get_running_loop())
        engines = [make_engine(white), make_engine(black)]
        pgids: list[int] = []
        try:
            for engine in engines:
                await engine.start()
                pgids.append(engine.pid or 0)
            kinds = [engine._proc.raw_pipes  # type: ignore[attr-defined]
                     for engine in engines]
            record = await play_game(engines[0], engines[1], game_spec("2+0.05"))
        finally:
            for engine in engines:
                await engine.quit()
        return record, kinds, pgids

    # asyncio's own policy: its child watcher reaps the transports' processes (uvloop's
    # policy, under RUNNER_LOOP=uvloop, has none for a selector loop).
    previous = asyncio.get_event_loop_policy()
    asyncio.set_event_loop_policy(None)
    try:
        with asyncio.Runner(loop_factory=_NoReaderLoop) as runner:
            record, kinds, pgids = runner.run(scenario())
    finally:
        asyncio.set_event_loop_policy(previous)
    assert kinds == [False, False]
    assert record.moves and record.result.value != "*", record.reason
    assert leftover_processes(tuple(pgids)) == []
