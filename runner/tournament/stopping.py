"""How a tournament run stops: the soft and hard stop, and why the run ended early.

A soft stop starts no new game and lets the running ones finish; a hard stop also aborts the
running games and stops every engine. The run stops softly when asked once, after a
scheduler's failure or when the SPRT decides; hard when asked twice, when it cannot write,
when an engine crashes under `crash_stops`, or when the engines are silent. The first cause
is kept as the run's error; the tournament (`runner.tournament.run`) reads it when it closes
the row.
"""

from __future__ import annotations

from collections.abc import Callable

from runner.store.store import LeaseLostError
from runner.tournament.events import Event, Notice
from runner.tournament.scheduler import Scheduler

__all__ = ["RunStop"]


class RunStop:
    """One run's stop state, told to the scheduler and, as notices, to the run's observer."""

    def __init__(self, scheduler: Scheduler, describe: Callable[[BaseException], str],
                 on_event: Callable[[Event], None]) -> None:
        self.scheduler = scheduler
        self.describe = describe
        """The one line that says why an exception stopped the run (database errors worded
        by the store)."""
        self.on_event = on_event
        """Where the stop's notices go (the run's observer)."""
        self.soft = False
        """No new game starts."""
        self.hard = False
        """The running games are aborted as well."""
        self.error: str | None = None
        """The first cause the run could not go on for."""
        self.refused = False
        """An engine never moved: the run stopped and its scores mean nothing."""
        self.void = False
        """The engines fell silent: the run stopped and its scores mean nothing."""
        self.taken_over = False
        """Whether another runner took the tournament over from this run (its lease lost)."""

    def stop(self, hard: bool = False) -> None:
        """Start no new game; with `hard`, also abort the running ones (they are not counted)."""
        if hard:
            if not self.hard:
                self.hard = True
                self.on_event(Notice("aborting the running games and stopping the engines"))
                self.scheduler.stop(hard=True)
        elif not self.soft:
            self.soft = True
            self.on_event(Notice("stopping: no new games; running games will finish "
                                 "(interrupt again to abort them)"))
            self.scheduler.stop()

    def fail(self, exc: BaseException, *, stop: bool = True) -> None:
        """Note why the run cannot go on (the first cause only) and, with `stop`, stop it."""
        if isinstance(exc, LeaseLostError):
            self.taken_over = True
        if self.error is None:
            self.error = self.describe(exc)
        if stop and self.taken_over and not self.hard:
            # Quietly: the one line this run ends with says it all (the games are the other
            # runner's now).
            self.hard = self.soft = True
            self.scheduler.stop(hard=True)
        elif stop:
            self.stop(hard=True)

    def scheduler_failed(self, text: str, refused: bool, games_lost: bool = False) -> None:
        """The scheduler cannot go on (`text` says why): finish the running games only, or,
        with `games_lost`, say they are lost with it (a resume plays them)."""
        self.error = text
        self.refused = refused
        if not self.soft:  # not `stop`: its notice speaks of an interrupt
            self.soft = True
            self.on_event(Notice(
                "stopping after this failure: no new games; the games that were out are "
                "lost with it and not counted (a resume plays them)" if games_lost else
                "stopping after this failure: no new games; running games will finish"))
            self.scheduler.stop()

    def silent(self, text: str) -> bool:
        """The engines fell silent (`text` says how): void the run and abort it; False when
        it was void already."""
        if self.void:
            return False
        self.void = True
        self.error = self.error or text
        self.stop(hard=True)
        return True

    def decided(self, text: str) -> None:
        """The SPRT decided (`text` says how): finish the running games only."""
        if not self.soft:
            self.on_event(Notice(text))
            self.soft = True
            self.scheduler.stop()
