"""Stopping a tournament, soft or hard: the rule decided here once.

A tournament playing in this process is stopped through its run: soft, no new game starts and
the running ones finish (they count); hard, the running ones are cut too (not counted: a
resume plays them again). A tournament nobody plays here is only marked stopped in the store,
so that its owner's next start does not resume it; a finished one cannot be stopped, nor can
one another front door owns (the service stops only what was submitted to it).
"""

from __future__ import annotations

from typing import Literal

from runner.app.lifecycle import NoSuchTournament
from runner.store import Store, TournamentStatus
from runner.tournament.run import Tournament

__all__ = ["StopRefused", "stop"]


class StopRefused(Exception):
    """A stop that does not fit the tournament: it is finished, or another origin owns it."""

    def __init__(self, tournament_id: int, why: Literal["finished", "not owned"]) -> None:
        super().__init__(f"tournament {tournament_id} is {why}")
        self.tournament_id = tournament_id
        """The tournament asked to stop."""
        self.why = why
        """``finished``: nothing left to stop; ``not owned``: another origin's."""


def stop(store: Store, tournament_id: int, *, origin: str, hard: bool = False,
         running: Tournament | None = None) -> Literal["stopping", "stopped"]:
    """Stop tournament `tournament_id` for `origin`: its `running` run if it plays here
    (``stopping``: its games end as `hard` says), else its stored state (``stopped``).
    NoSuchTournament, or StopRefused when it is finished or not `origin`'s."""
    if running is not None:
        running.stop(hard=hard)
        return "stopping"
    progress = store.progress(tournament_id)
    if progress is None:
        raise NoSuchTournament(f"no tournament {tournament_id} in {store.shown_url}")
    if progress.status == TournamentStatus.FINISHED.value:
        raise StopRefused(tournament_id, "finished")
    if not store.owned(tournament_id, origin):
        raise StopRefused(tournament_id, "not owned")
    store.set_stopped(tournament_id)
    return "stopped"
