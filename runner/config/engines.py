"""Reading engine tables (inline, or named from an engines file) into `EngineSpec` values.

An engine's input paths (``dir``, a relative program) are resolved relative to the file that
names the engine; its command is an argv (a plain string is split with `shlex`, never given
to a shell), and a leading ``python`` means the interpreter running the runner, so the
bundled engine (``["python", "-m", "engine"]``) starts in whatever virtual environment is
active.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from runner.config.check import (
    ENGINE_NAME_LIMIT,
    MISSING,
    Checker,
    ConfigError,
    ConfigProblem,
    join_key,
    read_toml,
    show_value,
    time_control,
    type_name,
)
from runner.config.model import (
    ENUM_ALIASES,
    Castling960Style,
    EngineSpec,
    OptionValue,
    Protocol,
    RestartPolicy,
)
from runner.config.programs import ProgramLookup, find_program, searched_places
from runner.config.recipes import DEFAULT_BENCH_PATTERN
from runner.text import unprintable

__all__ = ["ENGINE_KEYS", "BenchDeclaration", "load_bench_declarations", "load_engines_file",
           "parse_engine", "read_engines"]

ENGINE_KEYS = ("use", "name", "command", "dir", "protocol", "tc", "init_strings", "options",
               "env", "restart", "castling960", "ponder", "thread_options", "memory_options",
               "bench", "bench_nodes", "reference_nps")
"""The keys of an engine table."""
_BENCH_WORDS = ("bench",)
"""The words of ``bench = true``: Stockfish's and most UCI engines' own bench."""


@dataclass(frozen=True)
class BenchDeclaration:
    """An engine's own bench as an engines file declares it: the words after its command
    that run it (empty: it has none), how its node count is read (`runner.build.bench.
    read_bench`), and its speed on the machine the service's time controls are meant for."""

    words: tuple[str, ...] = ()
    nodes_pattern: str = DEFAULT_BENCH_PATTERN
    reference_nps: int | None = None
    """Nodes per second of that bench on the reference machine (None: not declared)."""


def load_engines_file(path: str | Path) -> tuple[EngineSpec, ...]:
    """Read an engines file (``[[engines]]`` tables) on its own; raises ConfigError."""
    source = Path(path)
    problems: list[ConfigProblem] = []
    entries = _engines_file(source, problems)
    if problems:
        raise ConfigError(problems)
    return tuple(_build_engine(raw, where, problems) for raw, where in entries.values())


def load_bench_declarations(path: str | Path) -> dict[str, BenchDeclaration]:
    """The bench declarations of an engines file's engines, by name (only those declaring
    a bench or a reference speed); raises ConfigError naming the file, key and value."""
    source = Path(path)
    problems: list[ConfigProblem] = []
    entries = _engines_file(source, problems)
    found: dict[str, BenchDeclaration] = {}
    for name, (raw, where) in entries.items():
        declared = _bench(raw, where.path, where.check)
        if declared != BenchDeclaration():
            found[name] = declared
    if problems:
        raise ConfigError(problems)
    return found


def parse_engine(data: Mapping[str, Any], *, source: str = "<config>",
                 base_dir: Path | None = None) -> EngineSpec:
    """Check and resolve one engine table (the keys of ``[[engines]]``); raises ConfigError."""
    problems: list[ConfigProblem] = []
    where = _Where(Checker(source, problems, ENUM_ALIASES), base_dir or Path.cwd(), "")
    entry = _build_engine(data, where, problems)
    if problems:
        raise ConfigError(problems)
    return entry


def read_engines(data: Mapping[str, Any], base: Path, check: Checker,
                 programs: ProgramLookup = ProgramLookup.AT_LOAD) -> list[EngineSpec]:
    """The tournament's engines: inline tables, names from the engines file, or both;
    `programs` says whether a missing program is a problem now or at the game's start."""
    library: dict[str, tuple[Mapping[str, Any], _Where]] = {}
    engines_file = check.get(data, "engines_file", "", str)
    if engines_file is not None:
        path = base / engines_file
        library = _engines_file(path, check.problems, where=("engines_file", engines_file))
    raw = data.get("engines", MISSING)
    if raw is MISSING:
        check.add("engines", MISSING, "missing required key: list the engines to play")
        return []
    if not isinstance(raw, list):
        check.add("engines", raw, f"expected an array, not {type_name(raw)}")
        return []
    here = _Where(check, base, "", programs)
    result: list[EngineSpec] = []
    for index, item in enumerate(raw):
        path = f"engines[{index}]"
        if isinstance(item, str):
            item = {"use": item}
        if not isinstance(item, dict):
            check.add(path, item, "expected an engine table or the name of an engine in "
                      f"the engines file, not {type_name(item)}")
            continue
        use = item.get("use", MISSING)
        if use is MISSING:
            result.append(_build_engine(item, here.at(path), check.problems))
            continue
        if not isinstance(use, str):
            check.add(f"{path}.use", use, f"expected a string, not {type_name(use)}")
            continue
        if use not in library:
            known = ", ".join(library) or "none"
            reason = ("no engines_file is set" if engines_file is None
                      else f"not in {engines_file} (known: {known})")
            check.add(f"{path}.use", use, f"unknown engine: {reason}")
            continue
        base_table, where = library[use]
        overrides = {k: v for k, v in item.items() if k != "use"}
        if overrides:
            # The merged entry is reported at its place in the tournament file; paths in it
            # stay relative to the engines file that defined the engine.
            where = _Where(check, where.base, path, programs)
        else:
            where = replace(where, programs=programs)
        result.append(_build_engine({**base_table, **overrides}, where, check.problems))
    return result


