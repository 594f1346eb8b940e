"""Engine recipes: how an allow-listed repository is built into an engine and benched.

A recipe sits beside the engines in an engines file (``[[recipes]]``); it names a repository
(a local path, relative to the file, or a URL), the argv that builds it in a checkout of a
commit, the argv that starts the built engine (its program inside the checkout), the argv
appended to that for a bench and how to read the bench's node count. Everything else an
engine table may say (protocol, options, init strings...) is kept and applied to the built
engine. Nothing here is ever given to a shell.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from runner.config.check import (
    MISSING,
    Checker,
    ConfigError,
    ConfigProblem,
    join_key,
    read_toml,
    type_name,
)
from runner.config.engines import ENGINE_KEYS
from runner.config.recipes import DEFAULT_BENCH_PATTERN, Recipe
from runner.text import unprintable

__all__ = ["RECIPE_KEYS", "load_recipes", "read_recipes"]

_OWN_KEYS = ("name", "repository", "build", "command", "bench", "bench_nodes", "build_timeout",
             "bench_timeout", "env", "reference_nps")
_PASSED_KEYS = tuple(k for k in ENGINE_KEYS if k not in (
    "use", "name", "command", "dir", "env", "bench", "bench_nodes", "reference_nps"))
RECIPE_KEYS = _OWN_KEYS + _PASSED_KEYS
"""The keys of a recipe table: its own, then those handed to the built engine's table."""

_URL = re.compile(r"^(https://|ssh://|git@|file://)[^\s]+$")
_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")


def load_recipes(path: str | Path) -> dict[str, Recipe]:
    """The recipes of an engines file, by name; raises ConfigError naming file, key, value."""
    source = Path(path)
    problems: list[ConfigProblem] = []
    if not source.is_file():
        raise ConfigError([ConfigProblem(str(source), "", "", "engines file not found")])
    data = read_toml(source, problems)
    found = {} if data is None else read_recipes(data, source, Checker(str(source), problems))
    if problems:
        raise ConfigError(problems)
    return found


def read_recipes(data: Mapping[str, Any], source: Path, check: Checker) -> dict[str, Recipe]:
    """Check the ``recipes`` array of an engines file's tables (problems go to `check`)."""
    raw = data.get("recipes", [])
    if not isinstance(raw, list):
        check.add("recipes", raw, f"expected an array of tables, not {type_name(raw)}")
        return {}
    found: dict[str, Recipe] = {}
    for index, item in enumerate(raw):
        path = f"recipes[{index}]"
        if not isinstance(item, dict):
            check.add(path, item, f"expected a table, not {type_name(item)}")
            continue
        recipe = _recipe(item, path, source, check)
        if recipe is None:
            continue
        if recipe.name in found:
            check.add(join_key(path, "name"), recipe.name, "duplicate recipe name")
            continue
        found[recipe.name] = recipe
    return found


def _recipe(raw: Mapping[str, Any], path: str, source: Path, check: Checker) -> Recipe | None:
    """One recipe table, or None when it is unusable (reported)."""
    before = len(check.problems)
    check.keys(raw, path, RECIPE_KEYS)
    name = check.get(raw, "name", path, str, "", required=True)
    if isinstance(raw.get("name"), str) and not name.strip():
        check.add(join_key(path, "name"), name, "must not be empty")
    repository = _repository(raw.get("repository", MISSING), join_key(path, "repository"),
                             source, check)
    command = _argv(raw, "command", path, check, required=True)
    build = _argv(raw, "build", path, check)
    bench = _argv(raw, "bench", path, check)
    pattern = check.get(raw, "bench_nodes", path, str, DEFAULT_BENCH_PATTERN)
    try:
        if re.compile(pattern).groups < 1:
            check.add(join_key(path, "bench_nodes"), pattern,
                      "needs a group ( ... ) around the node count")
    except re.error as error:
        check.add(join_key(path, "bench_nodes"), pattern, f"not a regular expression: {error}")
    build_timeout = _seconds(raw, "build_timeout", path, check, 600.0)
    bench_timeout = _seconds(raw, "bench_timeout", path, check, 300.0)
    env = _env(raw, path, check)
    reference = check.get(raw, "reference_nps", path, int)
    if reference is not None and reference <= 0:
        check.add(join_key(path, "reference_nps"), reference,
                  "must be a positive number of nodes per second")
    if len(check.problems) > before:
        return None
    engine = {k: v for k, v in raw.items() if k in _PASSED_KEYS}
    return Recipe(name=name, repository=repository, command=command, build=build,
                  bench=bench, bench_nodes=pattern, build_timeout=build_timeout,
                  bench_timeout=bench_timeout, env=env, engine=engine, source=str(source),
                  reference_nps=reference)


def _repository(value: object, where: str, source: Path, check: Checker) -> str:
    """A git URL as written, or a local path made absolute against the file's directory."""
    if value is MISSING:
        check.add(where, value, "missing required key: a local path or a git URL")
        return ""
    if not isinstance(value, str) or not value.strip() or unprintable(value) is not None:
        check.add(where, value, "expected a local path or a git URL (a string)")
        return ""
    if value.startswith("-"):
        # git would read it as an option.
        check.add(where, value, "must not start with '-'")
        return ""
    if _URL.match(value):
        return value
    if "://" in value:
        check.add(where, value, "only https://, ssh://, git@ and file:// URLs are taken")
        return ""
    local = (source.resolve().parent / value).resolve()
    if not local.is_dir():
        check.add(where, value, f"no such directory ({local})")
        return ""
    return str(local)


def _argv(raw: Mapping[str, Any], key: str, path: str, check: Checker, *,
          required: bool = False) -> tuple[str, ...]:
    """An argv: an array of non-empty strings without control characters."""
    value = raw.get(key, MISSING)
    where = join_key(path, key)
    if value is MISSING:
        if required:
            check.add(where, value, "missing required key: an array of strings (argv)")
        return ()
    if (not isinstance(value, list) or not all(isinstance(v, str) and v for v in value)
            or (required and not value)):
        check.add(where, value, "expected an array of non-empty strings (argv, no shell)")
        return ()
    if any(unprintable(v) is not None for v in value):
        check.add(where, value, "an argument holds a control character")
        return ()
    return tuple(value)


def _seconds(raw: Mapping[str, Any], key: str, path: str, check: Checker,
             default: float) -> float:
    """A positive number of seconds."""
    value = check.number(raw, key, path, default)
    if value is not None and value <= 0:
        check.add(join_key(path, key), value, "must be a positive number of seconds")
        return default
    return default if value is None else value


def _env(raw: Mapping[str, Any], path: str, check: Checker) -> tuple[tuple[str, str], ...]:
    """The recipe's own environment variables, checked by name and value."""
    table = check.table(raw, "env", path)
    if table is None:
        return ()
    pairs: list[tuple[str, str]] = []
    for key, value in table.items():
        where = join_key(join_key(path, "env"), key)
        if not _ENV_NAME.match(key):
            check.add(where, value, "a variable's name is capitals, digits and _")
        elif not isinstance(value, str) or unprintable(value) is not None:
            check.add(where, value, "expected a string without control characters")
        else:
            pairs.append((key, value))
    return tuple(sorted(pairs))
