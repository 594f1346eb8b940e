"""The arbiter's decisions, as pure functions: how a game ends and why.

Rules endings (mate, stalemate, draws by rule), claims, time forfeits (and the runner's own
standstill that makes one not scored), engine faults, illegal moves, and the adjudication
rules, each a value of `GameOver`. The game's core (`runner.game.core`) asks them after each
reply; nothing here waits, writes or reads a clock.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import logging

from runner.clock import Clock
from runner.game.adjudication import (
    AdjudicationRules,
    DrawTracker,
    ResignTracker,
    TablebaseJudge,
    max_moves_verdict,
)
from runner.game.record import GameTermination
from runner.protocol.engine import (
    EngineError,
    EngineProtocolError,
    EngineReply,
    EngineStalled,
    EngineTerminated,
)
from runner.protocol.freeze import FreezeMonitor
from runner.rules import (
    Board,
    IllegalMoveError,
    InvalidMoveError,
    Move,
    Result,
    Termination,
)
from runner.text import shown

__all__ = [
    "FROZEN_REPLAY",
    "GRACE",
    "MAX_IGNORED_CLAIMS",
    "FrozenTime",
    "GameOver",
    "adjudicate",
    "color_name",
    "engine_fault",
    "judge_by_tables",
    "judge_claim",
    "move_timeout",
    "outcome_by_rules",
    "overrun",
    "parse_reply_move",
    "rules_end",
    "time_forfeit",
    "win_for",
]

log = logging.getLogger(__name__)

MAX_IGNORED_CLAIMS = 3
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




class GameOver(Exception):
    """How a game ends: its result, termination and reason (raised, or returned, to end it)."""

    def __init__(self, result: Result, termination: GameTermination, reason: str, replay: bool = False):
        super().__init__(reason)
        self.result = result
        self.termination = termination
        self.reason = reason
        self.replay = replay


def color_name(white: bool) -> str:
    """"White" or "Black"."""
    return "White" if white else "Black"


def win_for(white: bool) -> Result:
    """The result of a win for White (True) or Black."""
    return Result.WHITE_WINS if white else Result.BLACK_WINS


def move_timeout(clock: Clock, untimed: float) -> float:
    """How long to wait for a move before declaring the engine stalled or out of time."""
    control = clock.control
    if control.move_time is not None:
        return control.move_time + control.margin + GRACE
    left = clock.time_left()
    if left is None:
        return untimed
    return max(left, 0.0) + control.margin + GRACE


def outcome_by_rules(board: Board) -> GameOver | None:
    """The game end the arbiter declares after a move: mate, stalemate, draws by rule."""
    outcome = board.outcome()
    if outcome is None:
        if board.is_repetition(3):
            outcome_term = Termination.THREEFOLD_REPETITION
        elif board.is_fifty_moves():
            outcome_term = Termination.FIFTY_MOVES
        else:
            return None
        return GameOver(Result.DRAW, _RULES_TERMINATION[outcome_term], _RULES_REASON[outcome_term])
    if outcome.termination is Termination.CHECKMATE:
        winner = outcome.winner is True
        return GameOver(outcome.result, GameTermination.CHECKMATE, f"{color_name(winner)} mates")
    return GameOver(outcome.result, _RULES_TERMINATION[outcome.termination],
                     _RULES_REASON[outcome.termination])


def rules_end(ending: Termination, mover: bool) -> GameOver:
    """The game end `Board.push_refereed` found after `mover`'s move."""
    if ending is Termination.CHECKMATE:
        return GameOver(win_for(mover), GameTermination.CHECKMATE, f"{color_name(mover)} mates")
    return GameOver(Result.DRAW, _RULES_TERMINATION[ending], _RULES_REASON[ending])


def _verify_claim(board: Board, claimed: str) -> GameOver | None:
    """The rules' end matching an engine's result claim, or None when the claim is false."""
    over = outcome_by_rules(board)
    if over is None:
        outcome = board.outcome(claim_draw=True)
        if outcome is not None and outcome.result == claimed:
            over = GameOver(outcome.result, _RULES_TERMINATION[outcome.termination],
                             _RULES_REASON.get(outcome.termination, "Draw"))
    if over is not None and over.result == claimed:
        return over
    return None




