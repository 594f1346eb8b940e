"""A tournament submitted over HTTP, checked against the service's allow-list before anything runs.

A web client never supplies a command line: its configuration names engines from the
service's engines file (``engines = ["fairymax", {use = "stockfish", tc = "10+0.1"}]``) and
may change only what does not reach the machine (time control, numeric or boolean options,
restart policy). Keys that would run or read something of the client's choosing are refused
with the same problem format the CLI prints (key path, value, why): an engine's ``command``,
``dir``, ``env`` or ``init_strings``, and the run's ``engines_file``, ``database``, ``pgnout``
and ``cluster``. Options are only those the engine declares, of the spin, check and combo
kinds (a string or path option may name a file for the engine to write): checked here
against the declarations when the engine can be started, and again when it starts to play
(the engines carry the mark `options_submitted`). An opening file must
lie inside the service's books directory, and tablebase directories inside its tablebases
directory. Everything else is the CLI's own checking
(`runner.config.parse.parse_config`), so a submission fails exactly where the same file would.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from runner.config.check import ConfigError, ConfigProblem, show_value, type_name
from runner.config.model import TournamentConfig
from runner.config.parse import parse_config
from runner.protocol.engine import EngineOption
from runner.protocol.options import (
    check_submitted,
    declared_option,
    find_declared,
    spin_number,
)
from runner.service.caps import cap_problems
from runner.service.declared import DeclaredOptions
from runner.service.protocols import protocol_problems, requested_protocols
from runner.service.settings import ServiceSettings
from runner.store.store import PLACEMENTS
from runner.tournament.pairing import pairing_for
from runner.tournament.runtime import engine_config

__all__ = ["MAX_GAMES", "SOURCE", "check_stage", "check_submission", "parse_body",
           "take_placement"]

SOURCE = "submitted configuration"
"""How problems name the submitted text (in place of a file name)."""
MAX_GAMES = 1_000_000
"""The most games one submission may schedule."""

_REFUSED_TOP = {
    "engines_file": "the service's engines file is used; name engines from it",
    "database": "the service's database is used",
    "pgnout": "games are stored in the service's database (GET .../pgn gives the PGN)",
    "cluster": "the service decides where games are played",
}
_UNSAFE_NAME = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029=]")
"""What an option name may not hold: control characters (line breaks among them) and '='."""
_REFUSED_ENGINE = ("command", "dir", "env", "init_strings", "thread_options", "memory_options")
_ENGINE_OVERRIDES = ("use", "name", "tc", "options", "restart", "ponder", "castling960")


def parse_body(body: bytes, content_type: str) -> dict[str, Any]:
    """The submitted table: TOML text, or a JSON object (by content type); ConfigError if
    it is neither."""
    import json

    kind = content_type.split(";", 1)[0].strip().lower()
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _error("", "", f"the body is not UTF-8 text ({exc.reason} at byte {exc.start})") \
            from None
    if kind == "application/json" or kind.endswith("+json"):
        try:
            data = json.loads(text)
        except RecursionError:
            raise _error("", "", "invalid JSON: nested too deeply") from None
        except ValueError as exc:  # the int-to-text digit limit included
            raise _error("", "", f"invalid JSON: {_short(str(exc))}") from None
        if not isinstance(data, dict):
            raise _error("", "", f"expected a JSON object, not {type(data).__name__}")
    else:
        try:
            data = tomllib.loads(text)
        except RecursionError:
            raise _error("", "", "invalid TOML: nested too deeply") from None
        except (tomllib.TOMLDecodeError, ValueError) as exc:
            raise _error("", "", f"invalid TOML: {_short(str(exc))}") from None
    odd = _odd_values(data)
    if odd:
        raise ConfigError(odd)
    return data


MAX_INTEGER = 2**53
"""The largest integer a submission may hold (anything larger is no count, id or limit the
runner has, and would overflow a float or a database column)."""
MAX_TEXT = 4096
"""The longest text a submission may hold (a path, a name)."""
MAX_PATH = 1024
"""The longest opening file path a submission may give."""
MAX_NAME = 255
"""The longest file or directory name in that path (what file systems allow)."""
MAX_DEPTH = 32
"""The deepest nesting of tables and arrays a submission may have."""


def _odd_values(data: Mapping[str, Any]) -> list[ConfigProblem]:
    """What no configuration holds, wherever it is (keys included): text that is not Unicode
    (lone surrogates), NUL characters, text over `MAX_TEXT`, integers beyond `MAX_INTEGER`,
    floats that are not finite, nesting deeper than `MAX_DEPTH`. Found before any other check,
    so none of them reaches a parser, a path or the database."""
    import math

    problems: list[ConfigProblem] = []
    todo: list[tuple[str, Any, int]] = [("", data, 0)]
    while todo and len(problems) < 20:
        path, value, depth = todo.pop()
        why = None
        if isinstance(value, str):
            why = _odd_text(value)
        elif isinstance(value, bool):
            pass
        elif isinstance(value, int):
            if abs(value) > MAX_INTEGER:
                why = f"an integer beyond ±{MAX_INTEGER}"
        elif isinstance(value, float):
            if not math.isfinite(value):
                why = "a number that is not finite"
        elif isinstance(value, dict | list):
            if depth >= MAX_DEPTH:
                why = f"nested deeper than {MAX_DEPTH} levels"
            elif isinstance(value, dict):
                for key, item in value.items():
                    key_text = str(key)
                    bad_key = _odd_text(key_text)
                    if bad_key is not None:
                        problems.append(ConfigProblem(SOURCE, _path(path, "?"), "",
                                                      f"a key is {bad_key}"))
                        continue
                    todo.append((_path(path, key_text), item, depth + 1))
            else:
                todo.extend((f"{path}[{index}]", item, depth + 1)
                            for index, item in enumerate(value))
        if why is not None:
            problems.append(ConfigProblem(SOURCE, path, _safe_value(value), f"not allowed: {why}"))
    return problems


def _odd_text(text: str) -> str | None:
    """Why `text` cannot be in a configuration (None: it can)."""
    if len(text) > MAX_TEXT:
        return f"text of {len(text)} characters (at most {MAX_TEXT})"
    if "\0" in text:
        return "text with a NUL character"
    if any("\ud800" <= c <= "\udfff" for c in text):
        return "text with a lone surrogate (not Unicode)"
    return None


def _safe_value(value: Any) -> str:
    """A refused value shown safely: text without what made it odd, numbers shortened."""
    if isinstance(value, str):
        cleaned = "".join("?" if c == "\0" or "\ud800" <= c <= "\udfff" else c
                          for c in value[:60])
        return show_value(cleaned + ("..." if len(value) > 60 else ""))
    if isinstance(value, int) and not isinstance(value, bool):
        digits = len(str(abs(value))) if abs(value) < 10**4000 else 4000
        return f"an integer of {digits} digits" if digits > 20 else str(value)
    if isinstance(value, dict | list):
        return f"a {type_name(value)}"
    return show_value(value)


def _path(parent: str, key: str) -> str:
    shown = key if key.replace("_", "").replace("-", "").isalnum() else show_value(key)
    return f"{parent}.{shown}" if parent else shown


def _short(text: str, limit: int = 200) -> str:
    """One line of at most `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def take_placement(data: dict[str, Any], settings: ServiceSettings) -> str | None:
    """Remove and return the submission's ``placement`` (None: the operator's choice);
    ConfigError when it names none of `PLACEMENTS` or one this service does not offer."""
    if "placement" not in data:
        return None
    value = data.pop("placement")
    why = None
    if value not in PLACEMENTS:
        why = f"must be one of {', '.join(PLACEMENTS)}"
    elif value == "workers" and not settings.accept_workers:
        why = "this service takes no remote workers (runner serve --accept-workers)"
    elif value == "cluster" and settings.cluster is None and settings.workers is None:
        why = "this service has no Dask cluster (runner serve --cluster or --workers)"
    if why is not None:
        raise ConfigError([ConfigProblem(SOURCE, "placement", _safe_value(value), why)])
    return str(value)


def check_submission(data: Mapping[str, Any], settings: ServiceSettings,
                     declared: DeclaredOptions | None = None) -> TournamentConfig:
    """The submitted table checked and resolved against the allow-list; ConfigError with
    every problem found (refused keys and the CLI's own checks together).

    Every string option value is refused, unless `declared` knows the engine's declarations
    (it starts each engine once, then remembers): then each submitted option is checked
    against them. Either way the engine's start checks them again.
    """
    problems = refused(data, settings)
    table = {key: value for key, value in data.items() if key not in _REFUSED_TOP}
    if any(p.key == "openings.file" for p in problems):
        table.pop("openings", None)  # refused: no parser goes looking for it
    _place_tablebases(table, settings, refused_dirs=any(
        p.key == "adjudication.tablebases" for p in problems))
    table["engines_file"] = str(settings.engines_file.resolve())
    engines = table.get("engines")
    requested, stripped = requested_protocols(engines)
    if isinstance(stripped, list):
        # Refused keys are reported above; the CLI's checks see the entries without them.
        table["engines"] = [
            {k: v for k, v in item.items() if k not in _REFUSED_ENGINE}
            if isinstance(item, dict) else item for item in stripped]
    try:
        config = parse_config(table, source=SOURCE, base_dir=settings.books_root)
    except ConfigError as exc:
        problems.extend(p for p in exc.problems if p.key != "engines_file")
        config = None
    if config is not None:
        # Before the options are judged: they are declared in the engine's own protocol.
        config = (declared or DeclaredOptions()).with_protocols(config)
        problems.extend(protocol_problems(config, requested, SOURCE))
        config = _mark_submitted(config, engines)
        known = _declarations(config, declared)
        found: list[ConfigProblem] = []
        if declared is not None:
            # What the declarations say replaces the blanket refusal of string values: a
            # combo's value is a string, and a refused option gets the precise reason.
            judged, found = _option_problems(config, known)
            problems = [p for p in problems if p.key not in judged]
            config = _spelt(config, known)
        # The service's own bounds stand whatever the engine declares (its Hash may go
        # beyond what this machine can give).
        problems.extend(_limits(config, settings, data, known))
        problems.extend(found)
    if problems or config is None:
        raise ConfigError(problems)
    # A depth or node limit alone may never end (fairymax at depth=64): the service's ceiling
    # on a move's time stands in for the clock such a game lacks.
    return dataclasses.replace(config, move_ceiling=settings.move_ceiling_seconds)


def check_stage(data: Mapping[str, Any], engines: list[dict[str, Any]],
                settings: ServiceSettings) -> TournamentConfig:
    """A branch test's stage: the submitted tournament keys checked as a submission's are
    (the same refusals and bounds), played by `engines`, the tables of an allow-listed
    recipe's builds (trusted as the engines file's own); ConfigError with every problem."""
    problems = refused(data, settings)
    table = {key: value for key, value in data.items() if key not in _REFUSED_TOP}
    if any(p.key == "openings.file" for p in problems):
        table.pop("openings", None)
    _place_tablebases(table, settings, refused_dirs=any(
        p.key == "adjudication.tablebases" for p in problems))
    table["engines"] = engines
    try:
        config: TournamentConfig | None = parse_config(table, source=SOURCE,
                                                       base_dir=settings.books_root)
    except ConfigError as exc:
        problems.extend(exc.problems)
        config = None
    if config is not None:
        problems.extend(_limits(config, settings, data, [None] * len(config.engines)))
    if problems or config is None:
        raise ConfigError(problems)
    return dataclasses.replace(config, move_ceiling=settings.move_ceiling_seconds)


def _declarations(config: TournamentConfig, declared: DeclaredOptions | None,
                  ) -> list[Mapping[str, EngineOption] | None]:
    """What each engine whose options were submitted declares (None: not known: no
    declarations asked, another engine, or it did not start here)."""
    if declared is None:
        return [None] * len(config.engines)
    return [declared.of(engine_config(spec)) if spec.options_submitted else None
            for spec in config.engines]


def _spelt(config: TournamentConfig,
           known: list[Mapping[str, EngineOption] | None]) -> TournamentConfig:
    """`config` with each submitted spin value replaced by the number it writes: the engine
    is sent the runner's own spelling of the number checked, never the submitter's text."""
    engines = []
    for spec, options in zip(config.engines, known, strict=True):
        if options is not None:
            spelt = []
            for name, value in spec.options:
                option = declared_option(options, name, spec.protocol)
                number = spin_number(value) if isinstance(value, str) else None
                if option is not None and option.type in ("spin", "slider") \
                        and number is not None:
                    value = number
                spelt.append((name, value))
            spec = dataclasses.replace(spec, options=tuple(spelt))
        engines.append(spec)
    return dataclasses.replace(config, engines=tuple(engines))


def _mark_submitted(config: TournamentConfig, engines: object) -> TournamentConfig:
    """`config` with every engine whose options the submitter wrote marked so (the engines
    file's own options stay trusted): the engine is then sent only declared spin, check and
    combo options, checked when it starts, wherever it runs (the mark is stored)."""
    if not isinstance(engines, list) or len(engines) != len(config.engines):
        return config
    marked = tuple(
        dataclasses.replace(spec, options_submitted=True)
        if isinstance(item, dict) and "options" in item else spec
        for spec, item in zip(config.engines, engines, strict=True))
    return dataclasses.replace(config, engines=marked)


def refused(data: Mapping[str, Any], settings: ServiceSettings) -> list[ConfigProblem]:
    """What a submission may not say, each with its key path."""
    problems = [ConfigProblem(SOURCE, key, show_value(data[key]), f"not allowed here: {why}")
                for key, why in _REFUSED_TOP.items() if key in data]
    engines = data.get("engines")
    if isinstance(engines, list):
        for index, item in enumerate(engines):
            if isinstance(item, dict):
                problems.extend(_engine_problems(item, f"engines[{index}]"))
    openings = data.get("openings")
    if isinstance(openings, dict) and isinstance(openings.get("file"), str):
        problems.extend(_book_problems(openings["file"], settings))
    adjudication = data.get("adjudication")
    if isinstance(adjudication, dict) and "tablebases" in adjudication:
        problems.extend(_tablebase_problems(adjudication["tablebases"], settings))
    return problems


def _tablebase_dirs(value: object) -> list[object]:
    """The entries of ``adjudication.tablebases``: a list, or one ':'-separated string."""
    if isinstance(value, str):
        return list(value.split(":"))
    return list(value) if isinstance(value, list) else [value]


def _inside(root: Path, entry: str) -> Path | None:
    """`entry` resolved inside `root` (the root itself allowed), or None when it leaves it."""
    if len(entry) > MAX_PATH or any(len(part) > MAX_NAME for part in entry.split("/")):
        return None
    try:
        target = (root / entry).resolve()
    except (OSError, ValueError):  # a path too long for the system, say
        return None
    return target if target.is_relative_to(root) else None


def _tablebase_problems(value: object, settings: ServiceSettings) -> list[ConfigProblem]:
    """Tablebase directories outside the service's tablebases directory are refused (no
    looking at any path outside it)."""
    key = "adjudication.tablebases"
    if settings.tablebases_dir is None:
        return [ConfigProblem(SOURCE, key, show_value(value),
                              "this service offers no tablebases (runner serve --tablebases)")]
    root = settings.tablebases_dir.resolve()
    return [ConfigProblem(SOURCE, key, show_value(entry if len(entry) <= 60 else
                                                  entry[:60] + "..."),
                          "tablebases are read from the service's tablebases directory only; "
                          "give it ('.') or a folder inside it")
            for entry in _tablebase_dirs(value)
            if isinstance(entry, str) and _inside(root, entry) is None]


def _place_tablebases(table: dict[str, Any], settings: ServiceSettings,
                      refused_dirs: bool) -> None:
    """Point the submitted tablebase directories into the service's tablebases directory (the
    configuration check then finds them there), or drop them when refused, so that no check
    looks at a path outside it."""
    adjudication = table.get("adjudication")
    if not isinstance(adjudication, dict) or "tablebases" not in adjudication:
        return
    adjudication = table["adjudication"] = dict(adjudication)
    if refused_dirs or settings.tablebases_dir is None:
        adjudication.pop("tablebases")
        return
    root = settings.tablebases_dir.resolve()
    adjudication["tablebases"] = [
        str(_inside(root, entry)) if isinstance(entry, str) and entry.strip() else entry
        for entry in _tablebase_dirs(adjudication["tablebases"])]


def _engine_problems(item: Mapping[str, Any], path: str) -> list[ConfigProblem]:
    """An engine entry's refused keys: anything that starts or feeds a program."""
    problems = []
    for key, value in item.items():
        where = f"{path}.{key}"
        if key in _REFUSED_ENGINE:
            problems.append(ConfigProblem(
                SOURCE, where, show_value(value),
                "not allowed in a submitted configuration: engines and how they are started "
                "come from the service's engines file (name one with `use`)"))
        elif key not in _ENGINE_OVERRIDES:
            continue  # an unknown key: the CLI's checks name it
        elif key == "options" and isinstance(value, dict):
            problems.extend(
                ConfigProblem(SOURCE, f"{where}.{name}", show_value(option),
                              "a submitted option value must be a number or a boolean (a "
                              "string may name a file for the engine to write)")
                for name, option in value.items() if isinstance(option, str))
            problems.extend(
                ConfigProblem(SOURCE, where, show_value(name),
                              "an option name is one line of printable text without '=' "
                              "(it is sent to the engine as part of a command)")
                for name in value if _UNSAFE_NAME.search(name) or not name.strip())
    if "use" not in item:
        problems.append(ConfigProblem(
            SOURCE, path, show_value(item),
            "a submitted engine names one of the service's engines: a string or a table with "
            "`use = \"NAME\"`"))
    return problems


