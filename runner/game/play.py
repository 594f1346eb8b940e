"""Play one game between two engine handles, refereed move by move by the rules core.

The loop knows one game: it asks the side to move for a move with the clocks, checks the move
with ``runner.rules``, keeps the clocks, asks the adjudication trackers, and returns a plain
``GameRecord``. It never formats a protocol string and never touches a database.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from runner.game.adjudication import tablebase_judge
from runner.game.arbiter import (
    FROZEN_REPLAY,
    GRACE,
    FrozenTime,
    GameOver,
    engine_fault,
    judge_by_tables,
    outcome_by_rules,
)
from runner.game.core import AGAIN, PONDER, GameCore
from runner.game.record import (
    STDERR_KEPT,
    STDERR_TERMINATIONS,
    TRANSCRIPT_LINE_LIMIT,
    UNTIMED_MOVE_TIMEOUT,
    GameRecord,
    GameSpec,
    GameTermination,
)
from runner.game.relay import Relay
from runner.protocol.engine import (
    Engine,
    EngineError,
    GameSetup,
    Side,
    TranscriptEntry,
)
from runner.protocol.freeze import FreezeMonitor
from runner.rules import STARTING_FEN, Board, Result
from runner.types import MoveRecord, Variant

__all__ = [
    "FROZEN_REPLAY",
    "GRACE",
    "TRANSCRIPT_LINE_LIMIT",
    "UNTIMED_MOVE_TIMEOUT",
    "play_game",
]

log = logging.getLogger(__name__)


async def play_game(
    white: Engine,
    black: Engine,
    spec: GameSpec,
    *,
    on_move: Callable[[MoveRecord, Board], None] | None = None,
    freezes: FreezeMonitor | None = None,
) -> GameRecord:
    """Play one game between two started engines and return its record.

    Engine faults (crash, stall, garbage, illegal move, time overrun) end the game as a loss
    for the engine at fault; they never escape. Configuration errors found while setting the
    game up (ValueError) do. Runner-side errors during play give a record with result ``*``
    and ``replay`` set. With `freezes` (the loop's monitor, owned by the caller), a time
    forfeit the runner's own standstill may have caused is not scored: the game ends
    unfinished and marked for replay.
    """
    started = datetime.now(UTC)
    began = time.monotonic()
    chess960 = spec.variant is Variant.FISCHERANDOM
    board = Board(spec.start_fen or STARTING_FEN, chess960=chess960)
    moves: list[MoveRecord] = []
    sent: list[str] = []
    for text in spec.opening_moves:
        move = board.parse_uci(text)
        moves.append(MoveRecord(uci=move.uci(), san=board.san(move), book=True))
        sent.append(move.uci())
        board.push(move)
    engines = {True: white, False: black}
    stderr_marks = (white.stderr_mark(), black.stderr_mark())
    try:
        over = await _run(engines, spec, board, moves, sent, on_move, FrozenTime(freezes, began))
    except GameOver as end:
        over = end
    except asyncio.CancelledError:
        await _tell_result(engines, "*", "interrupted")
        raise
    # "*" too: stop a search in progress.
    words = (over.reason if spec.result_words is None
             else spec.result_words(over.result, over.termination, over.reason))
    await _tell_result(engines, over.result, words, sent)
    return GameRecord(
        white=white.name, black=black.name, spec=spec, moves=tuple(moves), result=over.result,
        termination=over.termination, reason=over.reason, started_at=started,
        ended_at=datetime.now(UTC), final_fen=board.fen(),
        protocol_lines=(_game_lines(white, began), _game_lines(black, began)),
        replay=over.replay, stderr=await _kept_stderr(over.termination, white, black,
                                                      stderr_marks),
    )


async def _kept_stderr(termination: GameTermination, white: Engine, black: Engine,
                       marks: tuple[int, int]) -> tuple[str, str]:
    """Each engine's standard error of this game, kept when the game ended by a crash, a
    stall or a time loss (read once, at the game's end: the per-move path never sees it)."""
    if termination not in STDERR_TERMINATIONS:
        return "", ""
    return (_clip_stderr(await white.stderr_since(marks[0])),
            _clip_stderr(await black.stderr_since(marks[1])))


def _clip_stderr(text: str) -> str:
    """The last `STDERR_KEPT` characters of `text`."""
    return text if len(text) <= STDERR_KEPT else text[-STDERR_KEPT:]


def _game_lines(engine: Engine, began: float) -> tuple[TranscriptEntry, ...]:
    """The engine's transcript entries of this game only (an engine's transcript spans games):
    those from the game's start on (`Engine.transcript_since`)."""
    return engine.transcript_since(began)


async def _tell_result(engines: dict[bool, Engine], result: str, reason: str,
                       moves: Sequence[str] = ()) -> None:
    """Send the result to both engines (after `moves`, the game's), ignoring engines that
    are already gone."""
    for engine in engines.values():
        try:
            async with asyncio.timeout(5.0):  # a deadline, not a task per engine (wait_for)
                await engine.end_game(result, reason, moves)
        except (EngineError, TimeoutError, OSError) as exc:
            log.debug("end_game for %s failed: %s", engine.name, exc)


async def _start_game(engines: dict[bool, Engine], spec: GameSpec, board: Board,
                      sent: list[str]) -> None:
    """Send both engines the new game; an engine that fails here loses."""
    async def one(white: bool) -> None:
        setup = GameSetup(
            time_control=spec.white_tc if white else spec.black_tc,
            side=Side.WHITE if white else Side.BLACK,
            start_fen=spec.start_fen, moves=tuple(sent), variant=spec.variant,
            opponent=engines[not white].name,
        )
        try:
            await engines[white].new_game(setup)
        except EngineError as exc:
            raise engine_fault(white, exc) from exc

    # Both at once: an engine's "new" can take a while (fairymax clears its hash, about
    # 15 ms here), and neither engine waits for the other. If both fail, White's fault counts.
    # From a list: gather returns a list, which typeshed's fixed-arity forms call a tuple (and
    # compiled code checks the type it is told).
    both = [one(True), one(False)]
    started = await asyncio.gather(*both, return_exceptions=True)
    for outcome in started:
        if isinstance(outcome, BaseException):
            raise outcome
    if board.outcome() is not None:
        raise outcome_by_rules(board) or GameOver(Result.UNFINISHED, GameTermination.ERROR,
                                                    "game over at start")


async def _run(engines: dict[bool, Engine], spec: GameSpec, board: Board, moves: list[MoveRecord],
               sent: list[str], on_move: Callable[[MoveRecord, Board], None] | None,
               frozen: FrozenTime) -> GameOver:
    """Start both engines on the game, then the move loop; returns (or raises) how it ended.

    Set-up errors (a bad position, an engine that cannot play the variant) escape as they
    are; any other exception past the start is a runner-side error: the game gets no
    result and is marked for replay, and the exception is logged with its traceback.
    """
    await _start_game(engines, spec, board, sent)
    try:
        tables = tablebase_judge(spec.adjudication)
        if tables is not None:
            # fastchess probes the position the engines start from too (after the opening).
            judge_by_tables(tables, board)
        return await _loop(engines, GameCore(spec, board, moves, sent, on_move, frozen, tables))
    except GameOver:
        raise
    except Exception as exc:
        log.exception("runner error after %d plies of %s vs %s", len(moves), engines[True].name,
                      engines[False].name)
        raise GameOver(Result.UNFINISHED, GameTermination.ERROR,
                        f"runner error: {type(exc).__name__}: {exc}",
                        replay=True) from exc


async def _loop(engines: dict[bool, Engine], core: GameCore) -> GameOver:
    """Ask for moves until the game ends; returns how.

    While both engines can be asked through callbacks (`Engine.request_move`: raw pipes),
    the game runs in their read callbacks (`Relay`) and this task wakes only when the game
    ends or a step needs awaiting (an engine asked, or told to ponder, the awaiting way); the
    awaiting way is the fallback, move by move, with the same core.
    """
    relay = Relay(engines[True], engines[False], core, asyncio.get_running_loop())
    try:
        while True:
            done = relay.run()
            if done is None:  # the side to move cannot be asked through callbacks
                step = await _ask_awaiting(engines, core)
            else:
                outcome = await done
                if isinstance(outcome, GameOver):
                    return outcome
                step = outcome
            while step == AGAIN:  # a false claim ignored: the same side is asked again
                step = await _ask_awaiting(engines, core)
            if step == PONDER:
                mover = not core.board.turn
                await engines[mover].ponder(core.sent, core.ponder_clocks(mover))
    finally:
        relay.close()


async def _ask_awaiting(engines: dict[bool, Engine], core: GameCore) -> int:
    """One move asked for and awaited: the core's step after it (GameOver raised at the end)."""
    request = core.ask()
    try:
        reply = await engines[core.board.turn].play(
            core.sent, request.clocks, timeout=request.timeout,
            opponent_offers_draw=request.offered)
    except EngineError as error:  # a name of its own: compiled, one name has one type
        raise core.fault(error) from error
    return core.take(reply)
