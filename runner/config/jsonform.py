"""The configuration's JSON form, for any of its frozen dataclasses: written out by hand
(`plain`, what pydantic would write, without importing pydantic) and read back through
pydantic (`validated`), older or unknown keys tolerated where asked (`known_keys`).

`runner.config.model` applies these to `TournamentConfig`; nothing here knows its fields.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Mapping
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.config.check import ConfigError, ConfigProblem, show_value

if TYPE_CHECKING:
    from pydantic import TypeAdapter

__all__ = ["field_hints", "key_path", "known_keys", "plain", "validated", "without_none"]


def validated(adapter: TypeAdapter[Any], data: Any, where: str, prefix: str = "") -> Any:
    """`data` validated by `adapter`; its problems as a ConfigError naming `where`."""
    from pydantic import ValidationError

    try:
        return adapter.validate_python(data)
    except ValidationError as exc:
        raise ConfigError([
            ConfigProblem(where, key_path(((prefix,) if prefix else ()) + tuple(error["loc"])),
                          show_value(error.get("input")), error["msg"])
            for error in exc.errors(include_url=False)
        ]) from None


def known_keys(data: Any, hint: Any, aliases: Mapping[type[Enum], Mapping[str, str]],
               ) -> Any:
    """`data` (meant as `hint`) without the mapping keys the model's dataclasses lack, at
    any depth, and with the other words a configuration may use for an enum value
    (`aliases`, any case) made the value; anything else as it is."""
    declared = without_none(hint)
    if isinstance(data, str) and isinstance(declared, type) and issubclass(declared, Enum):
        word = data.lower()
        word = aliases.get(declared, {}).get(word, word)
        return word if word in {member.value for member in declared} else data
    if isinstance(data, Mapping) and dataclasses.is_dataclass(declared):
        hints = field_hints(declared)  # type: ignore[arg-type]
        names = {f.name for f in dataclasses.fields(declared)}
        return {k: known_keys(v, hints[k], aliases) for k, v in data.items() if k in names}
    args = typing.get_args(declared)
    if isinstance(data, list | tuple) and len(args) == 2 and args[1] is Ellipsis:
        return [known_keys(item, args[0], aliases) for item in data]
    return data


def plain(value: Any, hint: Any) -> Any:
    """`value` (declared as `hint`) as JSON-ready data, the way pydantic writes it: dataclasses
    as dicts of every field in order, enums as their values, paths as text, tuples as lists,
    and an integer in a ``float`` field as a float (a bool in a union stays a bool)."""
    if value is None:
        return None
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        hints = field_hints(type(value))
        return {f.name: plain(getattr(value, f.name), hints[f.name])
                for f in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Path | str):
        return str(value)  # a WrittenTimeControl as its text
    declared = without_none(hint)
    if isinstance(value, tuple | list):
        args = typing.get_args(declared)
        if len(args) == 2 and args[1] is Ellipsis:
            return [plain(item, args[0]) for item in value]
        if args:
            return [plain(item, arg) for item, arg in zip(value, args, strict=True)]
        return [plain(item, Any) for item in value]
    if declared is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


@functools.cache
def field_hints(cls: type) -> dict[str, Any]:
    """The resolved field types of the dataclass `cls` (its annotations are text)."""
    return typing.get_type_hints(cls)


def without_none(hint: Any) -> Any:
    """``X`` for ``X | None``; any other type as it is."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        args = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        if len(args) == 1:
            return args[0]
    return hint


def key_path(loc: tuple[int | str, ...]) -> str:
    """A pydantic error location as a key path: ``engines[1].castling960``."""
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else part)
    return path