def _option_problems(config: TournamentConfig, known: list[Mapping[str, EngineOption] | None],
                     ) -> tuple[set[str], list[ConfigProblem]]:
    """The key paths of the submitted options judged against their engine's declarations,
    and the problems found: an option the engine did not declare, or one a submitter may not
    set (a string, file or button option; a spin out of range; a combo value not declared).
    An engine that does not start here is not judged (its start checks its options)."""
    judged: set[str] = set()
    problems: list[ConfigProblem] = []
    for index, spec in enumerate(config.engines):
        if not spec.options_submitted:
            continue
        engine = engine_config(spec)
        options = known[index]
        if options is None:
            continue
        for name, value in engine.options.items():
            key = f"engines[{index}].options.{name}"
            judged.add(key)
            option = declared_option(options, name, engine.protocol)
            try:
                if option is None:
                    find_declared(spec.name, name, options, options.get)
                else:
                    check_submitted(spec.name, option, value)
            except ValueError as exc:
                problems.append(ConfigProblem(SOURCE, key, show_value(value), str(exc)))
    return judged, problems


def _book_problems(file: str, settings: ServiceSettings) -> list[ConfigProblem]:
    """An opening file outside the books directory is refused (no reading any file)."""
    root = settings.books_root
    if len(file) > MAX_PATH or any(len(part) > MAX_NAME for part in file.split("/")):
        return [ConfigProblem(SOURCE, "openings.file", show_value(file[:60] + "..."),
                              f"a path of at most {MAX_PATH} characters, {MAX_NAME} per name")]
    try:
        target = (root / file).resolve()
    except (OSError, ValueError):  # a path too long for the system, say
        target = root
    if target == root or not target.is_relative_to(root):
        return [ConfigProblem(SOURCE, "openings.file", show_value(file),
                              "opening files are read from the service's books directory "
                              "only; give a path inside it")]
    return []


