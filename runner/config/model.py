"""Tournament configuration: TOML files read with tomllib, checked, turned into frozen dataclasses.

A tournament file names its engines inline (``[[engines]]`` tables) or by name from an
engines file (``engines_file = "engines.toml"``, whose ``[[engines]]`` tables have the same
keys), and sets the format, rounds and games, time control, openings, adjudication,
concurrency, variant, optional SPRT bounds, PGN output and database URL.

Every problem found is collected, not just the first: `ConfigError` carries them all, each
with the file, the key path (``engines[2].command``) and the offending value. Input files
(engines file, openings book, engine ``dir``) are resolved relative to the file that names
them; output paths (``pgnout``, a SQLite ``database``) are kept as written, relative to the
working directory of the run.

Engine commands are argv lists (a plain string is split with `shlex`, never given to a
shell); a leading ``python`` means the interpreter running the runner, so the bundled engine
(``["python", "-m", "engine"]``) starts in whatever virtual environment is active.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from runner.clock import TimeControl
from runner.config.check import (
    MISSING,
    Checker,
    ConfigError,
    ConfigProblem,
    join_key,
    show_value,
    type_name,
)
from runner.config.programs import find_program, searched_places

__all__ = [
    "AdjudicationConfig",
    "BookFormat",
    "ConfigError",
    "ConfigProblem",
    "DrawAdjudication",
    "EngineEntry",
    "OpeningOrder",
    "OpeningsConfig",
    "Protocol",
    "ResignAdjudication",
    "RestartPolicy",
    "SprtConfig",
    "TournamentConfig",
    "TournamentFormat",
    "Variant",
    "load_config",
    "load_engines_file",
    "parse_config",
    "parse_engine",
]

OptionValue = str | int | float | bool


class TournamentFormat(Enum):
    """How engines are paired."""

    MATCH = "match"
    GAUNTLET = "gauntlet"
    ROUND_ROBIN = "round-robin"


class Protocol(Enum):
    """The protocol an engine speaks."""

    CECP = "cecp"
    UCI = "uci"


class RestartPolicy(Enum):
    """Whether an engine process is started afresh for each game."""

    AUTO = "auto"
    ON = "on"
    OFF = "off"


class Castling960Style(Enum):
    """How Chess960 castling is written to a CECP engine."""

    OO = "oo"
    """O-O / O-O-O, the specification's form for variant fischerandom."""
    KXR = "kxr"
    """The king onto its own rook (e1h1), as Fairy-Stockfish wants it."""


class Variant(Enum):
    """The chess variant played."""

    STANDARD = "standard"
    FISCHERANDOM = "fischerandom"


class BookFormat(Enum):
    """The format of an openings file."""

    EPD = "epd"
    PGN = "pgn"
    POLYGLOT = "polyglot"


class OpeningOrder(Enum):
    """The order in which openings are taken from the book."""

    SEQUENTIAL = "sequential"
    RANDOM = "random"


_ALIASES: dict[type[Enum], dict[str, str]] = {
    TournamentFormat: {"roundrobin": "round-robin", "round_robin": "round-robin"},
    Protocol: {"xboard": "cecp", "winboard": "cecp"},
    Variant: {"chess960": "fischerandom", "frc": "fischerandom", "960": "fischerandom"},
    BookFormat: {"fen": "epd", "bin": "polyglot"},
}
_BOOK_SUFFIXES = {".epd": BookFormat.EPD, ".fen": BookFormat.EPD, ".pgn": BookFormat.PGN,
                  ".bin": BookFormat.POLYGLOT}


