"""Pure parsers and formatters for the UCI wire: option declarations, ``info`` and
``bestmove`` lines, and the ``position`` and ``go`` commands.

No I/O here: every function maps strings to values, so the wire format is tested with
plain tables; `UciEngine` (uci.py) speaks the protocol with them.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from runner.clock import TimeControl
from runner.protocol.engine import ClockState, EngineOption, SearchInfo
from runner.protocol.options import declared_value, spelt
from runner.types import OptionValue, Protocol

__all__ = [
    "OPTION_TYPES",
    "UciInfo",
    "find_option",
    "format_go",
    "merge_info",
    "merge_info_lines",
    "format_position",
    "option_value",
    "parse_bestmove",
    "parse_info",
    "parse_option",
]

OPTION_TYPES = frozenset({"check", "spin", "combo", "button", "string"})
"""The option types UCI declares."""

_OPTION_KEYWORDS = frozenset({"default", "min", "max", "var"})
# The words of an ``info`` line, each with what `parse_info` does with it: an integer field
# (the codes up to _IGNORED_INT, which reads one and drops it), the score, a line of moves
# (kept for ``pv`` only), ``currmove``, ``wdl``'s three numbers, or the message.
_DEPTH: Final = 1
_SELDEPTH: Final = 2
_NODES: Final = 3
_NPS: Final = 4
_TIME: Final = 5
_HASHFULL: Final = 6
_TBHITS: Final = 7
_MULTIPV: Final = 8
_IGNORED_INT: Final = 9
_SCORE: Final = 10
_PV: Final = 11
_LINE: Final = 12
_CURRMOVE: Final = 13
_WDL: Final = 14
_STRING: Final = 15
_SKIP: Final = 0
_INFO_WORDS: Final[dict[str, int]] = {
    "depth": _DEPTH, "seldepth": _SELDEPTH, "nodes": _NODES, "nps": _NPS, "time": _TIME,
    "hashfull": _HASHFULL, "tbhits": _TBHITS, "multipv": _MULTIPV, "sbhits": _IGNORED_INT,
    "currmovenumber": _IGNORED_INT, "cpuload": _IGNORED_INT, "score": _SCORE, "pv": _PV,
    "refutation": _LINE, "currline": _LINE, "currmove": _CURRMOVE, "wdl": _WDL,
    "string": _STRING,
}
_NULL_MOVES = frozenset({"0000", "(none)", "none", "null"})
_NO_LIMIT_MS = 86_400_000  # untimed, no depth or nodes: a day per move (CECP sends st 86400)


# ----------------------------------------------------------------------------- options


def option_value(option: EngineOption, value: OptionValue) -> str | None:
    """`value` for `option` as it goes on the UCI wire (None: a button, no value): the value
    the declaration reads it as (`declared_value`), a check's as ``true``/``false``;
    ValueError if the declaration forbids it."""
    typed = declared_value(option, value, Protocol.UCI)
    return None if typed is None else spelt(typed, Protocol.UCI)


def parse_option(text: str) -> EngineOption:
    """Parse ``option name N type T [default D] [min m] [max M] [var V]*``; ValueError if bad.

    Names and values may hold spaces: a name runs up to ``type``, a value up to the next
    keyword.  An empty default (``default`` alone, or ``<empty>``) is the empty string.
    """
    tokens = text.split()
    if len(tokens) < 2 or tokens[0] != "option" or tokens[1] != "name":
        raise ValueError(f"not an option declaration: {text!r}")
    try:
        type_at = tokens.index("type", 2)
    except ValueError:
        raise ValueError(f"option declaration without a type: {text!r}") from None
    name = " ".join(tokens[2:type_at])
    if not name or type_at + 1 >= len(tokens):
        raise ValueError(f"option declaration without a name or type: {text!r}")
    kind = tokens[type_at + 1]
    if kind not in OPTION_TYPES:
        raise ValueError(f"option {name!r}: unknown type {kind!r}")
    fields: dict[str, list[str]] = {}
    vars_: list[str] = []
    key: str | None = None
    words: list[str] = []

    def close() -> None:
        if key == "var":
            vars_.append(" ".join(words))
        elif key is not None:
            fields[key] = words

    for token in tokens[type_at + 2:]:
        if token in _OPTION_KEYWORDS:
            close()
            key, words = token, []
        elif key is not None:
            words.append(token)
    close()
    default = None
    if "default" in fields:
        default = " ".join(fields["default"])
        if default == "<empty>":
            default = ""
    return EngineOption(name, kind, default, _option_int(name, fields.get("min")),
                         _option_int(name, fields.get("max")), tuple(vars_))


def _option_int(name: str, words: list[str] | None) -> int | None:
    if not words:
        return None
    try:
        return int(words[0])
    except ValueError:
        raise ValueError(f"option {name!r}: bound {words[0]!r} is not an integer") from None


@dataclass(frozen=True)
class UciInfo:
    """One ``info`` line, parsed (fields absent from the line are None)."""

    depth: int | None = None
    seldepth: int | None = None
    score_cp: int | None = None
    mate: int | None = None
    bound: str | None = None
    """``lower`` or ``upper`` when the score is only a bound, else None."""
    nodes: int | None = None
    nps: int | None = None
    time: float | None = None
    """Seconds (UCI sends milliseconds)."""
    hashfull: int | None = None
    tbhits: int | None = None
    multipv: int | None = None
    pv: tuple[str, ...] = ()
    currmove: str | None = None
    string: str | None = None

    @property
    def has_score(self) -> bool:
        """Whether the line carried a score."""
        return self.score_cp is not None or self.mate is not None


def parse_info(text: str) -> UciInfo:
    """Parse an ``info`` line leniently: unknown or malformed fields are skipped, never fatal."""
    scan = _scan_info(text)
    return UciInfo(depth=scan.depth, seldepth=scan.seldepth, score_cp=scan.score_cp,
                   mate=scan.mate, bound=scan.bound, nodes=scan.nodes, nps=scan.nps,
                   time=scan.time, hashfull=scan.hashfull, tbhits=scan.tbhits,
                   multipv=scan.multipv, pv=scan.pv, currmove=scan.currmove,
                   string=scan.string)


class _InfoScan:
    """One ``info`` line's fields as `parse_info` reads them: a plain class, which the
    compiled module builds natively, where a frozen dataclass such as `UciInfo` runs the
    ``__init__`` that `dataclasses` generates (interpreted, a ``setattr`` call a field). The
    reading merges a search's report from this (`merge_info_lines`), never making a `UciInfo`."""

    __slots__ = ("bound", "currmove", "depth", "hashfull", "mate", "multipv", "nodes", "nps",
                 "pv", "score_cp", "seldepth", "string", "tbhits", "time")

    def __init__(self, depth: int | None, seldepth: int | None, score_cp: int | None,
                 mate: int | None, bound: str | None, nodes: int | None, nps: int | None,
                 time: float | None, hashfull: int | None, tbhits: int | None,
                 multipv: int | None, pv: tuple[str, ...], currmove: str | None,
                 string: str | None) -> None:
        self.depth = depth
        self.seldepth = seldepth
        self.score_cp = score_cp
        self.mate = mate
        self.bound = bound
        self.nodes = nodes
        self.nps = nps
        self.time = time
        self.hashfull = hashfull
        self.tbhits = tbhits
        self.multipv = multipv
        self.pv = pv
        self.currmove = currmove
        self.string = string