def _limits(config: TournamentConfig, settings: ServiceSettings,
            data: Mapping[str, Any] | None = None,
            known: list[Mapping[str, EngineOption] | None] | None = None,
            ) -> list[ConfigProblem]:
    """The service's bounds on what one submission may ask: a tournament must be able to
    finish (games bounded in time, depth and number) and fit the machine (memory, cores)."""
    problems = []
    if config.concurrency > settings.max_concurrency:
        problems.append(ConfigProblem(
            SOURCE, "concurrency", str(config.concurrency),
            f"at most {settings.max_concurrency} games at once on this service"))
    if len(config.engines) > settings.max_engines:
        problems.append(ConfigProblem(
            SOURCE, "engines", f"{len(config.engines)} engines",
            f"at most {settings.max_engines} engines in one submission on this service"))
    else:  # the schedule of too many engines is not worth counting
        total = pairing_for(config).total()
        limit = min(settings.max_games, MAX_GAMES)
        if total > limit:
            problems.append(ConfigProblem(SOURCE, "rounds", str(config.rounds),
                                          f"{total} games scheduled; at most {limit} on this "
                                          "service"))
    # Only what the submitter wrote is bounded: the engines file's own settings are the
    # operator's choice.
    data = data or {}
    if isinstance(data.get("tc"), str):
        problems.extend(_tc_limits("tc", data["tc"], settings))
    engines = data.get("engines")
    items = engines if isinstance(engines, list) else []
    for index, item in enumerate(items):
        if isinstance(item, dict) and isinstance(item.get("tc"), str):
            problems.extend(_tc_limits(f"engines[{index}].tc", item["tc"], settings))
    submitted = [item["options"] if isinstance(item, dict) and isinstance(item.get("options"),
                                                                          dict) else None
                 for item in items]
    problems.extend(cap_problems(config, submitted, settings, SOURCE, known or ()))
    return problems


