"""The stop policy: what a stop signal does to the command that runs now, decided here once.

Every front door that plays (``runner run`` and its siblings, ``runner play``, the drop-ins)
hands its signals to a `StopGuard`. Before anything is taken (engines asked for their
protocol, one game set up) the first signal ends the work at once and the command ends with
`Interrupted`; once a tournament is taken, signals stop it as the policy says (`GENTLE`: the
first Ctrl-C lets running games finish, a second one or SIGTERM/SIGHUP aborts them; `ABORT`:
any signal aborts them, as the frameworks driving a drop-in wait only seconds). A service
installs none (`NONE`): its server owns the signals and stops its runs itself. The signals and
the exit status they give are `runner.tournament.interrupts`'s.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Awaitable
from dataclasses import dataclass
from types import TracebackType
from typing import Protocol, TypeVar

from runner.tournament.interrupts import Interrupts

__all__ = ["Interrupted", "StopGuard", "StopPolicy", "Stoppable"]

_T = TypeVar("_T")


class StopPolicy(enum.Enum):
    """What stop signals do once a tournament plays."""

    GENTLE = "gentle"
    """The first Ctrl-C: no new game, the running ones finish; a second, or SIGTERM/SIGHUP:
    the running ones are aborted (``runner run``, ``runner play``)."""
    ABORT = "abort"
    """Any stop signal aborts the running games (the drop-ins)."""
    NONE = "none"
    """No signal is handled here (a service: its server stops the runs)."""


@dataclass(frozen=True)
class Interrupted:
    """A stop signal ended the command before its work was done; no engine is left."""

    exit_status: int
    """128 + the first signal's number (see `runner.tournament.interrupts`)."""


class Stoppable(Protocol):
    """What a guard stops once it is handed over (a tournament)."""

    def stop(self, hard: bool = False) -> None:
        """Start nothing new; with `hard`, abort what runs."""


class StopGuard:
    """While entered, stop signals end the current task's work (`guarded`), or stop the
    `Stoppable` handed over (`hand_to`) as the policy says."""

    def __init__(self, policy: StopPolicy) -> None:
        self.policy = policy
        self._interrupts = None if policy is StopPolicy.NONE else Interrupts(self._received)
        self._task: asyncio.Task[object] | None = None
        self._target: Stoppable | None = None

    @property
    def first(self) -> int | None:
        """The first stop signal received, if any."""
        return None if self._interrupts is None else self._interrupts.first

    @property
    def exit_status(self) -> int | None:
        """128 + the first signal's number, or None when no signal came."""
        return None if self._interrupts is None else self._interrupts.exit_status

    def _received(self, hard: bool) -> None:
        assert self._interrupts is not None
        if self._target is not None:
            self._target.stop(hard=hard or self.policy is StopPolicy.ABORT)
        elif self._interrupts.count == 1 and self._task is not None:
            # Later signals leave alone the engines' stop the first one started.
            self._task.cancel()

    def hand_to(self, target: Stoppable) -> None:
        """From now on signals stop `target`; one that came already stops it at once (hard:
        nothing of it has started)."""
        self._target = target
        if self.first is not None:
            target.stop(hard=True)

    async def guarded(self, work: Awaitable[_T]) -> _T | Interrupted:
        """`work`'s result, or `Interrupted` when a stop signal ended it first."""
        try:
            return await work
        except asyncio.CancelledError:
            status = self.exit_status
            if status is None or self._task is None:
                raise
            self._task.uncancel()
            return Interrupted(status)

    def __enter__(self) -> StopGuard:
        self._task = asyncio.current_task()
        if self._interrupts is not None:
            self._interrupts.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._interrupts is not None:
            self._interrupts.__exit__(kind, value, trace)
