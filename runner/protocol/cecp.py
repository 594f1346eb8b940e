"""`CecpEngine`: the Chess Engine Communication Protocol (xboard/winboard, version 2).

One background task reads every line the engine prints and updates state (features,
pongs, the latest search info, the move awaited); the public coroutines write commands
and wait on that state with explicit timeouts.  Line parsing lives in `cecp_parse`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import math
import re
import signal
import time
from collections.abc import Sequence

from runner.clock import TimeControl
from runner.protocol.cecp_parse import (
    Castling960,
    Chess960Writer,
    DrawOffer,
    ErrorReport,
    FeatureLine,
    IllegalMoveReport,
    MoveLine,
    OptionSpec,
    Pong,
    Resign,
    ResultLine,
    Tell,
    ThinkingLine,
    is_coordinate_move,
    match_thinking,
    parse_engine_line,
    parse_features,
    parse_option,
    parse_thinking,
    thinking_info,
)
from runner.protocol.engine import (
    ClockState,
    Engine,
    EngineConfig,
    EngineError,
    EngineProtocolError,
    EngineReply,
    EngineStalled,
    GameSetup,
    ResultClaim,
    SearchInfo,
    Side,
    TranscriptEntry,
    Variant,
)
from runner.protocol.process import EngineProcess, EngineTransport, Line
from runner.protocol.waiting import OutputState, wait_answer

__all__ = [
    "Castling960",
    "CecpEngine",
    "CecpFeatures",
    "format_level",
    "format_seconds_arg",
    "parse_engine_line",
    "parse_features",
    "parse_option",
    "parse_thinking",
]

# Features we implement and therefore accept; anything else is rejected.
_ACCEPTED = frozenset(
    {
        "ping", "setboard", "playother", "usermove", "time", "draw", "sigint", "sigterm",
        "reuse", "analyze", "myname", "variants", "colors", "ics", "name", "pause", "nps",
        "debug", "memory", "smp", "egt", "option", "exclude", "setscore", "san",
    }
)
# Ping probes for an engine quiet before done=1: the first after `_PROBE_AFTER` seconds without
# a line, then at intervals growing from `_PROBE_INTERVAL` to 1 s.  gnuchess 6.2.7 (-x) stays
# stuck at start-up until input arrives, a few lines per burst of features (see _negotiate):
# probed from the first 2 s wait on, one start in 25 took 7.5 s here.
_PROBE_AFTER = 0.25
_PROBE_INTERVAL = 0.05
_PIECE_LETTERS = frozenset("PNBRQK")


class CecpFeatures:
    """Feature values an engine announced, with the protocol's defaults."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}
        self.options: dict[str, OptionSpec] = {}
        self.seen_any = False
        self.done: int | None = None

    def flag(self, name: str, default: bool) -> bool:
        """A boolean feature (``1``/``0``), or its default when the engine said nothing."""
        value = self.values.get(name)
        return default if value is None else value.strip() == "1"

    def text(self, name: str) -> str | None:
        """A string feature, or None when the engine did not set it."""
        return self.values.get(name)

    @property
    def variants(self) -> tuple[str, ...] | None:
        """The variants the engine plays, None if it did not say (then: all)."""
        value = self.values.get("variants")
        return None if value is None else tuple(v.strip() for v in value.split(",") if v.strip())


