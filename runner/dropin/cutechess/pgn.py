"""cutechess-cli's PGN: its tags, their order, its move comments and its line breaking.

What `PgnGame::write` produces for a game of cutechess-cli 1.5.1, from the runner's record:
the seven-tag roster (an empty value written ``?``), then every other tag with a value in
name order (`GameDuration`, `GameEndTime`, `GameStartTime`, `PlyCount`, `Termination`,
`TimeControl`, ...); movetext lines broken before they reach 80 characters; each move's
comment `{+0.25/12 0.123s}` (`{book}` for an opening move), the reason for the result added to
the last one; a blank line after the game. The `min` form keeps the roster (and `FEN`/`SetUp`,
and a non-standard `Variant`) and drops the comments.

cutechess also classifies openings (`ECO`, `Opening`, `Variation` tags) from a table compiled
into its binary; the runner has no such table, so those three tags are not written.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

from runner.clock import TimeControl
from runner.dropin.cutechess.results import CuteResult
from runner.dropin.cutechess.settings import PgnMode
from runner.dropin.fastchess.pvcheck import search_lines
from runner.game.record import GameRecord
from runner.rules import STARTING_FEN
from runner.types import MoveRecord, Variant

__all__ = ["ROSTER", "cutechess_pgn", "move_comment", "pgn_tags", "time_control_text"]

ROSTER = ("Event", "Site", "Date", "Round", "White", "Black", "Result")
"""The seven tags written first, in this order, ``?`` when empty."""

_LINE_LIMIT = 80
"""A move (with its comment) that would reach this column starts a new line."""
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _qt_g6(value: float) -> str:
    """`QString::number(value)`: six significant digits, no trailing zeros."""
    return f"{value + 0.0:g}"


def time_control_text(control: TimeControl) -> str:
    """A time control as cutechess writes it in PGN and its tables: ``inf``, ``0.5/move``,
    ``40/60+0.5`` (seconds)."""
    if control.move_time is not None:
        return f"{_qt_g6(round(control.move_time * 1000) / 1000)}/move"
    if not control.periods:
        return "inf"
    period = control.periods[0]
    text = f"{period.moves}/" if period.moves > 0 else ""
    text += _qt_g6(round(period.base * 1000) / 1000)
    if period.increment > 0:
        text += "+" + _qt_g6(round(period.increment * 1000) / 1000)
    return text


def _control_key(control: TimeControl) -> tuple[str, int | None, int | None]:
    return time_control_text(control), control.depth, control.nodes


def _score_text(score_cp: int | None, mate: int | None) -> str:
    """The score part of a comment (`MoveEvaluation::scoreText`): ``+0.25``, ``-M4``, ``0.00``."""
    if mate:
        # cutechess counts a mate in plies: N moves to mate is 2N-1 plies, N to be mated 2N.
        plies = 2 * mate - 1 if mate > 0 else -2 * mate
        return ("+" if mate > 0 else "-") + f"M{plies}"
    score = 0 if mate == 0 else score_cp
    if score is None:
        return ""
    return ("+" if score > 0 else "") + f"{score / 100.0:.2f}"


def move_comment(move: MoveRecord) -> str:
    """A move's comment as cutechess writes it (`evalString`): ``+0.25/12 0.123s``, ``book``,
    ``0s``; empty when the engine said nothing about the move."""
    return _comment(move.book, move.depth, move.score_cp, move.mate, move.time)


def _comment(book: bool, depth: int | None, score_cp: int | None, mate: int | None,
             seconds: float | None) -> str:
    """`move_comment` of a move with these figures."""
    if book:
        return "book"
    depth = depth or 0
    text = _score_text(score_cp, mate) if depth > 0 else ""
    if depth > 0:
        text += f"/{depth} "
    millis = 0 if seconds is None else max(0, int(seconds * 1000))
    if millis == 0:
        if not text and score_cp is None and mate is None and seconds is None:
            return ""
        return text + "0s"
    decimals = 3 if millis < 100 else 2 if millis < 1000 else 1 if millis < 10000 else 0
    return f"{text}{millis / 1000.0:.{decimals}f}s"


_UCI_KEYWORDS = frozenset({"depth", "seldepth", "time", "nodes", "pv", "multipv", "score",
                           "currmove", "currmovenumber", "hashfull", "nps", "tbhits", "cpuload",
                           "string", "refutation", "currline"})

_Reads = tuple[int | None, int | None, int | None]
"""A move's (depth, centipawns, mate moves) as cutechess read them from its search."""


