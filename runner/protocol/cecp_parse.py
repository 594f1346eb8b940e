"""Pure parsers for what CECP (xboard/winboard) engines print, one line at a time.

No I/O here: every function maps a string to a dataclass, so the wire format is tested
with plain tables.  Forms accepted follow the protocol specification (sections 9, 10
and 13), including the old ``1. ... e7e5`` and ``My move is : e7e5`` move forms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from runner.protocol.engine import SearchInfo

__all__ = [
    "DrawOffer",
    "EngineLine",
    "ErrorReport",
    "FeatureLine",
    "IllegalMoveReport",
    "MoveLine",
    "OptionSpec",
    "Other",
    "Pong",
    "Resign",
    "ResultLine",
    "Tell",
    "ThinkingLine",
    "is_coordinate_move",
    "mate_from_score",
    "parse_engine_line",
    "parse_features",
    "parse_option",
    "parse_thinking",
]


@dataclass(frozen=True)
class FeatureLine:
    """A ``feature`` line: its NAME=VALUE pairs in order (values unquoted)."""

    pairs: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Pong:
    """``pong N``."""

    number: int


@dataclass(frozen=True)
class MoveLine:
    """An engine move as printed, and its form: ``move``, ``numbered`` or ``mymove``."""

    move: str
    form: str


@dataclass(frozen=True)
class ThinkingLine:
    """A thinking-output line, parsed."""

    info: SearchInfo


@dataclass(frozen=True)
class Resign:
    """The engine resigns."""


@dataclass(frozen=True)
class DrawOffer:
    """The engine offers (or accepts, or claims) a draw with ``offer draw``."""


@dataclass(frozen=True)
class ResultLine:
    """``1-0 {comment}``, ``0-1 {...}``, ``1/2-1/2 {...}``: a claim that the game ended."""

    result: str
    comment: str


@dataclass(frozen=True)
class IllegalMoveReport:
    """``Illegal move: X`` or ``Illegal move (reason): X``: the engine refused our move."""

    move: str
    reason: str


@dataclass(frozen=True)
class ErrorReport:
    """``Error (kind): command``: the engine did not understand a command."""

    kind: str
    command: str


@dataclass(frozen=True)
class Tell:
    """``telluser``, ``tellusererror``, ``tellics``... messages."""

    kind: str
    message: str


@dataclass(frozen=True)
class Other:
    """Anything else (banners, debug lines, board diagrams): kept in the transcript only."""

    text: str


EngineLine = (
    FeatureLine | Pong | MoveLine | ThinkingLine | Resign | DrawOffer | ResultLine
    | IllegalMoveReport | ErrorReport | Tell | Other
)


@dataclass(frozen=True)
class OptionSpec:
    """An engine option declared with ``feature option="NAME -TYPE ..."``."""

    name: str
    type: str
    default: str | None = None
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()


_OPTION_TYPES = frozenset(
    {"button", "save", "reset", "check", "string", "spin", "combo", "slider", "file", "path"}
)
_FEATURE_PAIR_RE = re.compile(r'\s*([A-Za-z_][\w-]*)=(?:"([^"]*)"?|(\S*))')
_COORDINATE_RE = re.compile(r"^[a-h][1-8][a-h][1-8][qrbnk]?$")
_THINKING_RE = re.compile(
    r"^\s*(?P<ply>\d+)(?P<flag>[.&+]?)\s+(?P<score>[-+]?\d+)\s+(?P<time>\d+)\s+(?P<nodes>\d+)"
    r"(?P<rest>(?:\s.*)?)$"
)
# A token shaped like a move: coordinate (e2e4, e7e8q), SAN (Nf3, exd5, e8=Q+, Nbd7) or
# castling (O-O, O-O-O, 0-0).  The old move forms below accept nothing else, so chatter
# such as "1. ... ???" stays chatter.
_MOVE_TOKEN = (
    r"(?:[a-hA-H][1-8][a-hA-H][1-8][qrbnkQRBNK]?"
    r"|[NBRQK][a-h]?[1-8]?x?[a-h][1-8][+#]?"
    r"|(?:[a-h]x)?[a-h][1-8](?:=?[NBRQ])?[+#]?"
    r"|(?:O-O(?:-O)?|0-0(?:-0)?)[+#]?)"
)
_NUMBERED_MOVE_RE = re.compile(
    rf"^\s*\d+\.?\s*\.\.\.\s*(?P<move>{_MOVE_TOKEN})(?:[!?]*)(?:\s|$)")
_MY_MOVE_RE = re.compile(
    rf"^\s*(?i:my move is)\s*:?\s*(?P<move>{_MOVE_TOKEN})(?:[!?]*)(?:\s|$)")
_RESULT_RE = re.compile(r"^\s*(?P<result>1-0|0-1|1/2-1/2)(?:\s*\{(?P<comment>[^}]*)\}?)?\s*$")
_ILLEGAL_RE = re.compile(
    r"^\s*(?:illegal|invalid) move\s*(?:\((?P<reason>[^)]*)\))?\s*:?\s*(?P<move>.*)$",
    re.IGNORECASE,
)
_ERROR_RE = re.compile(r"^\s*Error\s*\((?P<kind>[^)]*)\)\s*:?\s*(?P<command>.*)$")
_TELL_RE = re.compile(r"^\s*(?P<kind>tell\w+|askuser)(?:\s+(?P<message>.*))?$")
_OLD_RESULTS = (
    ("White resigns", "0-1"),
    ("Black resigns", "1-0"),
    ("White mates", "1-0"),
    ("Black mates", "0-1"),
    ("game is a draw", "1/2-1/2"),
)
_MOVE_NUMBER_RE = re.compile(r"^\d+\.+$")


def parse_features(text: str) -> tuple[tuple[str, str], ...]:
    """The NAME=VALUE pairs of a ``feature`` line's argument text; quoted values may hold spaces."""
    pairs = []
    position = 0
    while position < len(text):
        match = _FEATURE_PAIR_RE.match(text, position)
        if match is None:
            # Skip one garbage word and continue: one bad token must not hide the rest.
            space = text.find(" ", position + 1)
            if space < 0:
                break
            position = space
            continue
        value = match.group(2) if match.group(2) is not None else match.group(3)
        pairs.append((match.group(1), value))
        position = match.end()
    return tuple(pairs)


