"""`UciSearch`: a UCI engine's move requests and its pondering, awaited or through callbacks.

The base of `UciEngine` (uci.py), above the reading (`UciReading`): the ``position`` and
``go`` lines of a search, and pondering as cutechess-cli does it. After ``bestmove X ponder
Y`` the engine searches ``position ... X Y`` with ``go ponder`` on its opponent's time; when
it is asked to move, a hit (the opponent played Y) gets ``ponderhit`` and the same search
goes on, a miss gets ``stop``, its bestmove is read and dropped, and the real position and
``go`` follow. The clock of a hit runs from the ``ponderhit``, a miss's from the real ``go``.

Both ways of asking run the same dialogue: `play` (uci.py) and `ponder` await each step;
`start_ponder` and `request_move` write each step from the read callback that allows it
(the ponder search's first report, its bestmove after ``stop``) or from a timer, so a game
on the relay (`runner.game.relay`) wakes no task for pondering either.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable, Sequence
from typing import Final

from runner.protocol.engine import (
    ClockState,
    EngineConfig,
    EngineError,
    EngineReply,
    EngineStalled,
    GameSetup,
    Side,
)
from runner.protocol.transport import EngineTransport
from runner.protocol.uci_parse import format_go, format_position
from runner.protocol.uci_reading import UciReading
from runner.protocol.waiting import ReplyCall

__all__ = ["PONDER_START", "UciSearch"]

PONDER_START = 0.5
"""Seconds a ponder search's end (``ponderhit`` or ``stop``) waits at most, off the clock, for
the search's first report: Debian's Ethereal never ends a search whose ``ponderhit`` came
before it began (10 times in 10 when sent at once after ``go ponder``), nor answers such a
``stop`` (a miss 5 ms after ``go ponder`` waited out the 15 s for its bestmove and lost)."""

_IDLE: Final = 0
"""No step of a ponder search is under way in a callback-driven request."""
_WAITING: Final = 1
"""``ponderhit`` or ``stop`` waits for the ponder search's first report (`PONDER_START`)."""
_STOPPING: Final = 2
"""A miss: ``stop`` was sent; the ponder search's bestmove is awaited, then the real ``go``."""