def _scan_info(text: str) -> _InfoScan:
    """`parse_info`'s reading of the line (see there)."""
    # One pass over the words, each keyword dispatched by one dict lookup to a small code and
    # its value kept in a local (a line is parsed once per search at a shallow depth, where
    # this is most of the parsing a ply does; see docs/benchmarks.md, issue 38).
    tokens = text.split()
    count = len(tokens)
    index = 1 if count and tokens[0] == "info" else 0
    depth: int | None = None
    seldepth: int | None = None
    nodes: int | None = None
    nps: int | None = None
    ms: int | None = None
    hashfull: int | None = None
    tbhits: int | None = None
    multipv: int | None = None
    score_cp: int | None = None
    mate: int | None = None
    bound: str | None = None
    pv: tuple[str, ...] = ()
    currmove: str | None = None
    string: str | None = None
    while index < count:
        code = _INFO_WORDS.get(tokens[index], _SKIP)
        index += 1
        if code == _SKIP:
            continue
        if code <= _IGNORED_INT:
            if index < count:
                word = tokens[index]
                index += 1
                try:
                    number = int(word)
                except ValueError:
                    continue
                if code == _DEPTH:
                    depth = number
                elif code == _SELDEPTH:
                    seldepth = number
                elif code == _NODES:
                    nodes = number
                elif code == _NPS:
                    nps = number
                elif code == _TIME:
                    ms = number
                elif code == _HASHFULL:
                    hashfull = number
                elif code == _TBHITS:
                    tbhits = number
                elif code == _MULTIPV:
                    multipv = number
        elif code == _SCORE:
            while index < count:
                word = tokens[index]
                if word == "cp" or word == "mate":
                    index += 1
                    if index < count:
                        value = tokens[index]
                        index += 1
                        try:
                            number = int(value)
                        except ValueError:
                            continue
                        if word == "cp":
                            score_cp = number
                        else:
                            mate = number
                elif word == "lowerbound" or word == "upperbound":
                    index += 1
                    bound = word[:5]
                else:
                    break
        elif _PV <= code <= _LINE:
            moves: list[str] = []
            while index < count:
                move = tokens[index].lower()
                if not _is_move_word(move):
                    break
                moves.append(move)
                index += 1
            if code == _PV:
                pv = tuple(moves)
        elif code == _CURRMOVE:
            if index < count:
                currmove = tokens[index]
                index += 1
        elif code == _WDL:
            index += 3
        else:  # ``string``: the rest of the line is the message
            string = text.split("string", 1)[1].strip()
            break
    return _InfoScan(depth, seldepth, score_cp, mate, bound, nodes, nps,
                     None if ms is None else ms / 1000.0, hashfull, tbhits, multipv, pv,
                     currmove, string)


