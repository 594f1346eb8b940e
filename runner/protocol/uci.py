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
    GameSetup,
)
from runner.protocol.uci_parse import (
    find_option,
)
from runner.protocol.uci_search import UciSearch
from runner.protocol.uci_settings import setoption_line, settings_lines
from runner.types import Variant

__all__ = ["UciEngine"]


class UciEngine(UciSearch):
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
        self._abandon_ponder_step()
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

    def _stalled_words(self) -> str:
        """What a move request's stall says."""
        return f"{self.name}: no bestmove"

    async def ping(self) -> float | None:
        """``isready`` until ``readyok``; the latency in seconds."""
        self._check_alive()
        return await self._ready(self.config.ping_timeout)

    async def end_game(self, result: str, comment: str = "",
                       moves: Sequence[str] = ()) -> None:
        """UCI has no result command: a search still running is stopped with ``stop`` (a
        ponder search's bestmove is awaited too, so the next game starts clean)."""
        self._ponder_move = None
        self._abandon_ponder_step()
        if self._pondered is not None:  # stopped and drained (a dead engine's fault read)
            with contextlib.suppress(EngineError):
                await self._end_ponder(False)
        elif not self._running:
            return
        elif self._searches > 0:
            with contextlib.suppress(EngineError):
                await self._send("stop")
        self._setup = None

    # ----------------------------------------------------------------- waiting

    async def _synchronise(self) -> None:
        """``isready``/``readyok``: the engine has done everything sent before."""
        await self._ready(self._patient(self.config.ping_timeout))

    async def _ready(self, timeout: float) -> float:
        self._ready_sent += 1
        return await self._round_trip(self._ready_waiters, self._ready_sent, "isready",
                                      timeout, "no readyok")

