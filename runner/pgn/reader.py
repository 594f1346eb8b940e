"""Streaming PGN reader: games from a file of any size, checked move by move on our board.

Two layers. The splitter (`runner.pgn.splitter`) cuts a byte stream into raw games (tag pairs
and movetext tokens with line numbers) and knows no chess. The replay here plays the tokens on
a ``runner.rules.Board`` (SAN, coordinate notation, null moves) and reports each problem with
the file, the line and the token.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from runner.pgn.castling import needs_chess960
from runner.pgn.splitter import PgnError, RawGame, Token, TokenKind, show_token, split_games
from runner.rules import (
    STARTING_FEN,
    AmbiguousMoveError,
    Board,
    IllegalMoveError,
    Move,
)

__all__ = [
    "CHESS960_VARIANTS",
    "MoveAnnotation",
    "PgnCheckReport",
    "PgnGame",
    "PgnMove",
    "PgnNotice",
    "check_pgn",
    "needs_chess960",
    "parse_games",
    "parse_move_comment",
    "read_games",
    "replay",
]


CHESS960_VARIANTS = frozenset(
    {"chess960", "chess 960", "fischerandom", "fischerrandom", "fischer random", "frc"}
)
"""Values of the Variant tag that mean Chess960 (cutechess writes ``fischerandom``)."""

STANDARD_VARIANTS = frozenset({"", "standard", "chess", "normal", "classical"})
"""Values of the Variant tag that mean ordinary chess."""

_SUFFIX_NAGS = {"!": 1, "?": 2, "!!": 3, "??": 4, "!?": 5, "?!": 6}
_NULL_WORDS = frozenset({"--", "Z0", "0000", "@@@@"})
_SUFFIX = re.compile(r"[!?]{1,2}$")
_COORDINATE = re.compile(r"[a-h][1-8][a-h][1-8][qrbnQRBN]?$")
_LONG_ALGEBRAIC = re.compile(
    r"(?P<piece>[KQRBN])?(?P<src>[a-h][1-8])[-x:](?P<dst>[a-h][1-8])(?:=?(?P<promo>[QRBNqrbn]))?[+#]*$"
)
_PIECE_LETTERS = "PNBRQK"
_UNDO_KEPT = 256
"""Moves a replayed line keeps on its board's stack (memory stays flat in long games)."""


@dataclass(frozen=True, slots=True)
class PgnNotice:
    """Something worth reporting that does not break a game (a null move, a missing result)."""

    message: str
    source: str
    line: int
    token: str = ""

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}: {self.message}"
        return f"{where} at {show_token(self.token)}" if self.token else where


@dataclass(slots=True)
class PgnMove:
    """A move as read: coordinate notation, normalised SAN, and what the file said about it."""

    uci: str
    san: str
    line: int
    comment: str = ""
    nags: list[int] = field(default_factory=list)
    variations: list[list[PgnMove]] = field(default_factory=list)

    @property
    def is_null(self) -> bool:
        """Whether this is a null move (``--`` or ``Z0`` in the file)."""
        return self.uci == "0000"


