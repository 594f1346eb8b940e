"""What a recipe is (how an allow-listed repository becomes an engine) and an order to build
one at a commit where the games run.

The recipe is read from an engines file by `runner.build.recipe`; it lives here, beside the
engines, because a tournament's engine built from a recipe carries its `BuildOrder` in the
configuration (`EngineSpec.built_from`): a Dask worker builds the engine itself from it, and a
resumed run finds it in the stored configuration.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DEFAULT_BENCH_PATTERN", "BuildOrder", "Recipe"]

DEFAULT_BENCH_PATTERN = r"Nodes searched\s*:\s*(\d+)"
"""How a bench's node count is found (Stockfish's spelling, which most UCI engines share)."""


@dataclass(frozen=True)
class Recipe:
    """How one allow-listed repository becomes an engine."""

    name: str
    repository: str
    """A local repository's absolute path, or a git URL."""
    command: tuple[str, ...]
    """The built engine's argv; a relative program is looked up in the checkout."""
    build: tuple[str, ...] = ()
    """The argv run in the checkout to build it (none: nothing to build)."""
    bench: tuple[str, ...] = ()
    """Arguments appended to `command` for a bench (none: the engine has no bench)."""
    bench_nodes: str = DEFAULT_BENCH_PATTERN
    """A regular expression whose first group is the bench's node count."""
    build_timeout: float = 600.0
    bench_timeout: float = 300.0
    reference_nps: int | None = None
    """Its bench's nodes per second on the machine the time controls are meant for: a
    remote worker's games of the built engine are scaled by it over the worker's own bench
    of its build (None: by the machine's bench)."""
    env: tuple[tuple[str, str], ...] = ()
    """Variables the build and the engine are given, beyond the few every build gets."""
    engine: Mapping[str, Any] = field(default_factory=dict, hash=False)
    """The rest of an engine table (protocol, options...), applied to the built engine (a
    table: left out of the hash of a frozen configuration that holds the recipe)."""
    source: str = ""
    """The file the recipe was read from (for messages)."""

    def identity(self) -> dict[str, Any]:
        """What decides a build's output besides the commit (a build cache keys on it)."""
        return {"repository": self.repository, "build": list(self.build),
                "command": list(self.command), "env": [list(pair) for pair in self.env]}


@dataclass(frozen=True)
class BuildOrder:
    """One side of a branch test to build where its games run: the recipe at a commit, and
    the bench node count every machine's build must give."""

    recipe: Recipe
    commit: str
    """The resolved hash (never a ref: every machine builds the same code)."""
    side: str
    """``base`` or ``dev``."""
    expected_nodes: int | None = None
    """The node count the bench must give (None: the recipe has no bench, or none known)."""
    expected_on: str = ""
    """Where `expected_nodes` comes from: the machine that measured it, or the declaration."""
