"""Pure parsers for what CECP (xboard/winboard) engines print, one line at a time.

No I/O here: every function maps a string to a dataclass, so the wire format is tested
with plain tables.  Forms accepted follow the protocol specification (sections 9, 10
and 13), including the old ``1. ... e7e5`` and ``My move is : e7e5`` move forms.
`Chess960Writer` goes the other way: how our Chess960 castling moves are written.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from runner.protocol.engine import EngineOption, SearchInfo
from runner.types import Castling960Style

__all__ = [
    "Chess960Writer",
    "DrawOffer",
    "EngineLine",
    "ErrorReport",
    "FeatureLine",
    "IllegalMoveReport",
    "MoveLine",
    "Other",
    "Pong",
    "Resign",
    "ResultLine",
    "Tell",
    "ThinkingLine",
    "is_coordinate_move",
    "match_thinking",
    "mate_from_score",
    "parse_engine_line",
    "parse_features",
    "parse_option",
    "parse_thinking",
    "thinking_info",
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


_OPTION_TYPES = frozenset(
    {"button", "save", "reset", "check", "string", "spin", "combo", "slider", "file", "path"}
)
_FEATURE_PAIR_RE = re.compile(r'\s*([A-Za-z_][\w-]*)=(?:"([^"]*)"?|(\S*))')
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


def parse_option(value: str) -> EngineOption:
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
        return EngineOption(name, kind)
    if kind in ("spin", "slider"):
        numbers = args.split()
        if len(numbers) != 3:
            raise ValueError(f"-{kind} option needs VALUE MIN MAX: {value!r}")
        try:
            start, low, high = (int(n) for n in numbers)
        except ValueError:
            raise ValueError(f"-{kind} option with a non-integer: {value!r}") from None
        return EngineOption(name, kind, str(start), low, high)
    if kind == "check":
        if args not in ("0", "1"):
            raise ValueError(f"-check option needs 0 or 1: {value!r}")
        return EngineOption(name, kind, args)
    if kind == "combo":
        choices = tuple(c.strip() for c in args.split("///"))
        default = next((c[1:] for c in choices if c.startswith("*")), choices[0])
        return EngineOption(name, kind, default, choices=tuple(c.lstrip("*") for c in choices))
    return EngineOption(name, kind, args)


def mate_from_score(score: int) -> int | None:
    """Mate distance in moves (negative: being mated) if `score` is a mate score, else None.

    CECP has no mate token, so engines encode mates in the score; the conventions seen:

    * the protocol specification's 100000+N, N in moves (XBoard, the bundled engine);
    * a large base minus the distance in plies, the base a multiple of 1000 (sjeng
      1000000, hoichess 100000, Phalanx 30000, GNU Chess 10000, Crafty-style 32000) or
      32768 (engines that use 32767/32768), read as cutechess-cli reads them: within
      100 below the base.

    Engines differ by one ply in how they count (sjeng's mate in 1 is 999998, Phalanx's
    29999). A won mate is an odd number of plies and a lost one even, so the rounding
    below gives the same moves under either count.
    """
    magnitude = abs(score)
    sign = 1 if score > 0 else -1
    if _SPEC_MATE < magnitude < _SPEC_MATE + 1000:
        return sign * (magnitude - _SPEC_MATE)
    plies = None
    if magnitude > 9900 and 1000 - magnitude % 1000 < _MATE_WINDOW:
        plies = 1000 - magnitude % 1000
    elif _MATE_32K - _MATE_WINDOW < magnitude < _MATE_32K:
        plies = _MATE_32K - magnitude
    if plies is None:
        return None
    moves = (plies + 1) // 2 if sign > 0 else plies // 2
    return sign * max(1, moves)


_SPEC_MATE = 100_000
"""The specification's mate base: 100000+N for mate in N moves."""
_MATE_32K = 32_768
"""The base of engines whose mate scores sit just below 32767/32768."""
_MATE_WINDOW = 100
"""How many plies below a base still count as a mate (cutechess-cli takes 100)."""


def parse_thinking(text: str) -> SearchInfo | None:
    """Parse ``ply score time nodes pv``; None if the line is not thinking output.

    Time is in centiseconds, except in the old GNU Chess form where a character
    follows the ply (``3&``, ``4.``) and time is in seconds.
    """
    match = match_thinking(text)
    return None if match is None else thinking_info(match)


def match_thinking(text: str) -> re.Match[str] | None:
    """The match of a thinking-output line (for `thinking_info`), or None for any other line.

    Engines print many thinking lines per move and only the last one counts: a client can
    keep the match and build the `SearchInfo` only for the line that stands at move time.
    """
    return _THINKING_RE.match(text)