_FILES: Final = "abcdefgh"
_RANKS: Final = "12345678"
_PROMOTIONS: Final = "qrbnk"


def _is_move_word(word: str) -> bool:
    """Whether `word` (lower case) is a coordinate move as UCI writes one, or ``0000``."""
    size = len(word)
    if size == 4:
        if word == "0000":
            return True
    elif size != 5 or word[4] not in _PROMOTIONS:
        return False
    return (word[0] in _FILES and word[1] in _RANKS and word[2] in _FILES
            and word[3] in _RANKS)


def parse_bestmove(text: str) -> tuple[str, str | None]:
    """``bestmove X [ponder Y]`` -> (X, Y); a null answer (``(none)``, ``0000``, nothing)
    comes back as ``0000``, which no legal position accepts as a move."""
    tokens = text.split()
    move = tokens[1] if len(tokens) > 1 else "0000"
    if move.lower() in _NULL_MOVES:
        move = "0000"
    elif _is_move_word(move.lower()):
        move = move.lower()
    ponder = None
    if len(tokens) > 3 and tokens[2] == "ponder":
        ponder = tokens[3]
    return move, ponder


# ----------------------------------------------------------------------------- formatting


def format_position(start_fen: str | None, moves: Sequence[str]) -> str:
    """``position startpos|fen FEN [moves ...]``."""
    head = "position startpos" if start_fen is None else f"position fen {start_fen}"
    return f"{head} moves {' '.join(moves)}" if moves else head


