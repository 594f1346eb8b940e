"""The cutechess-cli vocabulary: its words, and what each means in a tournament's table.

Two front doors read cutechess-cli's words: ``runner play/match/gauntlet/roundrobin/engine
check`` (runner.cli.vocabulary, which adds the double-dash spelling and the ``--help``
panels) and ``runner-cutechess`` (runner.dropin.cutechess, which reads them exactly as
cutechess-cli 1.5.1 does, with its refusals and oddities). Both read them with one reader,
runner.config.words, each in its own dialect, and both take from here:

- the keys each option takes (`ENGINE_KEYS`, `DRAW_KEYS`, `RESIGN_KEYS`, `OPENINGS_KEYS`,
  `SPRT_KEYS`): one table per option, saying which keys the runner reads, their types, and
  which cutechess-cli knows with its defaults;
- what was read, as typed records (`EngineWords`, `AdjudicationWords`), and the one mapping
  of them into the configuration table that runner.config.parse checks (`engine_table`,
  `adjudication_table`), with the rule that numbers engines of one name (`numbered`).

Pure: nothing is opened, looked for or started here, and nothing heavy imported (the
drop-ins' ``--help`` and ``--version`` load this module's importers, not the config model).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "DRAW_KEYS", "ENGINE_KEYS", "LIMIT_KEYS", "OPENINGS_KEYS", "RESIGN_KEYS", "SPRT_KEYS",
    "AdjudicationWords", "EngineWords", "Key", "Value", "adjudication_table", "default_name",
    "engine_table", "numbered", "runner_keys",
]

Value = str | int | float | bool
"""A key's value in the table: its text, or the number or truth it reads as."""


@dataclass(frozen=True)
class Key:
    """One ``key=value`` word: its name, a placeholder for its value, its type, and whether
    the runner and cutechess-cli each read it (what it does is said by each front door's
    help: runner.cli.vocabulary, runner.dropin.cutechess.help)."""

    name: str
    value: str
    kind: type = str
    """The type written into the table: str, int, float or bool."""
    peer: str | None = None
    """cutechess-cli's default for the key ("": it requires the key; None: it has no such
    key, the runner's own)."""
    runner: bool = True
    """Whether the runner reads the key (False: cutechess-cli's only, refused or ignored by
    runner-cutechess as its reader decides)."""


ENGINE_KEYS: tuple[Key, ...] = (
    Key("cmd", "COMMAND"), Key("arg", "ARG"), Key("name", "NAME"), Key("dir", "DIR"),
    Key("proto", "cecp|uci"), Key("tc", "TC"), Key("st", "SECONDS"), Key("depth", "N"),
    Key("nodes", "N"), Key("timemargin", "MS"), Key("restart", "auto|on|off"),
    Key("initstr", "TEXT"), Key("ponder", "true|false", bool), Key("castling960", "oo|kxr"),
    Key("option.NAME", "VALUE"),
)
"""The keys of ``-engine`` and ``-each`` the runner reads (runner-cutechess reads
cutechess-cli's own set, with its checks: runner.dropin.cutechess.engines)."""
LIMIT_KEYS = ("tc", "st", "depth", "nodes", "timemargin")
"""The engine keys that make up its time control words (the table's ``tc``)."""

DRAW_KEYS: tuple[Key, ...] = (
    Key("movenumber", "N", int, ""), Key("movecount", "N", int, ""), Key("score", "CP", int, ""),
)
RESIGN_KEYS: tuple[Key, ...] = (
    Key("movecount", "N", int, ""), Key("score", "CP", int, ""),
    Key("twosided", "true|false", bool, "false"),
)
OPENINGS_KEYS: tuple[Key, ...] = (
    Key("file", "FILE", peer=""), Key("format", "epd|pgn|polyglot", peer="pgn"),
    Key("order", "sequential|random", peer="sequential"), Key("seed", "N", int),
    Key("plies", "N", int, "1024"), Key("start", "N", int, "1"),
    Key("policy", "default|encounter|round", peer="default", runner=False),
)
SPRT_KEYS: tuple[Key, ...] = (
    Key("elo0", "ELO", float, ""), Key("elo1", "ELO", float, ""),
    Key("alpha", "P", float, ""), Key("beta", "P", float, ""),
    Key("model", "normalized|logistic|bayeselo"), Key("maxgames", "N", int),
)


