"""`CecpEngine`: the Chess Engine Communication Protocol (xboard/winboard, version 2).

The engine's lines update the client's state from the pipe's read callback (`CecpReading`,
cecp_reading.py), its start-up is `CecpStartup` (cecp_startup.py); here are the game's
commands: a new game, a move asked for, the end. The public coroutines write commands and
wait on that state with explicit timeouts.  Line parsing lives in `cecp_parse`.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Sequence

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
    Chess960Writer,
)
from runner.protocol.cecp_startup import CecpStartup
from runner.protocol.engine import (
    CecpDialogue,
    ClockState,
    EngineError,
    EngineReply,
    GameSetup,
)
from runner.protocol.waiting import ReplyCall
from runner.types import Variant

__all__ = ["CecpEngine", "CecpFeatures"]


class CecpEngine(CecpStartup):
    """An engine spoken to in CECP over pipes."""

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
        self._require_game()
        self._check_alive()
        self._check_rejection()
        if self._pending_end is not None:
            reply, self._pending_end = self._pending_end, None
            return reply
        lines = self._request_lines(moves, clocks, opponent_offers_draw, None)
        return self._answered(await self._await_reply(lines, timeout, "no move"))

    def _search_lines(self, moves: Sequence[str], clocks: ClockState,
                      opponent_offers_draw: bool) -> list[str] | None:
        """`play`'s request for `request_move`; None when a reply is already kept (a claim
        or a resignation the engine printed after its last move: `play` returns it)."""
        self._require_game()
        self._check_alive()
        self._check_rejection()
        if self._pending_end is not None:
            return None
        return self._request_lines(moves, clocks, opponent_offers_draw, self._call)

    def _request_lines(self, moves: Sequence[str], clocks: ClockState,
                       opponent_offers_draw: bool, call: ReplyCall | None) -> list[str]:
        """The moves the engine has not seen and the search's commands; the search begun."""
        setup = self._require_game()
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
        self._begin_search(call)
        self._info_match = None
        lines, self._period_sent = search_commands(
            self.config, setup, self._features, clocks, new_moves, forced=self._forced,
            draw_offered=opponent_offers_draw, period_sent=self._period_sent)
        self._moves_known.extend(moves[known:])
        self._forced = False
        self._thinking = True
        return lines

    def _answered(self, reply: EngineReply) -> EngineReply:
        """The engine thinks no more; its move is one it knows."""
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

