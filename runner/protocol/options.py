"""Which configured options an engine is sent, and as what: only those it declared, each
value read as its declaration's type, and from an untrusted submitter only the kinds that
cannot name a file or run anything.

Both protocols declare options in the same terms (`EngineOption`). A configured value is
typed (`runner.types.OptionValue`) from the configuration to here; once the engine has
declared its options (after the handshake, before the first game), each client asks
`sent_value` what to set (the one place a value written as text meets its declared type:
`declared_value`) and spells the answer in its own words (`spelt`: UCI's ``true``/``false``,
CECP's ``1``/``0``).

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from runner.protocol.engine import EngineOption
from runner.protocol.transport import unsafe_character
from runner.types import OptionValue, Protocol

__all__ = ["SUBMITTABLE_TYPES", "check_submitted", "declared_option", "declared_value",
           "find_declared", "sent_value", "spelt", "spin_number"]

_ASCII_INTEGER = re.compile(r"[+-]?[0-9]+")
"""A submitted spin value: ASCII digits with an optional sign, and nothing else (Python's
`int` also reads other scripts' digits and underscores, which an engine may not)."""

SUBMITTABLE_TYPES = frozenset({"spin", "slider", "check", "combo"})
"""The option types a submitted configuration may set: numbers, switches and choices. A
string, file or path option may name a file for the engine to write (Stockfish's ``Debug Log
File``, polyglot's ``LogFile``), and a button, save or reset option makes the engine act."""

_ACTIONS = frozenset({"button", "save", "reset"})
"""Option types that take no value: setting one makes the engine act."""

_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off"})
"""The words a check's value may be written as (any case, blanks around them allowed)."""

_SUBMITTED_CHECK = frozenset({"0", "1", "true", "false"})
"""The words a submitter may write a check's value as."""


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


def spelt(value: OptionValue, protocol: Protocol) -> str:
    """`value` as `protocol` writes it: a bool as UCI's ``true``/``false`` or CECP's
    ``1``/``0``, a number in decimal, text as it is."""
    if isinstance(value, bool):  # first: a bool is an int too
        if protocol is Protocol.UCI:
            return "true" if value else "false"
        return "1" if value else "0"
    return value if isinstance(value, str) else str(value)


def declared_value(option: EngineOption, value: OptionValue,
                   protocol: Protocol) -> OptionValue | None:
    """`value` as the type `option` declares: the one place a configured value meets the
    engine's declaration. A spin's int (from an int, or text such as ``"64"``), a check's
    bool (from a bool, or ``true``/``false``/``1``/``0``/``yes``/``no``/``on``/``off``), a
    combo's declared choice (matched without case), a string's, file's or path's text (a
    bool or number in `protocol`'s words); None for a button, save or reset, which takes no
    value. ValueError, naming the option, when the value does not fit the declaration (a
    spin outside its bounds, a choice not declared) or its text holds a line break or
    another control character. A typed value comes back unchanged when it fits."""
    name = option.name
    text = spelt(value, protocol)
    found = unsafe_character(text)
    if found is not None:
        raise ValueError(f"option {name!r}: a value may not contain a line break or another "
                         f"control character (U+{ord(found):04X} in {text!r})")
    kind = option.type
    if kind in _ACTIONS:
        if text.strip().lower() not in ("", "true", "1"):
            raise ValueError(f"option {name!r} is a {kind}: it takes no value, not {text!r}")
        return None
    if kind == "check":
        if isinstance(value, bool):
            return value
        lowered = text.strip().lower()
        if lowered in _TRUE or lowered in _FALSE:
            return lowered in _TRUE
        raise ValueError(f"option {name!r} is a check: true or false, not {text!r}")
    if kind in ("spin", "slider"):
        number = _integer(value)
        if number is None:
            raise ValueError(f"option {name!r} is a spin: an integer, not {text!r}")
        if (option.min is not None and number < option.min) or \
                (option.max is not None and number > option.max):
            raise ValueError(f"option {name!r}: {number} is outside {option.min}..{option.max}")
        return number
    if kind == "combo":
        lowered = text.strip().lower()
        for choice in option.choices:
            if choice.lower() == lowered:
                return choice
        raise ValueError(f"option {name!r}: {text!r} is not one of {', '.join(option.choices)}")
    return text  # string, file, path


def _integer(value: OptionValue) -> int | None:
    """The integer a spin's value writes: an int, or text Python reads as one (blanks
    around it allowed); None for a bool, a float or other text."""
    if isinstance(value, (bool, float)):  # a bool is an int too: no number here
        return None
    if isinstance(value, int):
        return value
    try:
        return int(value.strip())
    except ValueError:
        return None


def sent_value(engine: str, option: EngineOption, value: OptionValue, protocol: Protocol,
               submitted: bool) -> OptionValue | None:
    """What `option` is set to for configured `value` (`declared_value`; None: a button),
    a submitter's value (`submitted`) checked by `check_submitted` as written and again as
    it will be sent. ValueError naming `engine` and the option when it may not be sent."""
    if submitted:
        check_submitted(engine, option, value)
    try:
        typed = declared_value(option, value, protocol)
    except ValueError as exc:
        raise ValueError(f"engine {engine}: {exc}") from None
    if submitted and typed is not None:
        check_submitted(engine, option, typed)
    return typed


def check_submitted(engine: str, option: EngineOption, value: OptionValue) -> None:
    """Refuse (ValueError) what a submitter may not set: an option of another type than
    `SUBMITTABLE_TYPES`, a spin that is not an integer in ASCII digits or lies outside its
    bounds, a check other than true/false/1/0, a combo value the engine did not list."""
    name = option.name
    if option.type not in SUBMITTABLE_TYPES:
        raise ValueError(
            f"engine {engine}: option {name!r} is a {option.type} option; a submitted "
            "tournament may set only spin, check and combo options (a string or a path may "
            "name a file for the engine to write)")
    text = str(value).strip()
    if option.type in ("spin", "slider"):
        number = _submitted_number(value)
        if number is None:
            raise ValueError(f"engine {engine}: option {name!r} is a spin: an integer in "
                             f"ASCII digits, not {value!r}")
        if (option.min is not None and number < option.min) or \
                (option.max is not None and number > option.max):
            raise ValueError(f"engine {engine}: option {name!r}: {number} is outside its "
                             f"declared range {option.min}..{option.max}")
    elif option.type == "check":
        if not isinstance(value, bool) and text.lower() not in _SUBMITTED_CHECK:
            raise ValueError(f"engine {engine}: option {name!r} is a check: true or false, "
                             f"not {value!r}")
    elif option.type == "combo" and text.lower() not in (c.lower() for c in option.choices):
        raise ValueError(f"engine {engine}: option {name!r}: {value!r} is not one of its "
                         f"declared values ({', '.join(option.choices)})")


def _submitted_number(value: OptionValue) -> int | None:
    """The integer a submitted spin value is: an int, or text in ASCII digits; None else."""
    if isinstance(value, (bool, float)):  # a bool is an int too: no number here
        return None
    if isinstance(value, int):
        return value
    return spin_number(value)


def spin_number(value: str) -> int | None:
    """The integer a submitted spin value writes (blanks around it allowed), or None when it
    is not an integer in ASCII digits: the number sent is then spelt by the runner, never
    as the submitter wrote it."""
    text = value.strip(" \t")
    return int(text) if _ASCII_INTEGER.fullmatch(text) else None