class CecpEngine(Engine):
    """An engine spoken to in CECP over pipes."""

    def __init__(self, config: EngineConfig, *, transport: EngineTransport | None = None,
                 castling960: Castling960 | None = None) -> None:
        """`transport` replaces the subprocess (a scripted double in tests, say);
        `castling960` is how Chess960 castling is sent, by default the configuration's
        ``castling960`` (the spec's O-O/O-O-O unless it says ``kxr``)."""
        self.config = config
        self.castling960 = castling960 or Castling960(config.castling960)
        self._transport_given = transport
        self.features = CecpFeatures()
        self.startup_seconds: float | None = None
        self.games_started = 0
        self._proc: EngineTransport | None = None
        self._output = OutputState()
        self._changed = asyncio.Event()
        self._ping_counter = itertools.count(1)
        self._pongs: dict[int, asyncio.Future[float]] = {}
        self._reply: asyncio.Future[EngineReply] | None = None
        self._reply_sent_at = 0.0
        self._info: SearchInfo | None = None
        self._info_match: re.Match[str] | None = None  # the latest thinking line, not parsed yet
        self._draw_offered = False
        self._messages: list[str] = []
        self._pending_end: EngineReply | None = None
        self._moves_known: list[str] = []
        self._own_moves: list[int] = []  # indices of own moves not yet in the caller's notation
        self._setup: GameSetup | None = None
        self._forced = True
        self._thinking = False
        self._period_sent = 0
        self._last_line_at: float | None = None
        self._done0_at = 0.0
        self._rejection: EngineProtocolError | None = None
        self._refused_depth: str | None = None
        self._last_move: str | None = None
        self._chess960: Chess960Writer | None = None
        self._chess960_played = 0  # moves of the game the Chess960 writer has followed
        self._rewritten: set[str] = set()  # moves sent in another form than the caller's

    # ----------------------------------------------------------------- Engine API

    @property
    def name(self) -> str:
        """The configured name, else the engine's ``myname``."""
        return self.config.name or self.features.text("myname") or self.config.argv[0]

    @property
    def transcript(self) -> Sequence[TranscriptEntry]:
        """Sent and received lines with monotonic times (bounded)."""
        return tuple(self._proc.transcript) if self._proc is not None else ()

    @property
    def pid(self) -> int | None:
        """The engine's process id while it runs."""
        return self._proc.pid if self._proc is not None else None

    async def start(self) -> None:
        """Spawn the engine and negotiate features (``xboard``, ``protover 2``, ``done``).

        An engine that sends no feature within ``silent_restart_after`` seconds, and nothing
        else either or only pongs (a protocol-1 engine would not know ping), is killed and
        spawned again, up to
        ``silent_start_retries`` times (see `_negotiate` for the engine that needs it); the
        last attempt waits the full ``start_timeout`` and then assumes protocol 1.
        """
        began = time.monotonic()
        cfg = self.config
        attempts = 1 + (cfg.silent_start_retries if self._transport_given is None else 0)
        silent_for: list[float] = []
        for attempt in range(1, attempts + 1):
            attempt_began = time.monotonic()
            self._proc = self._transport_given or EngineProcess(
                cfg.argv, cwd=cfg.working_dir, env=cfg.env, line_limit=cfg.line_limit,
                stderr_limit=cfg.stderr_limit, stderr_log=cfg.stderr_log,
                transcript_size=cfg.transcript_size,
            )
            self._transport_given = None  # a restart (reuse=0) spawns a real process
            await self._proc.start()
            for seconds in silent_for:
                self._proc.note(f"a previous process sent no features in {seconds:.1f} s "
                                "(nothing at all, or only pongs) and was killed")
            self._last_line_at = None
            self._output.begin()
            self._proc.listen(self._on_lines, self._on_end)
            await self._send("xboard", "protover 2")
            last = attempt == attempts
            stuck = await self._negotiate(
                attempt_began, None if last else attempt_began + cfg.silent_restart_after)
            if not stuck:
                break
            silent_for.append(time.monotonic() - attempt_began)
            await self.kill()
            self.features = CecpFeatures()
            self._pongs.clear()
        for name, value in cfg.options.items():
            if self.features.options and name not in self.features.options:
                self._proc.note(f"option {name!r} was not declared by the engine; sent anyway")
            await self._send(f"option {name}={value}" if value != "" else f"option {name}")
        self.startup_seconds = time.monotonic() - began

    async def new_game(self, setup: GameSetup) -> None:
        """Reset the engine for a game: position, variant, time control; then synchronise."""
        if setup.time_control.nodes is not None:
            raise ValueError("CECP has no node limit; use st=, depth= or a clock for CECP engines")
        if self.games_started and not self.features.flag("reuse", True):
            await self._restart()
        self._check_alive()
        await self._await_late_features()
        variants = self.features.variants
        if setup.variant is Variant.FISCHERANDOM and variants is not None \
                and "fischerandom" not in variants:
            raise ValueError(f"engine {self.name} does not play fischerandom (variants={variants})")
        self.games_started += 1
        self._setup = setup
        self._moves_known = []
        self._own_moves = []
        self._last_move = None
        self._rejection = None
        self._refused_depth = None
        self._rewritten = set()
        self._chess960 = None
        self._chess960_played = 0
        if setup.variant is Variant.FISCHERANDOM:
            self._chess960 = Chess960Writer(setup.start_fen, self.castling960)
        self._pending_end = None
        self._info = None
        self._info_match = None
        self._draw_offered = False
        self._period_sent = 0
        cfg = self.config
        lines: list[str] = []
        if cfg.memory_mb is not None and self.features.flag("memory", False):
            lines.append(f"memory {cfg.memory_mb}")
        if cfg.cores is not None and self.features.flag("smp", False):
            lines.append(f"cores {cfg.cores}")
        lines.append("new")
        lines.extend(cfg.init_strings)
        if setup.variant is Variant.FISCHERANDOM:
            lines.append("variant fischerandom")
        lines.append("force")
        self._forced = True
        lines.extend(self._time_control_commands(setup.time_control))
        lines.append("post")
        lines.append("hard" if cfg.ponder else "easy")
        # No "computer": fairymax, gnuchess and phalanx reject it as an unknown command, and
        # fairymax 5.0b-1+b1 (Debian 12) then crashes with SIGSEGV about one time in two (it
        # parses the word as a move). Users who want it can list it in init_strings.
        if setup.opponent and self.features.flag("name", False):
            lines.append(f"name {setup.opponent}")
        if setup.start_fen is not None:
            lines.extend(self._position_commands(setup.start_fen))
        await self._send(*lines)
        if setup.moves:
            await self._send(*(self._move_command(m) for m in self._wire_moves(setup.moves, 0)))
            self._moves_known = list(setup.moves)
        await self._synchronise()
        if self._refused_depth is not None:
            # gnuchess 6.2.7 ("Invalid move: sd 3") and phalanx XXII know no "sd": the game
            # would run on "st 86400" alone, a day per move. Every game would fail alike, so
            # this is a set-up error, like a variant the engine does not play.
            raise ValueError(
                f"engine {self.name} cannot play to a fixed depth: it answered "
                f"{self._refused_depth!r} to 'sd {setup.time_control.depth}'; give it a clock "
                "or a move time instead (or an init string it understands)")
        # Whatever the engine printed before the pong (a late claim of the last game, say)
        # belongs to the old game.
        self._pending_end = None
        self._draw_offered = False

    async def play(
        self,
        moves: Sequence[str],
        clocks: ClockState,
        *,
        timeout: float | None = None,
        opponent_offers_draw: bool = False,
    ) -> EngineReply:
        """Send the moves the engine has not seen, let it think, and return its reply."""
        setup = self._require_game()
        self._check_alive()
        self._check_rejection()
        if self._pending_end is not None:
            reply, self._pending_end = self._pending_end, None
            return reply
        known = len(self._moves_known)
        if self._own_moves:
            # The engine's own moves come back in the caller's notation (e.g. 'O-O' as 'e1g1').
            pending = []
            for index in self._own_moves:
                if index < len(moves):
                    self._moves_known[index] = moves[index]
                else:
                    pending.append(index)
            self._own_moves = pending
        prefix = moves[:known]
        if (prefix if isinstance(prefix, list) else list(prefix)) != self._moves_known:
            raise ValueError("moves do not extend the moves already sent to the engine")
        to_move = setup.first_to_move if len(moves) % 2 == 0 else setup.first_to_move.other
        if to_move is not setup.side:
            raise ValueError(
                f"it is {to_move.value}'s turn, but {self.name} plays {setup.side.value}")
        new_moves = self._wire_moves(moves, known)
        loop = asyncio.get_running_loop()
        self._reply = loop.create_future()
        self._info = None
        self._info_match = None
        self._messages = []
        lines: list[str] = []
        if opponent_offers_draw and self.features.flag("draw", True):
            lines.append("draw")
        lines.extend(self._clock_commands(setup.time_control, clocks))
        if self._forced or len(new_moves) != 1:
            if not self._forced:
                lines.append("force")
            lines.extend(self._move_command(m) for m in new_moves)
            if self.features.flag("colors", True):
                lines.append(setup.side.value)
            lines.append("go")
        else:
            lines.append(self._move_command(new_moves[0]))
        self._moves_known.extend(moves[known:])
        self._forced = False
        self._thinking = True
        sent_at = 0.0
        try:
            sent_at = await self._send(*lines)
            self._reply_sent_at = sent_at
            reply = await self._wait(self._reply, timeout, "no move")
        finally:
            self._reply = None
        self._thinking = False
        if reply.sent_at != sent_at:
            reply = dataclasses.replace(reply, sent_at=sent_at)
        if reply.move is not None:
            self._own_moves.append(len(self._moves_known))
            self._moves_known.append(reply.move)
        return reply

    async def ping(self) -> float | None:
        """Send ``ping N`` and wait for ``pong N``; latency in seconds, None without ping."""
        self._check_alive()
        if not self.features.flag("ping", False):
            return None
        return await self._ping(self.config.ping_timeout)

    async def end_game(self, result: str, comment: str = "") -> None:
        """Send ``result`` and ``force``; a search still running is interrupted first."""
        if self._proc is None or not self._proc.running:
            return
        if self._thinking and self.features.flag("sigint", True):
            self._proc.send_signal(signal.SIGINT)
        text = f"result {result}" + (f" {{{comment}}}" if comment else "")
        with contextlib.suppress(EngineError):
            await self._send(text, "force")
        self._forced = True
        self._thinking = False
        self._setup = None

    async def quit(self) -> int | None:
        """``quit``, then SIGTERM (if the engine allows it) and SIGKILL to the group."""
        if self._proc is None:
            return None
        self._output.stop(self.name)
        return await self._proc.stop(
            "quit",
            quit_timeout=self.config.quit_timeout,
            terminate_timeout=self.config.terminate_timeout,
            use_sigterm=self.features.flag("sigterm", True),
        )

    async def kill(self) -> int | None:
        """SIGKILL the engine's process group and reap it."""
        if self._proc is None:
            return None
        self._output.stop(self.name)
        return await self._proc.kill()

    # ----------------------------------------------------------------- start-up

    async def _negotiate(self, began: float, silent_limit: float | None = None) -> bool:
        """Wait for ``done=1``: 2 s by default, longer after ``done=0``, probing quiet engines.

        Until ``done=1``, an engine quiet for a moment (`_PROBE_AFTER` at first, then a
        slowly growing interval from `_PROBE_INTERVAL` up to 1 s) gets a ``ping``.  An engine
        silent after the default wait may be a protocol-1 engine or a slow or stuck one;
        no features until ``start_timeout`` means protocol 1.  Silence is never fatal here:
        only an exit, or ``done=0`` without ``done=1`` in ``feature_done_timeout``, is.  With
        `silent_limit`, an engine without features by then that printed nothing at all, or
        only pongs, is given up on: True is returned and the caller restarts it.

        gnuchess 6.2.7 (-x) needs the probes: after "protover 2" it answers nothing until more
        input arrives, and then only part of its features, a few lines of input at a time (its
        input thread holds the stdin lock in fgets() while its adapter thread waits for it in
        setbuf(stdin); every line read releases the lock for a moment).
        """
        cfg = self.config
        nudges: list[int] = []
        last_probe: float | None = None
        stuck = False
        while self.features.done != 1:
            now = time.monotonic()
            if self.features.done == 0:
                deadline = self._done0_at + cfg.feature_done_timeout
                if now >= deadline:
                    raise EngineStalled("engine said done=0 but never done=1", now - began)
            elif self.features.seen_any:
                deadline = began + cfg.feature_timeout
                if now >= deadline:
                    break  # features without done=1: the default two-second rule
            else:
                if now >= began + cfg.start_timeout:
                    break
                # A pong means a v2 engine (v1 has no ping) whose features are late: gnuchess
                # answers pings from one thread while another, stuck, owes the features.
                ponged = any(self._pongs[n].done() for n in nudges)
                if silent_limit is not None and now >= silent_limit \
                        and (self._last_line_at is None or ponged):
                    stuck = True
                    break
                deadline = min(began + cfg.start_timeout, silent_limit or math.inf)
            if last_probe is None:
                next_probe = max(began, self._last_line_at or began) + _PROBE_AFTER
            else:
                gap = _PROBE_INTERVAL if len(nudges) < 100 else 1.0
                next_probe = max(last_probe, self._last_line_at or began) + gap
            if now >= next_probe:
                number = next(self._ping_counter)
                nudges.append(number)
                self._pongs[number] = asyncio.get_running_loop().create_future()
                await self._send(f"ping {number}")
                last_probe = time.monotonic()
                continue
            await self._wait_changed(min(deadline, next_probe) - time.monotonic())
        for number in nudges:
            self._pongs.pop(number, None)
        complete = self.features.done == 1
        self._proc_note(
            f"features {'complete' if complete else 'missing' if stuck else 'assumed (v1 defaults)'}"
            f"{f' after {len(nudges)} ping probe(s)' if nudges else ''}"
        )
        return stuck

    async def _await_late_features(self) -> None:
        """If the engine sent ``done=0`` late (after start-up), wait for its ``done=1``."""
        began = time.monotonic()
        while self.features.done == 0:
            remaining = self._done0_at + self.config.feature_done_timeout - time.monotonic()
            if remaining <= 0:
                raise EngineStalled("engine said done=0 but never done=1",
                                    time.monotonic() - began)
            await self._wait_changed(remaining)

    async def _restart(self) -> None:
        """reuse=0: a fresh process for every game."""
        await self.quit()
        self.features = CecpFeatures()
        self._pongs.clear()
        await self.start()

    # ----------------------------------------------------------------- commands

    def _wire_moves(self, moves: Sequence[str], first: int) -> list[str]:
        """``moves[first:]`` as the engine reads them: in Chess960, castling in the configured
        form (the writer also follows the moves before `first`, the engine's own included)."""
        writer = self._chess960
        if writer is None:
            return list(moves[first:])
        wire = [writer.write(m) for m in moves[self._chess960_played:]]
        self._chess960_played = len(moves)
        sent = wire[len(wire) - (len(moves) - first):] if len(moves) > first else []
        self._rewritten.update(w for w, m in zip(sent, moves[first:], strict=True) if w != m)
        return sent

    def _move_command(self, move: str) -> str:
        return f"usermove {move}" if self.features.flag("usermove", False) else move

    def _time_control_commands(self, tc: TimeControl) -> list[str]:
        lines = []
        if tc.periods:
            period = tc.periods[0]
            lines.append(format_level(period.moves, period.base, period.increment))
        elif tc.move_time is not None and tc.move_time == int(tc.move_time):
            lines.append(f"st {int(tc.move_time)}")
        elif tc.move_time is not None:
            # Fractional st is not portable (hoichess exits, sjeng reads 0 and thinks for
            # seconds): one move per session, the budget given by ``time`` before each move.
            lines.append(format_level(1, tc.move_time, 0.0))
        else:
            lines.append("st 86400")  # depth-only or infinite: no practical time limit
        if tc.depth is not None:
            lines.append(f"sd {tc.depth}")
        if self.config.nps is not None and self.features.flag("nps", True):
            lines.append(f"nps {self.config.nps}")
        return lines

    def _clock_commands(self, tc: TimeControl, clocks: ClockState) -> list[str]:
        lines = []
        if tc.periods and clocks.period != self._period_sent and clocks.own is not None:
            period = tc.period(clocks.period)
            moves = clocks.moves_to_go if clocks.moves_to_go is not None else period.moves
            lines.append(format_level(moves, max(clocks.own, 0.0), period.increment))
            self._period_sent = clocks.period
        own, opponent = clocks.own, clocks.opponent
        if tc.move_time is not None:
            own = opponent = tc.move_time
        if self.features.flag("time", True) and own is not None:
            lines.append(f"time {_centiseconds(own)}")
            if opponent is not None:
                lines.append(f"otim {_centiseconds(opponent)}")
        return lines

    def _position_commands(self, fen: str) -> list[str]:
        if self.features.flag("setboard", False):
            return [f"setboard {fen}"]
        return _edit_commands(fen)

    # ----------------------------------------------------------------- reading

    def _on_lines(self, lines: list[Line]) -> None:
        """Act on each line of a chunk of output, as it arrives (see EngineTransport.listen)."""
        for line in lines:
            features = self._handle(line)
            if features:
                self._handle_features(features)
        self._changed.set()

    def _on_end(self, exc: EngineError) -> None:
        """The output ended or broke a limit: whoever waits for an answer gets `exc`."""
        self._output.end(exc, (self._reply, *self._pongs.values()))
        self._changed.set()

    def _handle(self, line: Line) -> tuple[tuple[str, str], ...] | None:
        """Act on one line; a feature line's pairs are returned for `_handle_features`."""
        self._last_line_at = line.time
        text = line.text
        head = text[:1]
        if head == "#":
            return None  # an engine's comment line
        if self._thinking and (head == " " or head.isdigit()):
            # Thinking output, several lines a move: only the last one is parsed, at the move.
            match = match_thinking(text)
            if match is not None:
                self._info_match = match
                return None
        parsed = parse_engine_line(text)
        match parsed:
            case FeatureLine(pairs=pairs):
                return pairs
            case Pong(number=number):
                future = self._pongs.get(number)
                if future is not None and not future.done():
                    future.set_result(line.time)
            case ThinkingLine(info=info):
                if self._thinking:
                    self._info = info
                    self._info_match = None
            case MoveLine(move=move):
                self._deliver(line, move=move)
            case Resign():
                self._deliver(line, resigned=True)
            case ResultLine(result=result, comment=comment):
                claim = ResultClaim(result, comment, len(self._moves_known))
                self._deliver(line, claim=claim, resigned=self._is_resignation(result, comment))
            case DrawOffer():
                self._draw_offered = True
            case IllegalMoveReport(move=move):
                self._messages.append(line.text)
                self._note_refused(move, line.text)
                word = move.split()[-1] if move else ""
                if word and (word in self._moves_known or word in self._rewritten):
                    self._rejection = EngineProtocolError(
                        f"{self.name} rejected a move the arbiter accepted: {line.text!r}")
                    self._fail_reply(self._rejection)
            case ErrorReport(command=command):
                self._messages.append(line.text)
                self._note_refused(command, line.text)
            case Tell():
                self._messages.append(line.text)
            case _:
                pass
        return None

    def _handle_features(self, pairs: tuple[tuple[str, str], ...]) -> None:
        """Record the features of one line and answer each (``accepted``/``rejected``)."""
        answers = []
        for name, value in pairs:
            if name == "done":
                self.features.done = 1 if value.strip() == "1" else 0
                if self.features.done == 0:
                    self._done0_at = time.monotonic()
                continue
            self.features.seen_any = True
            if name == "option":
                try:
                    spec = parse_option(value)
                except ValueError:
                    answers.append(f"rejected option {value}")
                    continue
                self.features.options[spec.name] = spec
                answers.append("accepted option")
                continue
            if name == "san" and value.strip() == "1":
                # We send coordinate moves only; engines still may print SAN (flagged).
                answers.append("rejected san")
                continue
            if name in _ACCEPTED:
                self.features.values[name] = value
                answers.append(f"accepted {name}")
            else:
                answers.append(f"rejected {name}")
        if answers and self._proc is not None:
            with contextlib.suppress(EngineError):
                self._proc.write_nowait(answers)

    def _search_info(self) -> SearchInfo | None:
        """The search information of the latest thinking line of this move."""
        if self._info_match is not None:
            self._info = thinking_info(self._info_match)
            self._info_match = None
        return self._info

    def _deliver(self, line: Line, *, move: str | None = None, resigned: bool = False,
                 claim: ResultClaim | None = None) -> None:
        """A move, a resignation or a claim: the reply to `play`, or kept for the next call."""
        reply_future = self._reply
        if move is not None and (reply_future is None or reply_future.done()):
            return  # the second form of a move already taken (gnuchess prints two), or unasked
        if move is not None:
            move = move.lower() if is_coordinate_move(move.lower()) else move
            if move == self._last_move:
                # An engine never plays the same move twice in a row (the piece has left the
                # square): this is a late echo of its previous move ("My move is : ..."), and
                # stays one however many times it is repeated.
                return
            self._last_move = move
        reply = EngineReply(
            move=move,
            move_is_san=move is not None and not is_coordinate_move(move),
            info=self._search_info(),
            resigned=resigned,
            claim=claim,
            draw_offered=self._draw_offered,
            sent_at=self._reply_sent_at,
            received_at=line.time,
            messages=tuple(self._messages),
        )
        if move is not None or resigned or claim is not None:
            self._draw_offered = False
        if reply_future is not None and not reply_future.done():
            reply_future.set_result(reply)
        elif self._setup is not None and self._pending_end is None:
            self._pending_end = reply

    def _note_refused(self, command: str, text: str) -> None:
        """Remember a refused ``sd``: the engine would otherwise ignore a depth limit."""
        words = command.split()
        if words and words[0] == "sd" and self._setup is not None \
                and self._setup.time_control.depth is not None:
            self._refused_depth = text

    def _is_resignation(self, result: str, comment: str) -> bool:
        if "resign" not in comment.lower() or self._setup is None:
            return False
        losing = {"1-0": Side.BLACK, "0-1": Side.WHITE}.get(result)
        return losing is self._setup.side

    def _fail_reply(self, exc: EngineError) -> None:
        if self._reply is not None and not self._reply.done():
            self._reply.set_exception(exc)

    # ----------------------------------------------------------------- waiting

    async def _synchronise(self) -> None:
        """After ``new``/``setboard``: ``ping``/``pong``, or a conservative pause without ping."""
        await self._await_late_features()
        if self.features.flag("ping", False):
            await self._ping(self.config.ping_timeout)
        else:
            await asyncio.sleep(self.config.no_ping_delay)
            self._check_alive()
        self._check_rejection()

    def _check_rejection(self) -> None:
        if self._rejection is not None:
            raise self._rejection

    async def _ping(self, timeout: float) -> float:
        number = next(self._ping_counter)
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._pongs[number] = future
        try:
            sent = await self._send(f"ping {number}")
            pong_at = await self._wait(future, self._patient(timeout), f"no pong {number}")
        finally:
            self._pongs.pop(number, None)
        return max(0.0, pong_at - sent)

    def _patient(self, timeout: float) -> float:
        """Engines that showed a long start-up get a proportionally longer ping wait."""
        return max(timeout, 2.0 * (self.startup_seconds or 0.0))

    async def _wait(self, future: asyncio.Future, timeout: float | None, what: str):
        """Await one of our own futures; EngineStalled after `timeout`."""
        return await wait_answer(future, timeout, f"{self.name}: {what}")

    async def _wait_changed(self, timeout: float) -> None:
        self._changed.clear()
        self._check_alive()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._changed.wait(), max(timeout, 0.0))
        self._check_alive()

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