def runner_keys(keys: Sequence[Key]) -> tuple[Key, ...]:
    """The keys of an option the runner reads."""
    return tuple(key for key in keys if key.runner)


# -- names ----------------------------------------------------------------------------------


def default_name(command: Sequence[str]) -> str:
    """An engine's name when none is given: the module of ``python -m M``, else the program's."""
    if len(command) > 2 and command[1] == "-m":
        return command[2]
    return Path(command[0]).name


def numbered(base: str, taken: set[str]) -> str:
    """`base`, or `base-2`, `base-3`... the first not in `taken`; adds it to `taken` (two
    copies of one program can play: the runner keeps results by name)."""
    name, number = base, 1
    while name in taken:
        number += 1
        name = f"{base}-{number}"
    taken.add(name)
    return name


# -- what was read, into the configuration table -------------------------------------------


@dataclass(frozen=True)
class EngineWords:
    """One engine as a front door read it from the vocabulary (None: not given, the
    configuration's default applies)."""

    name: str
    command: tuple[str, ...]
    """The program and its arguments."""
    protocol: str | None = None
    """As written (cecp, uci, xboard...: the configuration check reads the aliases)."""
    directory: str | None = None
    restart: str | None = None
    ponder: Value | None = None
    castling960: str | None = None
    init_strings: tuple[str, ...] = ()
    options: tuple[tuple[str, str], ...] = ()
    limits: str = ""
    """The time control words (``tc=40/60 st=... depth=...``; empty: none given)."""


def engine_table(engine: EngineWords) -> dict[str, Any]:
    """The engine as a configuration engine table (the keys of ``[[engines]]``)."""
    table: dict[str, Any] = {"name": engine.name, "command": list(engine.command)}
    for target, value in (("protocol", engine.protocol), ("dir", engine.directory),
                          ("restart", engine.restart), ("ponder", engine.ponder),
                          ("castling960", engine.castling960)):
        if value is not None:
            table[target] = value
    if engine.init_strings:
        table["init_strings"] = list(engine.init_strings)
    if engine.options:
        table["options"] = dict(engine.options)
    if engine.limits:
        table["tc"] = engine.limits
    return table


@dataclass(frozen=True)
class AdjudicationWords:
    """``-draw``, ``-resign``, ``-maxmoves`` and the tablebase words as read (None: not
    given; a value that did not read as its type stays text for the check to report)."""

    draw: Mapping[str, Value] | None = None
    resign: Mapping[str, Value] | None = None
    maxmoves: int | str | None = None
    tablebases: str | tuple[str, ...] | None = None
    """``-tb``: the ':'-separated text (split by the check), or the directories."""
    tbpieces: int | str | None = None
    tbignore50: bool | None = None
    tbadjudicate: str | None = None


def adjudication_table(words: AdjudicationWords) -> dict[str, Any]:
    """The configuration's ``[adjudication]`` table of what was given (empty: nothing)."""
    table: dict[str, Any] = {}
    if words.draw is not None:
        table["draw"] = dict(words.draw)
    if words.resign is not None:
        table["resign"] = dict(words.resign)
    if words.maxmoves is not None:
        table["maxmoves"] = words.maxmoves
    if words.tablebases is not None:
        table["tablebases"] = (words.tablebases if isinstance(words.tablebases, str)
                               else list(words.tablebases))
    for key, value in (("tbpieces", words.tbpieces), ("tbignore50", words.tbignore50),
                       ("tbadjudicate", words.tbadjudicate)):
        if value is not None:
            table[key] = value
    return table
