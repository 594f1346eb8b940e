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
from bisect import bisect_left
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from operator import attrgetter

from runner.clock import Clock
from runner.game.adjudication import (
    AdjudicationRules,
    DrawTracker,
    ResignTracker,
    TablebaseJudge,
    effective_score,
    max_moves_verdict,
    tablebase_judge,
)
from runner.game.record import (
    STDERR_KEPT,
    STDERR_TERMINATIONS,
    TRANSCRIPT_LINE_LIMIT,
    UNTIMED_MOVE_TIMEOUT,
    GameRecord,
    GameSpec,
    GameTermination,
)
from runner.protocol.engine import (
    ClockState,
    Engine,
    EngineError,
    EngineProtocolError,
    EngineReply,
    EngineStalled,
    EngineTerminated,
    GameSetup,
    Side,
    TranscriptEntry,
)
from runner.protocol.freeze import FreezeMonitor
from runner.rules import (
    STARTING_FEN,
    Board,
    IllegalMoveError,
    InvalidMoveError,
    Move,
    Result,
    Termination,
)
from runner.text import shown
from runner.types import MoveRecord, Variant

__all__ = [
    "FROZEN_REPLAY",
    "GRACE",
    "TRANSCRIPT_LINE_LIMIT",
    "UNTIMED_MOVE_TIMEOUT",
    "play_game",
]

log = logging.getLogger(__name__)

_MAX_IGNORED_CLAIMS = 3
"""False claims without a move ignored in a row (``false_claim_loses`` off) before one loses."""
GRACE = 1.0
"""Seconds past an engine's own time before the runner stops waiting (the flag decides)."""
FROZEN_REPLAY = "the runner was frozen"
"""How the reason of a game not scored because the runner stood still begins."""


_RULES_TERMINATION = {
    Termination.CHECKMATE: GameTermination.CHECKMATE,
    Termination.STALEMATE: GameTermination.STALEMATE,
    Termination.INSUFFICIENT_MATERIAL: GameTermination.INSUFFICIENT_MATERIAL,
    Termination.THREEFOLD_REPETITION: GameTermination.THREEFOLD_REPETITION,
    Termination.FIVEFOLD_REPETITION: GameTermination.FIVEFOLD_REPETITION,
    Termination.FIFTY_MOVES: GameTermination.FIFTY_MOVES,
    Termination.SEVENTYFIVE_MOVES: GameTermination.SEVENTYFIVE_MOVES,
}

_RULES_REASON = {
    Termination.STALEMATE: "Draw by stalemate",
    Termination.INSUFFICIENT_MATERIAL: "Draw by insufficient mating material",
    Termination.THREEFOLD_REPETITION: "Draw by 3-fold repetition",
    Termination.FIVEFOLD_REPETITION: "Draw by 5-fold repetition",
    Termination.FIFTY_MOVES: "Draw by fifty moves rule",
    Termination.SEVENTYFIVE_MOVES: "Draw by seventy-five moves rule",
}


class _GameOver(Exception):
    """Internal: raised inside the loop to end the game with a result."""

    def __init__(self, result: Result, termination: GameTermination, reason: str, replay: bool = False):
        super().__init__(reason)
        self.result = result
        self.termination = termination
        self.reason = reason
        self.replay = replay


def _color_name(white: bool) -> str:
    return "White" if white else "Black"


def _win_for(white: bool) -> Result:
    return Result.WHITE_WINS if white else Result.BLACK_WINS


def _timeout_for(clock: Clock, untimed: float) -> float:
    """How long to wait for a move before declaring the engine stalled or out of time."""
    control = clock.control
    if control.move_time is not None:
        return control.move_time + control.margin + GRACE
    left = clock.time_left()
    if left is None:
        return untimed
    return max(left, 0.0) + control.margin + GRACE


def _outcome_by_rules(board: Board) -> _GameOver | None:
    """The game end the arbiter declares after a move: mate, stalemate, draws by rule."""
    outcome = board.outcome()
    if outcome is None:
        if board.is_repetition(3):
            outcome_term = Termination.THREEFOLD_REPETITION
        elif board.is_fifty_moves():
            outcome_term = Termination.FIFTY_MOVES
        else:
            return None
        return _GameOver(Result.DRAW, _RULES_TERMINATION[outcome_term], _RULES_REASON[outcome_term])
    if outcome.termination is Termination.CHECKMATE:
        winner = outcome.winner is True
        return _GameOver(outcome.result, GameTermination.CHECKMATE, f"{_color_name(winner)} mates")
    return _GameOver(outcome.result, _RULES_TERMINATION[outcome.termination],
                     _RULES_REASON[outcome.termination])


