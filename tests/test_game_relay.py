"""The game advanced from the read callback (runner.game.relay, runner.game.core): lines in,
commands out, without processes.

The engines are the real protocol clients over `ScriptedPipes`, a transport double that
declares raw pipes (so the clients take `request_move`'s callback path), answers the
start-up and synchronisation commands itself, and answers each search from a script. The
relay tests feed a reply line by hand and look at the other engine's commands at once, in
the same call: no loop turn, task or future between a move read and the next request.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Sequence

import pytest

from runner.clock import TimeControl
from runner.game.adjudication import AdjudicationRules
from runner.game.arbiter import FrozenTime, GameOver
from runner.game.core import GameCore
from runner.game.play import play_game
from runner.game.record import GameSpec, GameTermination
from runner.game.relay import Relay
from runner.protocol.cecp import CecpEngine
from runner.protocol.engine import EngineConfig, EngineTerminated, GameSetup, Side, TranscriptEntry
from runner.protocol.pipe import PipeEngine
from runner.protocol.transport import EndHandler, Line, LineHandler, check_lines
from runner.protocol.uci import UciEngine
from runner.rules import STARTING_FEN, Board
from runner.types import MoveRecord

Script = list[list[str] | None]
"""The engine's lines for each search in turn (None: it stays silent)."""


class ScriptedPipes:
    """An `EngineTransport` double on "raw pipes": records what is written, answers the
    dialogue's start-up and synchronisation itself and each search from its script."""

    raw_pipes = True

    def __init__(self, answer: Callable[[ScriptedPipes, str], list[str] | None]) -> None:
        self.transcript: deque[TranscriptEntry] = deque(maxlen=1000)
        self.sent: list[str] = []
        self._answer = answer
        self._on_lines: LineHandler | None = None
        self._on_end: EndHandler | None = None
        self._running = False
        self.script: Script = []

    @property
    def pid(self) -> int | None:
        return None

    @property
    def running(self) -> bool:
        return self._running

    @property
    def stderr_read(self) -> int:
        return 0

    async def stderr_since(self, mark: int, settle: float = 1.0) -> str:
        return ""

    async def start(self) -> None:
        self._running = True

    def note(self, text: str) -> None:
        self.transcript.append(TranscriptEntry(time.monotonic(), "!", text))

    def listen(self, on_lines: LineHandler, on_end: EndHandler) -> None:
        self._on_lines, self._on_end = on_lines, on_end

    def write_nowait(self, lines: Sequence[str]) -> float:
        check_lines(lines, "scripted")
        now = time.monotonic()
        for line in lines:
            self.transcript.append(TranscriptEntry(now, ">", line))
            self.sent.append(line)
            answer = self._answer(self, line)
            if answer:  # read in a later loop turn, as from a pipe
                asyncio.get_running_loop().call_soon(self.feed, answer)
        return now

    async def write_lines(self, lines: Sequence[str]) -> float:
        return self.write_nowait(lines)

    def feed(self, texts: list[str]) -> None:
        """The engine prints `texts` now: the client's read callback gets them."""
        now = time.monotonic()
        lines = [Line(now, "<", text) for text in texts]
        self.transcript.extend(lines)
        if self._on_lines is not None:
            self._on_lines(lines)

    def next_search(self) -> list[str] | None:
        return self.script.pop(0) if self.script else None

    def send_signal(self, sig: int) -> None:
        pass

    async def stop(self, quit_command: str | None = "quit", *, quit_timeout: float = 5.0,
                   terminate_timeout: float = 2.0, use_sigterm: bool = True) -> int | None:
        self._running = False
        if self._on_end is not None:
            self._on_end(EngineTerminated(0))
        return 0

    async def kill(self) -> int | None:
        return await self.stop()


def uci_answer(pipes: ScriptedPipes, line: str) -> list[str] | None:
    """A UCI engine's side: ``uciok``, ``readyok``, and the script's lines for each ``go``
    (a ponder search reports once, and answers ``ponderhit`` or ``stop`` from the script)."""
    if line == "uci":
        return ["id name scripted", "option name Ponder type check default false", "uciok"]
    if line == "isready":
        return ["readyok"]
    if line.startswith("go ponder"):
        return ["info depth 1 score cp 0"]
    if line.startswith("go") or line in ("ponderhit", "stop"):
        return pipes.next_search()
    return None


def cecp_answer(pipes: ScriptedPipes, line: str) -> list[str] | None:
    """A CECP engine's side: its features, ``pong N``, and the script's lines for each search."""
    if line == "protover 2":
        return ["feature ping=1 setboard=1 usermove=0 san=0 sigint=0 sigterm=0 myname=\"scripted\" "
                "colors=0 done=1"]
    if line.startswith("ping "):
        return [f"pong {line.split()[1]}"]
    if line == "go" or (line[:1].islower() and len(line) in (4, 5) and line[1].isdigit()
                        and line[3].isdigit() and pipes.sent.count("go") > 0):
        return pipes.next_search()
    return None


