"""`verify_game`: an uploaded game checked move by move against the game that was asked for.

The record is replayed on our rules core from the job's own start position and opening: every
move legal and written as the board writes it, no ply after the game had already ended by
rule, clock or adjudication, the final position the one recorded, and the result and
termination ones that position, the clocks and the tournament's adjudication rules allow.
The checks mirror what runner.game.play decides while it plays, so an honest record passes
and a record changed after the fact (or made up) does not; the first problem found is the
verdict's reason, naming the ply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from runner.clock import Clock
from runner.game.adjudication import (
    DrawTracker,
    ResignTracker,
    effective_score,
    max_moves_verdict,
)
from runner.game.job import GameJob
from runner.game.record import GameRecord, GameSpec
from runner.game.termination import GameTermination
from runner.rules import (
    STARTING_FEN,
    Board,
    IllegalMoveError,
    InvalidFenError,
    InvalidMoveError,
    Result,
    Termination,
)
from runner.types import Variant

__all__ = ["Verdict", "verify_game"]

_USED = re.compile(r"\((\d+(?:\.\d+)?) s used\)")
"""The seconds the flag-falling move took, as the game loop writes them in its reason."""

_RULE_ENDS = (GameTermination.CHECKMATE, GameTermination.STALEMATE,
              GameTermination.INSUFFICIENT_MATERIAL, GameTermination.THREEFOLD_REPETITION,
              GameTermination.FIVEFOLD_REPETITION, GameTermination.FIFTY_MOVES,
              GameTermination.SEVENTYFIVE_MOVES)
_FAULTS = (GameTermination.RESIGNATION, GameTermination.ILLEGAL_MOVE,
           GameTermination.FALSE_CLAIM, GameTermination.DISCONNECT, GameTermination.STALL)


@dataclass
class _Replayed:
    """What the replay found: the final board, the adjudication that ends the game at its
    last ply (if any), and each side's recorded move times after the opening."""

    board: Board
    final: tuple[GameTermination, Result] | None
    times: dict[bool, list[float | None]]


@dataclass(frozen=True)
class Verdict:
    """Whether an uploaded game counts; when not, why (one line) and at which ply (1-based,
    None when the problem is not one ply's)."""

    ok: bool
    reason: str = ""
    ply: int | None = None


_PASS = Verdict(True)


