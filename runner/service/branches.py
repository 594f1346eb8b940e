"""The service's queue of branch tests: submitted over the API, built and benched on this
host, their stages played as the service's tournaments, STC then LTC.

A test waits its turn (`pending`) behind those of a higher priority, and of the same priority
behind older ones; at most `max_running` tests are built or played at once, as the service's
tournaments are. A running stage plays `share` parts of the service's games at once out of
the shares of all running tests (`stage_concurrency`), re-divided whenever a test starts,
ends, is paused, stopped or reprioritised. Its sides are built in the build cache
(a cache hit costs a git fetch), benched and checked against the declared node counts; a
failed build or a wrong bench fails the test with the reason kept. When a stage's SPRT
accepts H1 the next stage is submitted at once; otherwise the test is finished there. A
restart finds the tests where they were: a stage's tournament is resumed by the manager
like any other, and the queue waits for it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from runner.app.branch import (
    Sides,
    build_orders,
    build_sides,
    stage_table,
    stored_decision,
    with_build_orders,
)
from runner.build import BenchFailed, BuildFailed, GitError, Mirror, UnknownRef, WrongBench
from runner.build.benches import MachineBuild
from runner.build.testfile import BranchTest, parse_branch_test
from runner.config.check import Checker, ConfigError, ConfigProblem
from runner.service.manager import Conflict, TournamentManager
from runner.service.settings import ServiceSettings
from runner.service.stages import StageJson, stage_figures, test_stages
from runner.service.submission import SOURCE, check_stage, take_placement
from runner.stats.sprt import SprtDecision
from runner.store.store import BranchTestRecord, Store

__all__ = ["BranchQueue", "branch_placement", "check_branch_test", "next_tests",
           "stage_concurrency"]

log = logging.getLogger(__name__)

_ACTIVE = ("building", "running")
_ACTIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "approve": (("approval",), "pending"),
    "pause": (("approval", "pending", "building", "running"), "paused"),
    "resume": (("paused",), "pending"),
    "stop": (("approval", "pending", "building", "running", "paused"), "stopped")}
"""What each admin action takes a test from, and to."""


def next_tests(tests: list[BranchTestRecord], free: int) -> list[BranchTestRecord]:
    """The pending tests to start now, best first: higher priority, then the older."""
    pending = sorted((t for t in tests if t.state == "pending"),
                     key=lambda t: (-t.priority, t.id))
    return pending[:max(0, free)]


def stage_concurrency(share: float, running_shares: list[float], games: int,
                      asked: int) -> int:
    """Games at once for a stage with `share`, beside running tests' shares, out of the
    service's `games`: its part, at least one, at most what the test asked."""
    total = share + sum(running_shares)
    part = int(games * share / total) if total > 0 else games
    return max(1, min(asked, part))


def branch_placement(data: Mapping[str, Any], settings: ServiceSettings) -> str | None:
    """Where a submitted test's stages play (``placement``: host, cluster or workers; None:
    the operator's choice); ConfigError when this service does not offer it."""
    return take_placement(dict(data), settings)


def check_branch_test(data: Mapping[str, Any], settings: ServiceSettings) -> BranchTest:
    """A submitted branch test checked against the service's engines file and bounds (each
    stage's tournament table too); ConfigError with every problem at once."""
    refusals: list[ConfigProblem] = []
    if "engines_file" in data:
        Checker(SOURCE, refusals).add(
            "engines_file", data["engines_file"],
            "not allowed here: the service's engines file names the recipes")
    try:
        branch_placement(data, settings)
    except ConfigError as exc:
        refusals.extend(exc.problems)
    rest = {k: v for k, v in data.items() if k not in ("engines_file", "placement")}
    problems: list[ConfigProblem] = []
    try:
        test = parse_branch_test(rest, Checker(SOURCE, problems), Path(SOURCE),
                                 settings.engines_file)
    except ConfigError as exc:
        raise ConfigError([*refusals, *exc.problems]) from None
    # The stages' other keys, checked now with a stand-in for the builds (which do not
    # exist yet): the same refusals and bounds as any submission's.
    stand_in = [{"name": "dev", "command": ["python"]},
                {"name": "base", "command": ["python"]}]
    for index, (label, tc) in enumerate(test.stages):
        table = {**test.tournament, "name": f"{test.name} {label}", "format": "match",
                 "tc": tc}
        try:
            check_stage(table, stand_in, settings)
        except ConfigError as exc:
            for problem in exc.problems:
                key = f"branch.stages[{index}]" if problem.key == "tc" else problem.key
                problems.append(dataclasses.replace(problem, key=key))
    problems = [*refusals, *dict.fromkeys(problems)]
    if problems:
        raise ConfigError(problems)
    return test