def _seconds(value: float) -> str:
    return f"{value:g} s"


def _tc_limits(key: str, text: str, settings: ServiceSettings) -> list[ConfigProblem]:
    """A submitted time control's bounds: every game must end, and be playable."""
    from runner.clock import TimeControl

    try:
        tc = TimeControl.parse(text)
    except ValueError:
        return []  # the CLI's checks report it
    value = show_value(text)
    problems = []

    def refuse(message: str) -> None:
        problems.append(ConfigProblem(SOURCE, key, value, message))

    for period in tc.periods:
        if period.base < settings.min_base_seconds \
                and period.increment < settings.min_increment_seconds:
            refuse(f"base time {_seconds(period.base)} with increment "
                   f"{_seconds(period.increment)}: at least {_seconds(settings.min_base_seconds)}"
                   f" of base time, or an increment of at least "
                   f"{_seconds(settings.min_increment_seconds)}, on this service")
        if period.base > settings.max_base_seconds:
            refuse(f"base time {_seconds(period.base)}: at most "
                   f"{_seconds(settings.max_base_seconds)} on this service")
    if tc.move_time is not None and not (
            settings.min_movetime_seconds <= tc.move_time <= settings.max_movetime_seconds):
        refuse(f"time per move {_seconds(tc.move_time)}: from "
               f"{_seconds(settings.min_movetime_seconds)} to "
               f"{_seconds(settings.max_movetime_seconds)} on this service")
    if tc.depth is not None and tc.depth > settings.max_depth:
        refuse(f"depth {tc.depth}: at most {settings.max_depth} on this service")
    if tc.nodes is not None and tc.nodes > settings.max_nodes:
        refuse(f"{tc.nodes} nodes per move: at most {settings.max_nodes} on this service")
    return problems


def _error(key: str, value: str, message: str) -> ConfigError:
    return ConfigError([ConfigProblem(SOURCE, key, value, message)])