def engine_fault(white: bool, exc: EngineError) -> GameOver:
    """Map an engine fault to the loss it causes."""
    name = color_name(white)
    if isinstance(exc, EngineTerminated):
        return GameOver(win_for(not white), GameTermination.DISCONNECT, f"{name} disconnects ({exc})")
    if isinstance(exc, EngineStalled):
        return GameOver(win_for(not white), GameTermination.STALL, f"{name}'s connection stalls ({exc})")
    if isinstance(exc, EngineProtocolError):
        return GameOver(win_for(not white), GameTermination.DISCONNECT,
                         f"{name} breaks the protocol ({exc})")
    return GameOver(win_for(not white), GameTermination.DISCONNECT, f"{name} fails ({exc})")




def judge_by_tables(tables: TablebaseJudge, board: Board) -> None:
    """End the game (raise) when the tables decide the position as the rules allow."""
    verdict = tables.verdict(board)
    if verdict is not None:
        raise GameOver(verdict.result, GameTermination.TABLEBASE, verdict.reason)


def adjudicate(draws: DrawTracker, resigns: ResignTracker, rules: AdjudicationRules,
                mover: bool, score: int | None, moves_played: int, engine_plies: int,
                ) -> GameOver | None:
    """The arbiter's early end after a move (rules endings were checked first): resign, then
    draw, then the game's length, in fastchess's order (docs/adjudication.md)."""
    if rules.board_plies:  # cutechess-cli's order
        verdict = draws.verdict(moves_played) or resigns.verdict(mover, score)
    else:
        verdict = resigns.verdict(mover, score) or draws.verdict(moves_played)
    if verdict is not None:
        return GameOver(verdict.result, GameTermination.ADJUDICATION, verdict.reason)
    verdict = max_moves_verdict(rules, engine_plies)
    if verdict is not None:
        return GameOver(verdict.result, GameTermination.MAX_MOVES, verdict.reason)
    return None




def parse_reply_move(board: Board, mover: bool, reply: EngineReply) -> Move:
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
        raise GameOver(win_for(not mover), GameTermination.ILLEGAL_MOVE,
                        f"{color_name(mover)} makes an illegal move: {said}") from None


def overrun(clock: Clock, elapsed: float) -> float:
    """Seconds by which a move that made the flag fall went past what the clock allowed."""
    control = clock.control
    if control.move_time is not None:
        return elapsed - control.move_time - control.margin
    assert clock.remaining is not None
    return -(clock.remaining + control.margin)


class FrozenTime:
    """The game's view of the loop's freeze monitor: asked only when a flag falls."""

    __slots__ = ("began", "monitor")

    def __init__(self, monitor: FreezeMonitor | None, began: float) -> None:
        self.monitor = monitor
        self.began = began

    def replay(self, mover: bool, overrun: float, since: float | None = None) -> GameOver | None:
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
        return GameOver(Result.UNFINISHED, GameTermination.ERROR,
                         f"{FROZEN_REPLAY} for {frozen:.1f} s while {color_name(mover)} "
                         f"was on move, and its flag fell: not scored", replay=True)


def time_forfeit(board: Board, mover: bool, detail: str) -> GameOver:
    """Loss on time, or a draw when the opponent cannot mate by any series of moves (FIDE 6.9)."""
    if board.has_insufficient_material(not mover):
        return GameOver(Result.DRAW, GameTermination.TIME_FORFEIT,
                         f"{color_name(mover)} loses on time, but {color_name(not mover)} "
                         f"cannot mate: draw ({detail})")
    return GameOver(win_for(not mover), GameTermination.TIME_FORFEIT,
                     f"{color_name(mover)} loses on time ({detail})")


def judge_claim(board: Board, mover: bool, reply: EngineReply, rules: AdjudicationRules,
                 after_move: bool = False, may_ignore: bool = True) -> GameOver | None:
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
        ended = outcome_by_rules(board)
        if ended is not None:
            return ended
    if rules.false_claim_loses or not may_ignore:
        return GameOver(win_for(not mover), GameTermination.FALSE_CLAIM,
                         f"{color_name(mover)} makes a false claim: {claimed}"
                         + (f" {{{reply.claim.comment}}}" if reply.claim.comment else ""))
    log.info("%s made a false claim %s; ignored as configured", color_name(mover), claimed)
    return None