@dataclass(slots=True)
class PgnGame:
    """One game read from a PGN file, with its position in the file and any problem found."""

    source: str
    line: int
    offset: int
    tags: dict[str, str]
    start_fen: str
    chess960: bool
    moves: list[PgnMove] = field(default_factory=list)
    result: str = "*"
    final_fen: str = ""
    starting_comment: str = ""
    error: PgnError | None = None
    notices: list[PgnNotice] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the game was read without an error (notices do not count)."""
        return self.error is None

    @property
    def uci_moves(self) -> list[str]:
        """The main line in coordinate notation."""
        return [move.uci for move in self.moves]


class _Frame:
    """A line being replayed: the main line or one recursive variation."""

    __slots__ = ("board", "moves", "broken")

    def __init__(self, board: Board, moves: list[PgnMove]) -> None:
        self.board = board
        self.moves = moves
        self.broken = False


def _start_board(fen: str | None, chess960: bool) -> Board:
    """The board a game starts from; a FEN with Chess960-only castling rights turns 960 on."""
    if fen is None:
        return Board(STARTING_FEN, chess960=chess960)
    return Board(fen, chess960=chess960 or needs_chess960(fen))


def _parse_word(board: Board, word: str) -> Move:
    """The move a movetext word names on ``board`` (SAN, coordinates or long algebraic)."""
    if _COORDINATE.match(word):
        return board.parse_uci(word[:4] + word[4:].lower())
    long_form = _LONG_ALGEBRAIC.match(word)
    if long_form:
        wanted = Move.from_uci(
            long_form["src"] + long_form["dst"] + (long_form["promo"] or "").lower()
        )
        piece = _PIECE_LETTERS.index(long_form["piece"] or "P") + 1
        if board.piece_type_at(wanted.from_square) == piece and wanted in board.legal_moves:
            return wanted
        raise IllegalMoveError(f"illegal move {word!r}")
    if word.startswith("0-0"):
        word = "O-O" + word[3:].replace("0", "O")
    return board.parse_san(word)


class _Replay:
    """Plays a raw game's tokens on boards, collecting moves, comments and problems."""

    def __init__(self, raw: RawGame, keep_variations: bool) -> None:
        self.raw = raw
        self.keep = keep_variations
        self.tags = {name: value for name, value, _ in raw.tags}
        self.tag_lines = {name: number for name, _, number in raw.tags}
        self.game = PgnGame(
            source=raw.source, line=raw.line, offset=raw.offset, tags=self.tags,
            start_fen="", chess960=False,
        )
        if raw.problems:
            self.game.error = raw.problems[0]
        for warning in raw.warnings:
            self._notice(warning.message, warning.line, warning.token)

    def _fail(self, message: str, line: int, token: str) -> None:
        if self.game.error is None:
            self.game.error = PgnError(message, source=self.raw.source, line=line, token=token)

    def _notice(self, message: str, line: int, token: str = "") -> None:
        self.game.notices.append(PgnNotice(message, self.raw.source, line, token))

    def run(self) -> PgnGame:
        board = self._setup()
        if board is None:
            return self.game
        main = _Frame(board, self.game.moves)
        stack = [main]
        skipping = 0
        result_seen = False
        for token in self.raw.tokens:
            kind = token.kind
            if kind is TokenKind.OPEN:
                frame = stack[-1]
                if skipping or not self.keep or not frame.moves or frame.broken:
                    skipping += 1
                else:
                    # The position before the last move, without the game's history:
                    # constant time however long the line is.
                    last = frame.board.pop()
                    branch = frame.board.copy(stack=False)
                    frame.board.push(last)
                    variation: list[PgnMove] = []
                    frame.moves[-1].variations.append(variation)
                    stack.append(_Frame(branch, variation))
            elif kind is TokenKind.CLOSE:
                if skipping:
                    skipping -= 1
                elif len(stack) > 1:
                    stack.pop()
                else:
                    self._notice("unmatched ')'", token.line, ")")
            elif skipping:
                continue
            elif kind is TokenKind.COMMENT:
                self._comment(stack[-1], token.text)
            elif kind is TokenKind.NAG:
                if stack[-1].moves:
                    stack[-1].moves[-1].nags.append(int(token.text[1:]))
            elif kind is TokenKind.RESULT:
                if len(stack) == 1 and not result_seen:
                    self.game.result = token.text
                    result_seen = True
            elif result_seen and len(stack) == 1:
                self._notice("text after the result ignored", token.line, token.text)
                break
            else:
                self._word(stack, token)
        if len(stack) > 1:
            self._notice("variation not closed", self.raw.line)
        if skipping:
            self._notice("variation not closed", self.raw.line)
        self.game.final_fen = main.board.fen()
        if not result_seen and self.game.error is None:
            self._notice("game ends without a result", self._last_line(), "")
        declared = self.tags.get("Result")
        if result_seen and declared and declared != self.game.result and declared != "*":
            self._notice(
                f"Result tag {declared!r} differs from the movetext result",
                self.tag_lines.get("Result", self.raw.line), self.game.result,
            )
        return self.game

    def _last_line(self) -> int:
        return self.raw.tokens[-1].line if self.raw.tokens else self.raw.line

    def _setup(self) -> Board | None:
        variant = self.tags.get("Variant", "").strip().lower()
        chess960 = variant in CHESS960_VARIANTS
        if not chess960 and variant not in STANDARD_VARIANTS:
            self._fail("unsupported variant", self.tag_lines["Variant"], self.tags["Variant"])
            return None
        fen = self.tags.get("FEN")
        try:
            board = _start_board(fen.strip() if fen is not None else None, chess960)
        except ValueError as exc:
            self._fail(f"bad FEN tag ({exc})", self.tag_lines.get("FEN", self.raw.line), fen or "")
            return None
        self.game.start_fen = board.fen()
        self.game.chess960 = bool(board.chess960)
        self.game.final_fen = self.game.start_fen
        return board

    def _comment(self, frame: _Frame, text: str) -> None:
        # A comment belongs to the move before it; one opening a variation is dropped.
        if frame.moves:
            move = frame.moves[-1]
            move.comment = f"{move.comment} {text}" if move.comment else text
        elif frame.moves is self.game.moves:  # before the first move of the game
            start = self.game.starting_comment
            self.game.starting_comment = f"{start} {text}" if start else text

    def _word(self, stack: list[_Frame], token: Token) -> None:
        frame = stack[-1]
        if frame.broken:
            return
        word = token.text
        suffix = _SUFFIX.search(word)
        nag = None
        if suffix and word not in _NULL_WORDS:
            nag = _SUFFIX_NAGS.get(suffix.group())
            word = word[: suffix.start()]
            if not word:
                if frame.moves and nag is not None:
                    frame.moves[-1].nags.append(nag)
                return
        board = frame.board
        if word in _NULL_WORDS:
            board.push(Move.null())
            frame.moves.append(PgnMove("0000", "--", token.line))
            self._notice("null move", token.line, token.text)
        else:
            try:
                move = _parse_word(board, word)
                san = board.san(move)
            except ValueError as exc:
                self._bad_move(stack, token, exc)
                return
            board.push(move)
            # Interned: a long game repeats a few hundred move texts, not one string per ply.
            frame.moves.append(PgnMove(sys.intern(move.uci()), sys.intern(san), token.line))
            if len(board.move_stack) > _UNDO_KEPT:
                board.forget_moves(1)  # a variation only ever takes back the last move
        if nag is not None:
            frame.moves[-1].nags.append(nag)

    def _bad_move(self, stack: list[_Frame], token: Token, exc: ValueError) -> None:
        frame = stack[-1]
        frame.broken = True
        text = token.text
        if any(ord(ch) < 32 or ord(ch) == 127 or ch == "\ufffd" for ch in text):
            message = "binary data where a move was expected"
        elif isinstance(exc, AmbiguousMoveError):
            message = "ambiguous move"
        elif isinstance(exc, IllegalMoveError):
            message = "illegal move"
        else:
            message = "not a move"
        if len(stack) == 1:
            self._fail(message, token.line, text)
        else:
            self._notice(f"{message} in a variation", token.line, text)


