"""Time controls as users write them, and the running clock of one side.

A `TimeControl` is the frozen specification (parsed from strings such as ``40/60``,
``60+0.5``, ``40/120:20/60``, ``st=1``, ``depth=8``); a `Clock` is the mutable state
the game loop owns for one side, fed with measured monotonic durations.

Units: seconds everywhere, except ``timemargin=`` which, as in cutechess-cli, is
written in milliseconds.  Periods are separated by ``:`` as in the PGN
``TimeControl`` tag.  cutechess-cli's ``minutes:seconds`` base (``0:10+0.1``,
``40/1:00``) is read too: a single ``:`` whose left side has no increment and is
either a bare number (a period without a move count could not come first) or,
after ``MOVES/``, is followed by exactly two digits of seconds (``40/2:30``).
Hours (``1:30:00``) are not a cutechess-cli form and are refused.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from typing import Optional

from mypy_extensions import mypyc_attr

__all__ = ["Clock", "TimeControl", "TimePeriod"]

_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)"
_PERIOD_RE = re.compile(rf"^(?:(?P<moves>\d+)/)?(?P<base>{_NUMBER})(?:\+(?P<inc>{_NUMBER}))?$")
# cutechess-cli's `[MOVES/]MINUTES:SECONDS[+INC]`; the seconds part is checked in
# _minutes_seconds so that PGN-style period lists keep their meaning.
_MIN_SEC_RE = re.compile(
    rf"^(?:(?P<moves>\d+)/)?(?P<minutes>{_NUMBER}):(?P<seconds>{_NUMBER})(?:\+(?P<inc>{_NUMBER}))?$"
)
_INFINITE = frozenset({"inf", "infinite", "-"})


@mypyc_attr(native_class=False)
@dataclass(frozen=True)
class TimePeriod:
    """One clock period: `moves` moves (0 = rest of the game) in `base` seconds, plus increment."""

    moves: int
    base: float
    increment: float = 0.0

    def to_pgn(self) -> str:
        """This period in PGN ``TimeControl`` form (``40/9000``, ``300+2``, ``3600``)."""
        text = _format_seconds(self.base)
        if self.moves:
            text = f"{self.moves}/{text}"
        if self.increment:
            text = f"{text}+{_format_seconds(self.increment)}"
        return text


@mypyc_attr(native_class=False)
@dataclass(frozen=True)
class TimeControl:
    """A frozen time control: clock periods, fixed time per move, depth and node limits."""

    # Quoted, unions as Optional: what pydantic reads when this module is compiled (mypyc
    # keeps only such annotations exact; see pyproject.toml's per-file-ignores).
    periods: "tuple[TimePeriod, ...]" = ()
    move_time: "Optional[float]" = None
    depth: "Optional[int]" = None
    nodes: "Optional[int]" = None
    margin: float = 0.0

    def __post_init__(self) -> None:
        if self.periods and self.move_time is not None:
            raise ValueError("a time control has either clock periods or a fixed time per move")
        for period in self.periods:
            if period.base < 0 or period.increment < 0 or period.moves < 0:
                raise ValueError(f"negative value in time period {period}")
        if any(p.moves == 0 for p in self.periods[:-1]):
            raise ValueError(
                "only the last time period may cover the rest of the game (give earlier periods"
                " a move count, as 40/7200:3600; minutes:seconds is one ':', as 1:30 or 40/1:00)"
            )
        if self.move_time is not None and self.move_time <= 0:
            raise ValueError(f"time per move must be positive, not {self.move_time}")
        if self.depth is not None and self.depth <= 0:
            raise ValueError(f"depth limit must be positive, not {self.depth}")
        if self.nodes is not None and self.nodes <= 0:
            raise ValueError(f"node limit must be positive, not {self.nodes}")
        if self.margin < 0:
            raise ValueError(f"time margin must not be negative, not {self.margin}")

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """Parse space- or comma-separated tokens: ``40/60``, ``10+0.1``, ``st=1``, ``inf``...

        ``tc=`` may prefix a clock form; ``depth=N``, ``nodes=N`` and ``timemargin=MS``
        combine with any of them.  Raises ValueError naming the offending token.
        """
        tokens = [t for t in re.split(r"[\s,]+", text.strip()) if t]
        if not tokens:
            raise ValueError("empty time control")
        periods: tuple[TimePeriod, ...] = ()
        move_time = depth = nodes = None
        margin = 0.0
        clock_seen = False
        for token in tokens:
            key, sep, value = token.partition("=")
            key = key.lower() if sep else ""
            if not sep or key == "tc":
                raw = value if sep else token
                if clock_seen:
                    raise ValueError(f"time control {text!r} gives the clock twice (at {token!r})")
                clock_seen = True
                if raw.lower() not in _INFINITE:
                    periods = _parse_periods(raw)
            elif key == "st":
                move_time = _parse_float(token, value)
            elif key == "depth":
                depth = _parse_int(token, value)
            elif key == "nodes":
                nodes = _parse_int(token, value)
            elif key == "timemargin":
                margin = _parse_int(token, value) / 1000.0
            else:
                raise ValueError(f"unknown time control setting {token!r} in {text!r}")
        try:
            return cls(periods, move_time, depth, nodes, margin)
        except ValueError as exc:
            raise ValueError(f"bad time control {text!r}: {exc}") from exc

    @property
    def is_timed(self) -> bool:
        """Whether a clock runs (periods or fixed time per move) and can fall."""
        return bool(self.periods) or self.move_time is not None

    @property
    def is_infinite(self) -> bool:
        """Whether nothing limits the search: no clock, no depth, no nodes."""
        return not self.is_timed and self.depth is None and self.nodes is None

    def period(self, index: int) -> TimePeriod:
        """The period in force after `index` completed periods (the last one repeats)."""
        if not self.periods:
            raise ValueError("this time control has no clock periods")
        return self.periods[min(index, len(self.periods) - 1)]

    def to_pgn(self) -> str:
        """The PGN ``TimeControl`` tag value; ``-`` when no clock runs.

        A fixed time per move has no PGN form (unused time would accumulate in
        ``1/N``), so it is written ``-`` too; the game record keeps the real
        control in `__str__` form.
        """
        if not self.periods:
            return "-"
        return ":".join(p.to_pgn() for p in self.periods)

    def __str__(self) -> str:
        """The control in the same syntax `parse` accepts."""
        parts = []
        if self.periods:
            parts.append(":".join(p.to_pgn() for p in self.periods))
        if self.move_time is not None:
            parts.append(f"st={_format_seconds(self.move_time)}")
        if self.depth is not None:
            parts.append(f"depth={self.depth}")
        if self.nodes is not None:
            parts.append(f"nodes={self.nodes}")
        if not parts:
            parts.append("inf")
        if self.margin:
            parts.append(f"timemargin={round(self.margin * 1000)}")
        return " ".join(parts)


class Clock:
    """The running clock of one side: remaining time, periods, increments, flag fall."""

    def __init__(self, control: TimeControl, head_start: bool = False) -> None:
        """`head_start`: the first period's increment is on the clock before the first move
        too, so every move starts with one increment more (cutechess-cli's clock)."""
        self.control = control
        self.moves_made = 0
        self.period_index = 0
        self._moves_in_period = 0
        self._started_at: float | None = None
        self.last_elapsed = 0.0
        self.flag_fell = False
        if control.periods:
            first = control.periods[0]
            self.remaining: float | None = first.base + (first.increment if head_start else 0.0)
        elif control.move_time is not None:
            self.remaining = control.move_time
        else:
            self.remaining = None

    @property
    def moves_to_go(self) -> int | None:
        """Moves left before the next period's time is added; None in sudden death."""
        if not self.control.periods:
            return None
        moves = self.control.period(self.period_index).moves
        return moves - self._moves_in_period if moves else None

    @property
    def increment(self) -> float | None:
        """Seconds added after each move in the current period; None without clock periods."""
        if not self.control.periods:
            return None
        return self.control.period(self.period_index).increment

    @property
    def running(self) -> bool:
        """Whether `start` was called without a matching `stop`."""
        return self._started_at is not None

    def start(self, at: float | None = None) -> None:
        """Start counting down from a monotonic instant (now by default)."""
        self._started_at = time.monotonic() if at is None else at

    def stop(self, at: float | None = None) -> bool:
        """Stop at a monotonic instant (now by default), spend the time; True if the flag fell."""
        if self._started_at is None:
            raise RuntimeError("clock stopped without being started")
        end = time.monotonic() if at is None else at
        elapsed = max(0.0, end - self._started_at)
        self._started_at = None
        return self.spend(elapsed)

    def spend(self, elapsed: float) -> bool:
        """Charge one move that took `elapsed` seconds; True if the flag fell beyond the margin."""
        if elapsed < 0 or math.isnan(elapsed):
            raise ValueError(f"elapsed time must be a non-negative number, not {elapsed}")
        self.last_elapsed = elapsed
        self.moves_made += 1
        control = self.control
        if self.remaining is None:
            return False
        if control.move_time is not None:
            fell = elapsed > control.move_time + control.margin
            self.remaining = control.move_time
            self.flag_fell = self.flag_fell or fell
            return fell
        self.remaining -= elapsed
        if self.remaining + control.margin < 0:
            self.flag_fell = True
            return True
        period = control.period(self.period_index)
        self.remaining += period.increment
        self._moves_in_period += 1
        if period.moves and self._moves_in_period >= period.moves:
            self.period_index += 1
            self._moves_in_period = 0
            self.remaining += control.period(self.period_index).base
        return False

    def time_left(self, at: float | None = None) -> float | None:
        """Remaining seconds, minus the running move's time if the clock is running."""
        if self.remaining is None:
            return None
        if self._started_at is None:
            return self.remaining
        now = time.monotonic() if at is None else at
        return self.remaining - max(0.0, now - self._started_at)

    def __repr__(self) -> str:
        return (
            f"Clock({self.control}, remaining={self.remaining!r}, moves={self.moves_made}, "
            f"period={self.period_index})"
        )


def _minutes_seconds(text: str) -> TimePeriod | None:
    """The one period of a cutechess-cli ``[MOVES/]MIN:SEC[+INC]`` form, or None if not one."""
    match = _MIN_SEC_RE.match(text)
    if match is None:
        return None
    # With a move count, `40/60:30` is also a valid pair of PGN periods; take it as
    # minutes:seconds only when the seconds look like a clock's (two digits, below 60).
    if match["moves"] is not None and re.fullmatch(r"[0-5]\d(?:\.\d*)?", match["seconds"]) is None:
        return None
    return TimePeriod(
        moves=int(match["moves"] or 0),
        base=float(match["minutes"]) * 60.0 + float(match["seconds"]),
        increment=float(match["inc"] or 0.0),
    )


def _parse_periods(text: str) -> tuple[TimePeriod, ...]:
    single = _minutes_seconds(text)
    if single is not None:
        return (single,)
    periods = []
    for piece in text.split(":"):
        match = _PERIOD_RE.match(piece)
        if match is None:
            raise ValueError(
                f"bad time period {piece!r} in {text!r} (expected MOVES/SECONDS, "
                "SECONDS+INCREMENT or SECONDS; periods separated by ':')"
            )
        periods.append(
            TimePeriod(
                moves=int(match["moves"] or 0),
                base=float(match["base"]),
                increment=float(match["inc"] or 0.0),
            )
        )
    return tuple(periods)


def _parse_float(token: str, value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"bad number in {token!r}") from None
    if not math.isfinite(number):
        raise ValueError(f"bad number in {token!r}")
    return number


def _parse_int(token: str, value: str) -> int:
    if not value.isdigit():
        raise ValueError(f"bad whole number in {token!r}")
    return int(value)


def _format_seconds(seconds: float) -> str:
    if seconds == int(seconds):
        return str(int(seconds))
    return f"{seconds:.3f}".rstrip("0").rstrip(".")
