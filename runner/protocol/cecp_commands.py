"""What the runner writes to a CECP engine: time controls, clocks and positions as commands.

Pure functions of the game's settings (and of the features that decide a command's
form); `CecpEngine` sends what they return.
"""

from __future__ import annotations

import math

from runner.clock import TimeControl
from runner.protocol.engine import ClockState

__all__ = [
    "centiseconds",
    "clock_commands",
    "edit_commands",
    "format_level",
    "format_seconds_arg",
    "time_control_commands",
]

_PIECE_LETTERS = frozenset("PNBRQK")


def format_seconds_arg(seconds: float) -> str:
    """Seconds for ``st``: whole numbers bare, fractions kept (never truncated to 0)."""
    if seconds == int(seconds):
        return str(int(seconds))
    return f"{seconds:.3f}".rstrip("0").rstrip(".")


def format_level(moves: int, base_seconds: float, increment: float) -> str:
    """``level MPS BASE INC`` with BASE in minutes, or ``min:sec`` when not whole minutes."""
    whole = math.floor(base_seconds)
    if whole % 60 == 0 and whole == base_seconds and whole:
        base = str(whole // 60)
    else:
        whole = max(whole, 1)
        base = f"{whole // 60}:{whole % 60:02d}"
    return f"level {moves} {base} {format_seconds_arg(increment)}"


def centiseconds(seconds: float) -> int:
    """Seconds as the whole centiseconds ``time`` and ``otim`` take (never negative)."""
    return max(0, round(seconds * 100))


def time_control_commands(tc: TimeControl, nps: int | None) -> list[str]:
    """The commands that set a game's time control (and an ``nps`` limit, when given)."""
    lines = []
    if tc.periods:
        period = tc.periods[0]
        lines.append(format_level(period.moves, period.base, period.increment))
    elif tc.move_time is not None and tc.move_time == int(tc.move_time):
        lines.append(f"st {int(tc.move_time)}")
    elif tc.move_time is not None:
        # Fractional st is not portable (hoichess exits, sjeng reads 0 and thinks for
        # seconds): one move per session, the budget given by ``time`` before each move.
        lines.append(format_level(1, tc.move_time, 0.0))
    else:
        lines.append("st 86400")  # depth-only or infinite: no practical time limit
    if tc.depth is not None:
        lines.append(f"sd {tc.depth}")
    if nps is not None:
        lines.append(f"nps {nps}")
    return lines


def clock_commands(tc: TimeControl, clocks: ClockState, period_sent: int,
                   send_time: bool) -> tuple[list[str], int]:
    """The commands before a move: a new session's ``level`` (when the period changed since
    `period_sent`), then ``time``/``otim`` if `send_time`; and the period now sent."""
    lines = []
    if tc.periods and clocks.period != period_sent and clocks.own is not None:
        period = tc.period(clocks.period)
        moves = clocks.moves_to_go if clocks.moves_to_go is not None else period.moves
        lines.append(format_level(moves, max(clocks.own, 0.0), period.increment))
        period_sent = clocks.period
    own, opponent = clocks.own, clocks.opponent
    if tc.move_time is not None:
        own = opponent = tc.move_time
    if send_time and own is not None:
        lines.append(f"time {centiseconds(own)}")
        if opponent is not None:
            lines.append(f"otim {centiseconds(opponent)}")
    return lines, period_sent


def edit_commands(fen: str) -> list[str]:
    """The old ``edit`` idiom for engines without ``setboard``.

    Castling rights are implied by kings and rooks on their home squares and en passant
    is lost: the limits of ``edit`` itself.  Black to move uses the specification's
    ``a2a3`` kludge before ``edit`` (which does not change the side to move).
    """
    fields = fen.split()
    placement = fields[0]
    black_to_move = len(fields) > 1 and fields[1] == "b"
    white: list[str] = []
    black: list[str] = []
    ranks = placement.split("/")
    if len(ranks) != 8:
        raise ValueError(f"bad FEN placement {placement!r}")
    for rank_index, rank in enumerate(ranks):
        file = 0
        for char in rank:
            if char.isdigit():
                file += int(char)
                continue
            square = f"{'abcdefgh'[file]}{8 - rank_index}"
            if char.upper() not in _PIECE_LETTERS or file > 7:
                raise ValueError(f"bad FEN placement {placement!r}")
            (white if char.isupper() else black).append(f"{char.upper()}{square}")
            file += 1
    lines = ["a2a3"] if black_to_move else []
    lines += ["edit", "#", *white, "c", *black, "."]
    return lines