def parse_option(value: str) -> OptionSpec:
    """Parse the value of ``feature option=...``; ValueError when it is malformed."""
    words = value.split(" ")
    type_index = next(
        (i for i, w in enumerate(words) if w.startswith("-") and w[1:] in _OPTION_TYPES and i),
        None,
    )
    if type_index is None:
        raise ValueError(f"option without a known -TYPE: {value!r}")
    name = " ".join(words[:type_index]).strip()
    kind = words[type_index][1:]
    args = " ".join(words[type_index + 1 :]).strip()
    if not name:
        raise ValueError(f"option without a name: {value!r}")
    if kind in ("button", "save", "reset"):
        return OptionSpec(name, kind)
    if kind in ("spin", "slider"):
        numbers = args.split()
        if len(numbers) != 3:
            raise ValueError(f"-{kind} option needs VALUE MIN MAX: {value!r}")
        try:
            default, low, high = (int(n) for n in numbers)
        except ValueError:
            raise ValueError(f"-{kind} option with a non-integer: {value!r}") from None
        return OptionSpec(name, kind, str(default), low, high)
    if kind == "check":
        if args not in ("0", "1"):
            raise ValueError(f"-check option needs 0 or 1: {value!r}")
        return OptionSpec(name, kind, args)
    if kind == "combo":
        choices = tuple(c.strip() for c in args.split("///"))
        default = next((c[1:] for c in choices if c.startswith("*")), choices[0])
        return OptionSpec(name, kind, default, choices=tuple(c.lstrip("*") for c in choices))
    return OptionSpec(name, kind, args)


