"""cutechess-cli's engines as its command line and its ``engines.json`` give them
(`EngineData`), and its number reading (QString's toInt and toDouble), for
runner.dropin.cutechess.args.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["EngineData", "configured_engines", "engines_json", "parse_engine", "to_double",
           "to_int", "to_int_or_zero", "to_uint"]

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


def _set_tc(engine: EngineData, text: str) -> bool:
    """``tc=``: cutechess-cli's TimeControl(QString) and its validity check."""
    parsed = EngineData()
    if text == "inf":
        parsed.infinite = True
    else:
        parts = text.split("+")
        if len(parts) == 2:
            increment = int((to_double(parts[1]) or 0.0) * 1000)
            if increment >= 0:
                parsed.increment = increment
        parts = parts[0].split("/")
        if len(parts) == 2:
            moves = to_int_or_zero(parts[0])
            if moves >= 0:
                parsed.moves_per_tc = moves
            time_text = parts[1]
        else:
            time_text = parts[0]
        if time_text.startswith("hg"):
            parsed.hourglass = True
            time_text = time_text.replace("hg", "")
        pieces = time_text.split(":")
        if len(pieces) == 2:
            ms = int((to_double(pieces[0]) or 0.0) * 60000 + (to_double(pieces[1]) or 0.0) * 1000)
        else:
            ms = int((to_double(pieces[0]) or 0.0) * 1000)
        if ms > 0:
            parsed.time_per_tc = ms
    if not parsed.tc_valid():
        return False
    engine.infinite, engine.hourglass = parsed.infinite, parsed.hourglass
    engine.time_per_tc, engine.moves_per_tc = parsed.time_per_tc, parsed.moves_per_tc
    engine.increment = parsed.increment
    engine.tc_text = text
    return True


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


def _from_conf(entry: dict[str, Any]) -> EngineData:
    """An engines.json entry as the engine it configures (cutechess's EngineConfiguration)."""
    engine = EngineData(
        name=str(entry.get("name", "")), command=str(entry.get("command", "")),
        directory=str(entry.get("workingDirectory", "")),
        stderr=str(entry.get("stderrFile", "")), protocol=str(entry.get("protocol", "")))
    scale = entry.get("timeoutScaleFactor")
    if isinstance(scale, int | float):
        engine.timeout_scale = float(scale)
    init = entry.get("initStrings")
    if isinstance(init, list):
        engine.init_strings = [str(line) for line in init]
    engine.white_pov = bool(entry.get("whitepov", False))
    engine.ponder = bool(entry.get("ponder", False))
    if entry.get("restart") in ("auto", "on", "off"):
        engine.restart = str(entry["restart"])
    engine.validate_claims = bool(entry.get("validateClaims", True))
    engine.debug = bool(entry.get("debug", False))
    for option in entry.get("options", []) or []:
        if isinstance(option, dict) and "name" in option:
            value = option.get("value", option.get("default"))
            if value is not None:
                engine.options[str(option["name"])] = (
                    ("true" if value else "false") if isinstance(value, bool) else str(value))
    return engine


def parse_engine(words: list[str], engine: EngineData) -> tuple[EngineData, str | None]:
    """cutechess-cli's parseEngine: the keys applied in order; (engine, warning or None)."""
    for word in words:
        key, _, value = word.partition("=")
        if not key:
            continue
        if key == "conf":
            found = next((e for e in configured_engines() if e.get("name") == value), None)
            if found is None:
                return engine, f'Unknown engine configuration: "{value}"'
            keep = (engine.infinite, engine.hourglass, engine.moves_per_tc, engine.time_per_tc,
                    engine.increment, engine.time_per_move, engine.margin, engine.plies,
                    engine.nodes, engine.tc_text, engine.book, engine.book_depth)
            engine = _from_conf(found)
            (engine.infinite, engine.hourglass, engine.moves_per_tc, engine.time_per_tc,
             engine.increment, engine.time_per_move, engine.margin, engine.plies,
             engine.nodes, engine.tc_text, engine.book, engine.book_depth) = keep
        elif key == "name":
            engine.name = value
        elif key == "cmd":
            engine.command = value
        elif key == "dir":
            engine.directory = value
        elif key == "arg":
            engine.arguments.append(value)
        elif key == "proto":
            if value not in ("xboard", "uci"):
                return engine, f'Usupported chess protocol: "{value}"'  # sic: cutechess's word
            engine.protocol = value
        elif key == "initstr":
            engine.init_strings.append(value.replace("\\n", "\n"))
        elif key == "restart":
            if value not in ("auto", "on", "off"):
                return engine, f'Invalid restart mode: "{value}"'
            engine.restart = value
        elif key == "trust":
            engine.validate_claims = False
        elif key == "tscale":
            scale = to_double(value)
            if scale is None or not 0.2 <= scale <= 120.0:
                return engine, f'Invalid timeout scale factor: "{value}"'
            engine.timeout_scale = scale
        elif key == "tc":
            if not _set_tc(engine, value):
                return engine, f'Invalid time control: "{value}"'
        elif key == "st":
            seconds = to_double(value)
            ms = int(seconds * 1000) if seconds is not None and math.isfinite(seconds) else 0
            if seconds is None or ms <= 0:
                return engine, f'Invalid search time: "{value}"'
            engine.time_per_move = ms
        elif key == "timemargin":
            margin = to_int(value)
            if margin is None or margin < 0:
                return engine, f'Invalid time margin: "{value}"'
            engine.margin = margin
        elif key == "book":
            engine.book = value
        elif key == "bookdepth":
            if to_int_or_zero(value) <= 0:
                return engine, f'Invalid book depth limit: "{value}"'
            engine.book_depth = to_int_or_zero(value)
        elif key == "whitepov":
            engine.white_pov = True
        elif key == "depth":
            if to_int_or_zero(value) <= 0:
                return engine, f'Invalid depth limit: "{value}"'
            engine.plies = to_int_or_zero(value)
        elif key == "nodes":
            nodes = int(value) if _INT.fullmatch(value) and abs(int(value)) < 2**63 else 0
            if nodes <= 0:
                return engine, f'Invalid node limit: "{value}"'
            engine.nodes = nodes
        elif key == "ponder":
            engine.ponder = True
        elif key == "debug":
            engine.debug = True
        elif key.startswith("option."):
            engine.options[key.split(".", 1)[1]] = value
        elif key == "stderr":
            engine.stderr = value
        else:
            return engine, f'Invalid engine option: "{key}"'
    return engine, None
