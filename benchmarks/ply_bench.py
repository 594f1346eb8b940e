"""The runner's own Python per ply, without processes: the game loop and the CECP client
playing against an in-process engine double that answers at once.

The double speaks CECP as fairymax does at depth 1 (features at start-up, ``pong`` to every
``ping``, and per move its comment lines, two thinking lines and ``move X``), choosing a
move from a script of seeded random games made with our own rules core before the clock
starts (each ends where the referee ends it: mate, stalemate, threefold, fifty moves,
insufficient material). Both of its answers to a request arrive in
one chunk, through the same `listen` handler `EngineProcess` calls from its read callback, one
event-loop hop later. So what is timed is everything the runner does per ply except the pipe
system calls and the tournament and store layers: the game loop, the referee, the clocks,
adjudication, the CECP client's reading and writing, and asyncio's scheduling.

It prints the CPU per ply (median of ``--repeats``): a quick, quiet A/B for changes to those
layers (``benchmarks/peers.py`` is the one measure of the whole runner against the peers).

    python benchmarks/ply_bench.py [--games 40] [--repeats 5] [--profile] [--awaiting]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import random
import statistics
import time
from collections import deque
from collections.abc import Sequence

from runner.clock import TimeControl
from runner.game.adjudication import AdjudicationRules
from runner.game.play import play_game
from runner.game.record import GameSpec
from runner.protocol.cecp import CecpEngine
from runner.protocol.engine import EngineConfig, TranscriptEntry
from runner.protocol.transport import EndHandler, Line, LineHandler
from runner.rules import STARTING_FEN, Board

_FEATURES = [
    'feature myname="Double 1.0"',
    "feature setboard=0 xedit=1 ping=1 done=0",
    "feature done=1",
]


class _Script:
    """Seeded random games, legal by our rules core, played out move by move."""

    def __init__(self, games: int, seed: int = 7) -> None:
        chooser = random.Random(seed)
        self.games: list[list[str]] = []
        for _ in range(games):
            board = Board(STARTING_FEN)
            moves = []
            while not (board.outcome() or board.is_repetition(3) or board.is_fifty_moves()):
                move = chooser.choice(list(board.legal_moves))
                moves.append(move.uci())
                board.push(move)
            self.games.append(moves)
        self.game = -1
        self.ply = 0

    def new_game(self) -> None:
        """On to the next game's moves."""
        self.game += 1
        self.ply = 0

    def next_move(self) -> str:
        """The move of the current ply (each double plays its own side's)."""
        move = self.games[self.game][self.ply]
        self.ply += 2
        return move


