"""PGN writer: a neutral game description turned into export-format PGN text.

The game loop fills a ``GameDescription`` (tags, start position, moves in SAN with the engine's
score, depth and time, result and reason); this module knows the PGN conventions: the Seven
Tag Roster first and in order, ``SetUp``/``FEN`` and ``Variant`` for other starts, per-move
comments in the form engine testers know (``{+0.31/12 0.50s}``, ``{-M3/20 0.10s}``,
``{book}``), the reason for the result in the last comment, escaped tag values and movetext
lines under 80 columns. It needs no board: move numbers come from the start FEN's fields.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from runner.rules import Result
from runner.types import MoveRecord

__all__ = [
    "LINE_WIDTH",
    "SEVEN_TAG_ROSTER",
    "STANDARD_START_FEN",
    "GameDescription",
    "append_game",
    "escape_tag_value",
    "format_game",
    "format_move_comment",
    "format_score",
    "format_seconds",
    "time_control_tag",
]

LINE_WIDTH = 79
"""Longest movetext line written (export format: lines end before column 80)."""

SEVEN_TAG_ROSTER = ("Event", "Site", "Date", "Round", "White", "Black", "Result")
"""The tags every exported game carries, in this order."""

_ROSTER_DEFAULTS = {"Date": "????.??.??"}
STANDARD_START_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
"""The standard starting position: games from it get no FEN/SetUp tags."""

_RESULTS = frozenset(Result)
_TAG_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_]*\Z")
_WRITER_TAGS = frozenset(
    {"SetUp", "FEN", "Variant", "TimeControl", "Termination", "PlyCount",
     "GameStartTime", "GameEndTime", "GameDuration"}
)


@dataclass(frozen=True, slots=True)
class GameDescription:
    """Everything needed to write one game, independent of how it was played."""

    tags: Mapping[str, str] = field(default_factory=dict)
    """Event, Site, Round, White, Black, Date and any extra tags (written in this order)."""
    moves: Sequence[MoveRecord] = ()
    result: str = "*"
    start_fen: str | None = None
    """FEN (X-FEN or Shredder-FEN for Chess960) of the start; None for the standard start."""
    chess960: bool = False
    time_control: str | None = None
    """TimeControl tag value in PGN form (see ``time_control_tag``)."""
    termination: str | None = None
    """Termination tag value: normal, adjudication, time forfeit, rules infraction..."""
    reason: str | None = None
    """Why the game ended, written as the final comment (``White mates``)."""
    start_time: datetime | None = None
    end_time: datetime | None = None


def escape_tag_value(value: str) -> str:
    """A tag value made safe for ``[Name "value"]``: escapes, unprintable characters as spaces."""
    cleaned = value if value.isprintable() else "".join(
        ch if ch.isprintable() else " " for ch in value)
    return cleaned.replace("\\", "\\\\").replace('"', '\\"')


def _clean_comment(text: str) -> str:
    """Comment text that cannot end the comment early or span lines by itself, with no
    unprintable character (C0 and C1 controls, bidi overrides: an engine's words end up here)."""
    cleaned = text if text.isprintable() else "".join(
        ch if ch.isprintable() else " " for ch in text)
    return " ".join(cleaned.replace("}", ")").split())


def _number(value: float) -> str:
    """A number without a useless fraction: 60.0 -> '60', 0.5 -> '0.5'."""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.3f}".rstrip("0").rstrip(".")


def time_control_tag(base: float, increment: float = 0.0, moves: int | None = None) -> str:
    """The PGN TimeControl value: ``40/60`` (moves/seconds), ``60+0.5``, ``0+1`` or ``300``."""
    if base < 0 or increment < 0 or (moves is not None and moves <= 0):
        raise ValueError("time control values must be positive")
    text = _number(base)
    if moves is not None:
        text = f"{moves}/{text}"
    if increment:
        text += "+" + _number(increment)
    return text


def format_score(score_cp: int | None, mate: int | None) -> str:
    """A score as cutechess writes it: ``+0.31``, ``-1.05``, ``0.00``, ``+M5``, ``-M3``."""
    if mate is not None:
        return ("+" if mate > 0 else "-") + f"M{abs(mate)}"
    if score_cp is None:
        return ""
    sign = "+" if score_cp > 0 else "-" if score_cp < 0 else ""
    pawns, hundredths = divmod(abs(score_cp), 100)
    return f"{sign}{pawns}.{hundredths:02d}"


def format_seconds(seconds: float) -> str:
    """A move time with about three significant digits: 0.042s, 0.50s, 9.3s, 125s."""
    if seconds < 0.1:
        return f"{seconds:.3f}s"
    if seconds < 10:
        return f"{seconds:.2f}s"
    if seconds < 100:
        return f"{seconds:.1f}s"
    return f"{seconds:.0f}s"


def format_move_comment(move: MoveRecord) -> str:
    """The comment text for one move (without braces); empty when there is nothing to say."""
    if move.book:
        annotation = "book"
    else:
        annotation = format_score(move.score_cp, move.mate)
        if annotation and move.depth is not None:
            annotation += f"/{move.depth}"
        spent = move.time
        if spent is not None:
            seconds = format_seconds(spent if spent > 0.0 else 0.0)
            annotation = f"{annotation} {seconds}" if annotation else seconds
    if not move.comment:  # most moves: no free text to clean
        return annotation
    extra = _clean_comment(move.comment)
    if not extra:
        return annotation
    return f"{annotation}, {extra}" if annotation else extra