def _as_cutechess_reads(lines: list[str]) -> _Reads | None:
    """The move's depth and score as cutechess-cli takes them from a UCI engine's ``info``
    lines of its search (`UciEngine::parseInfo`, merged line after line): the latest depth,
    and the latest score of the first PV. A bound is noticed only when a token follows the
    ``lowerbound``/``upperbound`` word within the score (its scan steps over the score's
    words two at a time), so the fail-high and fail-low scores engines print last count as
    any other. None for a search without ``info`` lines (a CECP engine's): the runner's
    figures stay. Figures, not a copy of the move (a ``dataclasses.replace`` per move cost
    more than the rest of its comment)."""
    depth: int | None = None
    score: tuple[int | None, int | None] | None = None
    seen = False
    for line in lines:
        if "info" not in line:  # a CECP engine's thinking line, a bestmove
            continue
        words = line.split()
        if not words or words[0] != "info" or (len(words) > 1 and words[1] == "string"):
            continue
        seen = True
        groups: dict[str, list[str]] = {}
        key = None
        for word in words[1:]:
            if word in _UCI_KEYWORDS:
                key = word
                groups[key] = []
            elif key is not None:
                groups[key].append(word)
        principal = _int(groups.get("multipv"))
        if principal is not None and principal > 1:
            continue  # "Only the primary PV can be considered the current eval"
        found = _line_score(groups.get("score"))
        if found is not None:
            score = found
        line_depth = _int(groups.get("depth"))
        if line_depth:
            depth = line_depth
    if not seen:
        return None
    score_cp, mate = score if score is not None else (None, None)
    return depth, score_cp, mate


def _line_score(words: list[str] | None) -> tuple[int | None, int | None] | None:
    """A ``score`` field's value as cutechess reads it: (centipawns, None), (None, mate
    moves), or None for none (or for a bound it notices)."""
    if not words:
        return None
    found: tuple[int | None, int | None] | None = (0, None)
    for at in range(1, len(words), 2):
        kind, value = words[at - 1], words[at]
        number = _int([value])
        if kind == "cp":
            found = (number or 0, None)
        elif kind == "mate":
            found = (None, number or 0) if number else (0, None)
        elif kind in ("lowerbound", "upperbound"):
            return None
    return found


def _int(words: list[str] | None) -> int | None:
    if not words:
        return None
    try:
        return int(words[0])
    except ValueError:
        return None


def _timestamp(moment: datetime) -> str:
    """`yyyy-MM-ddThh:mm:ss.zzz t` in local time, as cutechess stamps a game's start and end."""
    local = moment.astimezone()
    return f"{local:%Y-%m-%dT%H:%M:%S}.{local.microsecond // 1000:03d} {local.tzname() or ''}"