def _rules_end(ending: Termination, mover: bool) -> _GameOver:
    """The game end `Board.push_refereed` found after `mover`'s move."""
    if ending is Termination.CHECKMATE:
        return _GameOver(_win_for(mover), GameTermination.CHECKMATE, f"{_color_name(mover)} mates")
    return _GameOver(Result.DRAW, _RULES_TERMINATION[ending], _RULES_REASON[ending])


def _verify_claim(board: Board, claimed: str) -> _GameOver | None:
    """The rules' end matching an engine's result claim, or None when the claim is false."""
    over = _outcome_by_rules(board)
    if over is None:
        outcome = board.outcome(claim_draw=True)
        if outcome is not None and outcome.result == claimed:
            over = _GameOver(outcome.result, _RULES_TERMINATION[outcome.termination],
                             _RULES_REASON.get(outcome.termination, "Draw"))
    if over is not None and over.result == claimed:
        return over
    return None


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
        over = await _run(engines, spec, board, moves, sent, on_move, _Frozen(freezes, began))
    except _GameOver as end:
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


_entry_time = attrgetter("time")


def _game_lines(engine: Engine, began: float) -> tuple[TranscriptEntry, ...]:
    """The engine's transcript entries of this game only (an engine's transcript spans games):
    those from the game's start on, found by bisection (the entries are in time order)."""
    entries = tuple(engine.transcript)
    return entries[bisect_left(entries, began, key=_entry_time):]


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
            raise _fault(white, exc) from exc

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
        raise _outcome_by_rules(board) or _GameOver(Result.UNFINISHED, GameTermination.ERROR,
                                                    "game over at start")


def _fault(white: bool, exc: EngineError) -> _GameOver:
    """Map an engine fault to the loss it causes."""
    name = _color_name(white)
    if isinstance(exc, EngineTerminated):
        return _GameOver(_win_for(not white), GameTermination.DISCONNECT, f"{name} disconnects ({exc})")
    if isinstance(exc, EngineStalled):
        return _GameOver(_win_for(not white), GameTermination.STALL, f"{name}'s connection stalls ({exc})")
    if isinstance(exc, EngineProtocolError):
        return _GameOver(_win_for(not white), GameTermination.DISCONNECT,
                         f"{name} breaks the protocol ({exc})")
    return _GameOver(_win_for(not white), GameTermination.DISCONNECT, f"{name} fails ({exc})")


async def _run(engines: dict[bool, Engine], spec: GameSpec, board: Board, moves: list[MoveRecord],
               sent: list[str], on_move: Callable[[MoveRecord, Board], None] | None,
               frozen: _Frozen) -> _GameOver:
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
            _judge_by_tables(tables, board)
        return await _loop(engines, spec, board, moves, sent, on_move, frozen, tables)
    except _GameOver:
        raise
    except Exception as exc:
        log.exception("runner error after %d plies of %s vs %s", len(moves), engines[True].name,
                      engines[False].name)
        raise _GameOver(Result.UNFINISHED, GameTermination.ERROR,
                        f"runner error: {type(exc).__name__}: {exc}",
                        replay=True) from exc


