"""Fault modes: ways to misbehave on purpose, so that hosts can be tested against real faults.

A fault plan is parsed from `--fault` values such as `crash@3`, `slow-start=2.5` or `flood`
(several may be given, comma-separated or repeated).  `@N` counts the engine's own moves in the
current game, starting at 1.  The protocol module asks the plan what to do at each hook; this
module holds the parsing and the few actions that need no board.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from enum import Enum


class FaultKind(Enum):
    """The misbehaviours the engine can be asked for."""

    CRASH = "crash"
    HANG = "hang"
    ILLEGAL = "illegal"
    GARBAGE = "garbage"
    FLOOD = "flood"
    SLOW_START = "slow-start"
    NO_DONE = "no-done"
    IGNORE_QUIT = "ignore-quit"
    SPAWN_CHILD = "spawn-child"
    FALSE_CLAIM = "false-claim"
    RESIGN = "resign"
    TIME_ABUSE = "time-abuse"
    NO_PONG = "no-pong"
    STDERR = "stderr"


# Faults that take `@N` (the move number at which they strike); others take `=VALUE` or nothing.
_AT_MOVE = {
    FaultKind.CRASH,
    FaultKind.HANG,
    FaultKind.ILLEGAL,
    FaultKind.GARBAGE,
    FaultKind.FLOOD,
    FaultKind.FALSE_CLAIM,
    FaultKind.RESIGN,
    FaultKind.STDERR,
}

# Exit status of a deliberate crash, so that a test can tell it from a real bug.
CRASH_EXIT_CODE = 3
# Size of the newline-free line written by `flood`.
FLOOD_BYTES = 4 * 1024 * 1024
# Upper bound on how long a hung or quit-ignoring engine (or its stray child) lives on.
MAX_MISBEHAVIOUR_S = 300.0


class FaultSpecError(ValueError):
    """A `--fault` value that cannot be understood."""


@dataclass(frozen=True)
class Fault:
    """One requested fault: what, at which own move (if any), and a numeric value (if any)."""

    kind: FaultKind
    at_move: int | None = None
    value: float | None = None


def parse_fault(text: str) -> Fault:
    """Parse one fault such as `crash@3`, `slow-start=2`, `flood` or `flood@2`."""
    text = text.strip()
    name, at, value = text, None, None
    if "@" in text:
        name, _, raw = text.partition("@")
        if not raw.isdigit() or int(raw) < 1:
            raise FaultSpecError(f"fault {text!r}: @N needs a move number >= 1")
        at = int(raw)
    elif "=" in text:
        name, _, raw = text.partition("=")
        try:
            value = float(raw)
        except ValueError as err:
            raise FaultSpecError(f"fault {text!r}: {raw!r} is not a number") from err
        if value < 0:
            raise FaultSpecError(f"fault {text!r}: the value must not be negative")
    try:
        kind = FaultKind(name)
    except ValueError as err:
        known = ", ".join(k.value for k in FaultKind)
        raise FaultSpecError(f"unknown fault {name!r} (known: {known})") from err
    if at is not None and kind not in _AT_MOVE:
        raise FaultSpecError(f"fault {name!r} does not take @N")
    if kind is FaultKind.SLOW_START and value is None:
        raise FaultSpecError("slow-start needs =SECONDS")
    if value is not None and kind is not FaultKind.SLOW_START:
        raise FaultSpecError(f"fault {name!r} does not take =VALUE")
    if kind in _AT_MOVE and at is None:
        at = 1
    return Fault(kind, at, value)


@dataclass(frozen=True)
class FaultPlan:
    """All faults requested for this process."""

    faults: tuple[Fault, ...] = ()

    @classmethod
    def parse(cls, specs: list[str] | tuple[str, ...]) -> FaultPlan:
        """Build a plan from `--fault` values (each may hold a comma-separated list)."""
        faults: list[Fault] = []
        for spec in specs:
            faults.extend(parse_fault(part) for part in spec.split(",") if part.strip())
        return cls(tuple(faults))

    def has(self, kind: FaultKind) -> bool:
        """True when `kind` was requested at all."""
        return any(f.kind is kind for f in self.faults)

    def strikes(self, kind: FaultKind, own_move: int) -> bool:
        """True when `kind` is due at this own move number (1-based, per game)."""
        return any(f.kind is kind and f.at_move == own_move for f in self.faults)

    def value(self, kind: FaultKind) -> float | None:
        """The `=VALUE` given for `kind`, if any."""
        for fault in self.faults:
            if fault.kind is kind:
                return fault.value
        return None


def complain(own_move: int) -> None:
    """Write a diagnostic line to standard error, as an engine about to fail often does."""
    os.write(2, f"engine: assertion failed in search before own move {own_move} "
                f"(pid {os.getpid()})\n".encode())


def crash_now() -> None:
    """Exit at once, without flushing or cleaning up, as a crashing engine would."""
    os._exit(CRASH_EXIT_CODE)


def hang_forever() -> None:
    """Stop doing anything at all (bounded, so that a forgotten test cannot leak it forever)."""
    time.sleep(MAX_MISBEHAVIOUR_S)
    os._exit(CRASH_EXIT_CODE)


def garbage_bytes() -> bytes:
    """Lines that are not protocol: free text, a NUL, and bytes that are not UTF-8."""
    return (
        b"Hello from a confused engine; this is not a command\n"
        b"\xff\xfe\xfd invalid utf-8 \xc3\x28 \xa0\xa1 \x80\n"
        b"\x00\x01\x02 control bytes\n"
        b"1. ... ???\n"
        b"feature bogus=1\n"
    )


def flood_bytes() -> bytes:
    """A multi-megabyte run of text with no newline anywhere."""
    return b"flood" * (FLOOD_BYTES // 5)


def spawn_stray_child() -> int:
    """Start a child process that would outlive us (it keeps our stdout open); return its pid.

    The child shares our process group, so a host that kills the group removes it; it also
    gives up by itself after MAX_MISBEHAVIOUR_S.
    """
    child = subprocess.Popen(
        [sys.executable, "-c", f"import time; time.sleep({MAX_MISBEHAVIOUR_S})"],
        stdin=subprocess.DEVNULL,
        close_fds=False,
    )
    return child.pid
