"""The floor under tournament_bench.py: the same workload relayed by the leanest asyncio loop.

100 games of fairymax at depth 1 against itself, openings from noob_3moves.epd in the same
random order, two games at a time, but no arbiter: moves go from one engine to the other
unread, the engines' own result claims end the games (or 400 plies), nothing is stored.
Each engine's output is split into lines in the read callback (the runner's own reading
path, without its protocol client), so this is what any CPython asyncio runner pays at the
least. It prints, per ply, the relay's CPU and the engines' CPU: on a 2-core machine the
engines' CPU divided by two is the shortest wall time any runner can reach here.

Run: python benchmarks/relay_floor.py [--games 100] [--repeat 3]
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import time

from tournament_bench import BOOK, workload_arguments

from runner.books.openings import OpeningCursor, open_book
from runner.protocol.cecp_commands import edit_commands

MAX_PLIES = 400
_RESULTS = (b"1-0", b"0-1", b"1/2-1/2", b"resign")


class _Relay(asyncio.SubprocessProtocol):
    """One fairymax process: lines split as they arrive; a future per awaited prefix."""

    def __init__(self) -> None:
        self.transport: asyncio.SubprocessTransport | None = None
        self.buffer = b""
        self.want: tuple[bytes, ...] = ()
        self.answer: asyncio.Future[bytes] | None = None
        self.exited = asyncio.get_running_loop().create_future()

    def process_exited(self) -> None:
        """The engine is gone (after the kill at the end of a run)."""
        self.exited.set_result(None)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Keep the transport."""
        assert isinstance(transport, asyncio.SubprocessTransport)
        self.transport = transport

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        """Split stdout into lines; hand the first awaited one to the waiting game."""
        if fd != 1:
            return
        *lines, self.buffer = (self.buffer + data).split(b"\n")
        for line in lines:
            if self.answer is not None and line.startswith(self.want):
                answer, self.answer = self.answer, None
                answer.set_result(line)

    def send(self, text: str) -> None:
        """Write lines to the engine."""
        assert self.transport is not None
        pipe = self.transport.get_pipe_transport(0)
        assert isinstance(pipe, asyncio.WriteTransport)
        pipe.write(text.encode())

    async def expect(self, *prefixes: bytes) -> bytes:
        """The next line starting with one of `prefixes`."""
        self.want = prefixes
        self.answer = asyncio.get_running_loop().create_future()
        return await asyncio.wait_for(self.answer, 30)

    def cpu(self) -> float:
        """The process's user+system CPU seconds so far (from /proc)."""
        assert self.transport is not None
        with open(f"/proc/{self.transport.get_pid()}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _start(fairymax: str) -> _Relay:
    _, relay = await asyncio.get_running_loop().subprocess_exec(
        _Relay, fairymax, stdin=-1, stdout=-1, stderr=-1, start_new_session=True)
    relay.send("xboard\nprotover 2\n")
    await relay.expect(b"feature done=1")
    return relay


async def _sync(relay: _Relay, text: str) -> None:
    relay.send(text + "ping 1\n")
    await relay.expect(b"pong")


async def _game(engines: tuple[_Relay, _Relay], fen: str) -> int:
    """One game from `fen`, White's engine first; the number of plies played."""
    setup = "new\nforce\nst 86400\nsd 1\npost\neasy\n" + "".join(
        f"{line}\n" for line in edit_commands(fen))
    await asyncio.gather(*(_sync(engine, setup) for engine in engines))
    mover = 0 if fen.split()[1] == "w" else 1
    engines[mover].send("go\n")
    plies = 0
    while plies < MAX_PLIES:
        line = await engines[mover].expect(b"move ", *_RESULTS)
        if not line.startswith(b"move "):
            break
        plies += 1
        mover ^= 1
        engines[mover].send(line[5:].decode() + ("\ngo\n" if plies == 1 else "\n"))
    await asyncio.gather(*(_sync(engine, "force\n") for engine in engines))
    return plies


async def _slot(engines: tuple[_Relay, _Relay], fens: list[str]) -> int:
    plies = 0
    for number, fen in enumerate(fens):
        pair = engines if number % 2 == 0 else (engines[1], engines[0])
        plies += await _game(pair, fen)
    return plies


async def run_once(games: int) -> tuple[float, float, float, int]:
    """One run; returns (wall seconds, relay CPU seconds, engines' CPU seconds, plies)."""
    fairymax = shutil.which("fairymax") or "/usr/games/fairymax"
    cursor = OpeningCursor(open_book(BOOK, seed=1), order="random", seed=1)
    fens = []
    for _ in range(games // 2):
        fen = cursor.next().fen
        assert fen is not None
        fens += [fen, fen]  # each opening twice, colors swapped by the slot
    engines = [await _start(fairymax) for _ in range(4)]
    engines_before = sum(engine.cpu() for engine in engines)
    cpu_before, wall_before = time.process_time(), time.perf_counter()
    slots = ((engines[0], engines[1]), (engines[2], engines[3]))
    half = len(fens) // 2
    plies = sum(await asyncio.gather(_slot(slots[0], fens[:half]), _slot(slots[1], fens[half:])))
    wall, cpu = time.perf_counter() - wall_before, time.process_time() - cpu_before
    engines_cpu = sum(engine.cpu() for engine in engines) - engines_before
    for engine in engines:
        assert engine.transport is not None
        engine.transport.kill()
    await asyncio.gather(*(engine.exited for engine in engines))
    for engine in engines:
        assert engine.transport is not None
        engine.transport.close()
    return wall, cpu, engines_cpu, plies


def main() -> None:
    """Run the floor benchmark and print medians per ply."""
    args = workload_arguments(__doc__.splitlines()[0])
    print(f"load average {os.getloadavg()[0]:.2f}; {os.cpu_count()} CPUs")
    relay_us, engine_us, walls, cores_needed = [], [], [], []
    for attempt in range(args.repeat):
        wall, cpu, engines_cpu, plies = asyncio.run(run_once(args.games))
        relay_us.append(cpu / plies * 1e6)
        engine_us.append(engines_cpu / plies * 1e6)
        walls.append(wall)
        cores_needed.append(engines_cpu / 2)
        print(f"run {attempt + 1}: {wall:.2f} s wall, {plies} plies, relay CPU "
              f"{cpu / plies * 1e6:.0f} us/ply, engines' CPU {engines_cpu:.2f} s = "
              f"{engines_cpu / plies * 1e6:.0f} us/ply")
    print(f"median: {statistics.median(walls):.2f} s wall, relay CPU "
          f"{statistics.median(relay_us):.0f} us/ply, engines' CPU "
          f"{statistics.median(engine_us):.0f} us/ply (on 2 cores the engines alone need "
          f"{statistics.median(cores_needed):.2f} s)")


if __name__ == "__main__":
    main()