def replay(raw: RawGame, *, keep_variations: bool = False) -> PgnGame:
    """Play a raw game's movetext on a board and return the game read."""
    return _Replay(raw, keep_variations).run()


def read_games(
    source: str | Path | BinaryIO,
    *,
    keep_variations: bool = False,
    name: str | None = None,
    offset: int = 0,
    line: int = 1,
    limit: int | None = None,
    max_line: int | None = None,
) -> Iterator[PgnGame]:
    """Stream the games of a PGN file (a path or a binary stream), one at a time.

    A broken game comes back with ``error`` set (and its moves up to the error); reading goes
    on with the next game. ``offset``/``line`` start reading in the middle of a file (at the
    start of a game); ``limit`` stops after that many games. A line longer than
    ``max_line`` bytes raises PgnError (opening books bound the memory a line may take).
    """
    if isinstance(source, (str, Path)):
        label = name or str(source)
        with open(source, "rb") as stream:
            if offset:
                stream.seek(offset)
            yield from _read(stream, label, keep_variations, offset, line, limit, max_line)
    else:
        label = name or str(getattr(source, "name", "<stream>"))
        yield from _read(source, label, keep_variations, offset, line, limit, max_line)


def _read(
    stream: BinaryIO, label: str, keep: bool, offset: int, line: int, limit: int | None,
    max_line: int | None = None,
) -> Iterator[PgnGame]:
    for raw in split_games(stream, source=label, offset=offset, line=line, limit=limit,
                           max_line=max_line):
        yield replay(raw, keep_variations=keep)


