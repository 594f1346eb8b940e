"""The record of a test's side built on a machine: the commit, the machine, its bench and
the end of its log, kept with the test and shown on its page. A commit's bench node count
depends only on its code, so the records of one commit on several machines (the service's
host, the Dask workers that build it where they play) must agree, and agree with the
declared count: `machines_disagree` says where they do not ("wrong bench")."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from runner.build.bench import Bench, WrongBench
from runner.build.builder import Build
from runner.config.recipes import BuildOrder

__all__ = ["LOG_SHOWN", "MachineBuild", "machines_disagree"]

LOG_SHOWN = 4000
"""The characters of a build's log kept with the test (its end: where an error is)."""


@dataclass(frozen=True)
class MachineBuild:
    """One side of a test built on one machine: the commit, the machine, how, its bench."""

    side: str
    """``base`` or ``dev``."""
    commit: str
    machine: str
    """Where it was built: the service's host, a Dask worker, a remote worker."""
    nodes: int | None
    """The bench's node count (None: the recipe has no bench)."""
    nps: int | None
    cached: bool
    seconds: float
    log: str
    """The end of the build's output."""

    @classmethod
    def of(cls, side: str, built: Build, bench: Bench | None, machine: str) -> MachineBuild:
        """The record of `built` (and its bench) on `machine`."""
        return cls(side, built.commit, machine, None if bench is None else bench.nodes,
                   None if bench is None else bench.nps, built.cached, round(built.seconds, 2),
                   built.log[-LOG_SHOWN:])

    def to_json(self) -> dict[str, Any]:
        """As stored with the test (JSON types only)."""
        return asdict(self)


def machines_disagree(orders: Iterable[BuildOrder],
                      builds: Iterable[MachineBuild]) -> WrongBench | None:
    """The first build whose bench node count is not its order's expected one (the count
    another machine measured or the test declared), naming both figures; None when all
    agree (or nothing is expected)."""
    expected = {(o.side, o.commit): o for o in orders}
    for made in builds:
        order = expected.get((made.side, made.commit))
        if order is None or order.expected_nodes is None or made.nodes is None:
            continue
        if made.nodes != order.expected_nodes:
            where = f"{made.side} ({made.commit[:12]})"
            return WrongBench(order.expected_nodes, made.nodes, where,
                              machines=(order.expected_on, made.machine))
    return None
