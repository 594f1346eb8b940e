"""The service's caps on what a submitter's options ask of the machine: threads and memory.

Which options count is the engines file's word, per engine (``thread_options`` and
``memory_options``; without them the usual names below): Toga II sizes its threads with
``Number of Threads`` and its memory with ``Hash`` and ``Bitbases Cache Size``. Each thread
option is capped on its own; the memory options are capped together, as the engine holds
them all at once (a declared default counts for one the submission leaves alone). A value
given as text counts as the number it writes when that is an integer in ASCII digits, and is
refused otherwise: text is never a way around a cap.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from runner.config.check import ConfigProblem, show_value
from runner.config.model import EngineSpec, TournamentConfig
from runner.protocol.engine import EngineOption
from runner.protocol.options import spin_number
from runner.service.settings import ServiceSettings

__all__ = ["MEMORY_OPTIONS", "THREAD_OPTIONS", "cap_problems"]

MEMORY_OPTIONS = ("Hash", "Memory", "HashSize", "Hash Size", "TableMemory", "Table Memory",
                  "TTSize", "TT Size")
"""The options taken to size an engine's memory in MB when its entry names none."""
THREAD_OPTIONS = ("Threads", "Cores", "CPUs", "SMP", "Max CPUs", "MaxThreads", "Max Threads",
                  "Search Threads")
"""The options taken to set an engine's threads when its entry names none."""

Declarations = Mapping[str, EngineOption] | None
"""An engine's declared options, when it could be started to read them."""


def cap_problems(config: TournamentConfig, submitted: Iterable[Mapping[str, Any] | None],
                 settings: ServiceSettings, source: str,
                 declarations: Iterable[Declarations] = ()) -> list[ConfigProblem]:
    """The thread and memory options above the service's caps, engine by engine: `submitted`
    holds each engine's options as the submitter wrote them (None: none written) and
    `declarations` what each engine declared, when known."""
    problems: list[ConfigProblem] = []
    declared = list(declarations)
    for index, (spec, options) in enumerate(zip(config.engines, submitted, strict=False)):
        if not options:
            continue
        known = declared[index] if index < len(declared) else None
        where = f"engines[{index}].options"
        problems.extend(_thread_problems(spec, options, settings, source, where))
        problems.extend(_memory_problems(spec, options, settings, source, where, known))
    return problems


def _names(chosen: tuple[str, ...] | None, usual: tuple[str, ...]) -> frozenset[str]:
    """The option names that count, folded (engines compare option names without case)."""
    return frozenset(name.strip().casefold() for name in (usual if chosen is None else chosen))


def _number(value: object) -> int | float | None:
    """What a submitted value counts as (None: it writes no number)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    return spin_number(value) if isinstance(value, str) else None


def _thread_problems(spec: EngineSpec, options: Mapping[str, Any], settings: ServiceSettings,
                     source: str, where: str) -> list[ConfigProblem]:
    names = _names(spec.thread_options, THREAD_OPTIONS)
    problems = []
    for name, value in options.items():
        if not isinstance(name, str) or name.strip().casefold() not in names:
            continue
        number = _number(value)
        if number is None:
            problems.append(ConfigProblem(
                source, f"{where}.{name}", show_value(value),
                "a thread count is an integer in ASCII digits"))
        elif number > settings.max_threads:
            problems.append(ConfigProblem(
                source, f"{where}.{name}", show_value(value),
                f"at most {settings.max_threads} threads per engine on this service"))
    return problems


def _memory_problems(spec: EngineSpec, options: Mapping[str, Any], settings: ServiceSettings,
                     source: str, where: str, declared: Declarations) -> list[ConfigProblem]:
    """The memory options together: the submitter's values, the engines file's for the
    others it sets, and the engine's declared defaults for the rest."""
    names = _names(spec.memory_options, MEMORY_OPTIONS)
    asked = {name: value for name, value in options.items()
             if isinstance(name, str) and name.strip().casefold() in names}
    if not asked:
        return []
    problems = [ConfigProblem(source, f"{where}.{name}", show_value(value),
                              "a memory size is an integer (MB) in ASCII digits")
                for name, value in asked.items() if _number(value) is None]
    if problems:
        return problems
    counted: dict[str, tuple[str, float]] = {}  # folded name: (name, MB)
    for name, default in (declared or {}).items():
        number = _number(default.default) if default.default is not None else None
        if name.strip().casefold() in names and number is not None:
            counted[name.strip().casefold()] = (name, number)
    for name, value in (*spec.options, *asked.items()):
        number = _number(value)
        if name.strip().casefold() in names and number is not None:
            counted[name.strip().casefold()] = (name, number)
    total = sum(number for _, number in counted.values())
    if total <= settings.max_hash_mb:
        return []
    parts = " + ".join(f"{name} {number:g}" for name, number in counted.values())
    together = f" ({parts} = {total:g} MB)" if len(counted) > 1 else ""
    return [ConfigProblem(source, f"{where}.{name}", show_value(value),
                          f"at most {settings.max_hash_mb} MB of memory per engine on this "
                          f"service{together}")
            for name, value in asked.items()]
