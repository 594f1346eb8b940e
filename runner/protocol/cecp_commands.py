"""What the runner writes to a CECP engine: time controls, clocks and positions as commands.

Pure functions of the game's settings (and of the features that decide a command's
form); `CecpEngine` sends what they return.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import math

from runner.clock import TimeControl
from runner.protocol.engine import ClockState, EngineOption
from runner.protocol.options import declared_value, spelt
from runner.types import OptionValue, Protocol

__all__ = [
    "UNTIMED_SECONDS",
    "centiseconds",
    "clock_commands",
    "edit_commands",
    "edit_loses_castling",
    "format_level",
    "format_seconds_arg",
    "option_command",
    "time_control_commands",
]

_PIECE_LETTERS = frozenset("PNBRQK")

UNTIMED_SECONDS = 86400
"""The move time (``st``) of a game without any limit: a day, no practical limit."""


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


def time_control_commands(tc: TimeControl, nps: int | None, *,
                          day_beside_depth: bool = True) -> list[str]:
    """The commands that set a game's time control (and an ``nps`` limit, when given).

    Without a clock or a move time the move time is a day (``st 86400``), unless the search
    has a depth limit and not `day_beside_depth`: then no move time at all (an engine such as
    fairymax searches otherwise under ``st 86400`` than without it, even to a fixed depth)."""
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
    elif day_beside_depth or tc.depth is None:
        lines.append(f"st {UNTIMED_SECONDS}")  # depth-only or infinite: no practical limit
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


def edit_commands(fen: str, *, dummy_move: str | None = "a2a3", by_file: bool = False,
                  ) -> list[str]:
    """The old ``edit`` idiom for engines without ``setboard``.

    Castling rights are implied by kings and rooks on their home squares and en passant
    is lost: the limits of ``edit`` itself.  Black to move uses the specification's
    kludge, a `dummy_move` before ``edit`` (which does not change the side to move; None:
    the caller sends its own). Each side's pieces are listed rank by rank from the eighth,
    or file by file from a1 when `by_file` (the order cutechess-cli lists them in).
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
    if by_file:
        white.sort(key=lambda piece: piece[1:])
        black.sort(key=lambda piece: piece[1:])
    lines = [dummy_move] if black_to_move and dummy_move else []
    lines += ["edit", "#", *white, "c", *black, "."]
    return lines


def option_command(option: EngineOption, value: OptionValue) -> str:
    """``option NAME=VALUE`` (``option NAME`` for a button, save or reset) for a declared
    option: the value the declaration reads it as (`declared_value`), a check's as ``1`` or
    ``0``; ValueError if it does not fit.

    The engine reads the name up to the first ``=``: a declared name holding one could not be
    set without ambiguity, so it is refused. Text options (string, file, path) pass as given.
    """
    name = option.name
    if "=" in name:
        raise ValueError(f"option {name!r}: a name holding '=' cannot be set unambiguously")
    typed = declared_value(option, value, Protocol.CECP)
    return f"option {name}" if typed is None else f"option {name}={spelt(typed, Protocol.CECP)}"


_EMPTY_RUNS = str.maketrans({str(n): "." * n for n in range(1, 9)})
"""FEN digits to as many empty squares: a rank's text becomes one character a file."""


def edit_loses_castling(fen: str) -> str | None:
    """The castling rights ``edit`` would wrongly give in `fen`, or None when it gives the
    right ones (standard chess: a king and a rook on their home squares are taken to have
    the right, whatever the FEN says; ``edit`` has no way to say it was lost)."""
    fields = fen.split()
    ranks = fields[0].split("/")
    if len(ranks) != 8:
        raise ValueError(f"bad FEN placement {fields[0]!r}")
    rights = fields[2] if len(fields) > 2 else "-"
    # Only the two back ranks matter; run over books of 100,000s of openings, hence no board.
    implied = ""
    for rank, king, rook, kingside, queenside in ((ranks[7], "K", "R", "K", "Q"),
                                                  (ranks[0], "k", "r", "k", "q")):
        squares = rank.translate(_EMPTY_RUNS)
        if squares[4:5] == king:
            implied += (kingside if squares[7:8] == rook else "") + \
                (queenside if squares[0:1] == rook else "")
    lost = "".join(right for right in implied if right not in rights)
    return lost or None
