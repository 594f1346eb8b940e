"""`Relay`: a game advanced from the engines' read callbacks, with no task woken per move.

The side to move is asked with `Engine.request_move`: its reply reaches `answered` from the
read callback of its pipe (or its fault, from the move's timer or the end of its output,
reaches `failed`). There the game's core judges it and, while the game goes on, the other
engine's request is written at once. The game's task awaits one future, resolved only when
the game ends (a `GameOver`), when a runner-side error happens (its exception), or when the
task must take a step itself (an engine that cannot be asked this way or told to ponder this
way, a side asked again): then it is told which (`runner.game.core`'s NEXT, AGAIN or PONDER).
A UCI engine's pondering (``go ponder``, then ``ponderhit`` or ``stop``) is written from the
same callbacks (`Engine.start_ponder`, and `request_move` ending the ponder search).

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import asyncio

from runner.game.arbiter import GameOver
from runner.game.core import NEXT, PONDER, GameCore
from runner.protocol.engine import Engine, EngineError, EngineReply

__all__ = ["Relay"]


class Relay:
    """Drives a `GameCore` from the engines' callbacks (see the module)."""

    __slots__ = ("_black", "_closed", "_core", "_done", "_loop", "_on_fault", "_on_reply",
                 "_white")

    def __init__(self, white: Engine, black: Engine, core: GameCore,
                 loop: asyncio.AbstractEventLoop) -> None:
        """`loop`: the running loop, whose future the game's task awaits."""
        self._white = white  # two attributes, not a dict by colour: read every ply
        self._black = black
        self._core = core
        self._loop = loop
        self._done: asyncio.Future[GameOver | int] | None = None
        self._closed = False
        # Bound once: handed to the engines with every request.
        self._on_reply = self.answered
        self._on_fault = self.failed

    def run(self) -> asyncio.Future[GameOver | int] | None:
        """Ask the side to move through its callbacks; the future the task awaits, or None
        when that engine cannot be asked so (the task asks it: NEXT)."""
        try:
            if not self._ask():
                return None
        except GameOver as over:
            ended: asyncio.Future[GameOver | int] = self._loop.create_future()
            ended.set_result(over)
            return ended
        # Made after the request is written: its answer is read in a later loop turn.
        done: asyncio.Future[GameOver | int] = self._loop.create_future()
        self._done = done
        return done

    def close(self) -> None:
        """The game's task is gone (cancelled, or finished): later callbacks are ignored."""
        self._closed = True
        self._done = None

    def _ask(self) -> bool:
        """Request a move of the side to move; False when its engine cannot be asked through
        callbacks; its fault at asking is raised as the game's end."""
        core = self._core
        request = core.ask()
        engine = self._white if core.board.turn else self._black
        try:
            return engine.request_move(core.sent, request.clocks, timeout=request.timeout,
                                       opponent_offers_draw=request.offered,
                                       on_reply=self._on_reply, on_fault=self._on_fault)
        except EngineError as exc:
            raise core.fault(exc) from exc

    def _ponder(self) -> bool:
        """The side that just moved ponders on the reply it expects, told at once; False
        when its engine cannot be told so (the task awaits it: PONDER)."""
        core = self._core
        mover = not core.board.turn
        engine = self._white if mover else self._black
        return engine.start_ponder(core.sent, core.ponder_clocks(mover))

    def answered(self, reply: EngineReply) -> None:
        """The side to move's reply, from its read callback: judged, and the next asked."""
        if self._closed:
            return
        try:
            step = self._core.take(reply)
            if step == PONDER and self._ponder():
                step = NEXT
            if step == NEXT and self._ask():
                return
            self._finish(step)
        except GameOver as over:
            self._finish(over)
        except Exception as exc:  # a runner-side error: the task raises it
            self._fail(exc)

    def failed(self, exc: BaseException) -> None:
        """The side to move's fault (a stall, the end of its output), or a runner error."""
        if self._closed:
            return
        # Told apart by raising: compiled by mypyc, isinstance() against EngineError (a
        # class compiled as a regular Python class) matches that exact class only, not its
        # subclasses (EngineStalled, EngineTerminated...), while except matches them all.
        try:
            raise exc
        except EngineError as fault:
            over = self._core.fault(fault)
        except BaseException as error:  # a runner-side error: the task raises it
            self._fail(error)
            return
        self._finish(over)

    def _finish(self, outcome: GameOver | int) -> None:
        done = self._done
        self._done = None
        if done is not None and not done.done():
            done.set_result(outcome)

    def _fail(self, exc: BaseException) -> None:
        done = self._done
        self._done = None
        if done is not None and not done.done():
            done.set_exception(exc)