def format_seconds_arg(seconds: float) -> str:
    """Seconds for ``st``: whole numbers bare, fractions kept (never truncated to 0)."""
    if seconds == int(seconds):
        return str(int(seconds))
    return f"{seconds:.3f}".rstrip("0").rstrip(".")


def format_level(moves: int, base_seconds: float, increment: float) -> str:
    """``level MPS BASE INC`` with BASE in minutes, or ``min:sec`` when not whole minutes."""
    whole = math.floor(base_seconds)
    if whole % 60 == 0 and whole == base_seconds and whole:
        base = str(whole // 60)
    else:
        whole = max(whole, 1)
        base = f"{whole // 60}:{whole % 60:02d}"
    return f"level {moves} {base} {format_seconds_arg(increment)}"


def _centiseconds(seconds: float) -> int:
    return max(0, round(seconds * 100))


def _edit_commands(fen: str) -> list[str]:
    """The old ``edit`` idiom for engines without ``setboard``.

    Castling rights are implied by kings and rooks on their home squares and en passant
    is lost: the limits of ``edit`` itself.  Black to move uses the specification's
    ``a2a3`` kludge before ``edit`` (which does not change the side to move).
    """
    fields = fen.split()
    placement = fields[0]
    black_to_move = len(fields) > 1 and fields[1] == "b"
    white: list[str] = []
    black: list[str] = []
    ranks = placement.split("/")
    if len(ranks) != 8:
        raise ValueError(f"bad FEN placement {placement!r}")
    for rank_index, rank in enumerate(ranks):
        file = 0
        for char in rank:
            if char.isdigit():
                file += int(char)
                continue
            square = f"{'abcdefgh'[file]}{8 - rank_index}"
            if char.upper() not in _PIECE_LETTERS or file > 7:
                raise ValueError(f"bad FEN placement {placement!r}")
            (white if char.isupper() else black).append(f"{char.upper()}{square}")
            file += 1
    lines = ["a2a3"] if black_to_move else []
    lines += ["edit", "#", *white, "c", *black, "."]
    return lines
