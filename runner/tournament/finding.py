"""Finding the tournament a run plays: continued, changed, created or refused, and what of it
was played already.

`find_or_create` runs inside the one transaction `Store.preparing` holds under the
find-or-create lock: of two runners of one configuration started together, the second finds
the first's tournament and lease and is refused, as when it starts later. The rule for which
tournament a run continues is `continues`; a forced change of configuration is stored and the
played games re-planned here (`runner.tournament.replan` says where each goes).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from runner.config.model import TournamentConfig
from runner.store import EngineRowValues, StoredTournament, TournamentStatus
from runner.store.store import LeaseHeldError
from runner.tournament.events import AlreadyFinished, TournamentError
from runner.tournament.replan import changes, placements
from runner.tournament.schedule import Schedule
from runner.tournament.scoreboard import Scoreboard
from runner.types import Variant

if TYPE_CHECKING:
    from runner.books.openings import Opening
    from runner.store.store import Preparation

__all__ = ["Found", "Wanted", "engine_rows", "find_or_create", "held_message"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Wanted:
    """What a run asks of the database before its first game."""

    config: TournamentConfig
    pairing: Schedule
    owner: str
    """The run's lease owner id."""
    lease_timeout: float
    where: str
    """The database as messages name it (its password hidden)."""
    requested_id: int | None = None
    """Continue this tournament (a resume by id) rather than look one up by name."""
    origin: str | None = None
    """Who owns the tournaments the run creates or continues (None: the command line; the
    store's SERVICE: the service); a run never continues another's."""
    new: bool = False
    """Start a new tournament whatever the newest of the name is."""
    force: bool = False
    """Continue a tournament played with other settings, storing the new ones."""
    continue_only: bool = False
    """A finished newest tournament of the name is AlreadyFinished, not a reason to start a
    new one (decided under the find-or-create lock: a run that finished while this one waited
    for it is not played again)."""
    same_only: bool = False
    """Continue the newest tournament of the name only when it was played with these settings
    and is not finished, else start a new one: the command line's rule (``runner match`` run
    again with the same words continues the match it interrupted)."""


@dataclass
class Found:
    """The tournament a run plays, and what of it was played before."""

    tournament_id: int
    resumed: bool = False
    """Whether an existing tournament is continued."""
    changes: list[str] = field(default_factory=list)
    """What a forced resume changed, in words."""
    done: set[int] = field(default_factory=set)
    """The schedule indexes of the games stored as played."""
    half_pairs: dict[int, Opening] = field(default_factory=dict)
    """The opening of each pair with one game played (its other game plays it too)."""
    max_pair: int = 0
    """One past the highest pair number played."""


def find_or_create(prep: Preparation, wanted: Wanted, scoreboard: Scoreboard, *,
                   lease: bool) -> Found:
    """The tournament `wanted` plays, found or created in `prep`'s transaction, its lease
    taken with `lease` (else only checked free), its played games counted into `scoreboard`.

    TournamentError when it cannot be run: a changed configuration without `force`, another
    live runner on it (LeaseHeldError is told as one), one that another origin owns;
    AlreadyFinished when a finished one has nothing left to play."""
    config = wanted.config
    try:
        stored = _existing(prep, wanted, lease=lease)
        if stored is None:
            found = Found(prep.create(
                name=config.name, config=config.to_json(), fingerprint=config.fingerprint(),
                engines=engine_rows(config), total_games=wanted.pairing.total(),
                origin=wanted.origin))
            if lease:
                prep.take_lease(found.tournament_id, wanted.owner, wanted.lease_timeout)
        else:
            found = Found(stored.id, resumed=True, changes=_apply_change(prep, wanted, stored))
            replaced = prep.reopen(stored.id)
            if replaced:
                log.info("tournament %d: %d interrupted game(s) will be replayed", stored.id,
                         replaced)
    except LeaseHeldError as exc:
        raise TournamentError(held_message(exc)) from None
    _load_played(prep, found, config, wanted.pairing.total(), scoreboard)
    return found


