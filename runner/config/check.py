"""Problems in configuration files, and the checker that collects them while reading tables.

`Checker` reads typed values out of parsed TOML tables and, instead of stopping at the first
mistake, records a `ConfigProblem` (file, key path, value, message) for each one, so that
`ConfigError` can report everything wrong with a file at once. `read_toml` and
`time_control` read a file and a time-control value the same way; `load_file` reads a file
and hands its table to the parser of its kind (a tournament, a tuning run).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Protocol, TypeVar

from runner.config.timecontrol import WrittenTimeControl
from runner.text import name_problem, shown

__all__ = ["ENGINE_NAME_LIMIT", "MISSING", "TOURNAMENT_NAME_LIMIT", "Checker", "ConfigError",
           "ConfigProblem", "TableParser", "join_key", "load_file", "read_toml", "show_value",
           "time_control", "type_name", "unfinishable", "unwritable"]

ENGINE_NAME_LIMIT = 100
"""The longest engine name, in characters (it fills PGN tags, standings and protocol lines)."""
TOURNAMENT_NAME_LIMIT = 200
"""The longest tournament name, in characters."""


@dataclass(frozen=True)
class ConfigProblem:
    """One thing wrong with a configuration: where, which key, what value, and why."""

    file: str
    key: str
    value: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}: {self.key}" if self.key else self.file
        value = f" = {self.value}" if self.value else ""
        return f"{where}{value}: {self.message}"


class ConfigError(ValueError):
    """A configuration that cannot be used; `problems` lists everything found wrong."""

    def __init__(self, problems: list[ConfigProblem] | tuple[ConfigProblem, ...]) -> None:
        self.problems = tuple(problems)
        count = len(self.problems)
        head = f"{count} problem{'s' if count != 1 else ''} in the configuration"
        super().__init__("\n".join([head, *(f"  {p}" for p in self.problems)]))


MISSING = object()
"""Marks a key that is absent (as opposed to present with some value)."""


def show_value(value: object) -> str:
    """A value as it appears in a problem report (TOML-like, shortened, one line of printable
    text: JSON escapes C0 controls, `shown` the rest a terminal would act on)."""
    if value is MISSING:
        return ""
    try:
        text = json.dumps(value, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    text = shown(text)
    return text if len(text) <= 120 else text[:117] + "..."


def type_name(value: object) -> str:
    """The TOML name of a parsed value's type."""
    names = {bool: "boolean", int: "integer", float: "float", str: "string", list: "array",
             dict: "table"}
    return names.get(type(value), type(value).__name__)


class Checker:
    """Collects problems for one file while values are read out of its tables."""

    def __init__(self, file: str, problems: list[ConfigProblem],
                 aliases: Mapping[type[Enum], Mapping[str, str]] | None = None) -> None:
        self.file = file
        self.problems = problems
        self.aliases = aliases or {}

    def add(self, key: str, value: object, message: str) -> None:
        """Record a problem at `key`."""
        self.problems.append(ConfigProblem(self.file, key, show_value(value), message))

    def keys(self, table: Mapping[str, Any], path: str, known: tuple[str, ...]) -> None:
        """Report every key of `table` that is not in `known`."""
        for key, value in table.items():
            if key not in known:
                import difflib  # here: only a wrong key needs it (issue 38, start-up)

                close = difflib.get_close_matches(key, known, n=1)
                hint = f"did you mean {close[0]!r}?" if close else f"known: {', '.join(known)}"
                self.add(join_key(path, key), value, f"unknown key ({hint})")

    def table(self, parent: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any] | None:
        """A sub-table, or None when absent or of the wrong type (reported)."""
        value = parent.get(key, MISSING)
        if value is MISSING:
            return None
        if not isinstance(value, dict):
            self.add(join_key(path, key), value, f"expected a table, not {type_name(value)}")
            return None
        return value

    def get(self, table: Mapping[str, Any], key: str, path: str, kind: type | tuple[type, ...],
            default: Any = None, *, required: bool = False) -> Any:
        """A value of the given type(s); `default` when absent or wrong (reported)."""
        value = table.get(key, MISSING)
        where = join_key(path, key)
        if value is MISSING:
            if required:
                self.add(where, MISSING, "missing required key")
            return default
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if float in kinds:
            kinds = (*kinds, int)
        ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
        if not ok:
            wanted = " or ".join(type_name(k()) for k in kinds if not (k is int and float in kinds))
            self.add(where, value, f"expected {wanted}, not {type_name(value)}")
            return default
        if float in kinds and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        return value

    def integer(self, table: Mapping[str, Any], key: str, path: str, default: int | None,
                minimum: int | None, *, required: bool = False) -> int | None:
        """An integer >= `minimum` (None: any integer)."""
        value = self.get(table, key, path, int, MISSING, required=required)
        if value is MISSING:
            return default
        if minimum is not None and value < minimum:
            self.add(join_key(path, key), value, f"must be at least {minimum}")
            return default
        return int(value)

    def number(self, table: Mapping[str, Any], key: str, path: str, default: float | None,
               ) -> float | None:
        """A float (integers accepted)."""
        return self.get(table, key, path, float, default)

    def name(self, key: str, value: str, limit: int) -> None:
        """Report `value` at `key` unless it is one line of printable text within `limit`
        characters (a name reaches engines' protocol lines, PGN tags and terminals)."""
        problem = name_problem(value, limit)
        if problem is not None:
            self.add(key, value, problem)

    def choice(self, table: Mapping[str, Any], key: str, path: str, enum: type[Enum],
               default: Any) -> Any:
        """A member of `enum` named by its value (case-insensitive, with a few aliases)."""
        value = self.get(table, key, path, str, MISSING)
        if value is MISSING:
            return default
        text = value.strip().lower()
        text = self.aliases.get(enum, {}).get(text, text)
        try:
            return enum(text)
        except ValueError:
            known = ", ".join(str(member.value) for member in enum)
            self.add(join_key(path, key), value, f"expected one of: {known}")
            return default


