"""The builds of a test's sides on each machine, and their benches compared: a commit's
bench node count depends only on its code, so two machines that count differently for the
same commit built differently (another compiler, a broken toolchain) and their games would
not measure the same engine: the test stops with both figures ("wrong bench")."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from runner.build.bench import Bench, WrongBench
from runner.build.builder import Build

__all__ = ["LOG_SHOWN", "MachineBuild", "check_machines"]

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

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MachineBuild:
        """A stored record read back (unknown keys ignored; ValueError when one is missing)."""
        try:
            return cls(side=str(data["side"]), commit=str(data["commit"]),
                       machine=str(data["machine"]),
                       nodes=None if data.get("nodes") is None else int(data["nodes"]),
                       nps=None if data.get("nps") is None else int(data["nps"]),
                       cached=bool(data.get("cached", False)),
                       seconds=float(data.get("seconds", 0.0)), log=str(data.get("log", "")))
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a machine build: {exc}") from None


def check_machines(known: Iterable[MachineBuild], new: MachineBuild) -> None:
    """Raise WrongBench when `new`'s bench differs from another machine's for the same
    commit (the message names both machines and both node counts)."""
    if new.nodes is None:
        return
    for other in known:
        if other.commit == new.commit and other.nodes is not None and other.nodes != new.nodes:
            raise WrongBench(other.nodes, new.nodes, new.side, text=(
                f"wrong bench: {new.side} ({new.commit[:12]}) gives {other.nodes} nodes on "
                f"{other.machine} and {new.nodes} nodes on {new.machine}"))
