"""`GameCore`: one game's state between moves, advanced by one engine reply at a time.

Sans I/O: the core is told a reply (or a fault) and answers what comes next, synchronously:
the clock is stopped, the move refereed (`Board.push_refereed`), claims, offers and the
adjudication rules judged, and the outcome is either the next request (the clocks to send,
how long to wait) or the game's end (`GameOver`, raised). It never awaits, writes to an
engine or arms a timer: the awaiting loop (`runner.game.play`) and the read-callback relay
(`runner.game.relay`) both drive it, so both play the same game.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

from runner.clock import Clock
from runner.game.adjudication import DrawTracker, ResignTracker, TablebaseJudge, effective_score
from runner.game.arbiter import (
    MAX_IGNORED_CLAIMS,
    FrozenTime,
    GameOver,
    adjudicate,
    color_name,
    engine_fault,
    judge_by_tables,
    judge_claim,
    move_timeout,
    overrun,
    parse_reply_move,
    rules_end,
    time_forfeit,
    win_for,
)
from runner.game.record import GameSpec, GameTermination
from runner.protocol.engine import ClockState, EngineError, EngineReply, EngineStalled
from runner.rules import Board, Result
from runner.types import MoveRecord

__all__ = ["AGAIN", "NEXT", "PONDER", "GameCore", "MoveRequest"]

NEXT: Final = 0
"""After a reply: the other side is to move."""
AGAIN: Final = 1
"""After a reply: the same side is asked again (a false claim ignored as configured)."""
PONDER: Final = 2
"""After a reply: the mover ponders on the reply it expects (`ponder_clocks`), then NEXT."""


_NO_CLOCKS: Final = ClockState()
"""What a move is asked with when neither side has a clock (a depth or node limit, or none):
the same every move, so one value serves (a frozen dataclass is built by the interpreted
``__init__`` that `dataclasses` generates, even in the compiled core)."""


class MoveRequest:
    """What the side to move is asked with: the clocks it is told, how long it is waited
    for (seconds), and whether its opponent offers a draw."""

    __slots__ = ("clocks", "offered", "timeout")

    def __init__(self, clocks: ClockState, timeout: float, offered: bool) -> None:
        self.clocks = clocks
        self.timeout = timeout
        self.offered = offered


class GameCore:
    """One game's clocks, referee and adjudication between two engines' replies."""

    def __init__(self, spec: GameSpec, board: Board, moves: list[MoveRecord], sent: list[str],
                 on_move: Callable[[MoveRecord, Board], None] | None, frozen: FrozenTime,
                 tables: TablebaseJudge | None) -> None:
        """`moves` and `sent` (the game's records and coordinate moves so far) grow in place."""
        self.spec = spec
        self.board = board
        self.moves = moves
        self.sent = sent
        self._on_move = on_move
        self._frozen = frozen
        self._tables = tables
        self._rules = spec.adjudication
        # Each side's state in an attribute of its own, not a dict keyed by colour: read
        # several times a ply, an attribute is a field load in the compiled core.
        self._white_clock = Clock(spec.white_tc, spec.clock_head_start)
        self._black_clock = Clock(spec.black_tc, spec.clock_head_start)
        self._draws = DrawTracker(self._rules)
        self._resigns = ResignTracker(self._rules)
        self._white_offers = False  # a draw offer of White's pending
        self._black_offers = False
        self._white_ignored = 0  # false claims of White's ignored in a row
        self._black_ignored = 0
        self._asked_at = 0.0
        self._capped = False

    def ask(self) -> MoveRequest:
        """The request for the side to move, noting when it was made. Without a running
        clock, a move past the spec's ceiling (if any) is lost on time."""
        mover = self.board.turn
        clock = self._white_clock if mover else self._black_clock
        other = self._black_clock if mover else self._white_clock
        ceiling = self.spec.move_ceiling
        self._capped = ceiling is not None and not clock.control.is_timed
        timeout = ceiling if self._capped and ceiling is not None else move_timeout(
            clock, self.spec.untimed_move_timeout)
        own, opponent = clock.time_left(), other.time_left()
        if own is None and opponent is None and not clock.control.periods \
                and not other.control.periods:
            state = _NO_CLOCKS
        else:
            state = ClockState(own=own, opponent=opponent, moves_to_go=clock.moves_to_go,
                               period=clock.period_index, opponent_increment=other.increment)
        self._asked_at = time.monotonic()
        return MoveRequest(state, timeout, self._black_offers if mover else self._white_offers)

    def fault(self, exc: EngineError) -> GameOver:
        """The end a fault of the side to move causes: a stall is a time loss on a running
        clock (unless the runner stood still), else the engine's fault."""
        mover = self.board.turn
        clock = self._white_clock if mover else self._black_clock
        if not isinstance(exc, EngineStalled):
            return engine_fault(mover, exc)
        elapsed = time.monotonic() - self._asked_at
        frozen = self._frozen
        if clock.control.is_timed:
            clock.spend(elapsed)
            return (frozen.replay(mover, overrun(clock, elapsed))
                    or time_forfeit(self.board, mover, f"no move within its time ({exc})"))
        # Untimed, the deadline is this move's alone: any standstill of the runner during
        # the move shortened the wait the engine was given.
        if self._capped:
            return frozen.replay(mover, 0.0, since=self._asked_at) or time_forfeit(
                self.board, mover,
                f"no move within the ceiling of {self.spec.move_ceiling:g} s a move")
        return frozen.replay(mover, 0.0, since=self._asked_at) or engine_fault(mover, exc)

    def take(self, reply: EngineReply) -> int:
        """The side to move's `reply`, judged: NEXT, AGAIN or PONDER; GameOver (raised) when
        the game ends with it."""
        board = self.board
        spec = self.spec
        mover = board.turn
        elapsed = reply.elapsed if reply.received_at else time.monotonic() - self._asked_at
        clock = self._white_clock if mover else self._black_clock
        if reply.resigned:
            raise GameOver(win_for(not mover), GameTermination.RESIGNATION,
                           f"{color_name(mover)} resigns")
        offered = reply.draw_offered
        if offered and (self._black_offers if mover else self._white_offers):
            raise GameOver(Result.DRAW, GameTermination.DRAW_AGREEMENT, "Draw by mutual agreement")
        if mover:
            self._white_offers, self._black_offers = offered, False
        else:
            self._white_offers, self._black_offers = False, offered
        if reply.move is None:
            if reply.claim is not None:
                ignored = self._white_ignored if mover else self._black_ignored
                judged = judge_claim(board, mover, reply, self._rules,
                                     may_ignore=ignored < MAX_IGNORED_CLAIMS)
                if judged is not None:
                    raise judged
                if mover:
                    self._white_ignored += 1
                else:
                    self._black_ignored += 1
                return AGAIN
            raise GameOver(win_for(not mover), GameTermination.STALL,
                           f"{color_name(mover)} sends no move")
        move = parse_reply_move(board, mover, reply)
        if clock.spend(elapsed):
            raise (self._frozen.replay(mover, overrun(clock, elapsed))
                   or time_forfeit(board, mover, f"{elapsed:.3f} s used"))
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
        if mover:
            self._white_ignored = 0
        else:
            self._black_ignored = 0
        moves = self.moves
        moves.append(played)
        self.sent.append(uci)
        if self._on_move is not None:
            self._on_move(played, board)
        rules = self._rules
        if reply.claim is not None:
            judged = judge_claim(board, mover, reply, rules, after_move=True)
            if judged is not None:
                raise judged
        if ending is not None:
            raise rules_end(ending, mover)
        if self._tables is not None:
            judge_by_tables(self._tables, board)  # before the score rules, as in fastchess
        score = effective_score(played.score_cp, played.mate)
        self._draws.update(score, zeroing)
        self._resigns.update(mover, score)
        if rules.board_plies:  # cutechess-cli's counts: every ply on the board
            moves_played, counted = len(moves) // 2, len(moves)
        else:
            moves_played = board.fullmove_number - 1
            counted = len(moves) - len(spec.opening_moves)
        adjudicated = adjudicate(self._draws, self._resigns, rules, mover, score, moves_played,
                                 counted)
        if adjudicated is not None:
            raise adjudicated
        return NEXT if reply.ponder_move is None else PONDER

    def ponder_clocks(self, engine_white: bool) -> ClockState:
        """The clocks as they stand, for the engine playing White (True) or Black, its own
        first: what it is told when it ponders on its opponent's time."""
        clock = self._white_clock if engine_white else self._black_clock
        other = self._black_clock if engine_white else self._white_clock
        return ClockState(own=clock.time_left(), opponent=other.time_left(),
                          moves_to_go=clock.moves_to_go, period=clock.period_index,
                          opponent_increment=other.increment)