def join_key(path: str, key: str) -> str:
    """A dotted key path."""
    return f"{path}.{key}" if path else key


def read_toml(path: Path, problems: list[ConfigProblem]) -> dict[str, Any] | None:
    """Parse a TOML file, reporting unreadable files and syntax errors."""
    import tomllib  # here: a run from the command line or a stored config reads no TOML

    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        problems.append(ConfigProblem(str(path), "", "", f"cannot read file: {exc.strerror}"))
    except tomllib.TOMLDecodeError as exc:
        problems.append(ConfigProblem(str(path), "", "", f"invalid TOML: {exc}"))
    return None


_Parsed_co = TypeVar("_Parsed_co", covariant=True)
_Parsed = TypeVar("_Parsed")


class TableParser(Protocol[_Parsed_co]):
    """A parser of a file's table: `parse_config`'s and `parse_tune`'s shape."""

    def __call__(self, data: Mapping[str, Any], *, source: str,
                 base_dir: Path | None) -> _Parsed_co:
        """The checked value of `data`, read from `source`, its paths taken from `base_dir`."""
        ...


def load_file(path: str | Path, parse: TableParser[_Parsed]) -> _Parsed:
    """Read a TOML file and check it with `parse` (its name as the source, its folder as the
    base of relative paths); ConfigError listing every problem, the unreadable file first."""
    source = Path(path)
    problems: list[ConfigProblem] = []
    data = read_toml(source, problems)
    if data is None:
        raise ConfigError(problems)
    return parse(data, source=str(source), base_dir=source.resolve().parent)


def time_control(value: object, where: str, check: Checker) -> WrittenTimeControl | None:
    """A time control as written, parsed (once: the games read its `control`); numbers are
    taken as seconds."""
    if value is MISSING:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = f"{value:g}"
    if not isinstance(value, str):
        check.add(where, value, f"expected a time control string, not {type_name(value)}")
        return None
    try:
        return WrittenTimeControl(value)
    except ValueError as exc:
        check.add(where, value, str(exc))
        return None


def unfinishable(text: str) -> str | None:
    """Why a game under the time control `text` could not end, or None when it can.

    ``inf`` (no clock) is fine with a depth or node limit, as cutechess-cli's ``tc=inf
    depth=1``; alone it lets an engine think forever. A clock period with no time and no
    increment (``0``, ``40/0``) forfeits every game at its first move. A
    `WrittenTimeControl` is not parsed again.
    """
    try:
        control = WrittenTimeControl(text).control
    except ValueError as exc:
        return str(exc)
    if control.is_infinite:
        return ("no limit on thinking time: a game could never end; give a clock (40/60, "
                "10+0.1), st=SECONDS, depth=N or nodes=N (tc=inf needs depth= or nodes=)")
    for period in control.periods:
        if period.base <= 0 and period.increment <= 0:
            return (f"clock period {period.to_pgn()!r} gives no time at all: every game would "
                    "be lost on time at the first move")
    return None


def unwritable(path: Path, *, create_parents: bool = True) -> str | None:
    """Why a file cannot be written (appended to, or created, with its missing parent
    directories when `create_parents`), or None when it can: checked before anything is
    played or stored.

    Where it can, the file is opened as the writer will open it (appending; a file that does
    not exist yet is created and removed again): permissions say yes to root where the file
    system says no (/sys, /proc, a read-only mount)."""
    target = Path(path)
    if target.exists():
        if target.is_dir():
            return "is a directory, not a file"
        if not os.access(target, os.W_OK):
            return "is not writable (permission denied)"
        if not target.is_file():  # a pipe or a device: opening one may wait for its reader
            return None
        return _open_problem(target, os.O_WRONLY | os.O_APPEND, "cannot be opened for appending",
                             write=True)
    parent = target.parent
    if not create_parents and not parent.is_dir():
        if parent.exists():
            return f"cannot be created: {parent} is not a directory"
        return f"cannot be created: directory {parent} does not exist"
    if parent.is_dir():
        if not os.access(parent, os.W_OK | os.X_OK):
            return f"cannot be created: directory {parent} is not writable (permission denied)"
        # O_EXCL: only a file this check created is removed again.
        problem = _open_problem(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, "cannot be created")
        if problem is None:
            target.unlink(missing_ok=True)
        return problem
    while not parent.exists():  # the writer creates missing directories: look at the first that exists
        if parent == parent.parent:
            break
        parent = parent.parent
    if not parent.is_dir():
        return f"cannot be created: {parent} is not a directory"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"cannot be created: directory {parent} is not writable (permission denied)"
    return None


def _open_problem(target: Path, flags: int, failure: str, *, write: bool = False) -> str | None:
    """`failure` and the system's reason when `target` cannot be opened with `flags`; with
    `write`, also when it refuses a write of nothing."""
    try:
        fd = os.open(target, flags, 0o666)
    except OSError as exc:
        return f"{failure}: {exc.strerror or exc}"
    try:
        if write:
            # Files of /proc open for writing as root and refuse the first write (EIO,
            # EINVAL); an empty write asks the file system without changing a regular file
            # (sysfs stores nothing for it either).
            os.write(fd, b"")
    except OSError as exc:
        return f"cannot be written to: {exc.strerror or exc}"
    finally:
        os.close(fd)
    return None