class UciSearch(UciReading):
    """A UCI client's search requests and pondering (see the module)."""

    def __init__(self, config: EngineConfig, *, transport: EngineTransport | None = None) -> None:
        """`transport` replaces the subprocess (a scripted double in tests, say)."""
        super().__init__(config, transport=transport)
        self._ponder_call = ReplyCall(self._ponder_ended, self._ponder_failed)
        """The ponder search's stand-in while a callback-driven request ends it."""
        self._ponder_step = _IDLE
        self._ponder_timer: asyncio.TimerHandle | None = None
        self._pending_hit = False  # what a waiting step sends: ponderhit (True) or stop
        self._hit: bool | None = None
        """The ponder hit the next callback-driven reply carries (None: it did not ponder)."""
        self._asked: tuple[Sequence[str], ClockState, float] | None = None
        """A callback-driven request's moves, clocks and timeout, until its ``go`` is written."""

    # ----------------------------------------------------------------- the lines of a search

    def _go_lines(self, setup: GameSetup, moves: Sequence[str], clocks: ClockState,
                  white_to_move: bool, call: ReplyCall | None) -> list[str]:
        """``position`` and ``go``; the search begun."""
        self._begin_search(call)
        self._score_is_bound = False
        self._searches += 1
        return [self._position(setup.start_fen, moves),
                format_go(setup.time_control, clocks, white_to_move)]

    def _checked_turn(self, moves: Sequence[str]) -> tuple[GameSetup, bool]:
        """The game's setup and whether White is to move, once `moves` are checked to extend
        the game's start and to leave this engine to move."""
        setup = self._require_game()
        self._check_alive()
        opening = setup.moves
        if opening and tuple(moves[:len(opening)]) != opening:
            raise ValueError("moves do not extend the moves the game started from")
        return setup, self._check_turn(setup, moves)

    def _search_lines(self, moves: Sequence[str], clocks: ClockState,
                      opponent_offers_draw: bool) -> list[str] | None:
        """`play`'s request for `request_move` (a ponder search is ended by `request_move`
        before this is asked)."""
        setup, white_to_move = self._checked_turn(moves)
        self._hit = None
        return self._go_lines(setup, moves, clocks, white_to_move, self._call)

    def _answered(self, reply: EngineReply) -> EngineReply:
        """A callback-driven reply, marked with its ponder hit when the engine pondered."""
        hit, self._hit = self._hit, None
        return reply if hit is None else dataclasses.replace(reply, ponder_hit=hit)

    def _position(self, start_fen: str | None, moves: Sequence[str]) -> str:
        """`format_position`, extended by the new moves when the game only grew (the line
        is rebuilt once per game instead of once per move)."""
        known = self._position_moves
        text = self._position_text
        count = len(known)
        if text and start_fen == self._position_fen and len(moves) >= count:
            prefix = moves[:count]
            grew = (prefix if isinstance(prefix, list) else list(prefix)) == known
        else:
            grew = False
        if grew:
            if len(moves) > count:
                added = moves[count:]
                known.extend(added)
                text += (" " if count else " moves ") + " ".join(added)
        else:
            text = format_position(start_fen, moves)
            self._position_moves = list(moves)
            self._position_fen = start_fen
        self._position_text = text
        return text

    # ----------------------------------------------------------------- pondering, awaited

    def _ponder_lines(self, moves: Sequence[str], clocks: ClockState) -> list[str] | None:
        """The ponder search's lines, begun, after `moves` and the reply the last bestmove
        expected; None when there is nothing to ponder on."""
        setup = self._require_game()
        expected, self._ponder_move = self._ponder_move, None
        if expected is None or not self._may_ponder or self._pondered is not None:
            return None
        self._check_alive()
        pondered = [*moves, expected]
        self._begin_search()
        self._score_is_bound = False
        assert isinstance(self._reply, asyncio.Future)
        self._ponder_search, self._reply = self._reply, None
        loop = self._loop or asyncio.get_running_loop()
        self._ponder_heard = loop.create_future()
        self._pondered = pondered
        self._searches += 1
        return [self._position(setup.start_fen, pondered),
                format_go(setup.time_control, clocks, setup.side is Side.WHITE, ponder=True)]

    async def ponder(self, moves: Sequence[str], clocks: ClockState) -> None:
        """``position`` with the expected reply and ``go ponder`` with the clocks as they
        stand (the engine's own after its move): the bestmove is awaited only in `play`."""
        lines = self._ponder_lines(moves, clocks)
        if lines is not None:
            await self._send(*lines)

    async def _end_ponder(self, hit: bool) -> bool:
        """The ponder search is over: True when it goes on (a hit, still searching); else it
        is stopped and its bestmove read and dropped (a miss, or the game's end).  A crash
        while pondering is raised here; a bestmove that never comes is EngineStalled."""
        search, heard = self._ponder_search, self._ponder_heard
        assert heard is not None and isinstance(search, asyncio.Future)
        self._pondered = self._ponder_heard = None
        try:
            if not search.done() and not heard.done():  # see PONDER_START
                with contextlib.suppress(EngineStalled):
                    await self._wait(heard, PONDER_START, "no report from the ponder search")
            if search.done():
                search.result()  # the engine's fault, if it died while pondering
                self._proc_note("bestmove while pondering, before ponderhit or stop: dropped")
            elif hit:
                return True
            else:
                await self._send("stop")
                await self._wait(search, self._patient(self.config.ping_timeout),
                                 "no bestmove after stop while pondering")
            return False
        finally:
            self._ponder_search = None

    # ----------------------------------------------------------------- pondering, through callbacks

    def start_ponder(self, moves: Sequence[str], clocks: ClockState) -> bool:
        """`Engine.start_ponder`: `ponder`'s lines written at once on raw pipes."""
        proc = self._proc
        if proc is None or self._loop is None or getattr(proc, "raw_pipes", False) is not True:
            return False
        lines = self._ponder_lines(moves, clocks)
        if lines is not None:
            proc.write_nowait(lines)
        return True

    def request_move(
        self,
        moves: Sequence[str],
        clocks: ClockState,
        *,
        timeout: float,
        opponent_offers_draw: bool,
        on_reply: Callable[[EngineReply], None],
        on_fault: Callable[[BaseException], None],
    ) -> bool:
        """`Engine.request_move`, the ponder search ended first as `play` ends it: a hit's
        ``ponderhit`` (once the search has reported, `PONDER_START` at most) or a miss's
        ``stop`` is written now, and the rest follows from the read callbacks."""
        if self._pondered is None:
            return super().request_move(moves, clocks, timeout=timeout,
                                        opponent_offers_draw=opponent_offers_draw,
                                        on_reply=on_reply, on_fault=on_fault)
        proc, loop = self._proc, self._loop
        if proc is None or loop is None or getattr(proc, "raw_pipes", False) is not True:
            return False
        self._checked_turn(moves)
        search, heard = self._ponder_search, self._ponder_heard
        assert isinstance(search, asyncio.Future) and heard is not None
        hit = self._pondered == list(moves)
        self._pondered = self._ponder_heard = None
        self._ponder_search = None
        self._on_reply, self._on_fault = on_reply, on_fault
        self._asked = (moves, clocks, timeout)
        if search.done():  # its bestmove came before ponderhit or stop (or its fault)
            search.result()
            self._proc_note("bestmove while pondering, before ponderhit or stop: dropped")
            self._real_search(hit)
            return True
        self._ponder_call.open()
        self._ponder_search = self._ponder_call  # its bestmove or fault reaches us now
        self._pending_hit = hit
        if heard.done():
            self._end_search_now()
        else:  # `_heard` or the timer ends it
            self._ponder_step = _WAITING
            self._ponder_timer = loop.call_later(PONDER_START, self._unheard)
        return True

    def _heard(self) -> None:
        """The ponder search reported (from `_handle_info`): a waiting step goes now."""
        if self._ponder_step == _WAITING:
            self._end_search_now()

    def _unheard(self) -> None:
        """`PONDER_START` passed without a report: the waiting step goes all the same."""
        self._ponder_timer = None
        if self._ponder_step != _WAITING:
            return
        try:
            self._end_search_now()
        except (EngineError, RuntimeError) as exc:  # the engine stopped meanwhile
            self._ponder_failed(exc)

    def _end_search_now(self) -> None:
        """A hit's ``ponderhit``, or a miss's ``stop`` (its bestmove then awaited)."""
        if self._pending_hit:
            self._ponder_hit()
            return
        assert self._proc is not None and self._loop is not None
        self._drop_ponder_step()
        self._ponder_heard = None
        self._ponder_step = _STOPPING
        self._proc.write_nowait(["stop"])
        self._watchdog.arm(self._loop, self._ponder_call,
                           self._patient(self.config.ping_timeout), self._stop_stalled)

    def _ponder_hit(self) -> None:
        """``ponderhit``: the ponder search goes on as the move's, its clock from now."""
        asked = self._asked
        assert asked is not None and self._proc is not None and self._loop is not None
        self._drop_ponder_step()
        self._ponder_call.close()  # the search is the move's now: its bestmove is the reply
        self._ponder_search = self._ponder_heard = None
        self._asked = None
        self._hit = True
        self._call.open()
        self._reply = self._call
        self._reply_sent_at = self._proc.write_nowait(["ponderhit"])
        self._watchdog.arm(self._loop, self._call, asked[2], self._stalled_words)

    def _real_search(self, hit: bool) -> None:
        """The real ``position`` and ``go`` after a ponder search that ended unused."""
        asked = self._asked
        assert asked is not None and self._proc is not None and self._loop is not None
        self._asked = None
        moves, clocks, timeout = asked
        setup, white_to_move = self._checked_turn(moves)
        lines = self._go_lines(setup, moves, clocks, white_to_move, self._call)
        self._hit = hit
        self._reply_sent_at = self._proc.write_nowait(lines)
        self._watchdog.arm(self._loop, self._call, timeout, self._stalled_words)

    def _ponder_ended(self, reply: EngineReply) -> None:
        """The ponder search's bestmove (after ``stop``, or before ``ponderhit``): dropped,
        and the real search asked for."""
        hit = self._ponder_step == _WAITING and self._pending_hit
        if self._ponder_step == _WAITING:
            self._proc_note("bestmove while pondering, before ponderhit or stop: dropped")
        self._drop_ponder_step()
        self._watchdog.disarm()
        self._ponder_search = self._ponder_heard = None
        try:
            self._real_search(hit)
        except BaseException as exc:  # the engine gone meanwhile: the request's fault
            self._call_failed(exc)

    def _ponder_failed(self, exc: BaseException) -> None:
        """The ponder search's fault (the engine ended, or no bestmove after ``stop``): the
        request's."""
        self._drop_ponder_step()
        self._ponder_search = self._ponder_heard = None
        self._asked = None
        self._call_failed(exc)

    def _abandon_ponder_step(self) -> None:
        """A game ends or begins: a callback-driven request's ponder step is given up (its
        search's bestmove, if it comes, is ignored as an abandoned search's)."""
        if self._ponder_search is self._ponder_call:
            self._ponder_call.close()
            self._ponder_search = None
        self._drop_ponder_step()
        self._asked = None
        if self._pondered is None:
            self._ponder_heard = None

    def _drop_ponder_step(self) -> None:
        """No ponder step waits any longer (its timer cancelled)."""
        self._ponder_step = _IDLE
        timer, self._ponder_timer = self._ponder_timer, None
        if timer is not None:
            timer.cancel()

    def _stop_stalled(self) -> str:
        """What a stall after a miss's ``stop`` says (as `_end_ponder` words it)."""
        return f"{self.name}: no bestmove after stop while pondering"
