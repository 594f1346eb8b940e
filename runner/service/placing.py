"""Where the service's tournaments play: the operator's choice by default, or the place a
submission names (``"placement": "host" | "cluster" | "workers"``), kept in the store so
that a resume, here or after a restart, plays the games in the same place."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from runner.app.run import Placement, Refused
from runner.config.engines import load_bench_declarations
from runner.config.model import TournamentConfig
from runner.fleet.hub import FleetHub
from runner.fleet.speed import SpeedTerms
from runner.protocol.freeze import FreezeMonitor
from runner.service.settings import ServiceSettings
from runner.store.store import Store
from runner.tournament.run import Tournament

__all__ = ["Placements"]

_OFFERED_BY = {"workers": "--accept-workers", "cluster": "--cluster or --workers"}
"""The option of runner serve that offers each placement."""


class Placements:
    """The placements this service offers, and the fleet of remote workers when it takes any."""

    def __init__(self, settings: ServiceSettings, store: Store, *,
                 scheduler_factory: Callable[[TournamentConfig, int], Any] | None) -> None:
        self.store = store
        self.default = Placement(
            # The operator's choice (never the submission's: it has no [cluster]); nothing
            # chosen plays in this process.
            workers=settings.workers if settings.workers or settings.cluster else 0,
            cluster=settings.cluster, from_file=False, freezes=FreezeMonitor(),
            scheduler=scheduler_factory)
        self.fleet: FleetHub | None = (
            FleetHub(store, settings.worker_lease_seconds,
                     SpeedTerms(settings.worker_reference_nps, settings.worker_max_factor,
                                _engine_references(settings)))
            if settings.accept_workers else None)
        """The remote workers and the runs placed on them (None: the service takes none)."""
        self._named: dict[str, Placement] = {
            "host": Placement(workers=0, from_file=False, freezes=self.default.freezes,
                              scheduler=scheduler_factory)}
        if settings.workers or settings.cluster:
            self._named["cluster"] = self.default
        if self.fleet is not None:
            self._named["workers"] = Placement(from_file=False, freezes=self.default.freezes,
                                               scheduler=self.fleet.scheduler)

    def of(self, placement: str | None) -> Placement:
        """The placement a submission names (None: the operator's choice)."""
        return self.default if placement is None else self._named[placement]

    async def stored(self, tournament_id: int) -> Placement | Refused:
        """Where a tournament resumes: where its submission placed it, or why not here."""
        placed = await asyncio.to_thread(self.store.fleet.placement, tournament_id)
        if placed is not None and placed not in self._named:
            return Refused(f"tournament {tournament_id} plays on {placed} and this service "
                           f"has none (runner serve {_OFFERED_BY.get(placed, '')})", 1)
        return self.of(placed)

    async def taken(self, tournament: Tournament, placement: str | None = None) -> None:
        """A tournament was stored (`placement` noted for a new one): a workers-placed run's
        scheduler learns its id."""
        if placement is not None:
            await asyncio.to_thread(self.store.fleet.place, tournament.tournament_id, placement)
        if self.fleet is not None:
            self.fleet.attach(tournament)


def _engine_references(settings: ServiceSettings) -> dict[str, int]:
    """The reference speed each engine of the allow-list declares (``reference_nps``: its
    own bench on the machine the time controls are meant for), by name; read once, when the
    service starts (its file was checked then: a wrong key stops the start)."""
    if not settings.accept_workers:
        return {}
    return {name: declared.reference_nps
            for name, declared in load_bench_declarations(settings.engines_file).items()
            if declared.reference_nps is not None}
