"""A built engine's bench: its node count (the build's signature) and its speed.

The bench is the engine's own command line (``engine bench``, as Stockfish and most engines
take it, or what the recipe says), run in the checkout with a clean environment and a time
limit; both output streams are read, since engines print it to either.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass

from runner.build.builder import Build
from runner.build.environment import clean_environment, stop_group
from runner.config.recipes import DEFAULT_BENCH_PATTERN

__all__ = ["Bench", "BenchFailed", "WrongBench", "check_bench", "measure_bench", "read_bench"]

_OUTPUT_LIMIT = 1 << 20
_SPEED = re.compile(r"(?i)(?:nodes/second|nps)\s*:\s*(\d+)|(\d+)\s+nodes per second")


class BenchFailed(RuntimeError):
    """The bench could not be run or read; `output` is the end of what it printed."""

    def __init__(self, message: str, output: str = "") -> None:
        super().__init__(message)
        self.output = output


class WrongBench(RuntimeError):
    """A bench's node count is not the one declared (or not the one another machine got)."""

    def __init__(self, expected: int, found: int, where: str, *,
                 machines: tuple[str, str] | None = None) -> None:
        """`where` names the side; `machines` (the one that gave `expected`, the one that
        gave `found`) when two machines' builds differ, rather than a declaration."""
        if machines is None:
            text = f"{where} declares {expected} nodes, the build gives {found}"
        else:
            text = (f"{where} gives {expected} nodes on {machines[0]} and {found} on "
                    f"{machines[1]}")
        super().__init__(f"wrong bench: {text}")
        self.expected = expected
        self.found = found


@dataclass(frozen=True)
class Bench:
    """What one bench run gave."""

    nodes: int
    nps: int | None
    """The speed the engine reported, when it reports one."""


def measure_bench(built: Build) -> Bench:
    """Run the built engine's bench; raises BenchFailed."""
    recipe = built.recipe
    if not recipe.bench:
        raise BenchFailed(f"recipe {recipe.name!r} has no bench command")
    argv = [*built.engine().command, *recipe.bench]
    home = built.tree.parent / "home"
    env = clean_environment(recipe.env, home=str(home) if home.is_dir() else None)
    try:
        process = subprocess.Popen(argv, cwd=built.tree, env=env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   start_new_session=True)
    except OSError as error:
        raise BenchFailed(f"the bench could not start: {error.strerror or error}") from None
    try:
        out, err = process.communicate(timeout=recipe.bench_timeout)
    except subprocess.TimeoutExpired:
        stop_group(process)
        raise BenchFailed(f"the bench took longer than {recipe.bench_timeout:g} s") from None
    finally:
        stop_group(process)
    text = (out[-_OUTPUT_LIMIT:] + b"\n" + err[-_OUTPUT_LIMIT:]).decode("utf-8", "replace")
    bench = read_bench(text, recipe.bench_nodes)
    if process.returncode != 0 or bench is None:
        why = (f"exited with status {process.returncode}" if process.returncode != 0
               else f"printed no line matching {recipe.bench_nodes!r}")
        raise BenchFailed(f"the bench {why}", text[-4000:])
    return bench


def read_bench(text: str, nodes_pattern: str = DEFAULT_BENCH_PATTERN) -> Bench | None:
    """The node count (the last match of `nodes_pattern`) and the speed a bench printed;
    None when it printed no node count."""
    found = re.findall(nodes_pattern, text)
    if not found:
        return None
    last = found[-1]
    nodes = int(last[0] if isinstance(last, tuple) else last)
    speeds = _SPEED.findall(text)
    nps = int(next(v for v in speeds[-1] if v)) if speeds else None
    return Bench(nodes, nps)


def check_bench(bench: Bench, declared: int | None, where: str) -> None:
    """Raise WrongBench unless `bench` gives the `declared` node count (None: any)."""
    if declared is not None and bench.nodes != declared:
        raise WrongBench(declared, bench.nodes, where)
