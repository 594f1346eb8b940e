"""Testing a branch against main: both sides built from refs of one recipe and benched, then
a match per stage, the next stage (LTC after STC) only when the one before passed its SPRT.

The sides are decided once per test (`build_sides`): refs resolved to commits, the commits
between them listed, each side built (or found in the build cache) and benched, a declared
node count checked. Each stage is an ordinary tournament (`stage_config`) that the run verb
plays and stores, so a stage is resumed, reported and exported like any other; its name is
the test's and the stage's, so the same test file run again continues where it stopped.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.app.report import report
from runner.build import (
    Bench,
    Build,
    BuildOrder,
    Commit,
    Mirror,
    build,
    check_bench,
    measure_bench,
)
from runner.build.testfile import BranchTest
from runner.config.model import TournamentConfig
from runner.config.parse import parse_config
from runner.stats.sprt import SprtDecision
from runner.store.store import Store
from runner.tournament.events import RunOutcome

__all__ = ["Side", "Sides", "build_orders", "build_sides", "decision", "stage_config",
           "stage_table", "stored_decision", "with_build_orders"]


@dataclass(frozen=True)
class Side:
    """One side of a test: its ref, the commit it named, its build and its bench."""

    role: str
    """``base`` or ``dev``."""
    ref: str
    commit: Commit
    build: Build
    bench: Bench | None

    @property
    def engine_name(self) -> str:
        """The side's name in the games: its role and short commit (``dev-1a2b3c4d``)."""
        return f"{self.role}-{self.commit.sha[:8]}"


@dataclass(frozen=True)
class Sides:
    """Both sides of a test and the commits dev has that base has not."""

    base: Side
    dev: Side
    between: tuple[Commit, ...]


def build_sides(test: BranchTest, cache: Path, say: Callable[[str], None]) -> Sides:
    """Resolve, build and bench both sides (blocking); raises UnknownRef, GitError,
    BuildFailed, BenchFailed or WrongBench, the last naming the side and both counts."""
    mirror = Mirror(test.recipe.repository, cache)
    mirror.update()
    base_commit, dev_commit = mirror.resolve(test.base), mirror.resolve(test.dev)
    between = tuple(mirror.between(base_commit.sha, dev_commit.sha))
    sides = []
    for role, ref, commit, declared in (("base", test.base, base_commit, test.base_bench),
                                        ("dev", test.dev, dev_commit, test.dev_bench)):
        built = build(test.recipe, commit.sha, cache, mirror=mirror)
        how = "from the cache" if built.cached else f"built in {built.seconds:.1f} s"
        say(f"{role}: {ref} = {commit.sha[:12]} ({commit.subject}), {how}")
        bench = None
        if test.recipe.bench:
            bench = measure_bench(built)
            check_bench(bench, declared, f"{role} ({ref}, {commit.sha[:12]})")
            speed = f", {bench.nps} nodes/s" if bench.nps is not None else ""
            say(f"{role}: bench {bench.nodes} nodes{speed}")
        sides.append(Side(role, ref, commit, built, bench))
    return Sides(sides[0], sides[1], between)


def stage_table(test: BranchTest, sides: Sides, stage: int) -> dict[str, Any]:
    """The tournament table of stage `stage` (0: the first): dev against base at the stage's
    time control, every other key from the test."""
    label, tc = test.stages[stage]
    return {**test.tournament, "name": f"{test.name} {label}", "format": "match", "tc": tc,
            "engines": [sides.dev.build.engine_table(sides.dev.engine_name),
                        sides.base.build.engine_table(sides.base.engine_name)]}


def stage_config(test: BranchTest, sides: Sides, stage: int) -> TournamentConfig:
    """Stage `stage`'s tournament read as the test file's own (its paths relative to the
    file), each side carrying its build order; raises ConfigError naming the file."""
    config = parse_config(stage_table(test, sides, stage), source=str(test.source),
                          base_dir=test.source.parent)
    return with_build_orders(config, build_orders(test, sides, "this machine"))


def build_orders(test: BranchTest, sides: Sides, machine: str) -> dict[str, BuildOrder]:
    """Each side's build order by its engine name: the recipe at the side's commit, every
    other machine's bench expected to give what `machine` measured (else the declared
    count, else nothing)."""
    orders = {}
    for side, declared in ((sides.base, test.base_bench), (sides.dev, test.dev_bench)):
        measured = None if side.bench is None else side.bench.nodes
        orders[side.engine_name] = BuildOrder(
            test.recipe, side.commit.sha, side.role,
            expected_nodes=measured if measured is not None else declared,
            expected_on=machine if measured is not None else "the test's declaration")
    return orders


def with_build_orders(config: TournamentConfig,
                      orders: dict[str, BuildOrder]) -> TournamentConfig:
    """`config` with each engine `orders` names carrying its order (a Dask worker builds
    it itself from that)."""
    engines = tuple(dataclasses.replace(e, built_from=orders[e.name]) if e.name in orders
                    else e for e in config.engines)
    return dataclasses.replace(config, engines=engines)


def decision(outcome: RunOutcome) -> SprtDecision | None:
    """A stage's SPRT decision as its run ended (None: no SPRT); the next stage starts on H1."""
    return None if outcome.sprt is None else outcome.sprt.decision


def stored_decision(store: Store, tournament_id: int) -> SprtDecision | None:
    """The SPRT decision of a stage found finished in the store (None: no SPRT, no games)."""
    state = report(store, tournament_id).sprt
    if state is None:
        return None
    if state.stored_decision is not None:
        return SprtDecision(state.stored_decision)
    return None if state.result is None else state.result.decision
