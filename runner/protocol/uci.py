"""`UciEngine`: the Universal Chess Interface, behind the same `Engine` interface as CECP.

One background task reads every line the engine prints and updates state (``id``,
``option`` declarations, ``uciok``, ``readyok`` counts, the search info, the awaited
``bestmove``); the public coroutines write commands and wait on that state with explicit
timeouts.  UCI is stateless about the game: every move request sends the whole position
(``position ... moves ...``) and the clocks (``go wtime ... btime ...``).  Moves cross in
coordinate form; in Chess960 (``UCI_Chess960``) castling is king-takes-rook, which is the
form the caller's rules core writes for Chess960 boards, so moves pass through unchanged.
The wire parsers and formatters are pure functions in `uci_parse`.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from runner.protocol.engine import (
    ClockState,
    EngineConfig,
    EngineError,
    EngineOption,
    EngineReply,
    EngineStalled,
    GameSetup,
    Side,
)
from runner.protocol.pipe import PipeEngine
from runner.protocol.transport import EngineTransport, Line
from runner.protocol.uci_parse import (
    find_option,
    format_go,
    format_position,
    merge_info,
    parse_bestmove,
    parse_info,
    parse_option,
)
from runner.protocol.uci_settings import setoption_line, settings_lines
from runner.types import Variant

__all__ = ["UciEngine"]

_PONDER_START = 0.5
"""Seconds a ponder hit waits at most, off the clock, for the ponder search's first report:
Debian's Ethereal never ends a search whose ``ponderhit`` came before it began (10 times in
10 when sent at once after ``go ponder``)."""

_MESSAGES_KEPT = 20


class UciEngine(PipeEngine):
    """An engine spoken to in UCI over pipes."""

    def __init__(self, config: EngineConfig, *, transport: EngineTransport | None = None) -> None:
        """`transport` replaces the subprocess (a scripted double in tests, say)."""
        super().__init__(config, transport)
        self.id_name: str | None = None
        self.id_author: str | None = None
        self._options: dict[str, EngineOption] = {}
        self.option_values: dict[str, str | None] = {}
        """What was sent with ``setoption`` (declared spelling -> wire value)."""
        self._uciok: asyncio.Future[float] | None = None
        self._ready_sent = 0
        self._ready_seen = 0
        self._ready_waiters: dict[int, asyncio.Future[float]] = {}
        self._searches = 0  # ``go`` sent minus ``bestmove`` read: one bestmove per go
        self._score_is_bound = False
        self._chess960: bool | None = None
        self._position_cache: tuple[list[str], str] = ([], "")
        self._position_fen: str | None = None
        self._ponder_move: str | None = None  # the reply the last bestmove expects
        self._may_ponder = False  # ponder=true and the engine declares Ponder (as cutechess)
        self._pondered: list[str] | None = None
        """The moves of the position a running ``go ponder`` searches (the expected reply last)."""
        self._ponder_search: asyncio.Future[EngineReply] | None = None
        self._ponder_heard: asyncio.Future[None] | None = None  # its first info line came

    # ----------------------------------------------------------------- Engine API

    @property
    def features(self) -> Mapping[str, str]:
        """UCI has no features: always empty."""
        return {}

    @property
    def options(self) -> dict[str, EngineOption]:
        """The options the engine declared before ``uciok``."""
        return self._options

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
        self._info = None
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
        self._begin_search()
        self._score_is_bound = False
        lines = [self._position(setup.start_fen, moves),
                 format_go(setup.time_control, clocks, white_to_move)]
        self._searches += 1
        return await self._await_reply(lines, timeout, "no bestmove")

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

    # ----------------------------------------------------------------- options

    # ----------------------------------------------------------------- reading

    def _waiters(self) -> Iterable[asyncio.Future[Any] | None]:
        """The bestmove, the uciok and the readyoks awaited."""
        return (self._reply, self._ponder_search, self._uciok, *self._ready_waiters.values())

    def _self_name(self) -> str | None:
        """The name in ``id name ...``."""
        return self.id_name

    def _handle(self, line: Line) -> None:
        text = line.text.strip()
        head, _, rest = text.partition(" ")
        if head == "info":
            self._handle_info(rest)
        elif head == "bestmove":
            self._handle_bestmove(line, text)
        elif head == "readyok":
            self._ready_seen += 1
            waiter = self._ready_waiters.get(self._ready_seen)
            if waiter is not None and not waiter.done():
                waiter.set_result(line.time)
        elif head == "option":
            if self._uciok is not None and not self._uciok.done():
                try:
                    option = parse_option(text)
                except ValueError as exc:
                    self._proc_note(f"option declaration ignored: {exc}")
                else:
                    self._options[option.name] = option
        elif head == "id":
            key, _, value = rest.strip().partition(" ")
            if key == "name":
                self.id_name = value.strip()
            elif key == "author":
                self.id_author = value.strip()
        elif head == "uciok":
            if self._uciok is not None and not self._uciok.done():
                self._uciok.set_result(line.time)
        elif head in ("copyprotection", "registration") and "error" in rest:
            self._proc_note(f"the engine reports {text!r}; playing on")

    def _handle_info(self, rest: str) -> None:
        if self._reply is None:
            heard = self._ponder_heard
            if heard is None:
                return
            if not heard.done():
                heard.set_result(None)
        if rest.startswith("string "):  # Stockfish's NNUE note, every search: no fields to parse
            if len(self._messages) < _MESSAGES_KEPT:
                self._messages.append(f"info string {rest[7:].strip()}")
            return
        info = parse_info(rest)
        if info.string is not None:
            if len(self._messages) < _MESSAGES_KEPT:
                self._messages.append(f"info string {info.string}")
            return
        if info.multipv not in (None, 1):
            return
        self._info, self._score_is_bound = merge_info(self._info, info, self._score_is_bound)

    def _handle_bestmove(self, line: Line, text: str) -> None:
        if self._searches <= 0:
            self._proc_note("bestmove without a search ignored")
            return
        self._searches -= 1
        reply = self._reply or self._ponder_search
        if self._searches > 0 or reply is None or reply.done():
            self._proc_note("bestmove of an abandoned search ignored")
            return
        move, ponder = parse_bestmove(text)
        if ponder is not None:
            self._messages.append(f"ponder {ponder}")
        self._ponder_move = ponder if self._may_ponder and reply is self._reply else None
        reply.set_result(EngineReply(
            move=move, info=self._info, sent_at=self._reply_sent_at, received_at=line.time,
            messages=tuple(self._messages), words=text.strip() if move == "0000" else None,
            ponder_move=self._ponder_move,
        ))

    # ----------------------------------------------------------------- waiting

    async def _synchronise(self) -> None:
        """``isready``/``readyok``: the engine has done everything sent before."""
        await self._ready(self._patient(self.config.ping_timeout))

    async def _ready(self, timeout: float) -> float:
        self._ready_sent += 1
        return await self._round_trip(self._ready_waiters, self._ready_sent, "isready",
                                      timeout, "no readyok")
