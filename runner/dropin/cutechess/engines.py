"""cutechess-cli's engines as its command line and its ``engines.json`` give them: its engine
keys with their checks (`ENGINE_KEYS`, read by the one reader, runner.config.words), the
engine they leave (`EngineData`), and its number reading (QString's toInt and toDouble), for
runner.dropin.cutechess.args.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner.config.words import EngineKey, EngineRead, KeyAction

__all__ = ["ENGINE_KEYS", "Clock", "EngineData", "configured", "configured_engines",
           "engine_data", "engines_json", "read_clock", "to_double", "to_int", "to_int_or_zero",
           "to_uint"]

_INT = re.compile(r"\s*[+-]?\d+\s*")
_UINT = re.compile(r"\s*\+?\d+\s*")
_DOUBLE = re.compile(r"\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)\s*",
                     re.IGNORECASE)


def to_double(text: str) -> float | None:
    """QString::toDouble: the number, or None when the text is not one."""
    return float(text) if _DOUBLE.fullmatch(text) else None


def to_int(text: str) -> int | None:
    """QString::toInt: a 32-bit integer, or None."""
    if not _INT.fullmatch(text):
        return None
    value = int(text)
    return value if -2**31 <= value < 2**31 else None


def to_uint(text: str) -> int | None:
    """QString::toUInt: a 32-bit unsigned integer, or None."""
    if not _UINT.fullmatch(text):
        return None
    value = int(text)
    return value if value < 2**32 else None


def to_int_or_zero(text: str) -> int:
    """QString::toInt without its ok flag: 0 when the text is not a number."""
    value = to_int(text)
    return 0 if value is None else value


# -- engines --------------------------------------------------------------------------------


@dataclass
class EngineData:
    """One engine as cutechess-cli's ``-engine`` and ``-each`` keys leave it."""

    name: str = ""
    command: str = ""
    directory: str = ""
    arguments: list[str] = field(default_factory=list)
    protocol: str = ""
    init_strings: list[str] = field(default_factory=list)
    restart: str = "auto"
    validate_claims: bool = True
    timeout_scale: float = 1.0
    white_pov: bool = False
    ponder: bool = False
    debug: bool = False
    stderr: str = ""
    options: dict[str, str] = field(default_factory=dict)
    book: str = ""
    book_depth: int = 1000
    # The time control, in cutechess-cli's fields (milliseconds).
    infinite: bool = False
    hourglass: bool = False
    moves_per_tc: int = 0
    time_per_tc: int = 0
    increment: int = 0
    time_per_move: int = 0
    margin: int = 0
    plies: int = 0
    nodes: int = 0
    tc_text: str = ""
    """The last ``tc=`` as written."""

    def tc_valid(self) -> bool:
        """TimeControl::isValid: some limit of time (or ``inf``), hourglass without extras."""
        if self.time_per_tc == self.time_per_move and not self.infinite:
            return False
        return not (self.hourglass and (self.increment > 0 or self.moves_per_tc > 0))


@dataclass(frozen=True)
class Clock:
    """A ``tc=`` word as cutechess-cli's TimeControl(QString) reads it (milliseconds)."""

    text: str
    infinite: bool = False
    hourglass: bool = False
    moves: int = 0
    time: int = 0
    increment: int = 0


def read_clock(text: str) -> Clock | None:
    """``tc=``: cutechess-cli's TimeControl(QString), None when it is not valid."""
    if text == "inf":
        return Clock(text, infinite=True)
    increment = moves = ms = 0
    parts = text.split("+")
    if len(parts) == 2:
        increment = max(int((to_double(parts[1]) or 0.0) * 1000), 0)
    parts = parts[0].split("/")
    if len(parts) == 2:
        moves = max(to_int_or_zero(parts[0]), 0)
        time_text = parts[1]
    else:
        time_text = parts[0]
    hourglass = time_text.startswith("hg")
    if hourglass:
        time_text = time_text.replace("hg", "")
    pieces = time_text.split(":")
    if len(pieces) == 2:
        ms = int((to_double(pieces[0]) or 0.0) * 60000 + (to_double(pieces[1]) or 0.0) * 1000)
    else:
        ms = int((to_double(pieces[0]) or 0.0) * 1000)
    clock = Clock(text, hourglass=hourglass, moves=moves, time=max(ms, 0), increment=increment)
    # TimeControl::isValid on the clock alone (no search time yet).
    if clock.time == 0 or (clock.hourglass and (clock.increment > 0 or clock.moves > 0)):
        return None
    return clock


def engines_json() -> Path:
    """Where cutechess-cli reads ``engines.json``: the working directory's, else the one in
    its configuration directory."""
    here = Path("engines.json")
    if here.exists():
        return here
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "cutechess" / "engines.json"


def configured_engines() -> list[dict[str, Any]]:
    """The engines of ``engines.json`` (none when it is absent or unreadable, as cutechess)."""
    path = engines_json()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [entry for entry in data if isinstance(entry, dict)] if isinstance(data, list) else []


