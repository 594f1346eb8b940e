"""`CecpReading`: what a CECP engine's lines do to the client's state, as they arrive.

The base of `CecpEngine` (cecp.py): the state of the dialogue (features, pongs, the move
awaited, draw offers, claims, refusals) and the handling of each line the engine prints,
called from the pipe's read callback. Lines are parsed by `cecp_parse`; nothing here
writes a command but the answers to features.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
from collections.abc import Iterable, Mapping

from runner.protocol.cecp_features import CecpFeatures
from runner.protocol.cecp_parse import (
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
    EngineConfig,
    EngineError,
    EngineOption,
    EngineProtocolError,
    EngineReply,
    ResultClaim,
    SearchInfo,
    Side,
)
from runner.protocol.pipe import PipeEngine
from runner.protocol.transport import EngineTransport, Line
from runner.protocol.waiting import Waiter
from runner.types import Castling960Style

__all__ = ["CecpReading"]


class CecpReading(PipeEngine):
    """A CECP client's state and its engine's lines (see the module)."""

    def __init__(self, config: EngineConfig, *, transport: EngineTransport | None = None,
                 castling960: Castling960Style | None = None) -> None:
        """`transport` replaces the subprocess (a scripted double in tests, say);
        `castling960` is how Chess960 castling is sent, by default the configuration's
        ``castling960`` (the spec's O-O/O-O-O unless it says ``kxr``)."""
        super().__init__(config, transport)
        self.castling960 = castling960 or config.castling960
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

    def _accepts_sigterm(self) -> bool:
        """``feature sigterm=0`` asks not to be sent SIGTERM."""
        return self._features.flag("sigterm", True)

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

    def _waiters(self) -> Iterable[Waiter | None]:
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
        coordinate = False
        if move is not None:
            lowered = move.lower()
            coordinate = is_coordinate_move(lowered)
            if coordinate:
                move = lowered
            if move == self._last_move:
                # An engine never plays the same move twice in a row (the piece has left the
                # square): this is a late echo of its previous move ("My move is : ..."), and
                # stays one however many times it is repeated.
                return
            self._last_move = move
        reply = EngineReply(
            move=move,
            move_is_san=move is not None and not coordinate,
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
