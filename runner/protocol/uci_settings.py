"""The ``setoption`` lines a UCI engine is sent once it has declared its options.

Run once per engine start, not per move: kept out of `uci` (compiled, on the hot path) so that
the client class stays small.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from runner.protocol.engine import EngineConfig, EngineOption
from runner.protocol.options import find_declared, sent_value
from runner.protocol.uci_parse import find_option, option_value
from runner.types import OptionValue, Protocol

__all__ = ["setoption_line", "settings_lines"]

_AMBIGUOUS_NAME = re.compile(r"(?:^|\s)(?:name|value)(?:\s|$)")


def setoption_line(name: str, wire: str | None) -> str:
    """``setoption name N [value V]`` for a declared name and its wire value (None: a button)."""
    if wire is None:
        return f"setoption name {name}"
    if wire == "":
        return f"setoption name {name} value"
    return f"setoption name {name} value {wire}"


def settings_lines(engine: str, cfg: EngineConfig, declared: Mapping[str, EngineOption],
                   ) -> tuple[list[str], dict[str, str | None]]:
    """``setoption`` lines (memory and cores as Hash and Threads, then the configured options)
    and what each declared option is set to (declared spelling -> wire value).

    Each value is read as its declaration's type and, for a submitter's options, checked as
    a submitter's (`sent_value`), then spelt in UCI's words (`option_value`). An option the
    engine did not declare, or a value its declaration forbids, is a ValueError naming
    `engine` and the option.
    """
    def find(name: str) -> EngineOption | None:
        return find_option(declared, name)

    wanted: list[tuple[str, OptionValue, bool]] = []
    if cfg.memory_mb is not None and find("Hash") is not None:
        wanted.append(("Hash", cfg.memory_mb, False))
    if cfg.cores is not None and find("Threads") is not None:
        wanted.append(("Threads", cfg.cores, False))
    wanted.extend((name, value, cfg.options_submitted) for name, value in cfg.options.items())
    lines: list[str] = []
    values: dict[str, str | None] = {}
    for name, value, submitted in wanted:
        option = find_declared(engine, name, declared, find)
        if _AMBIGUOUS_NAME.search(option.name):
            # "setoption name A value B": a name holding the word "name" or "value" would
            # be read differently by the engine than it declared it.
            raise ValueError(f"engine {engine}: option {option.name!r} holds the word "
                             "'name' or 'value' and cannot be set unambiguously")
        sent = sent_value(engine, option, value, Protocol.UCI, submitted)
        wire = None if sent is None else option_value(option, sent)
        values[option.name] = wire
        lines.append(setoption_line(option.name, wire))
    return lines, values
