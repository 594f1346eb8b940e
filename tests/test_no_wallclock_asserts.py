"""No test asserts a fixed wall-clock bound (issue 31): on a loaded machine anything can take
seconds. A test waits for its event under `tests.conftest.EVENT_TIMEOUT` instead; a lower bound
(a wait that must have happened) stays, since load only makes it longer."""

from __future__ import annotations

import ast
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
CLOCKS = {"monotonic", "perf_counter", "time", "monotonic_ns", "perf_counter_ns"}
# Names that hold a duration wherever they come from (a scenario's returned tuple, a record).
DURATION_NAME = re.compile(r"(elapsed|waited|took|quitting|duration|_seconds|^seconds)$")


def _reads_the_wall_clock(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
               and n.func.attr in CLOCKS and isinstance(n.func.value, ast.Name)
               and n.func.value.id == "time" for n in ast.walk(node))


def _clock_names(tree: ast.AST) -> set[str]:
    """Names a file assigns from a wall-clock reading."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _reads_the_wall_clock(node.value):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def _is_duration(node: ast.expr, clock_names: set[str]) -> bool:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
        return _reads_the_wall_clock(node) or any(
            isinstance(side, ast.Name) and side.id in clock_names
            for side in (node.left, node.right))
    name = node.id if isinstance(node, ast.Name) else (
        node.attr if isinstance(node, ast.Attribute) else None)
    return name is not None and (name in clock_names or bool(DURATION_NAME.search(name)))


def _is_fixed_bound(node: ast.expr, clock_names: set[str]) -> bool:
    """A number, or a name standing for one (a parametrized limit), but not the generous
    EVENT_TIMEOUT nor another measured duration."""
    if isinstance(node, ast.Name):
        return node.id != "EVENT_TIMEOUT" and not _is_duration(node, clock_names)
    return any(isinstance(n, ast.Constant) and isinstance(n.value, int | float)
               and not isinstance(n.value, bool) for n in ast.walk(node))


def wall_clock_upper_bounds(source: str) -> list[int]:
    """Lines of `source` whose assert caps a wall-clock duration by a number."""
    tree = ast.parse(source)
    clock_names = _clock_names(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assert):
            continue
        for compare in (n for n in ast.walk(node.test) if isinstance(n, ast.Compare)):
            sides = [compare.left, *compare.comparators]
            for left, op, right in zip(sides, compare.ops, sides[1:], strict=False):
                if isinstance(op, ast.Lt | ast.LtE):
                    small, large = left, right
                elif isinstance(op, ast.Gt | ast.GtE):
                    small, large = right, left
                else:
                    continue
                if _is_duration(small, clock_names) and _is_fixed_bound(large, clock_names):
                    found.append(node.lineno)
    return found


def test_the_scan_finds_the_bounds_it_is_for() -> None:
    source = ("import time\nbegan = time.monotonic()\nelapsed = time.monotonic() - began\n"
              "assert elapsed < 8\nassert time.monotonic() - began < 1.5\n"
              "assert 0.3 <= time.monotonic() - began < 1.5\nassert 2 > record.quit_seconds\n"
              "assert elapsed >= 0.3\nassert elapsed < EVENT_TIMEOUT\nassert plies < 8\n"
              "assert time.monotonic() - began < limit_s\n")
    assert wall_clock_upper_bounds(source) == [4, 5, 6, 7, 11]


def test_no_test_asserts_a_fixed_wall_clock_bound() -> None:
    found = [f"{path.name}:{line}" for path in sorted(TESTS.glob("*.py"))
             for line in wall_clock_upper_bounds(path.read_text(encoding="utf-8"))]
    assert found == [], "wait for the event under EVENT_TIMEOUT instead: " + ", ".join(found)
