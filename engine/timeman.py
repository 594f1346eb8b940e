"""Time management: turn CECP clock commands into a per-move thinking budget.

The protocol gives three independent limits (spec section 11 and `sd`): a conventional or
incremental clock (`level MPS BASE INC` plus `time`/`otim` updates in centiseconds), a fixed
time per move (`st`), and a node-rate clock (`nps`, which turns seconds into nodes).  This module
only does arithmetic; it knows nothing about pipes or boards.
"""

from __future__ import annotations

from dataclasses import dataclass

# Assumed number of moves still to play when the control does not say (MPS 0).
_DEFAULT_MOVES_TO_GO = 30
# Time kept back for Python start-up jitter, pipe latency and the host's own bookkeeping.
_LATENCY_RESERVE_S = 0.08
# Time set aside per move still to play for the round trip through the host.
_PER_MOVE_LATENCY_S = 0.05
# A per-move budget is never below this (the engine must still move).
_MIN_BUDGET_S = 0.01


@dataclass(frozen=True)
class TimeBudget:
    """How long one search may run: stop deepening after `soft_s`, abort at `hard_s`."""

    soft_s: float | None
    hard_s: float | None
    max_nodes: int | None = None

    @property
    def unlimited(self) -> bool:
        """True when neither time nor nodes bound the search."""
        return self.soft_s is None and self.hard_s is None and self.max_nodes is None


def parse_base(text: str) -> float:
    """Parse the BASE field of `level` (`5`, `0:30`, `1.5`, `25+5`) into seconds."""
    head = text.split("+", 1)[0]
    if ":" in head:
        minutes, seconds = head.split(":", 1)
        return float(minutes or 0) * 60.0 + float(_leading_number(seconds) or 0)
    return float(_leading_number(head) or 0) * 60.0


def _leading_number(text: str) -> str:
    """The numeric prefix of a string (the spec asks engines to ignore trailing junk)."""
    out = []
    for ch in text:
        if ch.isdigit() or (ch == "." and "." not in out):
            out.append(ch)
        else:
            break
    return "".join(out)


@dataclass
class Clock:
    """The engine's view of the time control, updated by protocol commands."""

    moves_per_session: int = 0
    base_s: float = 300.0
    increment_s: float = 0.0
    seconds_per_move: float | None = None
    nps: int | None = None
    own_s: float | None = None
    opponent_s: float | None = None
    moves_in_session: int = 0

    def set_level(self, mps: int, base_s: float, increment_s: float) -> None:
        """Apply `level`: a new conventional or incremental control starts counting now."""
        self.moves_per_session = max(0, mps)
        self.base_s = max(0.0, base_s)
        self.increment_s = max(0.0, increment_s)
        self.seconds_per_move = None
        self.own_s = self.base_s
        self.moves_in_session = 0

    def set_fixed(self, seconds: float) -> None:
        """Apply `st`: exactly this many seconds (at most) for every move."""
        self.seconds_per_move = max(0.0, seconds)

    def reset_game(self) -> None:
        """Apply `new`: clocks back to the start of the control; `nps` is forgotten."""
        self.own_s = self.base_s
        self.opponent_s = self.base_s
        self.moves_in_session = 0
        self.nps = None

    def moves_to_go(self) -> int:
        """Moves left before the next time is added (an estimate under sudden death)."""
        if self.moves_per_session > 0:
            return self.moves_per_session - (self.moves_in_session % self.moves_per_session)
        return _DEFAULT_MOVES_TO_GO

    def record_own_move(self, elapsed_s: float) -> None:
        """Keep our own clock estimate in step when the host sends no `time`."""
        self.moves_in_session += 1
        if self.seconds_per_move is not None or self.own_s is None:
            return
        self.own_s -= elapsed_s
        self.own_s += self.increment_s
        if self.moves_per_session and self.moves_in_session % self.moves_per_session == 0:
            self.own_s += self.base_s


def allocate(clock: Clock, *, abuse: bool = False) -> TimeBudget:
    """Budget for the next search under `clock` (with `abuse`, deliberately overstay)."""
    if clock.seconds_per_move is not None:
        per_move = clock.seconds_per_move
        if clock.nps:
            return TimeBudget(None, None, max_nodes=max(1, int(per_move * clock.nps)))
        if abuse:
            return TimeBudget(per_move * 3 + 2.0, per_move * 3 + 2.0)
        hard = max(_MIN_BUDGET_S, per_move - max(_LATENCY_RESERVE_S, per_move * 0.08))
        return TimeBudget(soft_s=hard * 0.6, hard_s=hard)
    remaining = clock.own_s if clock.own_s is not None else clock.base_s
    if abuse:
        overstay = max(remaining, 0.0) * 1.5 + 2.0
        return TimeBudget(overstay, overstay)
    soft, hard = _fischer_limits(remaining, clock.increment_s, clock.moves_to_go())
    if clock.nps:
        return TimeBudget(None, None, max_nodes=max(1, int(hard * clock.nps)))
    return TimeBudget(soft_s=soft, hard_s=hard)


def fischer_budget(remaining_s: float, increment_s: float, moves_to_go: int) -> TimeBudget:
    """Soft and hard limits for one move given the clock, increment and moves to go.

    A latency allowance for every move still to play is set aside first.  The soft limit is an
    even share of the rest plus most of the increment; the hard limit lets a troubled iteration
    run on to a few shares but is capped so that, even if every remaining move hit it, the
    clock would not run out before the next time control.
    """
    soft, hard = _fischer_limits(remaining_s, increment_s, moves_to_go)
    return TimeBudget(soft_s=soft, hard_s=hard)


def _fischer_limits(remaining_s: float, increment_s: float, moves_to_go: int) -> tuple[float, float]:
    """The soft and hard limits (seconds) of `fischer_budget`."""
    moves_to_go = max(1, moves_to_go)
    reserve = _LATENCY_RESERVE_S + _PER_MOVE_LATENCY_S * min(moves_to_go, 40)
    usable = max(0.0, remaining_s - reserve)
    share = usable / moves_to_go + 0.8 * increment_s
    if moves_to_go == 1:
        ceiling = usable * 0.8
    else:
        ceiling = usable * min(0.5, 2.0 / moves_to_go) + 0.8 * increment_s
    # Never plan past what is on the clock minus this move's own round trip.
    ceiling = min(ceiling, remaining_s - _LATENCY_RESERVE_S - _PER_MOVE_LATENCY_S)
    hard = max(_MIN_BUDGET_S, min(share * 2.5, ceiling))
    soft = max(_MIN_BUDGET_S, min(share, hard))
    return soft * 0.6, hard