def _existing(prep: Preparation, wanted: Wanted, *, lease: bool) -> StoredTournament | None:
    """The tournament this run continues (None: a new one), its lease taken with `lease`;
    TournamentError when it belongs to another origin (the service's tournaments are the
    service's to run, and the command line's are not the service's)."""
    stored = None
    if wanted.requested_id is not None:
        stored = prep.tournament(wanted.requested_id)
        if stored is None:
            raise TournamentError(f"no tournament {wanted.requested_id} in {wanted.where}")
        if stored.origin != wanted.origin:
            raise TournamentError(_foreign_message(stored))
    elif not wanted.new:
        stored = prep.newest_named(wanted.config.name, wanted.origin)
        if stored is not None and not continues(stored, wanted):
            stored = None
    if stored is None:
        return None
    # Nothing is written under a live runner.
    if lease:
        prep.take_lease(stored.id, wanted.owner, wanted.lease_timeout)
    else:
        prep.check_free(stored.id, wanted.owner)
    return stored


def _apply_change(prep: Preparation, wanted: Wanted, stored: StoredTournament) -> list[str]:
    """Continue `stored` with `wanted`'s configuration: nothing to do when it is the one it was
    started with; else, with `force`, the new one stored and the played games re-planned
    (returns what changed, in words), without it TournamentError."""
    config = wanted.config
    fingerprint = config.fingerprint()
    if stored.fingerprint == fingerprint:
        return []
    said = changes(stored.config, config)
    if not wanted.force:
        raise TournamentError(
            f"tournament {stored.id} ({stored.name!r}) in {wanted.where} was started with a "
            f"different configuration ({'; '.join(said)}); resume it unchanged, pass --force "
            "to continue it with the new settings, or --new to start a new tournament")
    prep.replace_config(stored.id, config=config.to_json(), fingerprint=fingerprint,
                        total_games=wanted.pairing.total(), engines=engine_rows(config))
    prep.replan(stored.id, placements(prep.played_rows(stored.id), wanted.pairing))
    return said


def continues(stored: StoredTournament, wanted: Wanted) -> bool:
    """Whether the run continues `stored`, the newest tournament of its name (False: a new
    one is started); AlreadyFinished when it is finished and nothing is left to play.

    A finished tournament is continued only by a forced change (it plays the games the
    change adds, and keeps those that still fit); forced or not, the same settings on a
    finished one play nothing. The command line's words continue only an unfinished
    tournament played with the same settings."""
    finished = stored.status is TournamentStatus.FINISHED
    same = stored.fingerprint == wanted.config.fingerprint()
    if wanted.same_only:
        return same and not finished
    if not finished or (wanted.force and not same):
        return True
    if wanted.continue_only or wanted.force:
        raise AlreadyFinished(stored.id, stored.total_games, not same)
    return False


def engine_rows(config: TournamentConfig) -> list[EngineRowValues]:
    """The configuration's engines as the tournament's engine rows store them."""
    return [EngineRowValues(e.name, list(e.written_command), e.protocol.value,
                            {k: v for k, v in e.options}) for e in config.engines]


def _load_played(prep: Preparation, found: Found, config: TournamentConfig, total: int,
                 scoreboard: Scoreboard) -> None:
    """The games stored as played: their keys, and the standings they make."""
    found.done = {index for index in prep.finished_job_keys(found.tournament_id)
                  if index < total}
    halves: dict[int, Opening] = {}
    for game in prep.games(found.tournament_id):
        if game.result is not None and game.job_index < total:
            scoreboard.add(game.white, game.black, game.result, game.pair_index,
                           game.termination)
            found.max_pair = max(found.max_pair, game.pair_index + 1)
            if game.pair_index in halves:
                del halves[game.pair_index]
            elif game.opening_fen is not None:
                # Here: a run from the start position imports no book (issue 38, start-up).
                from runner.books.openings import Opening

                halves[game.pair_index] = Opening(
                    game.opening_fen, tuple((game.opening_moves or "").split()),
                    chess960=config.variant is Variant.FISCHERANDOM)
    # A pair with one game played plays its other game from the same opening, even when a
    # forced change moved the pair to another place in the schedule.
    found.half_pairs = halves


def _foreign_message(stored: StoredTournament) -> str:
    """Refusing a tournament another origin owns."""
    if stored.origin is None:
        return (f"tournament {stored.id} ({stored.name!r}) was started from the command line, "
                "not submitted to this service: run it with 'runner run' or 'runner resume'")
    return (f"tournament {stored.id} ({stored.name!r}) belongs to the {stored.origin} (it was "
            "submitted over HTTP): stop, resume or watch it there, not with 'runner run' or "
            "'runner resume'")


def held_message(exc: LeaseHeldError) -> str:
    """Refusing a second runner: who runs the tournament, and what to do."""
    return (f"{exc}; a tournament is run by one runner at a time. Wait for that run to end "
            "or stop it; if it is gone, its lease goes stale and the next run takes over")