def mate_from_score(score: int) -> int | None:
    """Mate distance in moves (negative: being mated) if `score` is a mate score, else None.

    Conventions seen in engines: the specification's 100000+N (N moves), and the
    32000-N / 31999-N family (N plies to mate, as Crafty-style engines print).
    """
    magnitude = abs(score)
    sign = 1 if score > 0 else -1
    if magnitude >= 100000:
        return sign * (magnitude - 100000) if magnitude > 100000 else sign * 1
    if 99000 <= magnitude < 100000:
        return sign * max(1, (100000 - magnitude + 1) // 2)
    if 31000 <= magnitude <= 32000:
        return sign * max(1, (32000 - magnitude + 1) // 2)
    return None


def parse_thinking(text: str) -> SearchInfo | None:
    """Parse ``ply score time nodes pv``; None if the line is not thinking output.

    Time is in centiseconds, except in the old GNU Chess form where a character
    follows the ply (``3&``, ``4.``) and time is in seconds.
    """
    match = _THINKING_RE.match(text)
    if match is None:
        return None
    score = int(match["score"])
    time_units = int(match["time"])
    seconds = float(time_units) if match["flag"] else time_units / 100.0
    rest = match["rest"]
    if "\t" in rest:
        # Optional integers (selective depth, speed, tbhits) end at the last tab.
        head, _, pv_text = rest.rpartition("\t")
        if any(not word.lstrip("-").isdigit() for word in head.split()):
            pv_text = rest
    else:
        pv_text = rest
    pv = tuple(
        word.strip("<>!?")
        for word in pv_text.split()
        if word not in ("...",) and not _MOVE_NUMBER_RE.match(word) and word.strip("<>!?")
    )
    return SearchInfo(
        depth=int(match["ply"]),
        score_cp=score,
        mate=mate_from_score(score),
        time=seconds,
        nodes=int(match["nodes"]),
        pv=pv,
    )


def is_coordinate_move(move: str) -> bool:
    """Whether `move` is in coordinate notation (``e2e4``, ``e7e8q``), as opposed to SAN."""
    return _COORDINATE_RE.match(move) is not None


def parse_engine_line(text: str) -> EngineLine:
    """Classify one line printed by a CECP engine."""
    stripped = text.strip()
    if not stripped:
        return Other(text)
    head, _, tail = stripped.partition(" ")
    if head == "feature":
        return FeatureLine(parse_features(tail))
    if head == "pong":
        number = tail.strip()
        return Pong(int(number)) if number.isdigit() else Other(text)
    if head == "move" and tail.strip():
        return MoveLine(tail.split()[0], "move")
    if stripped in ("resign", "computer resigns"):
        return Resign()
    if head.startswith("#"):
        return Other(text)
    info = parse_thinking(text)
    if info is not None:
        return ThinkingLine(info)
    match = _NUMBERED_MOVE_RE.match(text)
    if match is not None:
        return MoveLine(match["move"], "numbered")
    match = _MY_MOVE_RE.match(text)
    if match is not None:
        return MoveLine(match["move"], "mymove")
    match = _RESULT_RE.match(text)
    if match is not None:
        return ResultLine(match["result"], (match["comment"] or "").strip())
    for prefix, result in _OLD_RESULTS:
        if stripped.startswith(prefix):
            return ResultLine(result, prefix)
    match = _ILLEGAL_RE.match(text)
    if match is not None:
        return IllegalMoveReport(match["move"].strip(), (match["reason"] or "").strip())
    match = _ERROR_RE.match(text)
    if match is not None:
        return ErrorReport(match["kind"].strip(), match["command"].strip())
    match = _TELL_RE.match(text)
    if match is not None:
        return Tell(match["kind"], (match["message"] or "").strip())
    words = set(stripped.lower().split())
    if "offer" in words and "draw" in words:
        return DrawOffer()
    return Other(text)
