"""The cutechess-style ``key=value`` engine vocabulary of the command line, parsed into configs.

``--engine cmd=fairymax name=fm arg=-x proto=cecp option.Hash=64 tc=10+0.1`` and
``--each tc=40/60 timemargin=50`` become an ``EngineConfig`` plus a ``TimeControl``. Pure
functions: nothing is started here.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from runner.clock import TimeControl
from runner.protocol.engine import EngineConfig

EXTRA_PATHS = "/usr/games:/usr/local/games"
"""Where Debian installs engines; searched after PATH."""

_KEYS = ("cmd", "arg", "name", "dir", "proto", "tc", "st", "depth", "nodes", "timemargin",
         "restart", "initstr", "ponder", "castling960")


class EngineSpecError(ValueError):
    """A bad ``key=value`` engine description; the message names the token."""


def _castling960(value: str) -> str:
    """The ``castling960=`` value checked: ``oo`` or ``kxr``."""
    if value.lower() not in ("oo", "kxr"):
        raise EngineSpecError(f"castling960={value!r}: expected oo (O-O/O-O-O) or kxr "
                              "(king takes rook)")
    return value.lower()


@dataclass(frozen=True)
class EngineSpec:
    """An engine from the command line: how to run it and its own time-control tokens."""

    config: EngineConfig
    tc_tokens: tuple[str, ...] = ()
    options: dict[str, str] = field(default_factory=dict)

    def time_control(self, default: str = "inf") -> TimeControl:
        """The engine's time control: its own tokens, else ``default``."""
        text = " ".join(self.tc_tokens) if self.tc_tokens else default
        return TimeControl.parse(text)


def resolve_program(program: str, directory: str | None = None) -> str:
    """Find an engine program: a path, on PATH, in Debian's /usr/games; ``python`` is this Python."""
    if program in ("python", "python3"):
        return sys.executable
    if "/" in program:
        path = Path(directory or ".") / program if not Path(program).is_absolute() else Path(program)
        return str(path)
    found = shutil.which(program) or shutil.which(program, path=EXTRA_PATHS)
    if found is None:
        raise EngineSpecError(f"engine program {program!r} not found on PATH or in {EXTRA_PATHS}")
    return found


def parse_engine_tokens(tokens: list[str], each: list[str] | None = None) -> EngineSpec:
    """Parse one ``--engine`` group of tokens, with ``--each`` tokens applied first."""
    values: dict[str, str] = {}
    args: list[str] = []
    init: list[str] = []
    options: dict[str, str] = {}
    tc: dict[str, str] = {}
    for token in [*(each or []), *tokens]:
        key, sep, value = token.partition("=")
        if not sep:
            raise EngineSpecError(f"engine option {token!r} is not of the form key=value")
        if key.startswith("option."):
            name = key[len("option."):]
            if not name:
                raise EngineSpecError(f"engine option {token!r} has no option name")
            options[name] = value
        elif key == "arg":
            args.append(value)
        elif key == "initstr":
            init.append(value)
        elif key in ("tc", "st", "depth", "nodes", "timemargin"):
            tc[key] = value
        elif key in _KEYS:
            values[key] = value
        else:
            raise EngineSpecError(
                f"unknown engine option {key!r} in {token!r} (known: {', '.join(_KEYS)}, option.NAME)")
    if "cmd" not in values:
        raise EngineSpecError(f"engine {' '.join(tokens)!r} has no cmd=")
    command = shlex.split(values["cmd"])
    if not command:
        raise EngineSpecError("empty cmd=")
    directory = values.get("dir")
    command[0] = resolve_program(command[0], directory)
    proto = values.get("proto", "cecp").lower()
    if proto in ("xboard", "winboard"):
        proto = "cecp"
    if proto not in ("cecp", "uci"):
        raise EngineSpecError(f"unknown protocol proto={values['proto']!r} (cecp or uci)")
    name = values.get("name") or Path(command[0]).name
    if command[0] == sys.executable and len(command) > 2 and command[1] == "-m":
        name = values.get("name") or command[2]
    config = EngineConfig(
        name=name, argv=tuple(command + args), working_dir=Path(directory) if directory else None,
        protocol=proto, options=options, init_strings=tuple(init),
        ponder=values.get("ponder", "false").lower() in ("1", "true", "yes", "on"),
        castling960=_castling960(values.get("castling960", "oo")),
    )
    tc_tokens = tuple(f"{k}={v}" for k, v in tc.items())
    try:
        TimeControl.parse(" ".join(tc_tokens) if tc_tokens else "inf")
    except ValueError as exc:
        raise EngineSpecError(f"engine {name!r}: {exc}") from exc
    return EngineSpec(config=config, tc_tokens=tc_tokens, options=options)


def group_options(args: list[str]) -> list[tuple[str, list[str]]]:
    """Split cutechess-style arguments into (option, values) groups.

    ``--engine cmd=a name=x --each tc=1+0 --rounds 2`` gives
    ``[("engine", ["cmd=a", "name=x"]), ("each", ["tc=1+0"]), ("rounds", ["2"])]``.
    A single leading dash is accepted too (``-engine``), as cutechess-cli users write it.
    """
    groups: list[tuple[str, list[str]]] = []
    for token in args:
        if token.startswith("-") and len(token) > 1 and not token[1].isdigit() and "=" not in token:
            groups.append((token.lstrip("-"), []))
        elif groups:
            groups[-1][1].append(token)
        else:
            raise EngineSpecError(f"unexpected argument {token!r} before any --option")
    return groups
