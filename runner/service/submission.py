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
lie inside the service's books directory. Everything else is the CLI's own checking
(`runner.config.parse.parse_config`), so a submission fails exactly where the same file would.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from collections.abc import Mapping
from typing import Any

from runner.config.check import ConfigError, ConfigProblem, show_value
from runner.config.model import TournamentConfig
from runner.config.parse import parse_config
from runner.protocol.options import check_submitted, declared_option, find_declared
from runner.service.declared import DeclaredOptions
from runner.service.settings import ServiceSettings
from runner.tournament.pairing import pairing_for
from runner.tournament.runtime import engine_config

__all__ = ["MAX_GAMES", "SOURCE", "check_submission", "parse_body"]

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
_REFUSED_ENGINE = ("command", "dir", "env", "init_strings")
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
        except ValueError as exc:
            raise _error("", "", f"invalid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise _error("", "", f"expected a JSON object, not {type(data).__name__}")
        return data
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _error("", "", f"invalid TOML: {exc}") from None


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
    table["engines_file"] = str(settings.engines_file.resolve())
    engines = table.get("engines")
    if isinstance(engines, list):
        # Refused keys are reported above; the CLI's checks see the entries without them.
        table["engines"] = [
            {k: v for k, v in item.items() if k not in _REFUSED_ENGINE}
            if isinstance(item, dict) else item for item in engines]
    try:
        config = parse_config(table, source=SOURCE, base_dir=settings.books_root)
    except ConfigError as exc:
        problems.extend(p for p in exc.problems if p.key != "engines_file")
        config = None
    if config is not None:
        problems.extend(_limits(config, settings))
        config = _mark_submitted(config, engines)
        if declared is not None:
            # What the declarations say replaces the blanket refusal of string values: a
            # combo's value is a string, and a refused option gets the precise reason.
            judged, found = _option_problems(config, declared)
            problems = [p for p in problems if p.key not in judged] + found
    if problems or config is None:
        raise ConfigError(problems)
    return config


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
    return problems


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


def _option_problems(config: TournamentConfig, declared: DeclaredOptions,
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
        options = declared.of(engine)
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
    target = (root / file).resolve()
    if target == root or not target.is_relative_to(root):
        return [ConfigProblem(SOURCE, "openings.file", show_value(file),
                              "opening files are read from the service's books directory "
                              "only; give a path inside it")]
    return []


def _limits(config: TournamentConfig, settings: ServiceSettings) -> list[ConfigProblem]:
    """The service's bounds on what one submission may ask."""
    problems = []
    if config.concurrency > settings.max_concurrency:
        problems.append(ConfigProblem(
            SOURCE, "concurrency", str(config.concurrency),
            f"at most {settings.max_concurrency} games at once on this service"))
    total = pairing_for(config).total()
    if total > MAX_GAMES:
        problems.append(ConfigProblem(SOURCE, "rounds", str(config.rounds),
                                      f"{total} games scheduled; at most {MAX_GAMES}"))
    return problems


def _error(key: str, value: str, message: str) -> ConfigError:
    return ConfigError([ConfigProblem(SOURCE, key, value, message)])
