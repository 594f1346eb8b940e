"""Stopping a tournament, soft or hard: the rule decided here once.

A tournament playing in this process is stopped through its run: soft, no new game starts and
the running ones finish (they count); hard, the running ones are cut too (not counted: a
resume plays them again). A tournament nobody plays here is only marked stopped in the store,
so that its owner's next start does not resume it; a finished one cannot be stopped, nor can
one another front door owns (the service stops only what was submitted to it).
"""

from __future__ import annotations

from typing import Literal

from runner.app.lifecycle import Refusal, check_owner
from runner.store import Store
from runner.tournament.run import Tournament

__all__ = ["StopRefused", "stop"]


StopRefused = Refusal
"""A stop that does not fit the tournament (the name the stop verb's callers know)."""


def stop(store: Store, tournament_id: int, *, origin: str, hard: bool = False,
         running: Tournament | None = None) -> Literal["stopping", "stopped"]:
    """Stop tournament `tournament_id` for `origin`: its `running` run if it plays here
    (``stopping``: its games end as `hard` says), else its stored state (``stopped``).
    NoSuchTournament (`runner.app.lifecycle`), or StopRefused when it is finished or not `origin`'s."""
    if running is not None:
        running.stop(hard=hard)
        return "stopping"
    check_owner(store, tournament_id, origin)
    store.set_stopped(tournament_id)
    return "stopped"
