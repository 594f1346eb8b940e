"""Tuning runs submitted to the service: checked as a tournament submission is (the pair's
tournament through `check_submission`, each tuned parameter a spin option the engine
declares), played by the tune verb in the service's loop where the submission's placement
says (this host, the service's Dask cluster or its remote workers), stopped and resumed by
an admin.

A run's iterations are in the store (`Store.tunes`), and so is what it was submitted with
(the table, its placement, whether an admin stopped it): a restarted service checks the
table again and resumes the runs that were playing, as it resumes its tournaments; a stopped
one waits for an admin's resume.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from runner.app.report import tuning_series
from runner.app.run import Placement
from runner.app.signals import StopPolicy
from runner.app.tune import TuneControl, TuneOutcome, tune
from runner.config.check import ConfigError, ConfigProblem
from runner.config.tune import MINUS, PLUS, TuneConfig, parse_tune
from runner.fleet.hub import FleetHub
from runner.protocol.options import declared_option
from runner.report.records import TuningSeries
from runner.report.wire import Wire
from runner.service.declared import DeclaredOptions
from runner.service.manager import Conflict
from runner.service.settings import ServiceSettings
from runner.service.submission import SOURCE, check_submission
from runner.store.store import PlanChanged, Store, SubmittedTune, TuneIteration, TuneRecord
from runner.tournament.runtime import engine_config

__all__ = ["TuneIterationJson", "TuneList", "TuneRuns", "TuneStatus", "check_tune"]

log = logging.getLogger(__name__)

RUNNING, STOPPING, STOPPED, FINISHED, FAILED = "running", "stopping", "stopped", "finished", "failed"
WORKERS = "workers"
"""The placement of a run whose pairs the service's remote workers play."""


class TuneIterationJson(Wire):
    """One played iteration: its signs, both sides' values, the pair's result, theta after."""

    k: int
    flips: list[int]
    plus: list[int]
    minus: list[int]
    result: int
    theta: list[float]
    tournament_id: int | None


class TuneStatus(Wire):
    """A tuning run: where it stands, theta now and (in a run's own view) every iteration."""

    id: int
    name: str
    state: str
    """running, stopping, stopped, finished or failed."""
    done: int
    total: int
    parameters: list[str]
    theta: list[float]
    values: str
    """Theta rounded, as ``option.NAME=VALUE`` words to paste into a match line."""
    message: str | None
    url: str
    iterations: list[TuneIterationJson] | None = None


class TuneList(Wire):
    """``GET /api/tunes``: every tuning run, oldest first."""

    tunes: list[TuneStatus]


def check_tune(data: dict[str, Any], settings: ServiceSettings,
               declared: DeclaredOptions | None) -> TuneConfig:
    """A submitted tuning table checked against the service's allow-list and bounds (blocking:
    the engine may be started once to learn its options); ConfigError with every problem."""
    problems: list[ConfigProblem] = []
    asked = data.get("concurrency", 1)
    if isinstance(asked, int) and asked > settings.max_concurrency:
        problems.append(ConfigProblem(SOURCE, "concurrency", str(asked),
                                      f"at most {settings.max_concurrency} on this service"))
    iterations = data.get("iterations")
    if isinstance(iterations, int) and 2 * iterations > settings.max_games:
        problems.append(ConfigProblem(SOURCE, "iterations", str(iterations),
                                      f"at most {settings.max_games // 2} pairs on this service"))
    try:
        config = parse_tune(data, source=SOURCE, base_dir=settings.books_root,
                            check_pair=lambda table: check_submission(table, settings, declared))
    except ConfigError as exc:
        raise ConfigError([*problems, *exc.problems]) from None
    spec = config.base.engines[0]
    known = None if declared is None else declared.of(engine_config(spec))
    for parameter in config.parameters if known is not None else ():
        option = declared_option(known or {}, parameter.name, spec.protocol)
        if option is None or option.type not in ("spin", "slider"):
            problems.append(ConfigProblem(
                SOURCE, f"parameters.{parameter.name}", parameter.name,
                f"engine {spec.name} declares no spin option of that name"))
    if problems:
        raise ConfigError(problems)
    return config


@dataclass(eq=False)
class _Run:
    """A run this service started: its checked file, where it plays, its stop and state."""

    config: TuneConfig
    placement: Placement
    control: TuneControl = field(default_factory=TuneControl)
    task: asyncio.Task[None] | None = None
    state: str = RUNNING
    message: str | None = None


