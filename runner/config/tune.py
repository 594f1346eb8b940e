"""A tuning file (``runner tune CONFIG.toml``): a tournament file's keys for the engine, time
control, book, adjudication and placement, plus what SPSA needs.

Keys of its own: ``engine`` (one engine: a key of ``engines_file`` or an inline table),
``iterations`` (game pairs), ``seed``, ``batch`` (iterations per live line) and a
``[parameters.NAME]`` table per spin option with ``start``, ``min``, ``max``, ``c_end`` and
``r_end`` as fishtest names them. Every iteration is played as a match of one game pair
between two copies of the engine named ``plus`` and ``minus``; `TuneConfig.pair` builds it.
The file's ``concurrency`` C plays ``C // 2`` pairs at once (`TuneConfig.pairs_at_once`, at
least one), each pair's two games at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from runner.config.check import MISSING, Checker, ConfigError, ConfigProblem, load_file
from runner.config.model import EngineSpec, TournamentConfig
from runner.config.parse import parse_config
from runner.tuning.spsa import SpinParameter

__all__ = ["MINUS", "PLUS", "PairCheck", "TuneConfig", "load_tune", "parse_tune"]

PLUS, MINUS = "plus", "minus"
"""The names of the two sides of an iteration's pair (theta + c*flip and theta - c*flip)."""

PairCheck = Callable[[dict[str, Any]], TournamentConfig]
"""What turns the pair's tournament table into its configuration (ConfigError otherwise):
the file's own reading by default, a service's submission check for a submitted tune."""

_OWN_KEYS = ("engine", "iterations", "seed", "batch", "parameters")
_PARAMETER_KEYS = ("start", "min", "max", "c_end", "r_end")
_PAIR_CONCURRENCY = 2
"""An iteration is one game pair: at most its two games at once."""


@dataclass(frozen=True)
class TuneConfig:
    """A checked tuning file."""

    name: str
    iterations: int
    seed: int
    batch: int
    parameters: tuple[SpinParameter, ...]
    base: TournamentConfig
    """The pair's tournament with the engine's own options (iteration 1's opening)."""
    pairs_at_once: int = 1
    """Iterations in flight, all issued around one theta (`runner.app.tune`)."""
    engine_key: str | None = None
    """The engine's key in the engines file (``engine = "KEY"`` or an inline table's ``use``):
    the name a remote worker's own allow-list knows it by; None for a table without ``use``."""

    def plan(self) -> dict[str, Any]:
        """What a stored run must share with this file to be continued by it."""
        engine = self.base.engines[0]
        return {
            "iterations": self.iterations, "seed": self.seed,
            "parameters": [[p.name, p.start, p.minimum, p.maximum, p.c_end, p.r_end]
                           for p in self.parameters],
            "engine": list(engine.command), "options": [[k, v] for k, v in engine.options],
            "tc": self.base.tc,
            "openings": None if self.base.openings is None else str(self.base.openings.file),
        } | ({"pairs_at_once": self.pairs_at_once} if self.pairs_at_once > 1 else {})

    def pair(self, k: int, plus: tuple[int, ...], minus: tuple[int, ...]) -> TournamentConfig:
        """Iteration `k`'s match: the engine at the `plus` values against it at `minus`,
        one opening (the book's `k`-th from the file's start) played with colours swapped."""
        first, second = self.base.engines
        openings = self.base.openings
        if openings is not None:
            openings = replace(openings, start=openings.start + k - 1)
        return replace(self.base, name=f"{self.name} #{k}", openings=openings, engines=(
            self._with(first, plus), self._with(second, minus)))

    def _with(self, engine: EngineSpec, values: tuple[int, ...]) -> EngineSpec:
        """`engine` with the tuned options set to `values` (its other options kept)."""
        tuned = {p.name for p in self.parameters}
        options = tuple((k, v) for k, v in engine.options if k not in tuned)
        return replace(engine, options=options + tuple(
            (p.name, v) for p, v in zip(self.parameters, values, strict=True)))