async def _engines(kind: str, white: Script, black: Script,
                   **config: object) -> tuple[list[PipeEngine], list[ScriptedPipes]]:
    pipes = [ScriptedPipes(uci_answer if kind == "uci" else cecp_answer) for _ in range(2)]
    pipes[0].script, pipes[1].script = list(white), list(black)
    engines: list[PipeEngine] = []
    for index, transport in enumerate(pipes):
        cfg = EngineConfig(name=f"{kind}{index}", argv=("scripted",), protocol=kind,  # type: ignore[arg-type]
                           **config)  # type: ignore[arg-type]
        engine: PipeEngine = (UciEngine(cfg, transport=transport) if kind == "uci"
                              else CecpEngine(cfg, transport=transport))
        await asyncio.wait_for(engine.start(), 5.0)
        engines.append(engine)
    return engines, pipes


DEPTH = TimeControl.parse("depth=1")
FOOLS_WHITE: Script = [["info depth 1 score cp 10 pv f2f3", "bestmove f2f3"], ["bestmove g2g4"]]
FOOLS_BLACK: Script = [["bestmove e7e5"], ["info depth 1 score mate 1 pv d8h4", "bestmove d8h4"]]


async def _relay_game(kind: str, white: Script, black: Script
                      ) -> tuple[Relay, GameCore, list[ScriptedPipes]]:
    engines, pipes = await _engines(kind, white, black)
    for engine, side in zip(engines, (Side.WHITE, Side.BLACK), strict=True):
        await asyncio.wait_for(engine.new_game(GameSetup(DEPTH, side)), 5.0)
    seen: list[MoveRecord] = []
    core = GameCore(GameSpec(DEPTH, DEPTH), Board(STARTING_FEN), [], [],
                    lambda played, _board: seen.append(played), FrozenTime(None, 0.0), None)
    return Relay(engines[0], engines[1], core, asyncio.get_running_loop()), core, pipes


def test_uci_lines_in_commands_out_within_the_read_callback() -> None:
    """A bestmove fed to White's client makes Black's ``position``/``go`` at once; an
    illegal reply ends the game through the one future the task awaits."""
    async def scenario() -> None:
        relay, core, pipes = await _relay_game("uci", [], [])
        done = relay.run()
        assert done is not None and pipes[0].sent[-1].startswith("go depth 1")
        before = len(pipes[1].sent)
        pipes[0].feed(["info depth 1 score cp 20 pv e2e4", "bestmove e2e4"])
        assert pipes[1].sent[before:] == ["position startpos moves e2e4", "go depth 1"]
        assert core.moves[0].san == "e4" and core.moves[0].score_cp == 20
        assert not done.done()
        pipes[1].feed(["bestmove e7e6"])
        assert pipes[0].sent[-2:] == ["position startpos moves e2e4 e7e6", "go depth 1"]
        pipes[0].feed(["bestmove e4e6"])  # a pawn cannot go there
        outcome = await asyncio.wait_for(done, 5.0)
        assert isinstance(outcome, GameOver)
        assert outcome.termination is GameTermination.ILLEGAL_MOVE
        assert outcome.reason == "White makes an illegal move: e4e6"
        relay.close()

    asyncio.run(scenario())


def test_cecp_lines_in_commands_out_within_the_read_callback() -> None:
    """CECP: ``move X`` from White sends Black the move and ``go`` at once; a resignation
    ends the game."""
    async def scenario() -> None:
        relay, core, pipes = await _relay_game("cecp", [], [])
        done = relay.run()
        assert done is not None and pipes[0].sent[-1] == "go"
        before = len(pipes[1].sent)
        pipes[0].feed(["1 25 0 100 e2e4", "move e2e4"])
        assert pipes[1].sent[before:][-2:] == ["e2e4", "go"]
        assert core.moves[0].score_cp == 25 and core.moves[0].depth == 1
        pipes[1].feed(["resign"])
        outcome = await asyncio.wait_for(done, 5.0)
        assert isinstance(outcome, GameOver)
        assert (outcome.termination, outcome.reason) == (GameTermination.RESIGNATION,
                                                         "Black resigns")

    asyncio.run(scenario())