async def _loop(engines: dict[bool, Engine], spec: GameSpec, board: Board, moves: list[MoveRecord],
                sent: list[str], on_move: Callable[[MoveRecord, Board], None] | None,
                frozen: _Frozen, tables: TablebaseJudge | None = None) -> _GameOver:
    """Ask for moves until the game ends; returns (or raises) how."""
    clocks = {True: Clock(spec.white_tc, spec.clock_head_start),
              False: Clock(spec.black_tc, spec.clock_head_start)}
    rules = spec.adjudication
    draws = DrawTracker(rules)
    resigns = ResignTracker(rules)
    offer_pending = {True: False, False: False}
    ignored_claims = {True: 0, False: 0}
    while True:
        mover = board.turn
        clock = clocks[mover]
        reply, elapsed = await _ask(engines[mover], board, clock, clocks[not mover], sent,
                                    spec.untimed_move_timeout, offer_pending[not mover], frozen,
                                    spec.move_ceiling)
        if reply.resigned:
            return _GameOver(_win_for(not mover), GameTermination.RESIGNATION,
                             f"{_color_name(mover)} resigns")
        if reply.draw_offered and offer_pending[not mover]:
            return _GameOver(Result.DRAW, GameTermination.DRAW_AGREEMENT, "Draw by mutual agreement")
        offer_pending[mover] = reply.draw_offered
        offer_pending[not mover] = False
        if reply.move is None:
            if reply.claim is not None:
                judged = _judge_claim(board, mover, reply, rules,
                                      may_ignore=ignored_claims[mover] < _MAX_IGNORED_CLAIMS)
                if judged is not None:
                    return judged
                ignored_claims[mover] += 1
                continue  # a false claim ignored as configured: ask the same side again
            raise _GameOver(_win_for(not mover), GameTermination.STALL,
                            f"{_color_name(mover)} sends no move")
        move = _parse_reply_move(board, mover, reply)
        if clock.spend(elapsed):
            return (frozen.replay(mover, _overrun(clock, elapsed))
                    or _time_forfeit(board, mover, f"{elapsed:.3f} s used"))
        info = reply.info
        zeroing = board.is_zeroing(move)
        left = clock.time_left()
        score_cp = info.score_cp if info else None
        mate = info.mate if info else None
        if not mover and spec.white_pov[1]:  # a White-side score read as Black's own
            score_cp = None if score_cp is None else -score_cp
            mate = None if mate is None else -mate
        uci = move.uci()
        san, ending = board.push_refereed(move)
        if info is None:
            played = MoveRecord(uci=uci, san=san, time=elapsed, time_left=left,
                                ponder_hit=reply.ponder_hit)
        else:
            played = MoveRecord(
                uci=uci, san=san, time=elapsed, depth=info.depth,
                score_cp=score_cp, mate=mate, nodes=info.nodes,
                seldepth=info.seldepth, nps=info.nps, hashfull=info.hashfull,
                tbhits=info.tbhits, pv=info.pv, time_left=left,
                latency=None if info.time is None else elapsed - info.time,
                ponder_hit=reply.ponder_hit,
            )
        ignored_claims[mover] = 0
        moves.append(played)
        sent.append(played.uci)
        if on_move is not None:
            on_move(played, board)
        if reply.claim is not None:
            judged = _judge_claim(board, mover, reply, rules, after_move=True)
            if judged is not None:
                return judged
        if ending is not None:
            return _rules_end(ending, mover)
        if tables is not None:
            _judge_by_tables(tables, board)  # before the score rules, as in fastchess
        score = effective_score(played.score_cp, played.mate)
        draws.update(score, zeroing)
        resigns.update(mover, score)
        if rules.board_plies:  # cutechess-cli's counts: every ply on the board
            moves_played, counted = len(moves) // 2, len(moves)
        else:
            moves_played, counted = board.fullmove_number - 1, len(moves) - len(spec.opening_moves)
        adjudicated = _adjudicate(draws, resigns, rules, mover, score, moves_played, counted)
        if adjudicated is not None:
            return adjudicated
        if reply.ponder_move is not None:  # it thinks on the reply it expects while the other moves
            other = clocks[not mover]
            await engines[mover].ponder(sent, ClockState(
                own=clock.time_left(), opponent=other.time_left(), moves_to_go=clock.moves_to_go,
                period=clock.period_index, opponent_increment=other.increment))


def _judge_by_tables(tables: TablebaseJudge, board: Board) -> None:
    """End the game (raise) when the tables decide the position as the rules allow."""
    verdict = tables.verdict(board)
    if verdict is not None:
        raise _GameOver(verdict.result, GameTermination.TABLEBASE, verdict.reason)


def _adjudicate(draws: DrawTracker, resigns: ResignTracker, rules: AdjudicationRules,
                mover: bool, score: int | None, moves_played: int, engine_plies: int,
                ) -> _GameOver | None:
    """The arbiter's early end after a move (rules endings were checked first): resign, then
    draw, then the game's length, in fastchess's order (docs/adjudication.md)."""
    if rules.board_plies:  # cutechess-cli's order
        verdict = draws.verdict(moves_played) or resigns.verdict(mover, score)
    else:
        verdict = resigns.verdict(mover, score) or draws.verdict(moves_played)
    if verdict is not None:
        return _GameOver(verdict.result, GameTermination.ADJUDICATION, verdict.reason)
    verdict = max_moves_verdict(rules, engine_plies)
    if verdict is not None:
        return _GameOver(verdict.result, GameTermination.MAX_MOVES, verdict.reason)
    return None


async def _ask(engine: Engine, board: Board, clock: Clock, other: Clock, sent: list[str],
               untimed: float, draw_offered: bool, frozen: _Frozen,
               ceiling: float | None = None) -> tuple[EngineReply, float]:
    """The side to move's reply and the seconds it took; a fault or a flag ends the game.
    Without a running clock, a move past `ceiling` (if any) is lost on time."""
    capped = ceiling is not None and not clock.control.is_timed
    mover = board.turn
    state = ClockState(own=clock.time_left(), opponent=other.time_left(),
                       moves_to_go=clock.moves_to_go, period=clock.period_index,
                       opponent_increment=other.increment)
    started = time.monotonic()
    try:
        reply = await engine.play(sent, state, timeout=ceiling if capped and ceiling is not None
                                  else _timeout_for(clock, untimed),
                                  opponent_offers_draw=draw_offered)
    except EngineStalled as exc:
        elapsed = time.monotonic() - started
        if clock.control.is_timed:
            clock.spend(elapsed)
            raise (frozen.replay(mover, _overrun(clock, elapsed))
                   or _time_forfeit(board, mover, f"no move within its time ({exc})")) from exc
        # Untimed, the deadline is this move's alone: any standstill of the runner during
        # the move shortened the wait the engine was given.
        if capped:
            raise (frozen.replay(mover, 0.0, since=started) or _time_forfeit(
                board, mover, f"no move within the ceiling of {ceiling:g} s a move")) from exc
        raise frozen.replay(mover, 0.0, since=started) or _fault(mover, exc) from exc
    except EngineError as error:  # a name of its own: compiled, one name has one type
        raise _fault(mover, error) from error
    elapsed = reply.elapsed if reply.received_at else time.monotonic() - started
    return reply, elapsed