@dataclass(frozen=True)
class _Where:
    """Where an engine table came from: its file's checker, base directory and key path."""

    check: Checker
    base: Path
    path: str
    programs: ProgramLookup = ProgramLookup.AT_LOAD
    """When a missing program is reported (at-start: never here, by the game)."""

    def at(self, path: str) -> _Where:
        """The same file, another key path."""
        return _Where(self.check, self.base, path, self.programs)


def _engines_file(path: Path, problems: list[ConfigProblem],
                  where: tuple[str, str] | None = None,
                  ) -> dict[str, tuple[Mapping[str, Any], _Where]]:
    """Engine tables of an engines file, by name."""
    if not path.is_file():
        key, value = where if where is not None else ("", "")
        problems.append(ConfigProblem(str(path), key, show_value(value),
                                      "engines file not found or not a file"))
        return {}
    data = read_toml(path, problems)
    if data is None:
        return {}
    check = Checker(str(path), problems, ENUM_ALIASES)
    # Recipes (runner.build) share the file: engines built from an allow-listed repository.
    check.keys(data, "", ("engines", "recipes"))
    raw = data.get("engines", [])
    if not isinstance(raw, list):
        check.add("engines", raw, f"expected an array of tables, not {type_name(raw)}")
        return {}
    found: dict[str, tuple[Mapping[str, Any], _Where]] = {}
    for index, item in enumerate(raw):
        key = f"engines[{index}]"
        if not isinstance(item, dict):
            check.add(key, item, f"expected a table, not {type_name(item)}")
            continue
        name = item.get("name")
        if not isinstance(name, str) or not name:
            check.add(f"{key}.name", item.get("name", MISSING),
                      "every engine in an engines file needs a name (a string)")
            continue
        if name in found:
            check.add(f"{key}.name", name, "duplicate engine name")
            continue
        found[name] = (item, _Where(check, path.resolve().parent, key))
    return found


def _build_engine(raw: Mapping[str, Any], where: _Where,
                  problems: list[ConfigProblem]) -> EngineSpec:
    """Check one engine table and resolve its command."""
    check, path = where.check, where.path
    check.keys(raw, path, ENGINE_KEYS)
    name = check.get(raw, "name", path, str, "", required=True)
    if isinstance(raw.get("name"), str):
        if not name.strip():
            check.add(join_key(path, "name"), name, "must not be empty")
        else:
            check.name(join_key(path, "name"), name, ENGINE_NAME_LIMIT)
    written = _command(raw.get("command", MISSING), join_key(path, "command"), check,
                       where.programs)
    dir_text = check.get(raw, "dir", path, str)
    directory: Path | None = None
    if dir_text is not None:
        directory = (where.base / dir_text).resolve()
        if not directory.is_dir():
            check.add(join_key(path, "dir"), dir_text, f"no such directory ({directory})")
            directory = None
    command = _resolve_command(written, directory, where) if written else ()
    protocol = check.choice(raw, "protocol", path, Protocol, Protocol.CECP)
    tc = time_control(raw.get("tc", MISSING), join_key(path, "tc"), check)
    init = _string_list(raw.get("init_strings", MISSING), join_key(path, "init_strings"), check)
    options = _options(check.table(raw, "options", path), join_key(path, "options"), check)
    env = _env(check.table(raw, "env", path), join_key(path, "env"), check)
    restart = check.choice(raw, "restart", path, RestartPolicy, RestartPolicy.AUTO)
    castling = check.choice(raw, "castling960", path, Castling960Style, Castling960Style.OO)
    ponder = check.get(raw, "ponder", path, bool, False)
    # What the service caps: only the operator's engines file says it (a submission may not).
    threads, memory = (
        _string_list(raw[key], join_key(path, key), check) if key in raw else None
        for key in ("thread_options", "memory_options"))
    _bench(raw, path, check)  # checked here too: a wrong one is named wherever it is read
    return EngineSpec(
        name=name, command=command, written_command=written, dir=directory, protocol=protocol,
        tc=tc, init_strings=init, options=options, env=env, restart=restart,
        castling960=castling, ponder=ponder, protocol_detect="protocol" not in raw,
        thread_options=threads, memory_options=memory,
    )