def format_go(tc: TimeControl, clocks: ClockState, white_to_move: bool,
              ponder: bool = False) -> str:
    """The ``go`` command for a time control and the clocks when the engine must move.

    The opponent's increment comes from `clocks` (the engine's own when it is not given);
    depth and node limits combine with any clock.  `ponder` makes it ``go ponder ...``: the
    search on the opponent's time, with the limits the real search would get.
    """
    parts = ["go", "ponder"] if ponder else ["go"]
    if tc.move_time is not None:
        parts += ["movetime", str(_milliseconds(tc.move_time))]
    elif tc.periods and clocks.own is not None:
        # White's fields first whoever moves, as cutechess-cli and fastchess write them.
        increment = tc.period(clocks.period).increment
        own_time = str(_milliseconds(clocks.own))
        other_time = None if clocks.opponent is None else str(_milliseconds(clocks.opponent))
        other_increment = 0.0
        if clocks.opponent is not None:
            other_increment = (increment if clocks.opponent_increment is None
                               else clocks.opponent_increment)
        if white_to_move:
            parts += ["wtime", own_time]
            if other_time is not None:
                parts += ["btime", other_time]
            if increment:
                parts += ["winc", str(_milliseconds(increment))]
            if other_increment:
                parts += ["binc", str(_milliseconds(other_increment))]
        else:
            if other_time is not None:
                parts += ["wtime", other_time]
            parts += ["btime", own_time]
            if other_increment:
                parts += ["winc", str(_milliseconds(other_increment))]
            if increment:
                parts += ["binc", str(_milliseconds(increment))]
        if clocks.moves_to_go is not None:
            parts += ["movestogo", str(max(1, clocks.moves_to_go))]
    if tc.depth is not None:
        parts += ["depth", str(tc.depth)]
    if tc.nodes is not None:
        parts += ["nodes", str(tc.nodes)]
    if len(parts) == (2 if ponder else 1):
        parts += ["movetime", str(_NO_LIMIT_MS)]
    return " ".join(parts)


def _milliseconds(seconds: float) -> int:
    return max(0, round(seconds * 1000))


def find_option(options: Mapping[str, EngineOption], name: str) -> EngineOption | None:
    """A declared option by name (UCI names are not case-sensitive)."""
    option = options.get(name)
    if option is not None:
        return option
    lowered = name.lower()
    for declared in options.values():
        if declared.name.lower() == lowered:
            return declared
    return None


def merge_info(old_info: SearchInfo | None, info: UciInfo,
               score_is_bound: bool) -> tuple[SearchInfo, bool]:
    """The search's latest report with this line's fields, and whether its score is a bound:
    an exact score is not replaced by a bound (fail-high/low lines) from the same search."""
    return _merged(old_info, _InfoScan(
        info.depth, info.seldepth, info.score_cp, info.mate, info.bound, info.nodes, info.nps,
        info.time, info.hashfull, info.tbhits, info.multipv, info.pv, info.currmove,
        info.string), score_is_bound)


def _merged(old_info: SearchInfo | None, info: _InfoScan,
            score_is_bound: bool) -> tuple[SearchInfo, bool]:
    """`merge_info` of a line as read (see there)."""
    has_score = info.score_cp is not None or info.mate is not None
    if old_info is None:  # the search's first report (its only one at a shallow depth)
        if has_score:
            score_is_bound = info.bound is not None
        return SearchInfo(depth=info.depth, score_cp=info.score_cp, mate=info.mate,
                          time=info.time, nodes=info.nodes, pv=info.pv,
                          seldepth=info.seldepth, nps=info.nps, hashfull=info.hashfull,
                          tbhits=info.tbhits), score_is_bound
    old = old_info
    score_cp, mate = old.score_cp, old.mate
    if has_score and (info.bound is None or score_is_bound
                           or (old.score_cp is None and old.mate is None)):
        score_cp, mate = info.score_cp, info.mate
        score_is_bound = info.bound is not None
    return SearchInfo(
        depth=info.depth if info.depth is not None else old.depth,
        score_cp=score_cp, mate=mate,
        time=info.time if info.time is not None else old.time,
        nodes=info.nodes if info.nodes is not None else old.nodes,
        pv=info.pv or old.pv,
        seldepth=info.seldepth if info.seldepth is not None else old.seldepth,
        nps=info.nps if info.nps is not None else old.nps,
        hashfull=info.hashfull if info.hashfull is not None else old.hashfull,
        tbhits=info.tbhits if info.tbhits is not None else old.tbhits,
    ), score_is_bound


