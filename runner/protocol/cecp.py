"""`CecpEngine`: the Chess Engine Communication Protocol (xboard/winboard, version 2).

One background task reads every line the engine prints and updates state (features,
pongs, the latest search info, the move awaited); the public coroutines write commands
and wait on that state with explicit timeouts.  Line parsing lives in `cecp_parse`.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import os
import re
import signal
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from runner.protocol.cecp_commands import option_command
from runner.protocol.cecp_dialogue import (
    ending_commands,
    game_commands,
    move_lines,
    position_refusal,
    search_commands,
    unseen_from,
)
from runner.protocol.cecp_features import CecpFeatures
from runner.protocol.cecp_parse import (
    Castling960,
    Chess960Writer,
    DrawOffer,
    ErrorReport,
    FeatureLine,
    IllegalMoveReport,
    MoveLine,
    Pong,
    Resign,
    ResultLine,
    Tell,
    ThinkingLine,
    is_coordinate_move,
    match_thinking,
    parse_engine_line,
    thinking_info,
)
from runner.protocol.engine import (
    CecpDialogue,
    ClockState,
    EngineConfig,
    EngineError,
    EngineOption,
    EngineProtocolError,
    EngineReply,
    EngineStalled,
    GameSetup,
    ResultClaim,
    SearchInfo,
    Side,
)
from runner.protocol.options import check_submitted, find_declared
from runner.protocol.pipe import PipeEngine
from runner.protocol.process import EngineProcess
from runner.protocol.transport import EngineTransport, Line
from runner.types import Variant

__all__ = ["Castling960", "CecpEngine", "CecpFeatures"]

# Ping probes for an engine quiet before done=1: the first after `_PROBE_AFTER` seconds without
# a line, then at intervals growing from `_PROBE_INTERVAL` to 1 s.  gnuchess 6.2.7 (-x) stays
# stuck at start-up until input arrives, a few lines per burst of features (see _negotiate):
# probing only after the first 2 s wait made its start-up take seconds now and then.
_PROBE_AFTER = 0.25
_PROBE_INTERVAL = 0.05


def _start_cpu() -> int:
    """The CPU a restarted engine starts on: the lowest this runner may use."""
    return min(os.sched_getaffinity(0))


class CecpEngine(PipeEngine):
    """An engine spoken to in CECP over pipes."""

    def __init__(self, config: EngineConfig, *, transport: EngineTransport | None = None,
                 castling960: Castling960 | None = None) -> None:
        """`transport` replaces the subprocess (a scripted double in tests, say);
        `castling960` is how Chess960 castling is sent, by default the configuration's
        ``castling960`` (the spec's O-O/O-O-O unless it says ``kxr``)."""
        super().__init__(config, transport)
        self.castling960 = castling960 or Castling960(config.castling960)
        self._features = CecpFeatures()
        self.games_started = 0
        self._changed = asyncio.Event()
        self._ping_counter = itertools.count(1)
        self._pongs: dict[int, asyncio.Future[float]] = {}
        self._info_match: re.Match[str] | None = None  # the latest thinking line, not parsed yet
        self._draw_offered = False
        self._pending_end: EngineReply | None = None
        self._moves_known: list[str] = []
        self._own_moves: list[int] = []  # indices of own moves not yet in the caller's notation
        self._forced = True
        self._thinking = False
        self._period_sent = 0
        self._last_line_at: float | None = None
        self._rejection: EngineProtocolError | None = None
        self._refused_depth: str | None = None
        self._last_move: str | None = None
        self._chess960: Chess960Writer | None = None
        self._chess960_played = 0  # moves of the game the Chess960 writer has followed
        self._rewritten: set[str] = set()  # moves sent in another form than the caller's

    # ----------------------------------------------------------------- Engine API

    @property
    def features(self) -> CecpFeatures:
        """The features the engine announced, with the protocol's defaults."""
        return self._features

    @property
    def options(self) -> Mapping[str, EngineOption]:
        """The options the engine declared with ``feature option=...``."""
        return self._features.options

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
            # A restart after a stuck start runs on one CPU until its features are in:
            # gnuchess 6.2.7 then starts at once (30 of 30 in 0.42-0.49 s on an idle machine,
            # against up to 12 s with restarts unpinned). See _negotiate.
            proc = await self._spawn(None if attempt == 1 else _start_cpu())
            for seconds in silent_for:
                proc.note(f"a previous process sent no features in {seconds:.1f} s "
                          "(nothing at all, or only pongs) and was killed")
            self._last_line_at = None
            self._listen(proc)
            # The lean dialogue says the init strings once, before anything else.
            early = cfg.init_strings if cfg.cecp_dialogue is CecpDialogue.LEAN else ()
            await self._send(*early, "xboard", "protover 2")
            last = attempt == attempts
            stuck = await self._negotiate(
                attempt_began, None if last else attempt_began + cfg.silent_restart_after)
            if isinstance(proc, EngineProcess):
                proc.release_cpu()
            if not stuck:
                break
            silent_for.append(time.monotonic() - attempt_began)
            await self.kill()
            self._features = CecpFeatures()
            self._pongs.clear()
        settings = self._option_commands()
        if settings:
            await self._send(*settings)
        self._started(began)

    def _option_commands(self, cfg: EngineConfig | None = None) -> list[str]:
        """``option NAME=VALUE`` for each configured option, every one declared by the engine
        (and, for a submitter's options, of a kind a submitter may set); ValueError, naming
        the engine and the option, before anything is sent otherwise."""
        cfg = cfg or self.config
        declared = self._features.options
        lines = []
        for name, value in cfg.options.items():
            option = find_declared(self.name, name, declared, declared.get)
            if cfg.options_submitted:
                check_submitted(self.name, option, value)
            try:
                lines.append(option_command(option, value))
            except ValueError as exc:
                raise ValueError(f"engine {self.name}: {exc}") from None
        return lines

    async def new_game(self, setup: GameSetup) -> None:
        """Reset the engine for a game: position, variant, time control; then synchronise."""
        if setup.time_control.nodes is not None:
            raise ValueError("CECP has no node limit; use st=, depth= or a clock for CECP engines")
        if self.games_started and not self._features.flag("reuse", True):
            await self._restart()
        self._check_alive()
        await self._await_late_features()
        variants = self._features.variants
        if setup.variant is Variant.FISCHERANDOM and variants is not None \
                and "fischerandom" not in variants:
            raise ValueError(f"engine {self.name} does not play fischerandom (variants={variants})")
        self._reset_game_state(setup)
        await self._send(*game_commands(self.config, setup, self._features))
        if setup.moves:
            await self._send(*move_lines(self._features, self._wire_moves(setup.moves, 0)))
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

    def _reset_game_state(self, setup: GameSetup) -> None:
        """Forget everything the previous game left behind and note the new game's setup."""
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
        self._forced = True  # the game's commands end in force mode

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
        self._check_turn(setup, moves)
        new_moves = self._wire_moves(moves, known)
        self._begin_search()
        self._info_match = None
        lines, self._period_sent = search_commands(
            self.config, setup, self._features, clocks, new_moves, forced=self._forced,
            draw_offered=opponent_offers_draw, period_sent=self._period_sent)
        self._moves_known.extend(moves[known:])
        self._forced = False
        self._thinking = True
        reply = await self._await_reply(lines, timeout, "no move")
        self._thinking = False
        if reply.move is not None:
            self._own_moves.append(len(self._moves_known))
            self._moves_known.append(reply.move)
        return reply

    async def ping(self) -> float | None:
        """Send ``ping N`` and wait for ``pong N``; latency in seconds, None without ping."""
        self._check_alive()
        if not self._features.flag("ping", False):
            return None
        return await self._ping(self.config.ping_timeout)

    async def end_game(self, result: str, comment: str = "",
                       moves: Sequence[str] = ()) -> None:
        """Stop a running search, tell the result (`ending_commands`); lean: await a ping."""
        if self._proc is None or not self._proc.running:
            return
        if self._thinking and self._features.flag("sigint", True):
            self._proc.send_signal(signal.SIGINT)
        lean = self.config.cecp_dialogue is CecpDialogue.LEAN
        first = unseen_from(self._moves_known, self._own_moves, moves) if lean else None
        unseen = self._wire_moves(moves, first) if first is not None and result != "*" else []
        lines = ending_commands(self.config, self._features, result, comment, unseen)
        with contextlib.suppress(EngineError):
            await self._send(*lines)
        self._forced = True
        self._thinking = False
        self._setup = None
        if lean and self._features.flag("ping", False):
            # Read before the next game or quit; no answer in time: quit all the same.
            with contextlib.suppress(EngineError, TimeoutError):
                await self._ping(self.config.ping_timeout)

    def _accepts_sigterm(self) -> bool:
        """``feature sigterm=0`` asks not to be sent SIGTERM."""
        return self._features.flag("sigterm", True)

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
        while self._features.done != 1:
            now = time.monotonic()
            if self._features.done == 0:
                deadline = self._features.done0_at + cfg.feature_done_timeout
                if now >= deadline:
                    raise EngineStalled("engine said done=0 but never done=1", now - began)
            elif self._features.seen_any:
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
        complete = self._features.done == 1
        self._proc_note(
            f"features {'complete' if complete else 'missing' if stuck else 'assumed (v1 defaults)'}"
            f"{f' after {len(nudges)} ping probe(s)' if nudges else ''}"
        )
        return stuck

    async def _await_late_features(self) -> None:
        """If the engine sent ``done=0`` late (after start-up), wait for its ``done=1``."""
        began = time.monotonic()
        while self._features.done == 0:
            remaining = self._features.done0_at + self.config.feature_done_timeout - time.monotonic()
            if remaining <= 0:
                raise EngineStalled("engine said done=0 but never done=1",
                                    time.monotonic() - began)
            await self._wait_changed(remaining)

    async def _restart(self) -> None:
        """reuse=0: a fresh process for every game."""
        await self.quit()
        self._features = CecpFeatures()
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

    def position_refusal(self, fen: str, variant: Variant) -> str | None:
        """Why `fen` cannot be stated to this engine (known once it has started and sent its
        features): see `runner.protocol.cecp_dialogue.position_refusal`."""
        return position_refusal(fen, variant, self._features)

    # ----------------------------------------------------------------- reading

    def _on_lines(self, lines: list[Line]) -> None:
        """Act on each line of a chunk of output, as it arrives (see EngineTransport.listen).

        Comment lines and thinking lines, most of what an engine prints, are passed over
        here without a call per line; `_handle` takes the rest (and does the same for them).
        """
        thinking = self._thinking
        for line in lines:
            text = line.text
            head = text[:1]
            if head == "#":
                continue
            if thinking and (head == " " or head.isdigit()):
                match = match_thinking(text)
                if match is not None:
                    self._info_match = match
                    continue
            features = self._handle(line)
            if features:
                self._handle_features(features)
        if lines:
            self._last_line_at = lines[-1].time
        self._changed.set()

    def _on_end(self, exc: EngineError) -> None:
        """The output ended or broke a limit: whoever waits for an answer gets `exc`."""
        super()._on_end(exc)
        self._changed.set()

    def _waiters(self) -> Iterable[asyncio.Future[Any] | None]:
        """The move awaited and the pongs awaited."""
        return (self._reply, *self._pongs.values())

    def _self_name(self) -> str | None:
        """The name in ``feature myname=...``."""
        return self._features.text("myname")

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
        answers = self._features.record(pairs)
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
            self._reply.exception()  # nobody may await it any more: not "never retrieved"

    # ----------------------------------------------------------------- waiting

    async def _synchronise(self) -> None:
        """After ``new``/``setboard``: ``ping``/``pong``, or a conservative pause without ping."""
        await self._await_late_features()
        if self._features.flag("ping", False):
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
        return await self._round_trip(self._pongs, number, f"ping {number}",
                                      self._patient(timeout), f"no pong {number}")

    async def _wait_changed(self, timeout: float) -> None:
        self._changed.clear()
        self._check_alive()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._changed.wait(), max(timeout, 0.0))
        self._check_alive()