def thinking_info(match: re.Match[str]) -> SearchInfo:
    """The search information of a thinking line matched by `match_thinking`."""
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
    moves: list[str] = []
    for word in pv_text.split():
        # The pattern only for a word that starts with a digit (a move number's first).
        if word == "..." or (word[:1].isdecimal() and _MOVE_NUMBER_RE.match(word)):
            continue
        move = word.strip("<>!?")
        if move:
            moves.append(move)
    pv = tuple(moves)
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
    # By hand, not `_COORDINATE_RE`: asked of every move an engine plays. A pattern's ``$``
    # also matches before one final newline, which is kept so.
    if move[-1:] == "\n":
        move = move[:-1]
    size = len(move)
    if size != 4 and (size != 5 or move[4] not in "qrbnk"):
        return False
    return (move[0] in "abcdefgh" and move[1] in "12345678" and move[2] in "abcdefgh"
            and move[3] in "12345678")


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


_STANDARD_PLACEMENT = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
_CASTLING_TEXT = {"O-O": True, "0-0": True, "O-O-O": False, "0-0-0": False}


class Chess960Writer:
    """Follows a Chess960 game's piece placement to write its castling moves as an engine wants.

    Moves come in coordinate notation as the arbiter writes them (castling as king-takes-rook,
    or the king's move of two or more files); they are not checked, the arbiter did that.
    The protocol layer may not use the rules core, and needs no more than where pieces stand.
    """

    def __init__(self, fen: str | None, style: Castling960Style) -> None:
        self.style = style
        fields = (fen or f"{_STANDARD_PLACEMENT} w").split()
        self._white_to_move = len(fields) < 2 or fields[1] != "b"
        self._board: dict[int, str] = {}
        for rank_index, row in enumerate(fields[0].split("/")[:8]):
            file = 0
            for char in row:
                if char.isdigit():
                    file += int(char)
                elif file < 8:
                    self._board[(7 - rank_index) * 8 + file] = char
                    file += 1

    def write(self, move: str) -> str:
        """`move` as the engine should read it; the move is then played on the tracked board."""
        castling = self._castling(move)
        white = self._white_to_move
        self._white_to_move = not white
        if castling is None:
            self._play_plain(move)
            return move
        king, rook, kingside = castling
        rank = king - king % 8
        for square in (king, rook):
            self._board.pop(square, None)
        self._board[rank + (6 if kingside else 2)] = "K" if white else "k"
        self._board[rank + (5 if kingside else 3)] = "R" if white else "r"
        if self.style is Castling960Style.OO:
            return "O-O" if kingside else "O-O-O"
        return _square_name(king) + _square_name(rook)

    def _castling(self, move: str) -> tuple[int, int, bool] | None:
        """(king square, rook square, kingside) when `move` castles, else None."""
        king_char = "K" if self._white_to_move else "k"
        rook_char = "R" if self._white_to_move else "r"
        text = move.rstrip("+#")
        if text in _CASTLING_TEXT:
            kingside = _CASTLING_TEXT[text]
            king = next((sq for sq, piece in self._board.items() if piece == king_char), None)
            if king is None:
                return None
            return self._with_rook(king, kingside, rook_char)
        if not is_coordinate_move(text) or len(text) != 4:
            return None
        origin, target = _square(text[:2]), _square(text[2:])
        if self._board.get(origin) != king_char or origin // 8 != target // 8:
            return None
        if self._board.get(target) == rook_char:
            return origin, target, target > origin  # king-takes-rook
        if abs(target - origin) >= 2:
            return self._with_rook(origin, target > origin, rook_char)  # the king's long step
        return None

    def _with_rook(self, king: int, kingside: bool, rook_char: str) -> tuple[int, int, bool] | None:
        """The castling rook: the outermost own rook on that side of the king, on its rank."""
        rank = king - king % 8
        files = range(7, king % 8, -1) if kingside else range(0, king % 8)
        rook = next((rank + f for f in files if self._board.get(rank + f) == rook_char), None)
        return None if rook is None else (king, rook, kingside)

    def _play_plain(self, move: str) -> None:
        if not is_coordinate_move(move):
            return  # not ours to follow (the arbiter writes coordinates)
        origin, target = _square(move[:2]), _square(move[2:4])
        piece = self._board.pop(origin, None)
        if piece is None:
            return
        if piece in "Pp" and origin % 8 != target % 8 and target not in self._board:
            self._board.pop(origin - origin % 8 + target % 8, None)  # en passant
        if len(move) == 5:
            piece = move[4].upper() if piece.isupper() else move[4].lower()
        self._board[target] = piece


def _square(name: str) -> int:
    return (int(name[1]) - 1) * 8 + "abcdefgh".index(name[0])


def _square_name(square: int) -> str:
    return "abcdefgh"[square % 8] + str(square // 8 + 1)