class FairymaxDouble:
    """An engine transport that answers like fairymax at depth 1, in-process."""

    def __init__(self, script: _Script, callbacks: bool = True) -> None:
        """`callbacks`: it passes for raw pipes, so the game runs in its callbacks (issue 38's
        relay); else the client awaits each reply (the asyncio transports' path)."""
        self.raw_pipes = callbacks
        self.transcript: deque[TranscriptEntry] = deque(maxlen=4000)
        self._script = script
        self._on_lines: LineHandler | None = None
        self._forced = False
        self.running = True

    @property
    def pid(self) -> int | None:
        """No process."""
        return None

    @property
    def stderr_read(self) -> int:
        """No standard error."""
        return 0

    async def stderr_since(self, mark: int, settle: float = 1.0) -> str:
        """No standard error."""
        return ""

    async def start(self) -> None:
        """Nothing to start."""

    def note(self, text: str) -> None:
        """A host note, as the real transport records it."""
        self.transcript.append(TranscriptEntry(time.monotonic(), "!", text))

    def listen(self, on_lines: LineHandler, on_end: EndHandler) -> None:
        """Take the client's line handler."""
        self._on_lines = on_lines

    def write_nowait(self, lines: Sequence[str]) -> float:
        """Take lines without waiting."""
        return self._take(lines)

    async def write_lines(self, lines: Sequence[str]) -> float:
        """Take lines (nothing to drain)."""
        return self._take(lines)

    def send_signal(self, sig: int) -> None:
        """No process to signal."""

    async def stop(self, quit_command: str | None = "quit", **_: object) -> int | None:
        """Stopped at once."""
        self.running = False
        return 0

    async def kill(self) -> int | None:
        """Killed at once."""
        self.running = False
        return 0

    def _take(self, lines: Sequence[str]) -> float:
        now = time.monotonic()
        out: list[str] = []
        for line in lines:
            self.transcript.append(TranscriptEntry(now, ">", line))
            word = line.split(" ", 1)[0]
            if word == "protover":
                out.extend(_FEATURES)
            elif word == "ping":
                out.append("pong " + line.split()[1])
            elif word == "new":
                self._forced = False
            elif word == "force":
                self._forced = True
            elif word == "go":
                self._forced = False
                out.extend(self._search())
            elif len(word) in (4, 5) and word[1].isdigit() and word[3].isdigit():
                if not self._forced:
                    out.extend(self._search())
        if out:
            asyncio.get_running_loop().call_soon(self._print, out)
        return now

    def _search(self) -> list[str]:
        text = self._script.next_move()
        return ["# times @ 195056156", "# 16+16 pieces, centr = (1,1) R=40",
                f" 1      6        0          7 {text}", f" 1     15        0          9 {text}",
                "# times @ 195056156: real=0 cpu=0", "# promo = 0 (`) GT = 0", f"move {text}"]

    def _print(self, texts: list[str]) -> None:
        now = time.monotonic()
        lines = [Line(now, "<", text) for text in texts]
        self.transcript.extend(lines)
        if self._on_lines is not None:
            self._on_lines(lines)


async def _games(count: int, adjudication: AdjudicationRules | None = None,
                 callbacks: bool = True) -> tuple[int, float]:
    """Play `count` games between two doubles (under `adjudication`, none by default; see
    `FairymaxDouble` for `callbacks`); (plies, CPU seconds of the games alone)."""
    config = EngineConfig(name="double", argv=("double",))
    scripts = _Script(count), _Script(0)
    scripts[1].games = scripts[0].games
    white = CecpEngine(config, transport=FairymaxDouble(scripts[0], callbacks))
    black = CecpEngine(config, transport=FairymaxDouble(scripts[1], callbacks))
    await asyncio.gather(white.start(), black.start())
    tc = TimeControl.parse("depth=1")
    spec = GameSpec(white_tc=tc, black_tc=tc, adjudication=adjudication or AdjudicationRules())
    plies = 0
    began = time.process_time()
    for _ in range(count):
        scripts[0].new_game()
        scripts[1].new_game()
        scripts[1].ply = 1
        record = await play_game(white, black, spec)
        assert record.termination.value != "illegal move", record.reason
        plies += len(record.moves)
    spent = time.process_time() - began
    await asyncio.gather(white.quit(), black.quit())
    return plies, spent


def main() -> None:
    """Print the CPU per ply, median of the repeats (or a profile of one run)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="profile one run (CPU clock)")
    parser.add_argument("--awaiting", action="store_true",
                        help="each reply awaited by the game's task (the transports' fallback)")
    args = parser.parse_args()
    callbacks = not args.awaiting
    if args.profile:
        profile = cProfile.Profile(time.process_time)
        profile.runcall(asyncio.run, _games(args.games, callbacks=callbacks))
        pstats.Stats(profile).sort_stats("tottime").print_stats(30)
        return
    per_ply = []
    for _ in range(args.repeats):
        plies, spent = asyncio.run(_games(args.games, callbacks=callbacks))
        per_ply.append(spent / plies * 1e6)
        print(f"{plies} plies, {spent:.3f} s CPU, {per_ply[-1]:.1f} us/ply")
    print(f"median {statistics.median(per_ply):.1f} us/ply")


if __name__ == "__main__":
    main()