class TuneRuns:
    """The service's tuning runs (`check_tune`'s configurations), each a task of this loop."""

    def __init__(self, store: Store, placements: dict[str | None, Placement],
                 fleet: FleetHub | None = None,
                 check: Callable[[dict[str, Any]], TuneConfig] | None = None) -> None:
        """`check` checks a stored submission again (blocking: `check_tune` with this
        service's settings) when a run is resumed after a restart."""
        self.store = store
        self._check = check
        self._placements = placements
        """What each placement a submission may name plays on (None: the operator's)."""
        self._fleet = fleet
        """The remote workers that play ``"workers"``-placed runs' pairs (None: none)."""
        self._runs: dict[int, _Run] = {}

    async def submit(self, config: TuneConfig, placement: str | None = None,
                     submitted: Mapping[str, Any] | None = None) -> int:
        """Store (or find, for the same file again) and start a run; its id. `submitted` is
        the table `config` was checked from, kept so a restarted service resumes the run.
        Conflict when a stored run of that name has another plan or this one is playing."""
        self.check_placement(placement)
        try:
            record = await asyncio.to_thread(self.store.tunes.open, config.name, config.plan())
        except PlanChanged as exc:
            raise Conflict(str(exc)) from None
        current = self._runs.get(record.id)
        if current is not None and current.state in (RUNNING, STOPPING):
            raise Conflict(f"tuning run {record.id} is playing already")
        run = _Run(config, self._placed(config, placement))
        if submitted is not None:
            await asyncio.to_thread(self.store.tunes.submit, record.id, submitted, placement)
        self._start(record.id, run)
        return record.id

    async def start(self) -> list[int]:
        """Resume the runs submitted to this service that were playing when it stopped (not
        those an admin stopped, nor finished ones); their ids. A run whose table no longer
        passes the check is left, with a warning naming it."""
        resumed = []
        for stored in await asyncio.to_thread(self.store.tunes.submitted):
            if stored.stopped or stored.id in self._runs:
                continue
            status = await self.status(stored.id, iterations=False)
            if status is None or status.done >= status.total:
                continue
            try:
                self._start(stored.id, await self._stored_run(stored))
            except (ConfigError, Conflict) as exc:
                log.warning("tuning run %d (%r) is not resumed: %s", stored.id, stored.name, exc)
                continue
            resumed.append(stored.id)
        return resumed

    async def _stored_run(self, stored: SubmittedTune) -> _Run:
        """A run from its stored submission, checked again; ConfigError or Conflict."""
        if self._check is None:
            raise Conflict(f"tuning run {stored.id}: this service cannot check its table")
        self.check_placement(stored.placement)
        config = await asyncio.to_thread(self._check, dict(stored.submitted))
        if config.name != stored.name:
            raise Conflict(f"tuning run {stored.id}: its table names {config.name!r}")
        return _Run(config, self._placed(config, stored.placement))

    def check_placement(self, placement: str | None) -> None:
        """ConfigError (key ``placement``) unless a tuning run may play there."""
        if placement not in self._placements:
            offered = ", ".join(sorted(p for p in self._placements if p is not None))
            raise ConfigError([ConfigProblem(SOURCE, "placement", str(placement),
                                             f"a tuning run here plays on: {offered}")])

    def _placed(self, config: TuneConfig, placement: str | None) -> Placement:
        """Where `config`'s pairs play: on remote workers, each pair's games leased as a
        tournament's are, the sides ``plus`` and ``minus`` known to the workers by the
        engine's key (a worker plays them only when its own allow-list has that engine)."""
        chosen = self._placements[placement]
        if placement != WORKERS or self._fleet is None:
            return chosen
        if config.engine_key is None:
            raise ConfigError([ConfigProblem(
                SOURCE, "engine", "(a table)", "a tuning run on remote workers names its "
                "engine by a key of the service's engines file (workers start it by that name)")])
        names = {PLUS: config.engine_key, MINUS: config.engine_key}
        return dataclasses.replace(chosen, scheduler=functools.partial(self._fleet.scheduler,
                                                                       names=names))

    async def stop(self, tune_id: int, *, hard: bool = False) -> str:
        """Stop a run: no new pair; with `hard` its running games are cut. Its state (kept:
        a restarted service leaves it stopped)."""
        run = self._runs.get(tune_id)
        if run is None:
            state = await self._stored_state(tune_id)
            await asyncio.to_thread(self.store.tunes.set_stopped, tune_id, True)
            return state
        if run.state == RUNNING:
            run.control.stop(hard)
            run.state = STOPPING
        elif run.state == STOPPING and hard:
            run.control.stop(hard)
        await asyncio.to_thread(self.store.tunes.set_stopped, tune_id, True)
        return run.state

    async def resume(self, tune_id: int) -> str:
        """Play a stopped or failed run's missing iterations (one stored by a service before
        a restart too: its table checked again); Conflict when it plays, or when this
        service holds no table of it (a ``runner tune`` run: submit its file)."""
        run = self._runs.get(tune_id)
        if run is not None and run.state in (RUNNING, STOPPING, FINISHED):
            raise Conflict(f"tuning run {tune_id} is {run.state}")
        if run is not None:
            fresh = _Run(run.config, run.placement)
        elif (await self._stored_state(tune_id)) == FINISHED:
            raise Conflict(f"tuning run {tune_id} is {FINISHED}")
        else:
            stored = await asyncio.to_thread(self.store.tunes.submitted, tune_id)
            if not stored:
                raise Conflict(f"tuning run {tune_id} was not submitted to this service: "
                               "submit its file to continue it")
            try:
                fresh = await self._stored_run(stored[0])
            except ConfigError as exc:
                raise Conflict(f"tuning run {tune_id}: its table no longer passes the "
                               f"check: {exc}") from None
        await asyncio.to_thread(self.store.tunes.set_stopped, tune_id, False)
        self._start(tune_id, fresh)
        return RUNNING

    async def status(self, tune_id: int, *, iterations: bool = True) -> TuneStatus | None:
        """A run's state and theta (with every iteration unless told not to); None if unknown."""
        record = await asyncio.to_thread(self.store.tunes.get, tune_id)
        if record is None:
            return None
        stored = await asyncio.to_thread(self.store.tunes.iterations, tune_id)
        return self._status(record, stored, iterations)

    async def series(self, tune_id: int) -> TuningSeries | None:
        """A run's theta series, as `runner report` draws it; None if unknown."""
        record = await asyncio.to_thread(self.store.tunes.get, tune_id)
        return None if record is None else await asyncio.to_thread(
            tuning_series, self.store, record)

    async def summaries(self) -> list[TuneStatus]:
        """Every stored run, oldest first, without its iterations."""
        records = await asyncio.to_thread(self.store.tunes.all)
        found = []
        for record in records:
            stored = await asyncio.to_thread(self.store.tunes.iterations, record.id)
            found.append(self._status(record, stored, False))
        return found

    async def close(self) -> None:
        """Stop every run's games at once and wait for its task (the service is stopping)."""
        for run in self._runs.values():
            run.control.stop(hard=True)
        tasks = [run.task for run in self._runs.values() if run.task is not None]
        await asyncio.gather(*tasks, return_exceptions=True)

    def _start(self, tune_id: int, run: _Run) -> None:
        self._runs[tune_id] = run
        run.task = asyncio.create_task(self._play(run), name=f"tune-{tune_id}")

    async def _play(self, run: _Run) -> None:
        """Run the tune verb for `run`; its state from how it ended."""
        try:
            outcome: TuneOutcome = await tune(run.config, self.store, placement=run.placement,
                                              stop_policy=StopPolicy.NONE, control=run.control,
                                              taken=FleetHub.attach)
        except Exception as exc:  # the run fails, the service goes on
            log.warning("tuning run %r failed: %s: %s", run.config.name, type(exc).__name__, exc)
            run.state, run.message = FAILED, f"{type(exc).__name__}: {exc}"
            return
        run.message = outcome.message
        if outcome.exit_status == 0 and outcome.done == outcome.total:
            run.state = FINISHED
        else:
            run.state = STOPPED if run.control.asked else FAILED

    async def _stored_state(self, tune_id: int) -> str:
        """The state of a run this service holds no task of."""
        status = await self.status(tune_id, iterations=False)
        if status is None:
            raise LookupError(tune_id)
        return status.state

    def _status(self, record: TuneRecord, stored: list[TuneIteration],
                iterations: bool) -> TuneStatus:
        plan = record.plan
        names = [str(p[0]) for p in plan.get("parameters", ())]
        theta = list(stored[-1].theta) if stored else [float(p[1]) for p in
                                                       plan.get("parameters", ())]
        total = int(plan.get("iterations", 0))
        run = self._runs.get(record.id)
        state = run.state if run is not None else FINISHED if len(stored) >= total else STOPPED
        return TuneStatus(
            id=record.id, name=record.name, state=state, done=len(stored), total=total,
            parameters=names, theta=theta,
            values=" ".join(f"option.{n}={round(t)}" for n, t in zip(names, theta, strict=True)),
            message=None if run is None else run.message, url=f"/api/tunes/{record.id}",
            iterations=None if not iterations else [TuneIterationJson(
                k=i.k, flips=list(i.flips), plus=list(i.plus), minus=list(i.minus),
                result=i.result, theta=list(i.theta), tournament_id=i.tournament_id)
                for i in stored])