def parse_games(
    text: str, *, name: str = "<string>", keep_variations: bool = False
) -> list[PgnGame]:
    """Read every game of a PGN text held in memory (handy for tests and small inputs)."""
    stream = io.BytesIO(text.encode("utf-8"))
    return list(read_games(stream, name=name, keep_variations=keep_variations))


@dataclass(slots=True)
class PgnCheckReport:
    """What ``check_pgn`` found in one file: the game count, broken games and notices."""

    path: str
    games: int = 0
    errors: list[PgnError] = field(default_factory=list)
    notices: list[PgnNotice] = field(default_factory=list)


def check_pgn(path: str | Path) -> PgnCheckReport:
    """Read every game of a file, collecting broken games and notices (nothing is kept else)."""
    report = PgnCheckReport(str(path))
    for game in read_games(path):
        report.games += 1
        if game.error is not None:
            report.errors.append(game.error)
        report.notices.extend(game.notices)
    return report


@dataclass(frozen=True, slots=True)
class MoveAnnotation:
    """The fields recovered from a per-move comment written by
    `runner.pgn.writer.format_move_comment` (`parse_move_comment`)."""

    score_cp: int | None = None
    mate: int | None = None
    depth: int | None = None
    time: float | None = None
    book: bool = False
    rest: str = ""


_SCORE_WORD = re.compile(r"(?P<score>[+-]?M\d+|[+-]?\d+\.\d+)(?:/(?P<depth>\d+))?\Z")
_TIME_WORD = re.compile(r"(?P<time>\d+(?:\.\d+)?)s\Z")


def parse_move_comment(text: str) -> MoveAnnotation:
    """Recover score, depth, time and book flag from a comment like ``+0.31/12 0.50s``.

    The annotation is the part before the first comma; when it is not one (``White mates``)
    the whole comment is returned as ``rest``.
    """
    head, comma, tail = text.partition(",")
    words = head.split()
    if not words:
        return MoveAnnotation(rest=tail.strip() if comma else "")
    if words == ["book"]:
        return MoveAnnotation(book=True, rest=tail.strip())
    score_cp = mate = depth = None
    seconds = None
    position = 0
    scored = _SCORE_WORD.match(words[0])
    if scored:
        position = 1
        raw = scored["score"]
        if "M" in raw:
            mate = int(raw.replace("M", ""))
        else:
            score_cp = round(float(raw) * 100)
        depth = int(scored["depth"]) if scored["depth"] else None
    if position < len(words):
        timed = _TIME_WORD.match(words[position])
        if timed:
            seconds = float(timed["time"])
            position += 1
    if position != len(words):
        return MoveAnnotation(rest=text.strip())
    return MoveAnnotation(score_cp=score_cp, mate=mate, depth=depth, time=seconds,
                          rest=tail.strip())
