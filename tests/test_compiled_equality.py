"""`==` in the compiled modules: mypyc compiles ``a == b`` (``!=``, ``in``) between two objects
of a class that does not define ``__eq__`` in its own body as an identity test, even when the
class is a dataclass whose generated ``__eq__`` compares fields (found in protocol/pipe.py:
two equal `EngineConfig` objects compared unequal once compiled, and every reused engine was
restarted). Python compares the fields; the compiled build does not, and no test on the pure
build sees the difference.

So every such comparison in a module of `runner.compiled.COMPILED` is refused here, read from
mypy's types of the source (what mypyc compiles from): two operands of the runner's own
classes (enums aside: their members are singletons) whose class has no ``__eq__`` of its own.
Compare a tuple of the fields instead, or give the class an explicit ``__eq__``.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

from runner.compiled import COMPILED

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def _identity_compared(type_: object) -> list[str]:
    """The runner classes in `type_` (through unions, tuples and containers) whose ``==`` a
    compiled module would turn into identity."""
    from mypy.types import Instance, TupleType, UnionType, get_proper_type

    proper = get_proper_type(type_)  # type: ignore[arg-type]
    if isinstance(proper, UnionType | TupleType):
        return [name for item in proper.items for name in _identity_compared(item)]
    if not isinstance(proper, Instance):
        return []
    info = proper.type
    if info.fullname.startswith("runner."):
        own_eq = any("__eq__" in base.names for base in info.mro if base.fullname != "builtins.object")
        return [] if info.is_enum or own_eq else [info.fullname]
    if info.fullname.startswith(("builtins.", "typing.", "collections.")):
        return [name for arg in proper.args for name in _identity_compared(arg)]
    return []


def test_no_compiled_module_compares_objects_without_their_own_eq() -> None:
    pytest.importorskip("mypy")
    from mypy import build
    from mypy.main import process_options
    from mypy.nodes import ComparisonExpr

    paths = {name: ROOT.joinpath(*name.split(".")).with_suffix(".py") for name in COMPILED}
    files, options = process_options(
        ["--config-file", str(ROOT / "pyproject.toml"), *map(str, paths.values())])
    options.export_types = True
    options.incremental = False  # the expressions' types are kept only for modules checked now
    options.cache_dir = "/dev/null"
    result = build.build(files, options)
    at: defaultdict[tuple[int, int, int | None, int | None], list[ComparisonExpr]] = defaultdict(list)
    for expression in result.types:
        if isinstance(expression, ComparisonExpr):
            at[(expression.line, expression.column, expression.end_line,
                expression.end_column)].append(expression)
    found, seen = [], 0
    for name, path in paths.items():
        source = path.read_text()
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.Compare):
                continue
            key = (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)
            for expression in at.get(key, []):
                seen += 1
                pairs = zip(expression.operators, expression.operands,
                            expression.operands[1:], strict=False)
                for op, left, right in pairs:
                    if op not in ("==", "!=", "in", "not in"):
                        continue
                    lefts = _identity_compared(result.types[left]) if left in result.types else []
                    rights = _identity_compared(result.types[right]) if right in result.types else []
                    if lefts and rights:
                        found.append(f"{name}:{node.lineno}: {ast.get_source_segment(source, node)} "
                                     f"({', '.join(sorted(set(lefts + rights)))})")
    assert seen > 500, f"only {seen} comparisons matched to mypy's types: the check lost its way"
    assert not found, "compared as identity once compiled:\n" + "\n".join(found)
