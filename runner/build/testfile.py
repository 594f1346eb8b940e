"""A branch test file: a tournament file whose engines are two builds of one recipe.

The ``[branch]`` table names the recipe (in ``engines_file``), the base and dev refs, the
node counts their authors declare, and the stages: time controls played one after the
other, each only when the one before passed its SPRT (STC, then LTC). Every other key is a
tournament's (rounds, games, openings, adjudication, sprt, concurrency...), checked as in
any tournament file when a stage is built.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.build.recipe import read_recipes
from runner.config.check import (
    MISSING,
    Checker,
    ConfigError,
    ConfigProblem,
    join_key,
    read_toml,
    time_control,
    type_name,
)
from runner.config.recipes import Recipe

__all__ = ["BRANCH_KEYS", "TC_PRESETS", "BranchTest", "branch_stages", "load_branch_test",
           "parse_branch_test"]

TC_PRESETS = {"stc": "10+0.1", "ltc": "60+0.6"}
"""The time controls engine teams test at (fishtest's short and long ones)."""

BRANCH_KEYS = ("recipe", "base", "dev", "base_bench", "dev_bench", "stages", "priority",
               "share")
"""The keys of the ``[branch]`` table."""


@dataclass(frozen=True)
class BranchTest:
    """A branch test as its file says it (refs not yet resolved)."""

    name: str
    recipe: Recipe
    base: str
    dev: str
    base_bench: int | None
    dev_bench: int | None
    stages: tuple[tuple[str, str], ...]
    """(label, time control) in playing order: ("STC", "10+0.1"), ("LTC", "60+0.6")."""
    tournament: Mapping[str, Any]
    """The file's tournament keys (no engines: the two builds are added per stage)."""
    source: Path
    priority: int = 0
    """A service's queue starts higher priorities first (a test run here ignores it)."""
    share: float = 1.0
    """A running test's part of a service's games at once, against other running tests'."""


def load_branch_test(path: str | Path) -> BranchTest:
    """Read and check a branch test file; raises ConfigError naming file, key and value."""
    source = Path(path)
    problems: list[ConfigProblem] = []
    data = read_toml(source, problems) if source.is_file() else None
    if data is None:
        if not problems:
            problems.append(ConfigProblem(str(source), "", "", "test file not found"))
        raise ConfigError(problems)
    check = Checker(str(source), problems)
    engines_file = check.get(data, "engines_file", "", str, None, required=True)
    recipes_from = None if engines_file is None else source.resolve().parent / engines_file
    if recipes_from is not None and not recipes_from.is_file():
        check.add("engines_file", engines_file, f"no such file ({recipes_from})")
        recipes_from = None
    rest = {k: v for k, v in data.items() if k != "engines_file"}
    return parse_branch_test(rest, check, source.resolve(), recipes_from)


def parse_branch_test(data: Mapping[str, Any], check: Checker, source: Path,
                      recipes_from: Path | None) -> BranchTest:
    """Check a branch test's table (a file's, or a service submission's with the service's
    engines file as `recipes_from`); raises ConfigError with the problems `check` holds."""
    problems = check.problems
    for key in ("engines", "tc", "format"):
        if key in data:
            check.add(key, data[key], "a branch test sets this itself (the two builds, a "
                      "match, each stage's time control): leave it out")
    table = check.table(data, "branch", "")
    if table is None:
        check.add("branch", data.get("branch", MISSING),
                  "missing required table: recipe, base, dev and stages")
        raise ConfigError(problems)
    check.keys(table, "branch", BRANCH_KEYS)
    recipe = _recipe(table, recipes_from, check)
    base = _ref(table, "base", check)
    dev = _ref(table, "dev", check)
    benches = [check.integer(table, key, "branch", None, 1) for key in ("base_bench",
                                                                       "dev_bench")]
    stages = _stages(table.get("stages", MISSING), check)
    priority = check.get(table, "priority", "branch", int, 0)
    share = check.number(table, "share", "branch", 1.0) or 1.0
    if not 0.01 <= share <= 100:
        check.add("branch.share", share, "expected a number from 0.01 to 100")
    if not -1000 <= priority <= 1000:
        check.add("branch.priority", priority, "expected an integer from -1000 to 1000")
    if len(stages) > 1 and check.table(data, "sprt", "") is None:
        check.add("branch.stages", table.get("stages"), "a chain of stages needs [sprt]: "
                  "the next stage starts when the one before passes")
    name = check.get(data, "name", "", str, "", required=True)
    if problems or recipe is None:
        raise ConfigError(problems)
    rest = {k: v for k, v in data.items() if k != "branch"}
    return BranchTest(name=name, recipe=recipe, base=base, dev=dev, base_bench=benches[0],
                      dev_bench=benches[1], stages=stages, tournament=rest, source=source,
                      priority=priority, share=share)


def branch_stages(spec: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The stages (label, time control) of a test's checked table, as `parse_branch_test`
    reads them (a stored submission's, without reading its recipe again)."""
    table = spec.get("branch")
    written = table.get("stages", MISSING) if isinstance(table, Mapping) else MISSING
    return _stages(written, Checker("", []))


def _recipe(table: Mapping[str, Any], recipes_from: Path | None,
            check: Checker) -> Recipe | None:
    """The recipe the test names, from the engines file (None: reported, or no file)."""
    name = check.get(table, "recipe", "branch", str, None, required=True)
    if name is None or recipes_from is None:
        return None
    problems: list[ConfigProblem] = []
    found = read_toml(recipes_from, problems)
    recipes = ({} if found is None
               else read_recipes(found, recipes_from, Checker(str(recipes_from), problems)))
    check.problems.extend(problems)
    if name not in recipes and not problems:
        known = ", ".join(recipes) or "none"
        check.add("branch.recipe", name,
                  f"no such recipe in {recipes_from.name} (recipes: {known})")
    return recipes.get(name)


def _ref(table: Mapping[str, Any], key: str, check: Checker) -> str:
    """A ref as written (resolved to a commit when the test starts)."""
    value = check.get(table, key, "branch", str, "", required=True)
    if isinstance(table.get(key), str) and not value.strip():
        check.add(join_key("branch", key), value, "must name a branch, tag or commit")
    return value.strip()


def _stages(value: object, check: Checker) -> tuple[tuple[str, str], ...]:
    """The stages: presets (stc, ltc) or time controls, in order, at least one."""
    where = "branch.stages"
    if value is MISSING:
        return (("STC", TC_PRESETS["stc"]),)
    if not isinstance(value, list) or not value:
        check.add(where, value, f"expected a non-empty array, not {type_name(value)}")
        return ()
    stages: list[tuple[str, str]] = []
    for index, item in enumerate(value):
        if isinstance(item, str) and item.lower() in TC_PRESETS:
            stages.append((item.upper(), TC_PRESETS[item.lower()]))
            continue
        tc = time_control(item, f"{where}[{index}]", check)
        if tc is not None:
            stages.append((tc, tc))
    return tuple(stages)