@pytest.mark.parametrize("kind", ["uci", "cecp"])
def test_a_mate_and_its_claim_end_the_game(kind: str) -> None:
    """Fool's mate played through play_game on the callback path: the rules' end, with
    Black's true claim after the mating move (CECP) accepted alike."""
    async def scenario() -> None:
        white, black = FOOLS_WHITE, FOOLS_BLACK
        if kind == "cecp":
            white = [["1 10 0 100 f2f3", "move f2f3"], ["move g2g4"]]
            black = [["move e7e5"], ["1 +mate 0 100 d8h4", "move d8h4", "0-1 {Black mates}"]]
        engines, pipes = await _engines(kind, white, black)
        record = await asyncio.wait_for(play_game(engines[0], engines[1],
                                                  GameSpec(DEPTH, DEPTH)), 10.0)
        assert [m.uci for m in record.moves] == ["f2f3", "e7e5", "g2g4", "d8h4"]
        assert (record.result, record.termination) == ("0-1", GameTermination.CHECKMATE)
        for engine in engines:
            await engine.quit()

    asyncio.run(scenario())


def test_a_false_claim_loses_and_a_silent_engine_loses_by_the_timer() -> None:
    """A CECP claim without a move that the board does not bear out loses; a UCI engine
    that never answers loses on time when the move's timer fires (a ceiling of 0.05 s)."""
    async def claims() -> None:
        engines, _pipes = await _engines("cecp", [["move e2e4"]], [["1-0 {I win}"]])
        record = await asyncio.wait_for(play_game(engines[0], engines[1],
                                                  GameSpec(DEPTH, DEPTH)), 10.0)
        assert record.termination is GameTermination.FALSE_CLAIM
        assert record.reason == "Black makes a false claim: 1-0 {I win}"

    async def silent() -> None:
        engines, pipes = await _engines("uci", [["bestmove e2e4"]], [None])
        record = await asyncio.wait_for(play_game(
            engines[0], engines[1], GameSpec(DEPTH, DEPTH, move_ceiling=0.05)), 10.0)
        assert (record.result, record.termination) == ("1-0", GameTermination.TIME_FORFEIT), record.reason
        assert "no move within the ceiling of 0.05 s a move" in record.reason
        assert pipes[1].sent[-1] == "stop"  # the search still running is stopped

    asyncio.run(claims())
    asyncio.run(silent())


def test_uci_pondering_takes_the_awaited_path_between_callback_moves() -> None:
    """With pondering on, ``bestmove X ponder Y`` is followed by ``go ponder``; the
    opponent's move then makes a ``ponderhit`` (Y played) or a ``stop`` (another move)."""
    async def scenario() -> None:
        white: Script = [["bestmove e2e4 ponder e7e5"], ["bestmove g1f3 ponder b8c6"],
                 ["bestmove b1c3"], ["bestmove f1c4"]]  # the third answers the stop: dropped
        black: Script = [["bestmove e7e5"], ["bestmove d7d6"], ["bestmove g8f6"]]
        engines, pipes = await _engines("uci", white, black, ponder=True)
        spec = GameSpec(DEPTH, DEPTH, adjudication=AdjudicationRules(max_moves=3))
        record = await asyncio.wait_for(play_game(engines[0], engines[1], spec), 10.0)
        assert [m.uci for m in record.moves] == ["e2e4", "e7e5", "g1f3", "d7d6", "f1c4", "g8f6"]
        assert record.termination is GameTermination.MAX_MOVES
        sent = pipes[0].sent
        ponders = [i for i, line in enumerate(sent) if line.startswith("go ponder")]
        assert len(ponders) == 2
        assert sent[ponders[0] - 1] == "position startpos moves e2e4 e7e5"
        assert sent[ponders[0] + 1] == "ponderhit"  # Black played the expected e7e5
        assert "stop" in sent[ponders[1]:]  # b8c6 was expected, d7d6 came
        assert record.moves[2].ponder_hit is True and record.moves[4].ponder_hit is False

    asyncio.run(scenario())


def test_a_game_s_transcript_is_the_entries_from_its_start_on() -> None:
    """`entries_since` (what a game's record takes of each engine's bounded transcript, read
    from the deque's end) gives what bisecting a copy of the whole transcript gives."""
    from bisect import bisect_left

    from runner.protocol.engine import entries_since

    for size in (0, 1, 7, 40):
        for maxlen in (5, 4000):
            kept: deque[TranscriptEntry] = deque(maxlen=maxlen)
            for index in range(size):
                kept.append(TranscriptEntry(float(index // 2), "<", str(index)))
            for began in (-1.0, 0.0, 0.5, size / 4, size / 2 - 1, float(size)):
                copied = tuple(kept)
                expected = copied[bisect_left(copied, began, key=lambda e: e.time):]
                assert entries_since(kept, began) == expected
                assert entries_since(copied, began) == expected