def _parse_reply_move(board: Board, mover: bool, reply: EngineReply) -> Move:
    """The engine's move checked by the rules core; an illegal or unreadable move loses."""
    text = reply.move or ""
    try:
        if reply.move_is_san:
            return board.parse_san(text)
        try:
            return board.parse_uci(text)
        except InvalidMoveError:
            return board.parse_san(text)  # some engines answer in SAN despite san=0
    except (IllegalMoveError, InvalidMoveError, ValueError):
        # A null answer is quoted as the engine wrote it ("bestmove (none)"), not as the
        # stand-in move the protocol client made of it.
        said = text if reply.words is None else shown(reply.words)
        raise _GameOver(_win_for(not mover), GameTermination.ILLEGAL_MOVE,
                        f"{_color_name(mover)} makes an illegal move: {said}") from None


def _overrun(clock: Clock, elapsed: float) -> float:
    """Seconds by which a move that made the flag fall went past what the clock allowed."""
    control = clock.control
    if control.move_time is not None:
        return elapsed - control.move_time - control.margin
    assert clock.remaining is not None
    return -(clock.remaining + control.margin)


class _Frozen:
    """The game's view of the loop's freeze monitor: asked only when a flag falls."""

    __slots__ = ("began", "monitor")

    def __init__(self, monitor: FreezeMonitor | None, began: float) -> None:
        self.monitor = monitor
        self.began = began

    def replay(self, mover: bool, overrun: float, since: float | None = None) -> _GameOver | None:
        """The replay end when the runner stood still during the game (from `since`, by
        default the game's start) for at least `overrun` seconds, else None.

        Time the runner stood still was charged to whichever engine was on move, and the
        engine on move now may have lost it in an earlier move; so all of the game's frozen
        time counts (both sides': never a false forfeit, at worst a game played again).
        Without the freeze, a flag that fell by less than it might not have fallen.
        """
        if self.monitor is None:
            return None
        frozen = self.monitor.frozen(self.began if since is None else since)
        if frozen <= 0.0 or frozen < overrun:
            return None
        return _GameOver(Result.UNFINISHED, GameTermination.ERROR,
                         f"{FROZEN_REPLAY} for {frozen:.1f} s while {_color_name(mover)} "
                         f"was on move, and its flag fell: not scored", replay=True)


def _time_forfeit(board: Board, mover: bool, detail: str) -> _GameOver:
    """Loss on time, or a draw when the opponent cannot mate by any series of moves (FIDE 6.9)."""
    if board.has_insufficient_material(not mover):
        return _GameOver(Result.DRAW, GameTermination.TIME_FORFEIT,
                         f"{_color_name(mover)} loses on time, but {_color_name(not mover)} "
                         f"cannot mate: draw ({detail})")
    return _GameOver(_win_for(not mover), GameTermination.TIME_FORFEIT,
                     f"{_color_name(mover)} loses on time ({detail})")


def _judge_claim(board: Board, mover: bool, reply: EngineReply, rules: AdjudicationRules,
                 after_move: bool = False, may_ignore: bool = True) -> _GameOver | None:
    """Accept a true result claim; a false one loses, or with ``false_claim_loses`` off is
    ignored (None: play on).

    A claim usually arrives on its own line after the claimant's move, so it reaches the
    loop without a move; ignoring it then means asking the same side again. `may_ignore`
    is False once an engine keeps claiming instead of moving: then the claim loses anyway.
    """
    assert reply.claim is not None
    claimed = reply.claim.result
    verified = _verify_claim(board, claimed)
    if verified is not None:
        return verified
    if after_move:
        ended = _outcome_by_rules(board)
        if ended is not None:
            return ended
    if rules.false_claim_loses or not may_ignore:
        return _GameOver(_win_for(not mover), GameTermination.FALSE_CLAIM,
                         f"{_color_name(mover)} makes a false claim: {claimed}"
                         + (f" {{{reply.claim.comment}}}" if reply.claim.comment else ""))
    log.info("%s made a false claim %s; ignored as configured", _color_name(mover), claimed)
    return None