class _Refused(Exception):
    """The first problem found, with its ply."""

    def __init__(self, reason: str, ply: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.ply = ply


def verify_game(job: GameJob, record: GameRecord) -> Verdict:
    """Whether `record` is the game `job` asked for, played and ended by the rules."""
    try:
        _same_game(job, record)
        _ending(job.spec, record, _replay(job.spec, record))
    except _Refused as refused:
        return Verdict(False, refused.reason, refused.ply)
    return _PASS


def _win_for(white: bool) -> Result:
    return Result.WHITE_WINS if white else Result.BLACK_WINS


def _side(white: bool) -> str:
    return "White" if white else "Black"


def _same_game(job: GameJob, record: GameRecord) -> None:
    """The engines, colours, opening, time controls, variant and rules of the job."""
    if (record.white, record.black) != job.engines:
        raise _Refused(f"the game is {record.white} (White) vs {record.black} (Black), not "
                       f"{job.white.name} vs {job.black.name}")
    asked, got = job.spec, record.spec
    for what, want, have in (
            ("White's time control", asked.white_tc, got.white_tc),
            ("Black's time control", asked.black_tc, got.black_tc),
            ("start position", asked.start_fen, got.start_fen),
            ("opening", asked.opening_moves, got.opening_moves),
            ("variant", asked.variant, got.variant),
            ("adjudication rules", asked.adjudication, got.adjudication),
            ("move ceiling", asked.move_ceiling, got.move_ceiling)):
        if want != have:
            raise _Refused(f"{what}: the game has {have!r}, the batch asked for {want!r}")
    if record.replay or record.result is Result.UNFINISHED:
        raise _Refused("the game has no result (a game to play again is returned, not "
                       "uploaded)")
    if record.termination is GameTermination.ERROR:
        raise _Refused("the game ended in a runner error: it has no result")


def _replay(spec: GameSpec, record: GameRecord) -> _Replayed:
    """The game after every recorded move, each checked; refused at the first bad ply."""
    try:
        board = Board(spec.start_fen or STARTING_FEN,
                      chess960=spec.variant is Variant.FISCHERANDOM)
    except (InvalidFenError, ValueError) as exc:
        raise _Refused(f"start position {spec.start_fen!r}: {exc}") from None
    book = len(spec.opening_moves)
    moves = record.moves
    if len(moves) < book or tuple(m.uci for m in moves[:book]) != spec.opening_moves:
        raise _Refused(f"the game does not start with the batch's opening "
                       f"{' '.join(spec.opening_moves)}")
    clocks = {True: Clock(spec.white_tc, spec.clock_head_start),
              False: Clock(spec.black_tc, spec.clock_head_start)}
    rules = spec.adjudication
    draws, resigns = DrawTracker(rules), ResignTracker(rules)
    times: dict[bool, list[float | None]] = {True: [], False: []}
    final: tuple[GameTermination, Result] | None = None
    ended: Termination | None = None  # the rules' end after the last ply, as the loop sees it
    for ply, played in enumerate(moves, 1):
        if ended is not None:
            raise _Refused("the game went on after it had ended by rule", ply)
        mover = board.turn
        try:
            move = board.parse_uci(played.uci)
        except (IllegalMoveError, InvalidMoveError, ValueError):
            raise _Refused(f"{_side(mover)}'s move {played.uci!r} is illegal in "
                           f"{board.fen()}", ply) from None
        if played.book != (ply <= book):
            raise _Refused("only the batch's opening moves may be marked as book", ply)
        zeroing = board.is_zeroing(move)
        # The move's SAN and the end it makes in one step, as the game loop's arbiter plays.
        san, ended = board.push_refereed(move)
        if played.san != san:
            raise _Refused(f"move {played.uci} is written {played.san!r}, not {san!r}", ply)
        if ply <= book:
            continue
        _spend(clocks[mover], played.time, mover, ply)
        times[mover].append(played.time)
        if ply < len(moves) and ended is not None:
            raise _Refused("the game went on after it had ended by rule", ply + 1)
        score = effective_score(played.score_cp, played.mate)
        draws.update(score, zeroing)
        resigns.update(mover, score)
        if rules.board_plies:
            moves_played, counted = ply // 2, ply
        else:
            moves_played, counted = board.fullmove_number - 1, ply - book
        if rules.board_plies:
            verdict = draws.verdict(moves_played) or resigns.verdict(mover, score)
        else:
            verdict = resigns.verdict(mover, score) or draws.verdict(moves_played)
        termination = GameTermination.ADJUDICATION
        if verdict is None:
            verdict = max_moves_verdict(rules, counted)
            termination = GameTermination.MAX_MOVES
        if verdict is None:
            continue
        if ply < len(moves):
            raise _Refused(f"the game went on after the adjudication rules ended it "
                           f"({verdict.reason})", ply + 1)
        final = (termination, verdict.result)
        # A rule's end, or the tables' verdict, comes before the scores' (as in the loop).
        if (record.termination, record.result) != final and ended is None \
                and record.termination is not GameTermination.TABLEBASE:
            raise _Refused(f"the adjudication rules end the game here with "
                           f"{verdict.result} ({verdict.reason}), not "
                           f"{record.result} by {record.termination.value}", ply)
    if record.final_fen != board.fen():
        raise _Refused(f"the final position is {board.fen()}, not {record.final_fen}")
    return _Replayed(board, final, times)


def _ended_by_rule(board: Board) -> bool:
    """Whether the game loop ends the game in this position by the rules (as after a move)."""
    return (board.outcome() is not None or board.is_repetition(3)
            or board.is_fifty_moves())


def _spend(clock: Clock, seconds: float | None, mover: bool, ply: int) -> None:
    """Charge a recorded move to its clock; refused when the flag fell (the game should
    have ended there) or a running clock's move has no time."""
    if seconds is None:
        if clock.control.is_timed:
            raise _Refused(f"{_side(mover)}'s move has no time, and its clock runs", ply)
        return
    if not seconds >= 0.0:
        raise _Refused(f"{_side(mover)}'s move took {seconds} s", ply)
    if clock.spend(seconds):
        raise _Refused(f"{_side(mover)}'s flag fell on this move ({seconds:.3f} s) and the "
                       "game went on", ply)


def _ending(spec: GameSpec, record: GameRecord, replayed: _Replayed) -> None:
    """The result and termination the final position, clocks and rules allow."""
    end, result = record.termination, record.result
    board = replayed.board
    loser = board.turn  # who was on move when the game ended
    if end in _RULE_ENDS:
        _rule_end(board, end, result)
    elif end in (GameTermination.ADJUDICATION, GameTermination.MAX_MOVES):
        if replayed.final != (end, result):
            raise _Refused(f"{end.value} with {result}: the adjudication rules do not end "
                           "the game here so")
    elif end is GameTermination.TABLEBASE:
        if not spec.adjudication.tablebases:
            raise _Refused("tablebase adjudication: the tournament uses no tablebases")
        if result is Result.UNFINISHED:
            raise _Refused("tablebase adjudication without a result")
    elif end is GameTermination.TIME_FORFEIT:
        _time_forfeit(spec, record, replayed, loser)
    elif end is GameTermination.DRAW_AGREEMENT:
        if result is not Result.DRAW:
            raise _Refused(f"draw agreement with the result {result}")
    elif end in _FAULTS:
        if result is Result.DRAW:
            raise _Refused(f"{end.value} ends a game with a win, not a draw")
        if end in (GameTermination.RESIGNATION, GameTermination.ILLEGAL_MOVE) \
                and result is not _win_for(not loser):
            raise _Refused(f"{end.value} by the side on move ({_side(loser)}) makes "
                           f"{_win_for(not loser)}, not {result}")
        if end is GameTermination.FALSE_CLAIM and board.outcome(claim_draw=True) is not None:
            raise _Refused("a false claim, in a position where the claim is true")
    if _ended_by_rule(board) and end not in _RULE_ENDS and end is not GameTermination.FALSE_CLAIM:
        raise _Refused(f"the final position ends the game by rule, not by {end.value}")


def _rule_end(board: Board, end: GameTermination, result: Result) -> None:
    """A checkmate, stalemate or draw by rule: the position must be one."""
    if end is GameTermination.CHECKMATE:
        if not board.is_checkmate():
            raise _Refused("checkmate claimed, but the final position is not mate")
        if result is not _win_for(not board.turn):
            raise _Refused(f"checkmate of {_side(board.turn)} makes {_win_for(not board.turn)}, "
                           f"not {result}")
        return
    holds = {
        GameTermination.STALEMATE: board.is_stalemate(),
        GameTermination.INSUFFICIENT_MATERIAL: board.is_insufficient_material(),
        GameTermination.THREEFOLD_REPETITION: (board.is_repetition(3)
                                               or board.can_claim_threefold_repetition()),
        GameTermination.FIVEFOLD_REPETITION: board.is_fivefold_repetition(),
        GameTermination.FIFTY_MOVES: board.is_fifty_moves() or board.can_claim_fifty_moves(),
        GameTermination.SEVENTYFIVE_MOVES: board.is_seventyfive_moves(),
    }[end]
    if not holds:
        raise _Refused(f"{end.value} claimed, but the final position is not one")
    if result is not Result.DRAW:
        raise _Refused(f"{end.value} is a draw, not {result}")


def _time_forfeit(spec: GameSpec, record: GameRecord, replayed: _Replayed,
                  loser: bool) -> None:
    """A loss on time: the side on move lost it, as its clock allows."""
    control = spec.white_tc if loser else spec.black_tc
    if not control.is_timed and spec.move_ceiling is None:
        raise _Refused(f"a time forfeit under {control.to_pgn()}, where no clock runs")
    board = replayed.board
    expected = Result.DRAW if board.has_insufficient_material(not loser) else _win_for(not loser)
    if record.result is not expected:
        raise _Refused(f"{_side(loser)}, on move, lost on time: that makes {expected}, not "
                       f"{record.result}")
    used = _USED.search(record.reason)
    if used is None or not control.is_timed:
        return  # no move came (a stall past the deadline), or a move past the ceiling
    clock = Clock(control, spec.clock_head_start)
    for seconds in replayed.times[loser]:
        clock.spend(seconds or 0.0)
    if not clock.spend(float(used.group(1))):
        raise _Refused(f"{_side(loser)} lost on time, but its clock allows "
                       f"{used.group(1)} s on that move")