def _format_time(moment: datetime) -> str:
    text = moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{moment.microsecond // 1000:03d}"
    zone = moment.tzname()
    return f"{text} {zone}" if zone else text


def _format_duration(seconds: float) -> str:
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    return f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"


def _tag_pairs(game: GameDescription) -> list[tuple[str, str]]:
    """All tags of a game, in the order they are written.

    Tags the writer derives (SetUp, FEN, Variant, PlyCount) ignore values given in ``tags``;
    TimeControl, Termination and the game times fall back to ``tags`` when their field is None.
    """
    for name in game.tags:
        if not _TAG_NAME.match(name):
            raise ValueError(f"invalid PGN tag name {name!r}")
    if game.result not in _RESULTS:
        raise ValueError(f"invalid PGN result {game.result!r}")
    given = dict(game.tags)
    if "Date" not in given and game.start_time is not None:
        given["Date"] = game.start_time.strftime("%Y.%m.%d")
    given["Result"] = game.result
    pairs = [(name, given.get(name, _ROSTER_DEFAULTS.get(name, "?"))) for name in SEVEN_TAG_ROSTER]
    if game.chess960:
        pairs.append(("Variant", "fischerandom"))
    start = game.start_fen
    if start is not None and (game.chess960 or start.split() != STANDARD_START_FEN.split()):
        pairs += [("SetUp", "1"), ("FEN", start)]
    elif game.chess960:
        pairs += [("SetUp", "1"), ("FEN", STANDARD_START_FEN)]
    derived: dict[str, str | None] = {
        "TimeControl": game.time_control,
        "Termination": game.termination,
        "PlyCount": str(len(game.moves)),
        "GameStartTime": _format_time(game.start_time) if game.start_time else None,
        "GameEndTime": _format_time(game.end_time) if game.end_time else None,
        "GameDuration": None,
    }
    if game.start_time is not None and game.end_time is not None:
        elapsed = (game.end_time - game.start_time).total_seconds()
        derived["GameDuration"] = _format_duration(elapsed)
    for name, value in derived.items():
        value = value if value is not None else given.get(name)
        if value is not None:
            pairs.append((name, value))
    taken = set(SEVEN_TAG_ROSTER) | _WRITER_TAGS
    pairs += [(name, value) for name, value in given.items() if name not in taken]
    return pairs


def _start_counters(fen: str | None) -> tuple[bool, int]:
    """(white to move, fullmove number) at the start, read from the FEN's fields."""
    if fen is None:
        return True, 1
    fields = fen.split()
    white = len(fields) < 2 or fields[1] != "b"
    try:
        number = max(1, int(fields[5])) if len(fields) > 5 else 1
    except ValueError:
        number = 1
    return white, number


def _movetext_units(game: GameDescription) -> list[str]:
    """Movetext as a list of unbreakable pieces (numbers, SAN, comment words, result)."""
    units: list[str] = []
    _each_unit(game, units.append)
    return units


def _each_unit(game: GameDescription, emit: Callable[[str], object]) -> None:
    """Give each unbreakable piece of the movetext to `emit`, in order: each move's number,
    SAN and comment are built once, with no list of the game's units in between."""
    white, number = _start_counters(game.start_fen)
    need_number = True
    last = len(game.moves) - 1
    for index, move in enumerate(game.moves):
        if white:
            emit(f"{number}.")
        elif need_number:
            emit(f"{number}...")
        emit(move.san)
        comment = format_move_comment(move)
        if index == last and game.reason:
            reason = _clean_comment(game.reason)
            if reason:
                comment = f"{comment}, {reason}" if comment else reason
        need_number = bool(comment)
        if comment:
            if len(comment) + 2 <= LINE_WIDTH:  # the common case: one unit, braces and all
                emit("{" + comment + "}")
            else:
                for word in _comment_units(comment):
                    emit(word)
        if not white:
            number += 1
        white = not white
    if not game.moves and game.reason:
        for word in _comment_units(_clean_comment(game.reason)):
            emit(word)
    emit(game.result)


def _comment_units(text: str) -> list[str]:
    """A comment as one unit when it fits on a line, else word by word."""
    whole = "{" + text + "}"
    if len(whole) <= LINE_WIDTH:
        return [whole]
    words = text.split()
    words[0] = "{" + words[0]
    words[-1] = words[-1] + "}"
    return words


def _wrap(units: Iterable[str]) -> list[str]:
    """Greedy wrapping of units into lines of at most `LINE_WIDTH` columns: a line's units
    are kept in a list with its length counted, and joined once when the line is full (not
    copied into a longer string at every unit); in local variables, a game's few hundred
    units a game's end formats are the better part of its PGN's cost otherwise."""
    lines: list[str] = []
    parts: list[str] = []
    length = 0  # the current line's length; 0 while it is empty
    for unit in units:
        size = len(unit)
        if not length:
            # An empty line (or one holding only an empty unit) is taken over by the unit.
            parts = [unit]
            length = size
        elif length + 1 + size > LINE_WIDTH:
            lines.append(" ".join(parts))
            parts = [unit]
            length = size
        else:
            parts.append(unit)
            length += 1 + size
    if length:
        lines.append(" ".join(parts))
    return lines


def format_game(game: GameDescription) -> str:
    """The game as export-format PGN: tag section, a blank line, movetext, ending in a newline."""
    tags = [f'[{name} "{escape_tag_value(value)}"]' for name, value in _tag_pairs(game)]
    return "\n".join([*tags, "", *_wrap(_movetext_units(game))]) + "\n"


def append_game(path: str | Path, game: GameDescription) -> None:
    """Append one game to a PGN file (UTF-8), followed by the blank line that separates games."""
    with open(path, "a", encoding="utf-8", newline="\n") as handle:
        handle.write(format_game(game) + "\n")