# -- results -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class EngineEntry:
    """One engine: how to start it and how to talk to it."""

    name: str
    command: tuple[str, ...]
    """The argv to execute, its program resolved to an absolute path."""
    written_command: tuple[str, ...]
    """The argv as the configuration wrote it (fingerprinted; shown to users)."""
    dir: Path | None = None
    protocol: Protocol = Protocol.CECP
    tc: str | None = None
    """This engine's own time control, overriding the tournament's."""
    init_strings: tuple[str, ...] = ()
    options: tuple[tuple[str, OptionValue], ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    restart: RestartPolicy = RestartPolicy.AUTO
    castling960: Castling960Style = Castling960Style.OO
    """CECP: how Chess960 castling is written to the engine (``oo`` or ``kxr``)."""
    ponder: bool = False
    """Whether the engine may think on its opponent's time (CECP ``hard``)."""

    @property
    def options_dict(self) -> dict[str, OptionValue]:
        """The engine options as a fresh dictionary."""
        return dict(self.options)

    def game_defining(self) -> dict[str, Any]:
        """The parts of this entry that change the games it plays (for fingerprints)."""
        return {
            "name": self.name, "command": list(self.written_command),
            "protocol": self.protocol.value, "tc": self.tc,
            "init_strings": list(self.init_strings), "options": [list(o) for o in self.options],
        }


@dataclass(frozen=True)
class OpeningsConfig:
    """Where openings come from and in which order."""

    file: Path
    format: BookFormat = BookFormat.EPD
    order: OpeningOrder = OpeningOrder.SEQUENTIAL
    seed: int = 0
    plies: int | None = None
    start: int = 1
    """1-based index of the first opening used (as in cutechess-cli)."""

    @property
    def start_index(self) -> int:
        """The 0-based index of the first opening."""
        return self.start - 1


@dataclass(frozen=True)
class DrawAdjudication:
    """Adjudicate a draw after `movenumber` when |score| <= `score` cp for `movecount` moves."""

    movenumber: int = 40
    movecount: int = 8
    score: int = 10


@dataclass(frozen=True)
class ResignAdjudication:
    """Adjudicate a loss when a score <= -`score` cp holds for `movecount` moves."""

    movecount: int = 3
    score: int = 600
    twosided: bool = False
    """Whether the winning side must agree (its score >= `score`) too."""


@dataclass(frozen=True)
class AdjudicationConfig:
    """Game-ending rules beyond the laws of chess; None means the rule is off."""

    draw: DrawAdjudication | None = None
    resign: ResignAdjudication | None = None
    maxmoves: int | None = None
    tb: str = "none"


@dataclass(frozen=True)
class SprtConfig:
    """Sequential probability ratio test settings (bounds in `model` units)."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "normalized"
    maxgames: int | None = None


@dataclass(frozen=True)
class TournamentConfig:
    """A whole, validated tournament configuration."""

    name: str
    format: TournamentFormat
    engines: tuple[EngineEntry, ...]
    tc: str | None = None
    rounds: int = 1
    games: int = 2
    """Games per encounter per round: an even number, each opening played as a game pair."""
    openings: OpeningsConfig | None = None
    adjudication: AdjudicationConfig = field(default_factory=AdjudicationConfig)
    concurrency: int = 1
    variant: Variant = Variant.STANDARD
    sprt: SprtConfig | None = None
    pgnout: Path | None = None
    database: str | None = None
    recover: bool = False
    affinity: bool = False
    """Pin each game slot's engines to one CPU (Linux), slot n on the n-th allowed CPU."""
    source: str = "<config>"

    def engine(self, name: str) -> EngineEntry:
        """The engine called `name`."""
        for entry in self.engines:
            if entry.name == name:
                return entry
        raise KeyError(name)

    def time_control(self, engine: EngineEntry | str) -> TimeControl:
        """The parsed time control an engine plays with (its own, else the tournament's)."""
        entry = self.engine(engine) if isinstance(engine, str) else engine
        text = entry.tc or self.tc
        if text is None:
            raise ValueError(f"engine {entry.name!r} has no time control")
        return TimeControl.parse(text)

    def game_defining(self) -> dict[str, Any]:
        """The settings that decide which games are played and how (JSON-ready)."""
        openings = self.openings
        adj = self.adjudication
        return {
            "format": self.format.value,
            "engines": [e.game_defining() for e in self.engines],
            "tc": self.tc, "rounds": self.rounds, "games": self.games,
            "variant": self.variant.value,
            "openings": None if openings is None else {
                "file": openings.file.name, "format": openings.format.value,
                "order": openings.order.value, "seed": openings.seed, "plies": openings.plies,
                "start": openings.start,
            },
            "adjudication": {
                "draw": None if adj.draw is None else vars(adj.draw),
                "resign": None if adj.resign is None else vars(adj.resign),
                "maxmoves": adj.maxmoves, "tb": adj.tb,
            },
            "sprt": None if self.sprt is None else vars(self.sprt),
        }

    def fingerprint(self) -> str:
        """A stable hash of `game_defining`: a resumed run compares it to detect a changed config.

        Concurrency, output paths, restart policies and where files live are left out, so a
        run can be resumed with more cores or from another directory.
        """
        text = json.dumps(self.game_defining(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def to_json(self) -> dict[str, Any]:
        """The whole configuration as JSON-ready data (stored with a tournament)."""
        data = self.game_defining()
        data.update(
            name=self.name, concurrency=self.concurrency, recover=self.recover,
            affinity=self.affinity,
            pgnout=None if self.pgnout is None else str(self.pgnout), database=self.database,
            source=self.source,
        )
        for out, entry in zip(data["engines"], self.engines, strict=True):
            out.update(resolved_command=list(entry.command), restart=entry.restart.value,
                       dir=None if entry.dir is None else str(entry.dir))
        if self.openings is not None:
            data["openings"]["path"] = str(self.openings.file)
        return data


# -- reading -----------------------------------------------------------------------------------

_TOP_KEYS = ("name", "format", "engines_file", "engines", "rounds", "games", "tc", "openings",
             "adjudication", "concurrency", "variant", "sprt", "pgnout", "database", "recover",
             "affinity")
_ENGINE_KEYS = ("use", "name", "command", "dir", "protocol", "tc", "init_strings", "options",
                "env", "restart", "castling960", "ponder")
_OPENINGS_KEYS = ("file", "format", "order", "seed", "plies", "start")
_ADJ_KEYS = ("draw", "resign", "maxmoves", "tb")
_DRAW_KEYS = ("movenumber", "movecount", "score")
_RESIGN_KEYS = ("movecount", "score", "twosided")
_SPRT_KEYS = ("elo0", "elo1", "alpha", "beta", "model", "maxgames")
_SPRT_MODELS = ("logistic", "normalized", "bayeselo")


def _read_toml(path: Path, problems: list[ConfigProblem]) -> dict[str, Any] | None:
    """Parse a TOML file, reporting unreadable files and syntax errors."""
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        problems.append(ConfigProblem(str(path), "", "", f"cannot read file: {exc.strerror}"))
    except tomllib.TOMLDecodeError as exc:
        problems.append(ConfigProblem(str(path), "", "", f"invalid TOML: {exc}"))
    return None


def load_config(path: str | Path) -> TournamentConfig:
    """Read, check and resolve a tournament file; raises ConfigError listing every problem."""
    source = Path(path)
    problems: list[ConfigProblem] = []
    data = _read_toml(source, problems)
    if data is None:
        raise ConfigError(problems)
    return parse_config(data, source=str(source), base_dir=source.resolve().parent)


def load_engines_file(path: str | Path) -> tuple[EngineEntry, ...]:
    """Read an engines file (``[[engines]]`` tables) on its own; raises ConfigError."""
    source = Path(path)
    problems: list[ConfigProblem] = []
    entries = _engines_file(source, problems)
    if problems:
        raise ConfigError(problems)
    return tuple(_build_engine(raw, where, problems) for raw, where in entries.values())


def parse_engine(data: Mapping[str, Any], *, source: str = "<config>",
                 base_dir: Path | None = None) -> EngineEntry:
    """Check and resolve one engine table (the keys of ``[[engines]]``); raises ConfigError."""
    problems: list[ConfigProblem] = []
    where = _Where(Checker(source, problems, _ALIASES), base_dir or Path.cwd(), "")
    entry = _build_engine(data, where, problems)
    if problems:
        raise ConfigError(problems)
    return entry


def parse_config(data: Mapping[str, Any], *, source: str = "<config>",
                 base_dir: Path | None = None) -> TournamentConfig:
    """Check a parsed tournament table (from TOML or built by the CLI) and resolve it.

    Relative input paths are taken from `base_dir` (default: the working directory).
    """
    base = base_dir if base_dir is not None else Path.cwd()
    problems: list[ConfigProblem] = []
    check = Checker(source, problems, _ALIASES)
    check.keys(data, "", _TOP_KEYS)

    name = check.get(data, "name", "", str, "tournament")
    fmt = check.choice(data, "format", "", TournamentFormat, TournamentFormat.GAUNTLET)
    engines = _engines(data, base, check)
    rounds = check.integer(data, "rounds", "", 1, 1)
    games = check.integer(data, "games", "", 2, 2)
    if games is not None and games % 2:
        check.add("games", games, "must be even: every opening is played as a pair of games "
                  "with colors swapped")
    tc = _time_control(data.get("tc", MISSING), "tc", check)
    concurrency = check.integer(data, "concurrency", "", 1, 1)
    variant = check.choice(data, "variant", "", Variant, Variant.STANDARD)
    openings = _openings(check.table(data, "openings", ""), base, check)
    adjudication = _adjudication(check.table(data, "adjudication", ""), check)
    sprt = _sprt(check.table(data, "sprt", ""), check)
    pgnout = check.get(data, "pgnout", "", str)
    database = check.get(data, "database", "", str)
    recover = check.get(data, "recover", "", bool, False)
    affinity = check.get(data, "affinity", "", bool, False)

    _check_format(fmt, engines, sprt, check)
    if "tc" not in data:
        for index, engine in enumerate(engines):
            if engine.tc is None:
                check.add(f"engines[{index}].tc", MISSING,
                          f"engine {engine.name!r} has no time control: set tc at the top "
                          "level or for this engine")
    if problems:
        raise ConfigError(problems)
    return TournamentConfig(
        name=name, format=fmt, engines=tuple(engines), tc=tc, rounds=rounds or 1,
        games=games or 2, openings=openings, adjudication=adjudication,
        concurrency=concurrency or 1, variant=variant, sprt=sprt,
        pgnout=None if pgnout is None else Path(pgnout), database=database, recover=recover,
        affinity=bool(affinity),
        source=source,
    )


def _check_format(fmt: TournamentFormat, engines: list[EngineEntry],
                  sprt: SprtConfig | None, check: Checker) -> None:
    """Engine counts that the format (and an SPRT) need; unique engine names."""
    count = len(engines)
    names = [engine.name for engine in engines]
    if fmt is TournamentFormat.MATCH and count != 2:
        check.add("engines", names, "a match needs exactly 2 engines")
    elif count < 2:
        check.add("engines", names, f"a {fmt.value} needs at least 2 engines")
    if sprt is not None and count != 2:
        check.add("sprt", names, "an SPRT compares exactly 2 engines")
    seen: set[str] = set()
    for index, engine in enumerate(engines):
        if engine.name in seen:
            check.add(f"engines[{index}].name", engine.name, "engine names must be unique")
        seen.add(engine.name)


def _time_control(value: object, where: str, check: Checker) -> str | None:
    """A time-control string that `TimeControl.parse` accepts (numbers taken as seconds)."""
    if value is MISSING:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = f"{value:g}"
    if not isinstance(value, str):
        check.add(where, value, f"expected a time control string, not {type_name(value)}")
        return None
    try:
        TimeControl.parse(value)
    except ValueError as exc:
        check.add(where, value, str(exc))
        return None
    return value


def _engines(data: Mapping[str, Any], base: Path, check: Checker) -> list[EngineEntry]:
    """The tournament's engines: inline tables, names from the engines file, or both."""
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
    here = _Where(check, base, "")
    result: list[EngineEntry] = []
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
            where = _Where(check, where.base, path)
        result.append(_build_engine({**base_table, **overrides}, where, check.problems))
    return result


@dataclass(frozen=True)
class _Where:
    """Where an engine table came from: its file's checker, base directory and key path."""

    check: Checker
    base: Path
    path: str

    def at(self, path: str) -> _Where:
        """The same file, another key path."""
        return _Where(self.check, self.base, path)


def _engines_file(path: Path, problems: list[ConfigProblem],
                  where: tuple[str, str] | None = None,
                  ) -> dict[str, tuple[Mapping[str, Any], _Where]]:
    """Engine tables of an engines file, by name."""
    if not path.is_file():
        key, value = where if where is not None else ("", "")
        problems.append(ConfigProblem(str(path), key, show_value(value),
                                      "engines file not found or not a file"))
        return {}
    data = _read_toml(path, problems)
    if data is None:
        return {}
    check = Checker(str(path), problems, _ALIASES)
    check.keys(data, "", ("engines",))
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
                  problems: list[ConfigProblem]) -> EngineEntry:
    """Check one engine table and resolve its command."""
    check, path = where.check, where.path
    check.keys(raw, path, _ENGINE_KEYS)
    name = check.get(raw, "name", path, str, "", required=True)
    if isinstance(raw.get("name"), str) and not name.strip():
        check.add(join_key(path, "name"), name, "must not be empty")
    written = _command(raw.get("command", MISSING), join_key(path, "command"), check)
    dir_text = check.get(raw, "dir", path, str)
    directory: Path | None = None
    if dir_text is not None:
        directory = (where.base / dir_text).resolve()
        if not directory.is_dir():
            check.add(join_key(path, "dir"), dir_text, f"no such directory ({directory})")
            directory = None
    command = _resolve_command(written, directory, where) if written else ()
    protocol = check.choice(raw, "protocol", path, Protocol, Protocol.CECP)
    tc = _time_control(raw.get("tc", MISSING), join_key(path, "tc"), check)
    init = _string_list(raw.get("init_strings", MISSING), join_key(path, "init_strings"), check)
    options = _options(check.table(raw, "options", path), join_key(path, "options"), check)
    env = _env(check.table(raw, "env", path), join_key(path, "env"), check)
    restart = check.choice(raw, "restart", path, RestartPolicy, RestartPolicy.AUTO)
    castling = check.choice(raw, "castling960", path, Castling960Style, Castling960Style.OO)
    ponder = check.get(raw, "ponder", path, bool, False)
    return EngineEntry(
        name=name, command=command, written_command=written, dir=directory, protocol=protocol,
        tc=tc, init_strings=init, options=options, env=env, restart=restart,
        castling960=castling, ponder=ponder,
    )


def _command(value: object, where: str, check: Checker) -> tuple[str, ...]:
    """An argv: a list of strings, or a string split like a POSIX shell would (never run by one)."""
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
    if not argv or not argv[0]:
        check.add(where, value, "empty command")
        return ()
    return tuple(argv)


def _resolve_command(argv: tuple[str, ...], directory: Path | None,
                     where: _Where) -> tuple[str, ...]:
    """The argv with its program made absolute; a missing program is reported."""
    program = argv[0]
    found = find_program(program, directory, where.base)
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


def _openings(table: Mapping[str, Any] | None, base: Path,
              check: Checker) -> OpeningsConfig | None:
    """The openings section: a readable book file and how to walk it."""
    if table is None:
        return None
    path = "openings"
    check.keys(table, path, _OPENINGS_KEYS)
    file_text = check.get(table, "file", path, str, required=True)
    fmt = check.choice(table, "format", path, BookFormat, None)
    order = check.choice(table, "order", path, OpeningOrder, OpeningOrder.SEQUENTIAL)
    seed = check.integer(table, "seed", path, 0, 0)
    plies = check.integer(table, "plies", path, None, 0)
    start = check.integer(table, "start", path, 1, 1)
    if file_text is None:
        return None
    book = (base / file_text).resolve()
    problem = _unreadable(book)
    if problem is not None:
        check.add("openings.file", file_text, f"{problem} ({book})")
        return None
    if fmt is None:
        fmt = _BOOK_SUFFIXES.get(book.suffix.lower())
        if fmt is None:
            check.add("openings.file", file_text,
                      "cannot tell the book format from the extension: set openings.format")
            return None
    return OpeningsConfig(file=book, format=fmt, order=order, seed=seed or 0, plies=plies,
                          start=start or 1)


def _unreadable(path: Path) -> str | None:
    """Why a file cannot be used as an openings book, or None when it can."""
    if not path.exists():
        return "openings file not found"
    if not path.is_file():
        return "openings file is not a regular file"
    try:
        with path.open("rb") as handle:
            first = handle.read(1)
    except OSError as exc:
        return f"openings file cannot be read: {exc.strerror}"
    if not first:
        return "openings file is empty"
    return None


def _adjudication(table: Mapping[str, Any] | None, check: Checker) -> AdjudicationConfig:
    """The adjudication section (every rule off when absent)."""
    if table is None:
        return AdjudicationConfig()
    path = "adjudication"
    check.keys(table, path, _ADJ_KEYS)
    draw = resign = None
    draw_table = check.table(table, "draw", path)
    if draw_table is not None:
        where = "adjudication.draw"
        check.keys(draw_table, where, _DRAW_KEYS)
        default = DrawAdjudication()
        draw = DrawAdjudication(
            movenumber=check.integer(draw_table, "movenumber", where, default.movenumber, 0)
            or 0,
            movecount=check.integer(draw_table, "movecount", where, default.movecount, 1) or 1,
            score=check.integer(draw_table, "score", where, default.score, 0) or 0,
        )
    resign_table = check.table(table, "resign", path)
    if resign_table is not None:
        where = "adjudication.resign"
        check.keys(resign_table, where, _RESIGN_KEYS)
        default_r = ResignAdjudication()
        resign = ResignAdjudication(
            movecount=check.integer(resign_table, "movecount", where, default_r.movecount, 1)
            or 1,
            score=check.integer(resign_table, "score", where, default_r.score, 1) or 1,
            twosided=check.get(resign_table, "twosided", where, bool, default_r.twosided),
        )
    maxmoves = check.integer(table, "maxmoves", path, None, 1)
    tb = check.get(table, "tb", path, str, "none")
    if tb != "none":
        check.add("adjudication.tb", tb, "tablebase adjudication is not supported: use \"none\"")
        tb = "none"
    return AdjudicationConfig(draw=draw, resign=resign, maxmoves=maxmoves, tb=tb)


def _sprt(table: Mapping[str, Any] | None, check: Checker) -> SprtConfig | None:
    """The SPRT section: bounds, error rates, model, optional game limit."""
    if table is None:
        return None
    path = "sprt"
    check.keys(table, path, _SPRT_KEYS)
    elo0 = check.number(table, "elo0", path, None)
    elo1 = check.number(table, "elo1", path, None)
    for key, value in (("elo0", elo0), ("elo1", elo1)):
        if value is None and key not in table:
            check.add(f"sprt.{key}", MISSING, "missing required key")
    alpha = check.number(table, "alpha", path, 0.05)
    beta = check.number(table, "beta", path, 0.05)
    for key, rate in (("alpha", alpha), ("beta", beta)):
        if rate is not None and not 0.0 < rate < 0.5:
            check.add(f"sprt.{key}", rate, "must be between 0 and 0.5")
    model = check.get(table, "model", path, str, "normalized")
    if model.lower() not in _SPRT_MODELS:
        check.add("sprt.model", model, f"expected one of: {', '.join(_SPRT_MODELS)}")
    maxgames = check.integer(table, "maxgames", path, None, 2)
    if elo0 is not None and elo1 is not None and not elo0 < elo1:
        check.add("sprt.elo1", elo1, f"must be greater than elo0 ({elo0:g})")
    if elo0 is None or elo1 is None:
        return None
    return SprtConfig(elo0=elo0, elo1=elo1, alpha=alpha or 0.05, beta=beta or 0.05,
                      model=model.lower(), maxgames=maxgames)