class BranchQueue:
    """Branch tests from submission to their last stage (see the module's docstring)."""

    def __init__(self, settings: ServiceSettings, store: Store, manager: TournamentManager,
                 cache: Path) -> None:
        self._settings = settings
        self._store = store
        self._manager = manager
        self._cache = cache
        self._tasks: dict[int, asyncio.Task[None]] = {}
        self._closing = False
        self._advancing = asyncio.Lock()

    async def start(self) -> None:
        """Pick the stored tests up where they were (builds that a stop cut start again)."""
        for test in await asyncio.to_thread(self._store.branch_tests.all):
            if test.state == "building":
                await self._set(test.id, state="pending")
        # The resumed stages start at their shares, not at what they had when submitted.
        await self._rebalance()
        for test in await asyncio.to_thread(self._store.branch_tests.all):
            if test.state == "running":
                self._launch(test.id)
        await self._advance()

    async def close(self) -> None:
        """Stop following the tests (their tournaments are the manager's to stop)."""
        self._closing = True
        for task in list(self._tasks.values()):
            task.cancel()
        for task in list(self._tasks.values()):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    # ----------------------------------------------------------------- requests

    async def submit(self, data: Mapping[str, Any], *, approved: bool = True,
                     author: str | None = None) -> int:
        """Check a submitted test, resolve its refs and queue it (or, not `approved`, keep
        it for an admin's approval); its id. ConfigError with every problem (a ref that
        names no commit among them)."""
        test = await asyncio.to_thread(check_branch_test, data, self._settings)
        mirror = Mirror(test.recipe.repository, self._cache)
        try:
            await asyncio.to_thread(mirror.update)
            base = await asyncio.to_thread(mirror.resolve, test.base)
            dev = await asyncio.to_thread(mirror.resolve, test.dev)
        except UnknownRef as exc:
            key = "branch.base" if test.base in str(exc) else "branch.dev"
            raise ConfigError([ConfigProblem(SOURCE, key, test.base if key == "branch.base"
                                             else test.dev, str(exc))]) from None
        except GitError as exc:
            raise ConfigError([ConfigProblem(SOURCE, "branch.recipe", test.recipe.name,
                                             str(exc))]) from None
        test_id = await asyncio.to_thread(
            self._store.branch_tests.add, name=test.name, recipe=test.recipe.name,
            base=(test.base, base.sha), dev=(test.dev, dev.sha), spec=dict(data),
            priority=test.priority, share=test.share, author=author)
        if not approved:
            await self._set(test_id, state="approval",
                            message="waiting for an admin's approval")
        await self._advance()
        return test_id

    async def change(self, test_id: int, action: str) -> BranchTestRecord:
        """An admin's action on a test: ``approve``, ``pause``, ``resume`` or ``stop``
        (Conflict when its state refuses it, KeyError when there is no such test)."""
        test = await self._known(test_id)
        allowed, state = _ACTIONS[action]
        if test.state not in allowed:
            raise Conflict(f"test {test_id} is {test.state}: it cannot {action}")
        message = {"stop": "stopped by an admin", "approve": None}.get(action, test.message)
        record = await self._set(test_id, state=state, message=message)
        if action in ("pause", "stop"):
            await self._stop_stage(test, hard=action == "stop")
            await self._rebalance()
        else:
            await self._advance()
        return record

    async def tests(self) -> list[BranchTestRecord]:
        """Every test, newest first."""
        return await asyncio.to_thread(self._store.branch_tests.all)

    async def test(self, test_id: int) -> BranchTestRecord | None:
        """One test, or None."""
        return await asyncio.to_thread(self._store.branch_tests.get, test_id)

    async def stages(self, test: BranchTestRecord, *, report: bool = False) -> list[StageJson]:
        """The test's stages with their figures: those kept of the ended stages, the
        running one's progress from its tournament, and with `report` its LLR, Elo and
        pentanomial counts (its report, shared by every reader until a game ends)."""
        stages = test_stages(test)
        if test.stage < len(stages) and test.stage >= len(test.results):
            current = stages[test.stage]
            if current.tournament_id is not None:
                tournament_id = current.tournament_id
                # Without the report: the progress of every tournament is one read anyway.
                found = (await self._manager.detail(tournament_id) if report else next(
                    (s for s in await self._manager.summaries() if s.id == tournament_id),
                    None))
                stages[test.stage] = stage_figures(current, found)
        return stages

    async def commits(self, test: BranchTestRecord) -> list[tuple[str, str]]:
        """The commits dev has that base has not (hash, subject), from the mirror."""
        recipe = check_branch_test(test.spec, self._settings).recipe
        mirror = Mirror(recipe.repository, self._cache)
        found = await asyncio.to_thread(mirror.between, test.base_sha, test.dev_sha)
        return [(c.sha, c.subject) for c in found]

    async def prioritise(self, test_id: int, priority: int) -> BranchTestRecord:
        """Give a test another priority (the queue's order changes at once)."""
        record = await self._set(test_id, priority=priority)
        await self._advance()
        await self._rebalance()
        return record

    # ----------------------------------------------------------------- the queue

    async def _advance(self) -> None:
        """Start the pending tests that now have a place."""
        async with self._advancing:  # two at once would both count the same free places
            if self._closing:
                return
            tests = await asyncio.to_thread(self._store.branch_tests.all)
            active = sum(1 for t in tests if t.state in _ACTIVE)
            for test in next_tests(tests, self._settings.max_running - active):
                await self._set(test.id, state="building")
                self._launch(test.id)

    def _launch(self, test_id: int) -> None:
        """Follow a test on a task of its own (once)."""
        if test_id in self._tasks:
            return
        task = asyncio.create_task(self._follow(test_id), name=f"branch-test-{test_id}")
        self._tasks[test_id] = task
        task.add_done_callback(lambda _t: self._tasks.pop(test_id, None))

    async def _follow(self, test_id: int) -> None:
        """Build a test's sides, then play its stages while they pass; record how it ended."""
        try:
            await self._play(test_id)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # one test's failure must not stop the queue
            log.exception("branch test %d failed", test_id)
            await self._set(test_id, state="failed", message=f"{type(exc).__name__}: {exc}")
        if not self._closing:
            await self._rebalance()
            await self._advance()

    async def _play(self, test_id: int) -> None:
        record = await self._known(test_id)
        test = check_branch_test(record.spec, self._settings)
        test = dataclasses.replace(test, base=record.base_sha, dev=record.dev_sha)
        sides = await self._sides(test_id, test)
        if sides is None:
            return
        while True:
            record = await self._known(test_id)
            if record.state not in _ACTIVE:
                return  # paused or stopped meanwhile
            if len(record.tournaments) <= record.stage:
                tournament_id = await self._submit_stage(record, test, sides)
                record = await self._set(test_id, state="running",
                                         tournaments=(*record.tournaments, tournament_id))
                await self._rebalance()
            else:
                tournament_id = record.tournaments[record.stage]
                await self._set(test_id, state="running")
                if not await self._manager.is_finished(tournament_id):
                    # Paused before (stopped), or cut by a restart: it plays on. A stage the
                    # manager already resumed at its start is running: nothing to do.
                    with contextlib.suppress(Conflict):
                        await self._manager.resume(tournament_id)
                await self._rebalance()
            await self._manager.ended(tournament_id)
            record = await self._known(test_id)
            if record.state != "running" or self._closing:
                return
            built = self._manager.take_machine_builds(tournament_id)
            if built:  # each side as the workers built it, beside the host's
                record = await self._set(test_id, builds=[*record.builds, *built])
            failure = await self._stage_failure(tournament_id)
            if failure is not None:  # a worker's build failed, or its bench differs
                await self._set(test_id, state="failed", message=failure)
                return
            decision = await asyncio.to_thread(stored_decision, self._store, tournament_id)
            record = await self._keep_figures(record, tournament_id)
            label = test.stages[record.stage][0]
            if record.stage + 1 >= len(test.stages) or decision is not SprtDecision.H1:
                said = {SprtDecision.H1: "passed", SprtDecision.H0: "failed"}.get(
                    decision, "ended without a decision") if decision else "played"
                await self._set(test_id, state="finished", message=f"{label} {said}")
                return
            await self._set(test_id, stage=record.stage + 1,
                            message=f"{label} passed: {test.stages[record.stage + 1][0]} "
                                    "queued")

    async def _stage_failure(self, tournament_id: int) -> str | None:
        """Why the stage's run failed and left it unfinished (None: it did not)."""
        found = next((s for s in await self._manager.summaries() if s.id == tournament_id),
                     None)
        if found is None or found.status == "finished" or not found.reason:
            return None
        return found.reason

    async def _keep_figures(self, record: BranchTestRecord,
                            tournament_id: int) -> BranchTestRecord:
        """Keep the ended stage's figures with the test (the list reads them)."""
        stage = test_stages(record)[record.stage]
        figures = stage_figures(stage, await self._manager.detail(tournament_id))
        kept = figures.model_dump(mode="json", exclude={"label", "tc", "tournament_id", "url"})
        results = [*record.results[:record.stage], kept]
        return await self._set(record.id, results=results)

    async def _sides(self, test_id: int, test: BranchTest) -> Sides | None:
        """Both sides built and benched, or None with the test failed and why."""
        try:
            sides = await asyncio.to_thread(build_sides, test, self._cache, _note)
            await self._set(test_id, builds=[
                MachineBuild.of(side.role, side.build, side.bench, _HOST).to_json()
                for side in (sides.base, sides.dev)])
            return sides
        except BuildFailed as exc:
            tail = "\n".join(exc.log.splitlines()[-30:])
            message = f"build failed: {exc}\n{tail}"
        except BenchFailed as exc:
            message = f"{exc}\n{exc.output[-2000:]}"
        except (WrongBench, UnknownRef, GitError) as exc:
            message = str(exc)
        await self._set(test_id, state="failed", message=message)
        return None

    async def _submit_stage(self, record: BranchTestRecord, test: BranchTest,
                            sides: Sides) -> int:
        """The stage's tournament, submitted to the manager at the test's share."""
        table = stage_table(test, sides, record.stage)
        engines = table.pop("engines")
        config = await asyncio.to_thread(check_stage, table, engines, self._settings)
        # Where the games run on Dask or remote workers, each builds the sides itself and
        # its bench must give what this host's did.
        config = with_build_orders(config, build_orders(test, sides, _HOST))
        others = [t.share for t in await self.tests()
                  if t.state == "running" and t.id != record.id]
        games = stage_concurrency(record.share, others, self._settings.max_concurrency,
                                  config.concurrency)
        return await self._manager.submit(dataclasses.replace(config, concurrency=games),
                                          branch_placement(record.spec, self._settings))

    async def _rebalance(self) -> None:
        """Re-divide the service's games at once between the running stages by their tests'
        shares (a test started, ended, paused or was reprioritised)."""
        running = [t for t in await self.tests()
                   if t.state == "running" and len(t.tournaments) > t.stage]
        for test in running:
            others = [t.share for t in running if t.id != test.id]
            asked = test.spec.get("concurrency", 1)
            asked = min(asked if isinstance(asked, int) and asked > 0 else 1,
                        self._settings.max_concurrency)
            self._manager.resize(test.tournaments[test.stage], stage_concurrency(
                test.share, others, self._settings.max_concurrency, asked))

    async def _stop_stage(self, test: BranchTestRecord, *, hard: bool = False) -> None:
        """Stop the test's running stage, if it has one."""
        if test.state == "running" and len(test.tournaments) > test.stage:
            with contextlib.suppress(KeyError, Conflict):
                await self._manager.stop(test.tournaments[test.stage], hard=hard)

    async def _known(self, test_id: int) -> BranchTestRecord:
        found = await self.test(test_id)
        if found is None:
            raise KeyError(test_id)
        return found

    async def _set(self, test_id: int, **changes: Any) -> BranchTestRecord:
        try:
            return await asyncio.to_thread(self._store.branch_tests.update, test_id, **changes)
        except LookupError:
            raise KeyError(test_id) from None


_HOST = f"service host ({socket.gethostname()})"
"""The machine a test's sides are first built on (the records and messages name it)."""


def _note(line: str) -> None:
    """What the build of a test's sides found, in the service's log."""
    log.info("%s", line)