def _bench(raw: Mapping[str, Any], path: str, check: Checker) -> BenchDeclaration:
    """An engine table's bench: ``bench`` (true: the word ``bench``; false: none; or the
    words, an array), ``bench_nodes`` (a regular expression whose first group is the node
    count) and ``reference_nps`` (a positive integer)."""
    value = raw.get("bench", MISSING)
    where = join_key(path, "bench")
    words: tuple[str, ...] = ()
    if value is True:
        words = _BENCH_WORDS
    elif isinstance(value, list) and value and all(
            isinstance(v, str) and v and unprintable(v) is None for v in value):
        words = tuple(value)
    elif value is not MISSING and value is not False:
        check.add(where, value, "expected true (the word 'bench'), false, or the bench's words "
                  "after the command (an array of non-empty strings)")
    pattern = check.get(raw, "bench_nodes", path, str, DEFAULT_BENCH_PATTERN)
    try:
        if re.compile(pattern).groups < 1:
            check.add(join_key(path, "bench_nodes"), pattern,
                      "needs a group ( ... ) around the node count")
            pattern = DEFAULT_BENCH_PATTERN
    except re.error as error:
        check.add(join_key(path, "bench_nodes"), pattern, f"not a regular expression: {error}")
        pattern = DEFAULT_BENCH_PATTERN
    reference = check.get(raw, "reference_nps", path, int)
    if reference is not None and reference <= 0:
        check.add(join_key(path, "reference_nps"), reference,
                  "must be a positive number of nodes per second")
        reference = None
    return BenchDeclaration(words, pattern, reference)


def _command(value: object, where: str, check: Checker,
             programs: ProgramLookup = ProgramLookup.AT_LOAD) -> tuple[str, ...]:
    """An argv: a list of strings, or a string split like a POSIX shell would (never run by
    one); an empty program word is, with `ProgramLookup.AT_START`, one that is not there."""
    if value is MISSING:
        check.add(where, MISSING, "missing required key: the engine's command line")
        return ()
    if isinstance(value, str):
        try:
            argv = shlex.split(value)
        except ValueError as exc:
            check.add(where, value, f"cannot split the command: {exc}")
            return ()
    elif isinstance(value, list) and all(isinstance(part, str) for part in value):
        argv = list(value)
    else:
        check.add(where, value, "expected an array of strings (argv) or a string")
        return ()
    if not argv or (not argv[0] and programs is ProgramLookup.AT_LOAD):
        check.add(where, value, "empty command")
        return ()
    return tuple(argv)


def _resolve_command(argv: tuple[str, ...], directory: Path | None,
                     where: _Where) -> tuple[str, ...]:
    """The argv with its program made absolute; a missing program is reported, or with
    `ProgramLookup.AT_START` kept as written for the game that starts it to fail on."""
    program = argv[0]
    found = find_program(program, directory, where.base)
    if found is None and where.programs is ProgramLookup.AT_START:
        return argv
    if found is None:
        place = searched_places(program, directory, where.base)
        where.check.add(join_key(where.path, "command"), list(argv),
                        f"engine program {program!r} not found {place} (or not executable)")
        return argv
    return (found, *argv[1:])


def _string_list(value: object, where: str, check: Checker) -> tuple[str, ...]:
    """An array of strings (a single string is taken as a one-element array)."""
    if value is MISSING:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    check.add(where, value, "expected an array of strings")
    return ()


def _options(table: Mapping[str, Any] | None, where: str,
             check: Checker) -> tuple[tuple[str, OptionValue], ...]:
    """Engine options: names mapped to strings, numbers or booleans."""
    if table is None:
        return ()
    result: list[tuple[str, OptionValue]] = []
    for key, value in table.items():
        if isinstance(value, (str, int, float, bool)):
            result.append((key, value))
        else:
            check.add(join_key(where, key), value, "an option value must be a string, number or "
                      f"boolean, not {type_name(value)}")
    return tuple(result)


def _env(table: Mapping[str, Any] | None, where: str, check: Checker) -> tuple[tuple[str, str], ...]:
    """Extra environment variables for the engine process."""
    if table is None:
        return ()
    result: list[tuple[str, str]] = []
    for key, value in table.items():
        if isinstance(value, str):
            result.append((key, value))
        else:
            check.add(join_key(where, key), value, "environment values must be strings")
    return tuple(result)
