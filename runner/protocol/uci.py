"""`UciEngine`: the Universal Chess Interface, behind the same `Engine` interface as CECP.

The engine's lines update the client's state from the pipe's read callback (`UciReading`,
uci_reading.py); here are the commands, and the public coroutines that write them and wait
on that state with explicit timeouts.  UCI is stateless about the game: every move request
sends the whole position (``position ... moves ...``) and the clocks (``go wtime ...
btime ...``).  Moves cross in coordinate form; in Chess960 (``UCI_Chess960``) castling is
king-takes-rook, which is the form the caller's rules core writes for Chess960 boards, so
moves pass through unchanged.
The wire parsers and formatters are pure functions in `uci_parse`.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Sequence

from runner.protocol.engine import (
    ClockState,
    EngineConfig,
    EngineError,
    EngineReply,
    EngineStalled,
    GameSetup,
    Side,
)
from runner.protocol.uci_parse import (
    find_option,
    format_go,
    format_position,
)
from runner.protocol.uci_reading import UciReading
from runner.protocol.uci_settings import setoption_line, settings_lines
from runner.protocol.waiting import ReplyCall
from runner.types import Variant

__all__ = ["UciEngine"]

_PONDER_START = 0.5
"""Seconds a ponder hit waits at most, off the clock, for the ponder search's first report:
Debian's Ethereal never ends a search whose ``ponderhit`` came before it began (10 times in
10 when sent at once after ``go ponder``)."""


class UciEngine(UciReading):
    """An engine spoken to in UCI over pipes."""

    async def start(self) -> None:
        """Spawn the engine, ``uci`` until ``uciok``, and set the configured options.

        ``isready`` follows in `new_game`, so that an engine that never answers it is
        scored as a stall in its first game.  An option the engine did not declare, or a
        value its declaration forbids, is a configuration error (ValueError), raised before
        anything is sent.
        """
        began = time.monotonic()
        proc = await self._spawn()
        self._uciok = asyncio.get_running_loop().create_future()
        self._listen(proc)
        await self._send("uci")
        await self._wait(self._uciok, self.config.start_timeout, "no uciok")
        proc.note(f"uciok after {time.monotonic() - began:.3f} s, "
                        f"{len(self._options)} options declared")
        if settings := self._option_commands():
            await self._send(*settings)
        self._started(began)

    def _option_commands(self, cfg: EngineConfig | None = None) -> list[str]:
        """``setoption`` lines for `cfg`'s options (default: the configuration's), recorded."""
        lines, values = settings_lines(self.name, cfg or self.config, self._options)
        self.option_values.update(values)
        return lines

    async def new_game(self, setup: GameSetup) -> None:
        """``ucinewgame`` (and ``UCI_Chess960`` when the variant changes), then ``isready``."""
        self._check_alive()
        chess960 = setup.variant is Variant.FISCHERANDOM
        lines: list[str] = []
        if chess960 != bool(self._chess960):
            declared = find_option(self._options, "UCI_Chess960")
            if chess960 and declared is None:
                raise ValueError(f"engine {self.name} does not play fischerandom "
                                 "(it declares no UCI_Chess960 option)")
            if declared is not None:
                lines.append(f"setoption name {declared.name} value "
                             f"{'true' if chess960 else 'false'}")
        self._chess960 = chess960
        lines.append("ucinewgame")
        declared = find_option(self._options, "Ponder")
        if declared is not None:  # as cutechess-cli: after ucinewgame, on or off, every game
            lines.append(setoption_line(declared.name, "true" if self.config.ponder else "false"))
        elif self.config.ponder:
            self._proc_note("the engine declares no Ponder option; it plays without pondering")
        self._may_ponder = self.config.ponder and declared is not None
        lines.extend(self.config.init_strings)
        self._setup = setup
        self._forget_info()
        self._ponder_move = None
        if self._pondered is not None:  # a game left without end_game: its ponder search ends
            await self._end_ponder(False)
        await self._send(*lines)
        await self._synchronise()

    async def play(
        self,
        moves: Sequence[str],
        clocks: ClockState,
        *,
        timeout: float | None = None,
        opponent_offers_draw: bool = False,
    ) -> EngineReply:
        """Send the position and the clocks, ``go``, and return the ``bestmove``.

        UCI has no draw offers: `opponent_offers_draw` is not passed on, and replies never
        carry a claim, a resignation or an offer.
        """
        setup = self._require_game()
        self._check_alive()
        if list(moves[:len(setup.moves)]) != list(setup.moves):
            raise ValueError("moves do not extend the moves the game started from")
        white_to_move = self._check_turn(setup, moves)
        if self._pondered is not None:
            search, hit = self._ponder_search, self._pondered == list(moves)
            if await self._end_ponder(hit):  # the ponder search goes on as the real one
                self._reply = search
                reply = await self._await_reply(("ponderhit",), timeout, "no bestmove")
                return dataclasses.replace(reply, ponder_hit=True)
            reply = await self._search(setup, moves, clocks, white_to_move, timeout)
            return dataclasses.replace(reply, ponder_hit=hit)
        return await self._search(setup, moves, clocks, white_to_move, timeout)

    async def _search(self, setup: GameSetup, moves: Sequence[str], clocks: ClockState,
                      white_to_move: bool, timeout: float | None) -> EngineReply:
        """``position`` and ``go``, and the ``bestmove``."""
        lines = self._go_lines(setup, moves, clocks, white_to_move, None)
        return await self._await_reply(lines, timeout, "no bestmove")

    def _go_lines(self, setup: GameSetup, moves: Sequence[str], clocks: ClockState,
                  white_to_move: bool, call: ReplyCall | None) -> list[str]:
        """``position`` and ``go``; the search begun."""
        self._begin_search(call)
        self._score_is_bound = False
        self._searches += 1
        return [self._position(setup.start_fen, moves),
                format_go(setup.time_control, clocks, white_to_move)]

    def _search_lines(self, moves: Sequence[str], clocks: ClockState,
                      opponent_offers_draw: bool) -> list[str] | None:
        """`play`'s request for `request_move`; None when pondering is on (its ``ponderhit``
        and ``stop`` steps are awaited in `play` and `ponder`)."""
        if self._may_ponder or self._pondered is not None:
            return None
        setup = self._require_game()
        self._check_alive()
        opening = setup.moves
        if opening and tuple(moves[:len(opening)]) != opening:
            raise ValueError("moves do not extend the moves the game started from")
        white_to_move = self._check_turn(setup, moves)
        return self._go_lines(setup, moves, clocks, white_to_move, self._call)

    def _stalled_words(self) -> str:
        """What a move request's stall says."""
        return f"{self.name}: no bestmove"

    async def ponder(self, moves: Sequence[str], clocks: ClockState) -> None:
        """``position`` with the expected reply and ``go ponder`` with the clocks as they
        stand (the engine's own after its move): the bestmove is awaited only in `play`."""
        setup = self._require_game()
        expected, self._ponder_move = self._ponder_move, None
        if expected is None or not self._may_ponder or self._pondered is not None:
            return
        self._check_alive()
        pondered = [*moves, expected]
        self._begin_search()
        self._score_is_bound = False
        assert isinstance(self._reply, asyncio.Future)
        self._ponder_search, self._reply = self._reply, None
        self._ponder_heard = asyncio.get_running_loop().create_future()
        self._pondered = pondered
        self._searches += 1
        await self._send(self._position(setup.start_fen, pondered),
                         format_go(setup.time_control, clocks, setup.side is Side.WHITE,
                                   ponder=True))

    async def _end_ponder(self, hit: bool) -> bool:
        """The ponder search is over: True when it goes on (a hit, still searching); else it
        is stopped and its bestmove read and dropped (a miss, or the game's end).  A crash
        while pondering is raised here; a bestmove that never comes is EngineStalled."""
        search, heard = self._ponder_search, self._ponder_heard
        assert search is not None and heard is not None
        self._pondered = self._ponder_heard = None
        try:
            if hit and not search.done() and not heard.done():  # see _PONDER_START
                with contextlib.suppress(EngineStalled):
                    await self._wait(heard, _PONDER_START, "no report from the ponder search")
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

    async def ping(self) -> float | None:
        """``isready`` until ``readyok``; the latency in seconds."""
        self._check_alive()
        return await self._ready(self.config.ping_timeout)

    async def end_game(self, result: str, comment: str = "",
                       moves: Sequence[str] = ()) -> None:
        """UCI has no result command: a search still running is stopped with ``stop`` (a
        ponder search's bestmove is awaited too, so the next game starts clean)."""
        self._ponder_move = None
        if self._pondered is not None:  # stopped and drained (a dead engine's fault read)
            with contextlib.suppress(EngineError):
                await self._end_ponder(False)
        elif not self._running:
            return
        elif self._searches > 0:
            with contextlib.suppress(EngineError):
                await self._send("stop")
        self._setup = None

    def _position(self, start_fen: str | None, moves: Sequence[str]) -> str:
        """`format_position`, extended by the new moves when the game only grew (the line
        is rebuilt once per game instead of once per move)."""
        known, text = self._position_cache
        count = len(known)
        if text and start_fen == self._position_fen and len(moves) >= count \
                and list(moves[:count]) == known:
            added = list(moves[count:])
            if added:
                text += (" " if count else " moves ") + " ".join(added)
        else:
            text = format_position(start_fen, moves)
        self._position_cache = (list(moves), text)
        self._position_fen = start_fen
        return text

    # ----------------------------------------------------------------- waiting

    async def _synchronise(self) -> None:
        """``isready``/``readyok``: the engine has done everything sent before."""
        await self._ready(self._patient(self.config.ping_timeout))

    async def _ready(self, timeout: float) -> float:
        self._ready_sent += 1
        return await self._round_trip(self._ready_waiters, self._ready_sent, "isready",
                                      timeout, "no readyok")