def _duration(start: datetime, end: datetime) -> str:
    """Whole seconds between the two millisecond stamps, as ``hh:mm:ss`` (`secsTo`)."""
    seconds = max(0, (_millis(end) - _millis(start)) // 1000)
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def _millis(moment: datetime) -> int:
    """Milliseconds since the epoch, truncated as Qt's clock keeps them."""
    return (moment.astimezone(UTC) - _EPOCH) // timedelta(milliseconds=1)


def _start_fen(record: GameRecord) -> str | None:
    """The FEN tag: the position a game started from when not the standard start (from an
    EPD opening), and always for Chess960."""
    fen = record.spec.start_fen
    if record.spec.variant is Variant.FISCHERANDOM:
        return fen or STARTING_FEN
    # A PGN opening's moves start from the standard position: cutechess writes no FEN then.
    return None if fen is None or fen == STARTING_FEN else fen


def pgn_tags(record: GameRecord, end: CuteResult, *, event: str, site: str, round_: int,
             variant: str) -> dict[str, str]:
    """Every tag cutechess writes for the game, with its value (empty: written as ``?`` in the
    roster, left out elsewhere)."""
    tags = {"Event": event, "Site": site, "Date": f"{record.started_at.astimezone():%Y.%m.%d}",
            "Round": str(round_), "White": record.white, "Black": record.black,
            "Result": end.short}
    white_tc, black_tc = record.spec.white_tc, record.spec.black_tc
    # cutechess compares the whole controls, depth and node limits included (not the margin).
    if _control_key(white_tc) == _control_key(black_tc):
        tags["TimeControl"] = time_control_text(white_tc)
    else:
        tags["WhiteTimeControl"] = time_control_text(white_tc)
        tags["BlackTimeControl"] = time_control_text(black_tc)
    if variant != "standard":
        tags["Variant"] = variant
    fen = _start_fen(record)
    if fen is not None:
        tags["FEN"] = fen
        tags["SetUp"] = "1"
    tags["PlyCount"] = str(len(record.moves))
    tags["GameStartTime"] = _timestamp(record.started_at)
    tags["GameEndTime"] = _timestamp(record.ended_at)
    tags["GameDuration"] = _duration(record.started_at, record.ended_at)
    tags["Termination"] = end.termination_tag
    return tags


def _ordered(tags: Mapping[str, str]) -> list[tuple[str, str]]:
    """The roster first (``?`` for an empty value), then the other tags with a value, by name."""
    out = [(name, tags.get(name) or "?") for name in ROSTER]
    out += [(name, tags[name]) for name in sorted(tags) if name not in ROSTER and tags[name]]
    return out


def _start_side_black(fen: str | None) -> bool:
    return fen is not None and len(fen.split()) > 1 and fen.split()[1] == "b"


def cutechess_pgn(record: GameRecord, end: CuteResult, *, event: str = "", site: str = "",
                  round_: int = 1, variant: str = "standard",
                  mode: PgnMode = PgnMode.VERBOSE) -> str:
    """The game as cutechess-cli appends it to its `-pgnout` file (blank line after it)."""
    tags = pgn_tags(record, end, event=event, site=site, round_=round_, variant=variant)
    ordered = _ordered(tags)
    verbose = mode is PgnMode.VERBOSE
    lines = [f'[{name} "{value}"]\n' for name, value in (ordered if verbose else ordered[:7])]
    if not verbose:
        if "FEN" in tags:
            lines.append(f'[FEN "{tags["FEN"]}"]\n')
            lines.append('[SetUp "1"]\n')
        if "Variant" in tags:
            lines.append(f'[Variant "{tags["Variant"]}"]\n')
    out = ["".join(lines)]
    searches = search_lines(record) if verbose and any(record.protocol_lines) else {}
    comments = []
    # A whitepov engine playing Black reports White's side: cutechess-cli negates what it
    # reads from its info lines, as the game core negates the stored figures.
    black_pov = record.spec.white_pov[1]
    black_first = _start_side_black(_start_fen(record))
    for index, m in enumerate(record.moves):
        search = searches.get(index)
        reads = _as_cutechess_reads(search) if search is not None else None
        if reads is None:
            comments.append(move_comment(m))
            continue
        depth, score_cp, mate = reads
        if black_pov and (index % 2 == 0) == black_first:
            score_cp = None if score_cp is None else -score_cp
            mate = None if mate is None else -mate
        comments.append(_comment(m.book, depth, score_cp, mate, m.time))
    description = end.description
    if comments:
        comments[-1] = f"{comments[-1]}, {description}" if comments[-1] else description
    elif description:
        out.append(f"\n{{{description}}}")
    line_length = 0
    number = 0
    black = black_first
    for index, move in enumerate(record.moves):
        if index == 0 and black:
            number += 1
            text = f"{number}... "
        elif not black:
            number += 1
            text = f"{number}. "
        else:
            text = ""
        text += move.san
        if verbose and comments[index]:
            text += f" {{{comments[index]}}}"
        if line_length == 0 or line_length + len(text) >= _LINE_LIMIT:
            out.append(f"\n{text}")
            line_length = len(text)
        else:
            out.append(f" {text}")
            line_length += len(text) + 1
        black = not black
    result = end.short
    if line_length + len(result) >= _LINE_LIMIT:
        out.append(f"\n{result}\n\n")
    else:
        out.append(f" {result}\n\n")
    return "".join(out)
