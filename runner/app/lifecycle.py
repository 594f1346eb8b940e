"""Starting, continuing and resuming tournaments: the lifecycle rules, decided here once.

The command line and the service translate their words into these verbs; what "finished",
"the same tournament", ``--force`` and "resume" mean is said here and in
`runner.tournament.run.Tournament._continues` (which decides under the store's lock):

- `StartMode.CONTINUE` (``runner run FILE``): the newest tournament of the file's name is
  continued; a finished one plays nothing; other settings are refused.
- `StartMode.FORCE` (``--force``): the newest of the name is continued with the new settings,
  finished or not; games that still fit stay, only the games the change adds are played; the
  same settings on a finished one play nothing.
- `StartMode.NEW` (``--new``, a submission to the service): always a new tournament.
- `StartMode.SAME` (``runner match/gauntlet/roundrobin``): the same words are the same
  tournament; an interrupted one is continued, a finished one or other settings start anew.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from runner.app.modes import StartMode
from runner.config.model import TournamentConfig, is_legacy_json
from runner.store import Store, TournamentStatus
from runner.tournament.run import Tournament
from runner.tournament.scheduler import Scheduler
from runner.tournament.styles import OrderImplementation

__all__ = ["Finished", "NoSuchTournament", "Refusal", "Resumable", "check_owner", "finished",
           "resumable", "start"]


class NoSuchTournament(LookupError):
    """A tournament id the database does not have."""


class Refusal(Exception):
    """A stop or resume that does not fit the tournament: it is finished, or another origin
    owns it (the service acts only on what was submitted to it)."""

    def __init__(self, tournament_id: int, why: Literal["finished", "not owned"]) -> None:
        super().__init__(f"tournament {tournament_id} is {why}")
        self.tournament_id = tournament_id
        """The tournament asked for."""
        self.why = why
        """``finished``: nothing left to do; ``not owned``: another origin's."""


@dataclass(frozen=True)
class Finished:
    """The tournament a start would continue is finished: nothing to play."""

    tournament_id: int
    total_games: int
    changed: bool
    """Whether the settings differ from the ones it was played with."""


def finished(store: Store, config: TournamentConfig, mode: StartMode) -> Finished | None:
    """The finished tournament a start in `mode` would find (None: there are games to play),
    asked before anything starts (engines, a cluster); the run asks again under the lock."""
    if mode not in (StartMode.CONTINUE, StartMode.FORCE):
        return None
    found = store.newest_named(config.name)
    if found is None or not found.finished:
        return None
    changed = found.fingerprint != config.fingerprint()
    if mode is StartMode.FORCE and changed:
        return None  # the change is played into it
    return Finished(found.id, found.total_games, changed)


def start(config: TournamentConfig, store: Store, mode: StartMode, *,
          tournament_id: int | None = None, concurrency: int | None = None,
          scheduler: Scheduler | None = None, lease_timeout: float | None = None,
          origin: str | None = None, pgnout: Path | None = None,
          style: OrderImplementation | None = None) -> Tournament:
    """The tournament a start in `mode` plays (by id with `tournament_id`: a resume), on
    `scheduler` (None: in this process; `runner.app.run.Placement` decides where a run
    plays), its order style played by `style` (None: the installed implementation); call its
    ``prepare`` (AlreadyFinished, TournamentError) and ``run``."""
    by_id = tournament_id is not None
    return Tournament(config, store, force=mode is StartMode.FORCE,
                      new=mode is StartMode.NEW and not by_id, tournament_id=tournament_id,
                      concurrency=concurrency, scheduler=scheduler, pgnout=pgnout,
                      origin=origin, lease_timeout=lease_timeout,
                      continue_only=mode is StartMode.CONTINUE and not by_id,
                      same_only=mode is StartMode.SAME and not by_id, style=style)


@dataclass(frozen=True)
class Resumable:
    """A stored tournament's configuration, read back to resume it."""

    config: TournamentConfig
    legacy: bool
    """Stored by an older runner, which did not keep the engines' env and castling960
    settings: they are resumed with their defaults."""


def resumable(store: Store, tournament_id: int, *, origin: str | None = None) -> Resumable:
    """The configuration to resume tournament `tournament_id` with: the one it was stored
    with. NoSuchTournament, or ConfigError when the stored one no longer reads; for an
    `origin` (a service), Refusal when the tournament is another origin's or finished."""
    if origin is not None:
        check_owner(store, tournament_id, origin)
    stored: dict[str, Any] | None = store.stored_config(tournament_id)
    if stored is None:
        raise NoSuchTournament(f"no tournament {tournament_id} in {store.shown_url}")
    config = TournamentConfig.from_json(stored, where=f"tournament {tournament_id}")
    return Resumable(config, is_legacy_json(stored))


def check_owner(store: Store, tournament_id: int, origin: str) -> None:
    """That `origin` may stop or resume stored tournament `tournament_id`: NoSuchTournament,
    or Refusal when it is finished or another origin's."""
    progress = store.progress(tournament_id)
    if progress is None:
        raise NoSuchTournament(f"no tournament {tournament_id} in {store.shown_url}")
    if progress.status == TournamentStatus.FINISHED.value:
        raise Refusal(tournament_id, "finished")
    if not store.owned(tournament_id, origin):
        raise Refusal(tournament_id, "not owned")


