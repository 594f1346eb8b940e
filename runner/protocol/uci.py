"""`UciEngine`: the Universal Chess Interface, behind the same `Engine` interface as CECP.

One background task reads every line the engine prints and updates state (``id``,
``option`` declarations, ``uciok``, ``readyok`` counts, the search info, the awaited
``bestmove``); the public coroutines write commands and wait on that state with explicit
timeouts.  UCI is stateless about the game: every move request sends the whole position
(``position ... moves ...``) and the clocks (``go wtime ... btime ...``).  Moves cross in
coordinate form; in Chess960 (``UCI_Chess960``) castling is king-takes-rook, which is the
form the caller's rules core writes for Chess960 boards, so moves pass through unchanged.
The wire parsers (`parse_option`, `parse_info`, `parse_bestmove`) are pure functions.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass

from runner.clock import TimeControl
from runner.protocol.engine import (
    ClockState,
    Engine,
    EngineConfig,
    EngineError,
    EngineReply,
    GameSetup,
    SearchInfo,
    TranscriptEntry,
    Variant,
)
from runner.protocol.process import EngineProcess, EngineTransport, Line
from runner.protocol.waiting import OutputState, wait_answer

__all__ = [
    "OPTION_TYPES",
    "UciEngine",
    "UciInfo",
    "UciOption",
    "format_go",
    "format_position",
    "parse_bestmove",
    "parse_info",
    "parse_option",
]

OPTION_TYPES = frozenset({"check", "spin", "combo", "button", "string"})
"""The option types UCI declares."""

_OPTION_KEYWORDS = frozenset({"default", "min", "max", "var"})
_INT_FIELDS = frozenset({"depth", "seldepth", "nodes", "nps", "time", "hashfull", "tbhits",
                         "sbhits", "multipv", "currmovenumber", "cpuload"})
_MOVE_RE = re.compile(r"^(?:[a-h][1-8][a-h][1-8][qrbnk]?|0000)$")
_NULL_MOVES = frozenset({"0000", "(none)", "none", "null"})
_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off"})
_MESSAGES_KEPT = 20
_NO_LIMIT_MS = 86_400_000  # untimed, no depth or nodes: a day per move (CECP sends st 86400)


# ----------------------------------------------------------------------------- wire parsers


@dataclass(frozen=True)
class UciOption:
    """One ``option`` declaration: name, type, default, min/max (spin) and vars (combo)."""

    name: str
    type: str
    default: str | None = None
    min: int | None = None
    max: int | None = None
    vars: tuple[str, ...] = ()

    def check(self, value: object) -> str | None:
        """The value as it goes on the wire (None: a button, no value); ValueError if bad."""
        text = _option_text(value)
        if "\n" in text or "\r" in text:
            raise ValueError(f"option {self.name!r}: a value may not contain a line break")
        if self.type == "button":
            if text not in ("", "true", "True"):
                raise ValueError(f"option {self.name!r} is a button: it takes no value, not {text!r}")
            return None
        if self.type == "check":
            lowered = text.strip().lower()
            if lowered in _TRUE:
                return "true"
            if lowered in _FALSE:
                return "false"
            raise ValueError(f"option {self.name!r} is a check: true or false, not {text!r}")
        if self.type == "spin":
            try:
                number = int(text.strip())
            except ValueError:
                raise ValueError(f"option {self.name!r} is a spin: an integer, not {text!r}") from None
            if (self.min is not None and number < self.min) or \
                    (self.max is not None and number > self.max):
                raise ValueError(f"option {self.name!r}: {number} is outside "
                                 f"{self.min}..{self.max}")
            return str(number)
        if self.type == "combo":
            for choice in self.vars:
                if choice.lower() == text.strip().lower():
                    return choice
            raise ValueError(f"option {self.name!r}: {text!r} is not one of "
                             f"{', '.join(self.vars)}")
        return text  # string


def _option_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def parse_option(text: str) -> UciOption:
    """Parse ``option name N type T [default D] [min m] [max M] [var V]*``; ValueError if bad.

    Names and values may hold spaces: a name runs up to ``type``, a value up to the next
    keyword.  An empty default (``default`` alone, or ``<empty>``) is the empty string.
    """
    tokens = text.split()
    if len(tokens) < 2 or tokens[0] != "option" or tokens[1] != "name":
        raise ValueError(f"not an option declaration: {text!r}")
    try:
        type_at = tokens.index("type", 2)
    except ValueError:
        raise ValueError(f"option declaration without a type: {text!r}") from None
    name = " ".join(tokens[2:type_at])
    if not name or type_at + 1 >= len(tokens):
        raise ValueError(f"option declaration without a name or type: {text!r}")
    kind = tokens[type_at + 1]
    if kind not in OPTION_TYPES:
        raise ValueError(f"option {name!r}: unknown type {kind!r}")
    fields: dict[str, list[str]] = {}
    vars_: list[str] = []
    key: str | None = None
    words: list[str] = []

    def close() -> None:
        if key == "var":
            vars_.append(" ".join(words))
        elif key is not None:
            fields[key] = words

    for token in tokens[type_at + 2:]:
        if token in _OPTION_KEYWORDS:
            close()
            key, words = token, []
        elif key is not None:
            words.append(token)
    close()
    default = None
    if "default" in fields:
        default = " ".join(fields["default"])
        if default == "<empty>":
            default = ""
    return UciOption(name, kind, default, _option_int(name, fields.get("min")),
                     _option_int(name, fields.get("max")), tuple(vars_))


def _option_int(name: str, words: list[str] | None) -> int | None:
    if not words:
        return None
    try:
        return int(words[0])
    except ValueError:
        raise ValueError(f"option {name!r}: bound {words[0]!r} is not an integer") from None


@dataclass(frozen=True)
class UciInfo:
    """One ``info`` line, parsed (fields absent from the line are None)."""

    depth: int | None = None
    seldepth: int | None = None
    score_cp: int | None = None
    mate: int | None = None
    bound: str | None = None
    """``lower`` or ``upper`` when the score is only a bound, else None."""
    nodes: int | None = None
    nps: int | None = None
    time: float | None = None
    """Seconds (UCI sends milliseconds)."""
    hashfull: int | None = None
    tbhits: int | None = None
    multipv: int | None = None
    pv: tuple[str, ...] = ()
    currmove: str | None = None
    string: str | None = None

    @property
    def has_score(self) -> bool:
        """Whether the line carried a score."""
        return self.score_cp is not None or self.mate is not None


def parse_info(text: str) -> UciInfo:
    """Parse an ``info`` line leniently: unknown or malformed fields are skipped, never fatal."""
    tokens = text.split()
    values: dict[str, object] = {}
    index = 1 if tokens and tokens[0] == "info" else 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if token == "string":
            values["string"] = text.split("string", 1)[1].strip()
            break
        if token in _INT_FIELDS:
            if index < len(tokens):
                with contextlib.suppress(ValueError):
                    values[token] = int(tokens[index])
                index += 1
        elif token == "score":
            while index < len(tokens) and tokens[index] in ("cp", "mate", "lowerbound",
                                                            "upperbound"):
                word = tokens[index]
                index += 1
                if word in ("lowerbound", "upperbound"):
                    values["bound"] = word[:5]
                elif index < len(tokens):
                    with contextlib.suppress(ValueError):
                        values["score_cp" if word == "cp" else "mate"] = int(tokens[index])
                    index += 1
        elif token in ("pv", "refutation", "currline"):
            moves = []
            while index < len(tokens) and _MOVE_RE.match(tokens[index].lower()):
                moves.append(tokens[index].lower())
                index += 1
            if token == "pv":
                values["pv"] = tuple(moves)
        elif token == "currmove" and index < len(tokens):
            values["currmove"] = tokens[index]
            index += 1
        elif token == "wdl":
            index += 3
    ms = values.pop("time", None)
    values.pop("sbhits", None)
    values.pop("currmovenumber", None)
    values.pop("cpuload", None)
    return UciInfo(**values, time=ms / 1000.0 if isinstance(ms, int) else None)  # type: ignore[arg-type]


def parse_bestmove(text: str) -> tuple[str, str | None]:
    """``bestmove X [ponder Y]`` -> (X, Y); a null answer (``(none)``, ``0000``, nothing)
    comes back as ``0000``, which no legal position accepts as a move."""
    tokens = text.split()
    move = tokens[1] if len(tokens) > 1 else "0000"
    if move.lower() in _NULL_MOVES:
        move = "0000"
    elif _MOVE_RE.match(move.lower()):
        move = move.lower()
    ponder = None
    if len(tokens) > 3 and tokens[2] == "ponder":
        ponder = tokens[3]
    return move, ponder


# ----------------------------------------------------------------------------- formatting


def format_position(start_fen: str | None, moves: Sequence[str]) -> str:
    """``position startpos|fen FEN [moves ...]``."""
    head = "position startpos" if start_fen is None else f"position fen {start_fen}"
    return f"{head} moves {' '.join(moves)}" if moves else head


def format_go(tc: TimeControl, clocks: ClockState, white_to_move: bool) -> str:
    """The ``go`` command for a time control and the clocks when the engine must move.

    The opponent's increment comes from `clocks` (the engine's own when it is not given);
    depth and node limits combine with any clock.
    """
    parts = ["go"]
    if tc.move_time is not None:
        parts += ["movetime", str(_milliseconds(tc.move_time))]
    elif tc.periods and clocks.own is not None:
        increment = tc.period(clocks.period).increment
        own, other = ("w", "b") if white_to_move else ("b", "w")
        parts += [f"{own}time", str(_milliseconds(clocks.own))]
        if clocks.opponent is not None:
            parts += [f"{other}time", str(_milliseconds(clocks.opponent))]
        if increment:
            parts += [f"{own}inc", str(_milliseconds(increment))]
        if clocks.opponent is not None:
            other_increment = (increment if clocks.opponent_increment is None
                               else clocks.opponent_increment)
            if other_increment:
                parts += [f"{other}inc", str(_milliseconds(other_increment))]
        if clocks.moves_to_go is not None:
            parts += ["movestogo", str(max(1, clocks.moves_to_go))]
    if tc.depth is not None:
        parts += ["depth", str(tc.depth)]
    if tc.nodes is not None:
        parts += ["nodes", str(tc.nodes)]
    if len(parts) == 1:
        parts += ["movetime", str(_NO_LIMIT_MS)]
    return " ".join(parts)


def _milliseconds(seconds: float) -> int:
    return max(0, round(seconds * 1000))


# ----------------------------------------------------------------------------- the engine


class UciEngine(Engine):
    """An engine spoken to in UCI over pipes."""

    def __init__(self, config: EngineConfig, *, transport: EngineTransport | None = None) -> None:
        """`transport` replaces the subprocess (a scripted double in tests, say)."""
        self.config = config
        self._transport = transport
        self.id_name: str | None = None
        self.id_author: str | None = None
        self.options: dict[str, UciOption] = {}
        self.option_values: dict[str, str | None] = {}
        """What was sent with ``setoption`` (declared spelling -> wire value)."""
        self.startup_seconds: float | None = None
        self._proc: EngineTransport | None = None
        self._output = OutputState()
        self._uciok: asyncio.Future[float] | None = None
        self._ready_sent = 0
        self._ready_seen = 0
        self._ready_waiters: dict[int, asyncio.Future[float]] = {}
        self._reply: asyncio.Future[EngineReply] | None = None
        self._reply_sent_at = 0.0
        self._searches = 0  # ``go`` sent minus ``bestmove`` read: one bestmove per go
        self._info: SearchInfo | None = None
        self._score_is_bound = False
        self._messages: list[str] = []
        self._setup: GameSetup | None = None
        self._chess960: bool | None = None
        self._position_cache: tuple[list[str], str] = ([], "")
        self._position_fen: str | None = None

    # ----------------------------------------------------------------- Engine API

    @property
    def name(self) -> str:
        """The configured name, else the engine's ``id name``."""
        return self.config.name or self.id_name or self.config.argv[0]

    @property
    def transcript(self) -> Sequence[TranscriptEntry]:
        """Sent and received lines with monotonic times (bounded)."""
        return tuple(self._proc.transcript) if self._proc is not None else ()

    @property
    def pid(self) -> int | None:
        """The engine's process id while it runs."""
        return self._proc.pid if self._proc is not None else None

    async def start(self) -> None:
        """Spawn the engine, ``uci`` until ``uciok``, and set the configured options.

        ``isready`` follows in `new_game`, so that an engine that never answers it is
        scored as a stall in its first game.  An option the engine did not declare, or a
        value its declaration forbids, is a configuration error (ValueError), raised before
        anything is sent.
        """
        began = time.monotonic()
        cfg = self.config
        self._proc = self._transport or EngineProcess(
            cfg.argv, cwd=cfg.working_dir, env=cfg.env, line_limit=cfg.line_limit,
            stderr_limit=cfg.stderr_limit, stderr_log=cfg.stderr_log,
            transcript_size=cfg.transcript_size,
        )
        self._transport = None
        await self._proc.start()
        self._uciok = asyncio.get_running_loop().create_future()
        self._output.begin()
        self._proc.listen(self._on_lines, self._on_end)
        await self._send("uci")
        await self._wait(self._uciok, cfg.start_timeout, "no uciok")
        self._proc.note(f"uciok after {time.monotonic() - began:.3f} s, "
                        f"{len(self.options)} options declared")
        settings = self._settings()
        if settings:
            await self._send(*settings)
        self.startup_seconds = time.monotonic() - began

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
        to_move = setup.first_to_move if len(moves) % 2 == 0 else setup.first_to_move.other
        if to_move is not setup.side:
            raise ValueError(
                f"it is {to_move.value}'s turn, but {self.name} plays {setup.side.value}")
        white_to_move = to_move.value == "white"
        self._reply = asyncio.get_running_loop().create_future()
        self._info = None
        self._score_is_bound = False
        self._messages = []
        lines = [self._position(setup.start_fen, moves),
                 format_go(setup.time_control, clocks, white_to_move)]
        self._searches += 1
        try:
            sent_at = await self._send(*lines)
            self._reply_sent_at = sent_at
            reply = await self._wait(self._reply, timeout, "no bestmove")
        finally:
            self._reply = None
        if reply.sent_at != sent_at:  # the answer was read before the write had drained
            reply = dataclasses.replace(reply, sent_at=sent_at)
        return reply

    async def ping(self) -> float | None:
        """``isready`` until ``readyok``; the latency in seconds."""
        self._check_alive()
        return await self._ready(self.config.ping_timeout)

    async def end_game(self, result: str, comment: str = "") -> None:
        """UCI has no result command: a search still running is stopped with ``stop``."""
        if self._proc is None or not self._proc.running:
            return
        if self._searches > 0:
            with contextlib.suppress(EngineError):
                await self._send("stop")
        self._setup = None

    async def quit(self) -> int | None:
        """``quit``, then SIGTERM and SIGKILL to the group."""
        if self._proc is None:
            return None
        self._output.stop(self.name)
        return await self._proc.stop(
            "quit", quit_timeout=self.config.quit_timeout,
            terminate_timeout=self.config.terminate_timeout, use_sigterm=True,
        )

    async def kill(self) -> int | None:
        """SIGKILL the engine's process group and reap it."""
        if self._proc is None:
            return None
        self._output.stop(self.name)
        return await self._proc.kill()

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

    def _find_option(self, name: str) -> UciOption | None:
        """A declared option by name (UCI names are not case-sensitive)."""
        option = self.options.get(name)
        if option is not None:
            return option
        lowered = name.lower()
        for declared in self.options.values():
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
        wanted.extend(cfg.options.items())
        lines = []
        for name, value in wanted:
            option = self._find_option(name)
            if option is None:
                known = ", ".join(sorted(self.options)) or "none"
                raise ValueError(f"engine {self.name}: no option {name!r} "
                                 f"(the engine declares: {known})")
            wire = option.check(value)
            self.option_values[option.name] = wire
            if wire is None:
                lines.append(f"setoption name {option.name}")
            elif wire == "":
                lines.append(f"setoption name {option.name} value")
            else:
                lines.append(f"setoption name {option.name} value {wire}")
        return lines

    # ----------------------------------------------------------------- reading

    def _on_lines(self, lines: list[Line]) -> None:
        """Act on each line of a chunk of output, as it arrives (see EngineTransport.listen)."""
        for line in lines:
            self._handle(line)

    def _on_end(self, exc: EngineError) -> None:
        """The output ended or broke a limit: whoever waits for an answer gets `exc`."""
        self._output.end(exc, (self._reply, self._uciok, *self._ready_waiters.values()))

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
                    self.options[option.name] = option
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
            messages=tuple(self._messages),
        ))

    # ----------------------------------------------------------------- waiting

    async def _synchronise(self) -> None:
        """``isready``/``readyok``: the engine has done everything sent before."""
        await self._ready(self._patient(self.config.ping_timeout))

    async def _ready(self, timeout: float) -> float:
        self._ready_sent += 1
        number = self._ready_sent
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._ready_waiters[number] = future
        try:
            sent = await self._send("isready")
            ready_at = await self._wait(future, timeout, "no readyok")
        finally:
            self._ready_waiters.pop(number, None)
        return max(0.0, ready_at - sent)

    def _patient(self, timeout: float) -> float:
        """Engines that showed a long start-up get a proportionally longer wait."""
        return max(timeout, 2.0 * (self.startup_seconds or 0.0))

    async def _wait(self, future: asyncio.Future, timeout: float | None, what: str):
        """Await one of our own futures; EngineStalled after `timeout`."""
        return await wait_answer(future, timeout, f"{self.name}: {what}")

    def _check_alive(self) -> None:
        self._output.check(self.name)

    def _require_game(self) -> GameSetup:
        if self._setup is None:
            raise RuntimeError("play() called outside a game: call new_game() first")
        return self._setup

    async def _send(self, *lines: str) -> float:
        assert self._proc is not None
        return await self._proc.write_lines(lines)

    def _proc_note(self, text: str) -> None:
        if self._proc is not None:
            self._proc.note(text)