_REPORTED = frozenset({"depth", "seldepth", "score", "nodes", "nps", "time", "hashfull",
                       "tbhits", "pv"})
"""The words of an ``info`` line that name a field `merge_info` keeps."""


def merge_info_lines(old_info: SearchInfo | None, lines: Sequence[str],
                     score_is_bound: bool) -> tuple[SearchInfo | None, bool]:
    """What `merge_info` of each of `lines` (``info`` lines without ``info``, none a
    message: no ``string`` word), oldest first, would give after `old_info`, lines of a
    second and later ``multipv`` skipped; but only the lines that can still change the
    result are parsed, newest first.

    Why: an engine prints many reports per search and only the last values of each field
    reach the move's record, so the reading keeps the lines and this runs once, at the
    ``bestmove``. Each field is its newest line's value; the score is the newest exact one,
    else (when the old score is a bound or absent) the newest bound. A line without a
    ``multipv`` word and without any still-missing field's word is not parsed at all.
    """
    if len(lines) <= 1:  # one report a search (a shallow one): parsed as it stands
        if not lines:
            return old_info, score_is_bound
        scan = _scan_info(lines[0])
        if scan.multipv is not None and scan.multipv != 1:
            return old_info, score_is_bound
        return _merged(old_info, scan, score_is_bound)
    missing = set(_REPORTED)
    found: dict[str, object] = {}
    bound: tuple[int | None, int | None] | None = None
    exact: tuple[int | None, int | None] | None = None
    merged = False  # any line that merge_info would have taken (not another multipv's)
    for text in reversed(lines):
        words = text.split()
        if "multipv" not in words:
            merged = True
            if missing.isdisjoint(words):
                continue
        info = parse_info(text)
        if info.multipv not in (None, 1):
            continue
        merged = True
        if info.has_score and "score" in missing:
            if info.bound is None:
                exact = (info.score_cp, info.mate)
                missing.discard("score")
            elif bound is None:
                bound = (info.score_cp, info.mate)
        for name in ("depth", "seldepth", "nodes", "nps", "time", "hashfull", "tbhits"):
            if name in missing:
                value = getattr(info, name)
                if value is not None:
                    found[name] = value
                    missing.discard(name)
        if info.pv and "pv" in missing:
            found["pv"] = info.pv
            missing.discard("pv")
        if not missing:
            break
    if not merged:
        return old_info, score_is_bound
    old = old_info or SearchInfo()
    score_cp, mate = old.score_cp, old.mate
    if exact is not None:
        (score_cp, mate), score_is_bound = exact, False
    elif bound is not None and (score_is_bound or (score_cp is None and mate is None)):
        (score_cp, mate), score_is_bound = bound, True
    get = found.get
    return SearchInfo(
        depth=get("depth", old.depth), score_cp=score_cp, mate=mate,  # type: ignore[arg-type]
        time=get("time", old.time), nodes=get("nodes", old.nodes),  # type: ignore[arg-type]
        pv=get("pv", old.pv), seldepth=get("seldepth", old.seldepth),  # type: ignore[arg-type]
        nps=get("nps", old.nps), hashfull=get("hashfull", old.hashfull),  # type: ignore[arg-type]
        tbhits=get("tbhits", old.tbhits),  # type: ignore[arg-type]
    ), score_is_bound