def _from_conf(entry: dict[str, Any]) -> EngineRead:
    """An engines.json entry as the engine it configures (cutechess's EngineConfiguration),
    in the words' terms."""
    values: dict[str, object] = {
        "name": str(entry.get("name", "")), "cmd": str(entry.get("command", "")),
        "dir": str(entry.get("workingDirectory", "")), "stderr": str(entry.get("stderrFile", "")),
        "proto": str(entry.get("protocol", "")),
        "whitepov": bool(entry.get("whitepov", False)), "ponder": bool(entry.get("ponder", False)),
        "trust": not entry.get("validateClaims", True), "debug": bool(entry.get("debug", False)),
    }
    scale = entry.get("timeoutScaleFactor")
    if isinstance(scale, int | float):
        values["tscale"] = float(scale)
    if entry.get("restart") in ("auto", "on", "off"):
        values["restart"] = str(entry["restart"])
    init = entry.get("initStrings")
    lists = {"initstr": tuple(str(line) for line in init)} if isinstance(init, list) else {}
    options: dict[str, str] = {}
    for option in entry.get("options", []) or []:
        if isinstance(option, dict) and "name" in option:
            value = option.get("value", option.get("default"))
            if value is not None:
                options[str(option["name"])] = (
                    ("true" if value else "false") if isinstance(value, bool) else str(value))
    return EngineRead(values, lists, options)


def configured(name: str) -> EngineRead | None:
    """``conf=NAME``: the engine of engines.json named NAME (None: there is none)."""
    found = next((e for e in configured_engines() if e.get("name") == name), None)
    return None if found is None else _from_conf(found)


def _positive(read: Callable[[str], int | float | None]) -> Callable[[str], int | None]:
    """A reader of a number that must be above 0, as milliseconds or plies."""
    def positive(text: str) -> int | None:
        value = read(text)
        return int(value) if value is not None and value > 0 else None
    return positive


def _search_time(text: str) -> int | None:
    seconds = to_double(text)
    ms = int(seconds * 1000) if seconds is not None and math.isfinite(seconds) else 0
    return ms if ms > 0 else None


def _scale(text: str) -> float | None:
    scale = to_double(text)
    return scale if scale is not None and 0.2 <= scale <= 120.0 else None


def _nodes(text: str) -> int | None:
    nodes = int(text) if _INT.fullmatch(text) and abs(int(text)) < 2**63 else 0
    return nodes if nodes > 0 else None


def _margin(text: str) -> int | None:
    margin = to_int(text)
    return margin if margin is not None and margin >= 0 else None


def _one_of(*words: str) -> Callable[[str], str | None]:
    return lambda text: text if text in words else None


def _given(_text: str) -> bool:
    """A key whose presence is its meaning (``ponder``, ``trust``...), whatever its value."""
    return True


ENGINE_KEYS: tuple[EngineKey, ...] = (
    EngineKey("conf", KeyAction.CONF, invalid='Unknown engine configuration: "{value}"'),
    EngineKey("name"), EngineKey("cmd"), EngineKey("dir"), EngineKey("arg", KeyAction.APPEND),
    EngineKey("proto", read=_one_of("xboard", "uci"),
              invalid='Usupported chess protocol: "{value}"'),  # sic: cutechess's word
    EngineKey("initstr", KeyAction.APPEND, read=lambda text: text.replace("\\n", "\n")),
    EngineKey("restart", read=_one_of("auto", "on", "off"),
              invalid='Invalid restart mode: "{value}"'),
    EngineKey("trust", read=_given),
    EngineKey("tscale", read=_scale, invalid='Invalid timeout scale factor: "{value}"'),
    EngineKey("tc", read=read_clock, invalid='Invalid time control: "{value}"', kept=True),
    EngineKey("st", read=_search_time, invalid='Invalid search time: "{value}"', kept=True),
    EngineKey("timemargin", read=_margin, invalid='Invalid time margin: "{value}"', kept=True),
    EngineKey("book", kept=True),
    EngineKey("bookdepth", read=_positive(to_int_or_zero),
              invalid='Invalid book depth limit: "{value}"', kept=True),
    EngineKey("whitepov", read=_given),
    EngineKey("depth", read=_positive(to_int_or_zero), invalid='Invalid depth limit: "{value}"',
              kept=True),
    EngineKey("nodes", read=_nodes, invalid='Invalid node limit: "{value}"', kept=True),
    EngineKey("ponder", read=_given), EngineKey("debug", read=_given), EngineKey("stderr"),
)
"""cutechess-cli's engine keys, each with its check and refusal (its parseEngine); ``conf=``
keeps the limits and the book, as cutechess-cli does."""


def _whole(read: EngineRead, key: str, default: int) -> int:
    """A key's checked number (its reader in `ENGINE_KEYS` made it one), else `default`."""
    value = read.values.get(key)
    return value if isinstance(value, int) else default


def engine_data(read: EngineRead) -> EngineData:
    """The engine its words left, in cutechess-cli's fields."""
    values = read.values
    scale = values.get("tscale")
    engine = EngineData(
        name=read.text("name"), command=read.text("cmd"), directory=read.text("dir"),
        arguments=list(read.lists.get("arg", ())), protocol=read.text("proto"),
        init_strings=list(read.lists.get("initstr", ())), restart=read.text("restart", "auto"),
        validate_claims=not values.get("trust", False),
        timeout_scale=scale if isinstance(scale, float) else 1.0,
        white_pov=values.get("whitepov") is True, ponder=values.get("ponder") is True,
        debug=values.get("debug") is True, stderr=read.text("stderr"),
        options=dict(read.options), book=read.text("book"),
        book_depth=_whole(read, "bookdepth", 1000), time_per_move=_whole(read, "st", 0),
        margin=_whole(read, "timemargin", 0), plies=_whole(read, "depth", 0),
        nodes=_whole(read, "nodes", 0))
    clock = values.get("tc")
    if isinstance(clock, Clock):
        engine.infinite, engine.hourglass = clock.infinite, clock.hourglass
        engine.moves_per_tc, engine.time_per_tc = clock.moves, clock.time
        engine.increment, engine.tc_text = clock.increment, clock.text
    return engine
