"""Which configured options an engine is sent: only those it declared, and from an untrusted
submitter only the kinds that cannot name a file or run anything.

Both protocols declare options in the same terms (`EngineOption`); each client checks the
configured names and values here once the engine has declared them (after the handshake,
before the first game), and writes its own command for each.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from runner.protocol.engine import EngineOption
from runner.types import Protocol

__all__ = ["SUBMITTABLE_TYPES", "check_submitted", "declared_option", "find_declared",
           "spin_number"]

_ASCII_INTEGER = re.compile(r"[+-]?[0-9]+")
"""A submitted spin value: ASCII digits with an optional sign, and nothing else (Python's
`int` also reads other scripts' digits and underscores, which an engine may not)."""

SUBMITTABLE_TYPES = frozenset({"spin", "slider", "check", "combo"})
"""The option types a submitted configuration may set: numbers, switches and choices. A
string, file or path option may name a file for the engine to write (Stockfish's ``Debug Log
File``, polyglot's ``LogFile``), and a button, save or reset option makes the engine act."""


def declared_option(declared: Mapping[str, EngineOption], name: str,
                    protocol: Protocol) -> EngineOption | None:
    """The declaration of option `name`, if any: by its exact name, and over UCI (whose
    option names are not case-sensitive) by the name in any case."""
    option = declared.get(name)
    if option is None and protocol is Protocol.UCI:
        lowered = name.lower()
        option = next((o for o in declared.values() if o.name.lower() == lowered), None)
    return option


def find_declared(engine: str, name: str, declared: Mapping[str, EngineOption],
                  lookup: Callable[[str], EngineOption | None]) -> EngineOption:
    """The declaration of option `name` (found by `lookup`); ValueError naming `engine`, the
    option and every declared name when the engine declared no such option."""
    option = lookup(name)
    if option is None:
        known = ", ".join(repr(n) for n in sorted(declared)) or "none"
        raise ValueError(f"engine {engine}: it declares no option {name!r}, so it is not sent "
                         f"(the engine declares: {known})")
    return option


def check_submitted(engine: str, option: EngineOption, value: str) -> None:
    """Refuse (ValueError) what a submitter may not set: an option of another type than
    `SUBMITTABLE_TYPES`, a spin outside its bounds, a combo value the engine did not list."""
    name = option.name
    if option.type not in SUBMITTABLE_TYPES:
        raise ValueError(
            f"engine {engine}: option {name!r} is a {option.type} option; a submitted "
            "tournament may set only spin, check and combo options (a string or a path may "
            "name a file for the engine to write)")
    text = value.strip()
    if option.type in ("spin", "slider"):
        number = spin_number(value)
        if number is None:
            raise ValueError(f"engine {engine}: option {name!r} is a spin: an integer in "
                             f"ASCII digits, not {value!r}")
        if (option.min is not None and number < option.min) or \
                (option.max is not None and number > option.max):
            raise ValueError(f"engine {engine}: option {name!r}: {number} is outside its "
                             f"declared range {option.min}..{option.max}")
    elif option.type == "check":
        if text.lower() not in ("0", "1", "true", "false"):
            raise ValueError(f"engine {engine}: option {name!r} is a check: true or false, "
                             f"not {value!r}")
    elif option.type == "combo" and text.lower() not in (c.lower() for c in option.choices):
        raise ValueError(f"engine {engine}: option {name!r}: {value!r} is not one of its "
                         f"declared values ({', '.join(option.choices)})")


def spin_number(value: str) -> int | None:
    """The integer a submitted spin value writes (blanks around it allowed), or None when it
    is not an integer in ASCII digits: the number sent is then spelt by the runner, never
    as the submitter wrote it."""
    text = value.strip(" \t")
    return int(text) if _ASCII_INTEGER.fullmatch(text) else None
