"""The service's side of engines built on the remote workers that play them: a branch test's
sides, from the build orders their configuration carries (`EngineSpec.built_from`).

A worker is offered such an engine only when its own allow-list permits the order's
repository (it says which at registration). Its batch carries the orders; it builds each in
its own build cache (`runner.build.placed`, as the host and the Dask workers do), benches
it, and reports the builds before it plays. A reported bench is compared with the expected
one (the service host's, else the declared count: `machines_disagree`); a wrong bench, or a
build that failed, ends the run with why. A game of a built engine is counted only from a
worker that reported its build of that engine.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from runner.build.benches import LOG_SHOWN, MachineBuild, machines_disagree
from runner.config.recipes import BuildOrder
from runner.fleet.batches import Batch
from runner.fleet.speed import own_factor
from runner.game.job import GameJob
from runner.tournament.events import MachineBuilt

__all__ = ["BogusReport", "Checked", "FleetBuilds", "WorkerBuild"]


@dataclass(frozen=True)
class WorkerBuild:
    """What a worker says of one ordered engine: its build's record, or why it failed."""

    engine: str
    record: MachineBuild | None = None
    failed: str | None = None
    """Why there is no build (the build's or the bench's reason and the end of its output)."""


@dataclass(frozen=True)
class Checked:
    """A worker's build reports read: the notices of the builds new to the run, and why the
    run cannot go on (None: it can)."""

    notices: tuple[MachineBuilt, ...]
    failure: str | None


class BogusReport(ValueError):
    """A report no honest worker sends (an engine not ordered in its batch, another commit)."""


class FleetBuilds:
    """The engines of one workers-placed run that the workers build themselves."""

    def __init__(self, orders: Mapping[str, BuildOrder] | None = None) -> None:
        self.orders = dict(orders or {})
        """The build orders by engine name (none: every engine comes from the allow-lists)."""
        self._reported: set[tuple[int, str]] = set()
        """(worker id, engine) whose build that worker reported with the expected bench."""
        self._speeds: dict[tuple[int, str], int] = {}
        """The bench speed of each (worker id, engine) build reported with one."""

    def factors(self, worker_id: int) -> dict[str, float]:
        """The clock factor of each engine the worker built whose recipe declares a
        reference speed: that reference over its build's bench (for its later batches: a
        batch's clocks are set before its engines are built)."""
        return {engine: own_factor(reference, nps)
                for (worker, engine), nps in self._speeds.items()
                if worker == worker_id and engine in self.orders
                and (reference := self.orders[engine].recipe.reference_nps) is not None}

    def playable(self, engines: Iterable[str], repositories: Iterable[str]) -> frozenset[str]:
        """The engines of this run a worker may play: those its allow-list names that are
        not built here, and the built ones whose repository its allow-list permits (an engine
        of its own by a built engine's name never stands in for the build)."""
        allowed = set(repositories)
        built = {name for name, order in self.orders.items()
                 if order.recipe.repository in allowed}
        return frozenset(set(engines) - set(self.orders)) | built

    def for_batch(self, batch: Batch) -> dict[str, BuildOrder]:
        """The orders of the engines the batch's games name."""
        names = {config.name for job in batch.jobs.values() for config in (job.white,
                                                                             job.black)}
        return {name: order for name, order in self.orders.items() if name in names}

    def unreported(self, worker_id: int, job: GameJob) -> str | None:
        """Why the worker's game of `job` is not counted (a built engine whose build it did
        not report), or None."""
        for config in (job.white, job.black):
            if config.name in self.orders and (worker_id, config.name) not in self._reported:
                return (f"{config.name} is built where it plays, and this worker reported no "
                        "build of it: report the builds before the games")
        return None

    def reported(self, worker_id: int, machine: str, batch: Batch,
                 reports: Iterable[WorkerBuild]) -> Checked:
        """Read a worker's reports of its builds for `batch` (BogusReport when one is not
        of an engine ordered in the batch, or of another side or commit)."""
        reports = list(reports)
        ordered = self.for_batch(batch)
        notices: list[MachineBuilt] = []
        made: list[MachineBuild] = []
        failure = None
        for report in reports:
            order = ordered.get(report.engine)
            if order is None:
                raise BogusReport(f"{report.engine!r} is not built in batch {batch.id}")
            if report.record is None:
                why = report.failed or "no reason given"
                failure = failure or f"{machine} could not build {report.engine}: {why}"
                continue
            if (report.record.side, report.record.commit) != (order.side, order.commit):
                raise BogusReport(f"the build of {report.engine} is of {report.record.side} "
                                  f"{report.record.commit[:12]}, not of {order.side} "
                                  f"{order.commit[:12]}")
            record = dataclasses.replace(report.record, machine=machine,
                                         log=report.record.log[-LOG_SHOWN:])
            if order.expected_nodes is not None and record.nodes is None:
                # Its own recipe has no bench: nothing would show that it built the same.
                failure = failure or (f"{machine} measured no bench of {report.engine} (its "
                                      f"recipe has none) where {order.expected_nodes} nodes "
                                      "are expected")
                continue
            made.append(record)
            key = (worker_id, report.engine)
            if key not in self._reported:
                notices.append(_notice(report.engine, record))
        wrong = machines_disagree(ordered.values(), made)
        if wrong is not None:
            failure = failure or str(wrong)
        if failure is None:
            self._reported.update((worker_id, r.engine) for r in reports
                                  if r.record is not None)
            self._speeds.update({(worker_id, r.engine): r.record.nps for r in reports
                                 if r.record is not None and r.record.nps})
        return Checked(tuple(notices), failure)


def _notice(engine: str, record: MachineBuild) -> MachineBuilt:
    """The notice of a remote worker's build of `engine`, with its record."""
    how = "from its cache" if record.cached else f"in {record.seconds:.1f} s"
    speed = f", {record.nps} nodes/s" if record.nps is not None else ""
    bench = f": bench {record.nodes} nodes{speed}" if record.nodes is not None else ""
    return MachineBuilt(f"{record.machine} built {engine} {how}{bench}", record.to_json())