def load_tune(path: str | Path) -> TuneConfig:
    """Read and check a tuning file; ConfigError listing every problem."""
    return load_file(path, parse_tune)


def parse_tune(data: Mapping[str, Any], *, source: str = "<tune>",
               base_dir: Path | None = None, check_pair: PairCheck | None = None,
               ) -> TuneConfig:
    """Check a tuning table and resolve it (paths from `base_dir`; the pair's tournament
    table checked by `check_pair` when given)."""
    problems: list[ConfigProblem] = []
    check = Checker(source, problems, {})
    iterations = check.integer(data, "iterations", "", None, 1, required=True)
    seed = check.integer(data, "seed", "", 1, 0)
    batch = check.integer(data, "batch", "", 10, 1)
    parameters = _parameters(check.table(data, "parameters", ""), check)
    engine = data.get("engine", MISSING)
    if engine is MISSING:
        check.add("engine", MISSING, "missing required key: the engine to tune (a key of "
                  "engines_file or an inline table)")
    elif not isinstance(engine, (str, dict)):
        check.add("engine", engine, "expected an engine key or an inline table")
    for key in ("engines", "format", "rounds", "games", "sprt", "pgnout"):
        if key in data:
            check.add(key, data[key], "not a tuning key: each iteration is one game pair "
                      "of the tuned engine against itself")
    base = None
    pairs_at_once = 1
    if not problems:
        table = {k: v for k, v in data.items() if k not in _OWN_KEYS}
        sides = [_side(engine, PLUS), _side(engine, MINUS)]
        asked = table.get("concurrency", 1)
        concurrency = asked if isinstance(asked, int) and not isinstance(asked, bool) else 1
        pairs_at_once = max(1, concurrency // _PAIR_CONCURRENCY)
        table.update(engines=sides, format="match", rounds=1, games=2,
                     concurrency=max(1, min(concurrency, _PAIR_CONCURRENCY)))
        try:
            base = (check_pair(table) if check_pair is not None
                    else parse_config(table, source=source, base_dir=base_dir))
        except ConfigError as exc:
            problems.extend(exc.problems)
    if problems or base is None:
        raise ConfigError(problems)
    return TuneConfig(name=base.name, iterations=iterations or 1, seed=seed or 0,
                      batch=batch or 10, parameters=parameters, base=base,
                      pairs_at_once=pairs_at_once, engine_key=_key(engine))


def _key(engine: object) -> str | None:
    """The engines file's key the tuned engine starts from, if it names one."""
    key = engine.get("use") if isinstance(engine, dict) else engine
    return key if isinstance(key, str) else None


def _side(engine: str | dict[str, Any], name: str) -> dict[str, Any]:
    """One side of the pair: the engine's table (or key) under the side's name."""
    return ({"use": engine, "name": name} if isinstance(engine, str)
            else {**engine, "name": name})


def _parameters(table: Mapping[str, Any] | None, check: Checker) -> tuple[SpinParameter, ...]:
    """The spin options to tune, in the file's order; each refusal names its key."""
    if not table:
        check.add("parameters", MISSING, "missing required table: a [parameters.NAME] table "
                  "per spin option, with start, min, max, c_end and r_end")
        return ()
    found: list[SpinParameter] = []
    for name, raw in table.items():
        path = f"parameters.{name}"
        if not isinstance(raw, dict):
            check.add(path, raw, "expected a table with start, min, max, c_end and r_end")
            continue
        check.keys(raw, path, _PARAMETER_KEYS)
        values = [check.get(raw, key, path, (int, float), required=True)
                  for key in _PARAMETER_KEYS]
        if any(v is None or isinstance(v, bool) for v in values):
            continue
        start, low, high, c_end, r_end = (float(v) for v in values)
        try:
            parameter = SpinParameter(name, start, low, high, c_end, r_end)
        except ValueError as exc:
            check.add(path, raw, str(exc))
            continue
        if not low <= start <= high:
            check.add(f"{path}.start", start, f"must lie within min {low} and max {high}")
            continue
        found.append(parameter)
    return tuple(found)
