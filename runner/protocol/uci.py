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
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from runner.protocol.engine import (
    ClockState,
    EngineConfig,
    EngineError,
    EngineOption,
    EngineReply,
    GameSetup,
    SearchInfo,
    Variant,
)
from runner.protocol.options import check_submitted, find_declared
from runner.protocol.pipe import PipeEngine
from runner.protocol.transport import EngineTransport, Line
from runner.protocol.uci_parse import (
    UciInfo,
    format_go,
    format_position,
    option_value,
    parse_bestmove,
    parse_info,
    parse_option,
)

__all__ = ["UciEngine"]

_MESSAGES_KEPT = 20
_AMBIGUOUS_NAME = re.compile(r"(?:^|\s)(?:name|value)(?:\s|$)")


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
        settings = self._settings()
        if settings:
            await self._send(*settings)
        self._started(began)

    async def new_game(self, setup: GameSetup) -> None:
        """``ucinewgame`` (and ``UCI_Chess960`` when the variant changes), then ``isready``."""
        self._check_alive()
        chess960 = setup.variant is Variant.FISCHERANDOM
        lines: list[str] = []
        if chess960 != bool(self._chess960):
            declared = self._find_option("UCI_Chess960")
            if chess960 and declared is None:
                raise ValueError(f"engine {self.name} does not play fischerandom "
                                 "(it declares no UCI_Chess960 option)")
            if declared is not None:
                lines.append(f"setoption name {declared.name} value "
                             f"{'true' if chess960 else 'false'}")
        self._chess960 = chess960
        if self.config.ponder:
            self._proc_note("pondering is not supported over UCI; the engine plays without")
        lines.append("ucinewgame")
        lines.extend(self.config.init_strings)
        self._setup = setup
        self._info = None
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
        self._begin_search()
        self._score_is_bound = False
        lines = [self._position(setup.start_fen, moves),
                 format_go(setup.time_control, clocks, white_to_move)]
        self._searches += 1
        return await self._await_reply(lines, timeout, "no bestmove")

    async def ping(self) -> float | None:
        """``isready`` until ``readyok``; the latency in seconds."""
        self._check_alive()
        return await self._ready(self.config.ping_timeout)

    async def end_game(self, result: str, comment: str = "",
                       moves: Sequence[str] = ()) -> None:
        """UCI has no result command: a search still running is stopped with ``stop``."""
        if not self._running:
            return
        if self._searches > 0:
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

    def _find_option(self, name: str) -> EngineOption | None:
        """A declared option by name (UCI names are not case-sensitive)."""
        option = self._options.get(name)
        if option is not None:
            return option
        lowered = name.lower()
        for declared in self._options.values():
            if declared.name.lower() == lowered:
                return declared
        return None

    def _settings(self) -> list[str]:
        """``setoption`` lines: memory and cores as Hash and Threads, then configured options."""
        cfg = self.config
        wanted: list[tuple[str, object]] = []
        if cfg.memory_mb is not None and self._find_option("Hash") is not None:
            wanted.append(("Hash", cfg.memory_mb))
        if cfg.cores is not None and self._find_option("Threads") is not None:
            wanted.append(("Threads", cfg.cores))
        submitted = {name for name, _ in cfg.options.items()} if cfg.options_submitted else set()
        wanted.extend(cfg.options.items())
        lines = []
        for name, value in wanted:
            option = find_declared(self.name, name, self._options, self._find_option)
            if name in submitted:
                check_submitted(self.name, option, str(value))
            if _AMBIGUOUS_NAME.search(option.name):
                # "setoption name A value B": a name holding the word "name" or "value" would
                # be read differently by the engine than it declared it.
                raise ValueError(f"engine {self.name}: option {option.name!r} holds the word "
                                 "'name' or 'value' and cannot be set unambiguously")
            try:
                wire = option_value(option, value)
            except ValueError as exc:
                raise ValueError(f"engine {self.name}: {exc}") from None
            self.option_values[option.name] = wire
            if wire is None:
                lines.append(f"setoption name {option.name}")
            elif wire == "":
                lines.append(f"setoption name {option.name} value")
            else:
                lines.append(f"setoption name {option.name} value {wire}")
        return lines

    # ----------------------------------------------------------------- reading

    def _waiters(self) -> Iterable[asyncio.Future[Any] | None]:
        """The bestmove, the uciok and the readyoks awaited."""
        return (self._reply, self._uciok, *self._ready_waiters.values())

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
            return
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
        self._info = self._merged(info)

    def _merged(self, info: UciInfo) -> SearchInfo:
        """The latest report with this line's fields; an exact score is not replaced by a
        bound (fail-high/low lines) from the same search."""
        old = self._info or SearchInfo()
        score_cp, mate = old.score_cp, old.mate
        if info.has_score and (info.bound is None or self._score_is_bound
                               or (old.score_cp is None and old.mate is None)):
            score_cp, mate = info.score_cp, info.mate
            self._score_is_bound = info.bound is not None
        return SearchInfo(
            depth=info.depth if info.depth is not None else old.depth,
            score_cp=score_cp, mate=mate,
            time=info.time if info.time is not None else old.time,
            nodes=info.nodes if info.nodes is not None else old.nodes,
            pv=info.pv or old.pv,
            seldepth=info.seldepth if info.seldepth is not None else old.seldepth,
            nps=info.nps if info.nps is not None else old.nps,
            hashfull=info.hashfull if info.hashfull is not None else old.hashfull,
            tbhits=info.tbhits if info.tbhits is not None else old.tbhits,
        )

    def _handle_bestmove(self, line: Line, text: str) -> None:
        if self._searches <= 0:
            self._proc_note("bestmove without a search ignored")
            return
        self._searches -= 1
        reply = self._reply
        if self._searches > 0 or reply is None or reply.done():
            self._proc_note("bestmove of an abandoned search ignored")
            return
        move, ponder = parse_bestmove(text)
        if ponder is not None:
            self._messages.append(f"ponder {ponder}")
        reply.set_result(EngineReply(
            move=move, info=self._info, sent_at=self._reply_sent_at, received_at=line.time,
            messages=tuple(self._messages), words=text.strip() if move == "0000" else None,
        ))

    # ----------------------------------------------------------------- waiting

    async def _synchronise(self) -> None:
        """``isready``/``readyok``: the engine has done everything sent before."""
        await self._ready(self._patient(self.config.ping_timeout))

    async def _ready(self, timeout: float) -> float:
        self._ready_sent += 1
        return await self._round_trip(self._ready_waiters, self._ready_sent, "isready",
                                      timeout, "no readyok")
