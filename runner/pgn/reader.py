"""Streaming PGN reader: games from a file of any size, checked move by move on our board.

Two layers. The splitter cuts a byte stream into raw games (tag pairs and movetext tokens with
line numbers): it knows the PGN import format (tag pairs, brace and semicolon comments, ``%``
escape lines, recursive variations, NAGs, game termination markers) but no chess. The replay
then plays the tokens on a ``runner.rules.Board`` (SAN, coordinate notation, null moves) and
reports each problem with the file, the line and the token.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import BinaryIO, NamedTuple

from runner.rules import (
    STARTING_FEN,
    AmbiguousMoveError,
    Board,
    IllegalMoveError,
    Move,
)

__all__ = [
    "CHESS960_VARIANTS",
    "MAX_LINE_BYTES",
    "PgnCheckReport",
    "PgnError",
    "PgnGame",
    "PgnMove",
    "PgnNotice",
    "RawGame",
    "Token",
    "TokenKind",
    "check_pgn",
    "needs_chess960",
    "parse_games",
    "read_games",
    "replay",
    "split_games",
    "unescape_tag_value",
]

MAX_LINE_BYTES = 1 << 20
"""Longest physical line read in one piece; longer lines are read in several pieces."""

_BOM = b"\xef\xbb\xbf"

# A tag pair: [Name "value"], the value with backslash escapes for quote and backslash.
_TAG_PAIR = re.compile(r'\[\s*([A-Za-z0-9][A-Za-z0-9_+#=:-]*)\s*"((?:[^"\\]|\\.)*)"\s*\]')
_TAG_LINE = re.compile(r'\s*(?:\[\s*[A-Za-z0-9][A-Za-z0-9_+#=:-]*\s*"(?:[^"\\]|\\.)*"\s*\]\s*)+$')
_TAG_NAME_START = re.compile(r"\[\s*([A-Za-z0-9][A-Za-z0-9_+#=:-]*)")
_UNESCAPE = re.compile(r"\\(.)")

# One movetext token; whitespace is skipped before it.  A result marker only counts as one when
# a delimiter follows, so that "0-0" stays a (castling) word.
_MOVETEXT_TOKEN = re.compile(
    r"""\s*(?:
        (?P<brace>\{)
      | (?P<semicolon>;)
      | (?P<open>\()
      | (?P<close>\))
      | (?P<nag>\$\d+)
      | (?P<result>1-0|0-1|1/2-1/2|\*)(?=[\s(){};]|$)
      | (?P<number>\d+\.+)
      | (?P<word>[^\s{}();]+)
    )""",
    re.VERBOSE,
)


class PgnError(ValueError):
    """A problem in a PGN file, located by file name, line number and the offending token."""

    def __init__(self, message: str, *, source: str, line: int, token: str = "") -> None:
        self.message = message
        self.source = source
        self.line = line
        self.token = token
        where = f"{source}:{line}: {message}"
        super().__init__(f"{where} at {_show(token)}" if token else where)


def _show(token: str, limit: int = 40) -> str:
    """Quote a token for a message, shortened and with control characters made visible."""
    shown = token if len(token) <= limit else token[:limit] + "..."
    return repr(shown)


class TokenKind(Enum):
    """What a movetext token is, as far as the lexer can tell without a board."""

    WORD = "word"  # a move in SAN or coordinate notation, a null move, or junk
    COMMENT = "comment"
    NAG = "nag"
    OPEN = "open"  # start of a recursive variation
    CLOSE = "close"
    RESULT = "result"


class Token(NamedTuple):
    """One movetext token and the line it starts on."""

    kind: TokenKind
    text: str
    line: int


@dataclass(slots=True)
class RawGame:
    """One game as found in the file, before its moves are checked on a board."""

    source: str
    line: int
    offset: int
    tags: list[tuple[str, str, int]] = field(default_factory=list)
    tokens: list[Token] = field(default_factory=list)
    problems: list[PgnError] = field(default_factory=list)
    end_offset: int = 0


def unescape_tag_value(raw: str) -> str:
    """Undo the PGN string escapes (backslash before a quote or a backslash)."""
    return _UNESCAPE.sub(r"\1", raw) if "\\" in raw else raw


def _physical_lines(
    stream: BinaryIO, offset: int, line: int
) -> Iterator[tuple[int, int, int, str]]:
    """Yield (line number, byte offset, byte length, text without end of line) per line.

    A line longer than MAX_LINE_BYTES comes in several pieces with the same line number, so
    that a file of binary junk never makes one unbounded read.
    """
    first = offset == 0
    while True:
        raw = stream.readline(MAX_LINE_BYTES)
        if not raw:
            return
        size = len(raw)
        body = raw
        if first and raw.startswith(_BOM):
            body = raw[len(_BOM) :]
        first = False
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            text = body.decode("latin-1")
        yield line, offset, size, text.rstrip("\r\n")
        offset += size
        if raw.endswith(b"\n"):
            line += 1


_SIMPLE_KINDS = {
    "word": TokenKind.WORD,
    "nag": TokenKind.NAG,
    "open": TokenKind.OPEN,
    "close": TokenKind.CLOSE,
    "result": TokenKind.RESULT,
}


class _State(Enum):
    BETWEEN = 0
    TAGS = 1
    MOVETEXT = 2


class _Splitter:
    """A line-by-line state machine that cuts the stream into RawGame records."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.state = _State.BETWEEN
        self.game: RawGame | None = None
        self.blank_in_tags = False
        self.tag_names: set[str] = set()
        self.comment: list[str] | None = None  # open brace comment: pieces so far
        self.comment_line = 0
        self.previous_blank = False
        self.finished: list[RawGame] = []
        self.emitted = 0

    # -- game boundaries ------------------------------------------------------------------

    def _start(self, line: int, offset: int, state: _State) -> None:
        self.game = RawGame(source=self.source, line=line, offset=offset)
        self.state = state
        self.blank_in_tags = False
        self.tag_names = set()
        self.comment = None

    def _finish(self, end_offset: int) -> None:
        game = self.game
        if game is None:
            return
        if self.comment is not None:
            game.problems.append(
                PgnError("unterminated comment", source=self.source, line=self.comment_line,
                         token="{" + self.comment[0].strip()[:30])
            )
            self.comment = None
        game.end_offset = end_offset
        self.finished.append(game)
        self.emitted += 1
        self.game = None
        self.state = _State.BETWEEN

    # -- line handling ----------------------------------------------------------------------

    def feed(self, number: int, offset: int, size: int, text: str) -> None:
        blank = not text.strip()
        if self.comment is not None:
            self._comment_line(number, offset, text, blank)
        elif self.state is _State.BETWEEN:
            self._between(number, offset, text, blank)
        elif self.state is _State.TAGS:
            self._tags(number, offset, text, blank)
        else:
            self._movetext_line(number, offset, text, blank)
        self.previous_blank = blank

    def _between(self, number: int, offset: int, text: str, blank: bool) -> None:
        if blank or text.startswith(("%", ";")):
            return
        if text.lstrip().startswith("["):
            self._start(number, offset, _State.TAGS)
            self._tags(number, offset, text, blank)
        else:
            self._start(number, offset, _State.MOVETEXT)
            self._movetext_line(number, offset, text, blank)

    def _tags(self, number: int, offset: int, text: str, blank: bool) -> None:
        game = self.game
        assert game is not None
        if blank:
            self.blank_in_tags = True
            return
        if text.startswith("%"):
            return
        stripped = text.lstrip()
        if not stripped.startswith("["):
            self.state = _State.MOVETEXT
            self._movetext_line(number, offset, text, blank)
            return
        single = _TAG_PAIR.fullmatch(stripped.rstrip())
        if single is not None:  # the usual case: one tag pair on the line
            name, value = single.groups()
            if self.blank_in_tags and name in self.tag_names:
                self._finish(offset)
                self._start(number, offset, _State.TAGS)
                game = self.game
                assert game is not None
            game.tags.append((name, unescape_tag_value(value), number))
            self.tag_names.add(name)
            return
        pairs = _TAG_PAIR.findall(stripped)
        names = {name for name, _ in pairs} | set(_TAG_NAME_START.findall(stripped))
        if self.blank_in_tags and names & self.tag_names:
            # A tag seen already, after a blank line: a game with no movetext ended there.
            self._finish(offset)
            self._start(number, offset, _State.TAGS)
            game = self.game
            assert game is not None
        if not _TAG_LINE.match(stripped):
            game.problems.append(
                PgnError("malformed tag pair", source=self.source, line=number, token=stripped)
            )
        for name, value in pairs:
            game.tags.append((name, unescape_tag_value(value), number))
        self.tag_names |= names

    def _movetext_line(self, number: int, offset: int, text: str, blank: bool) -> None:
        if blank:
            self._finish(offset)
            return
        if text.startswith("%"):
            return
        if text.startswith("["):
            # A tag line right after movetext: the next game starts here.
            self._finish(offset)
            self._start(number, offset, _State.TAGS)
            self._tags(number, offset, text, blank)
            return
        self._lex(number, text, 0)

    def _comment_line(self, number: int, offset: int, text: str, blank: bool) -> None:
        assert self.comment is not None
        if self.previous_blank and _TAG_LINE.match(text) and text.startswith("["):
            # A comment never closed: the next game's tags arrived.  Report and resynchronise.
            self._finish(offset)
            self._start(number, offset, _State.TAGS)
            self._tags(number, offset, text, blank)
            return
        close = text.find("}")
        if close < 0:
            self.comment.append("\n" + text)
            return
        self.comment.append("\n" + text[:close])
        self._close_comment()
        self._lex(number, text, close + 1)

    def _close_comment(self) -> None:
        assert self.game is not None and self.comment is not None
        body = " ".join("".join(self.comment).split())
        self.game.tokens.append(Token(TokenKind.COMMENT, body, self.comment_line))
        self.comment = None

    def _lex(self, number: int, text: str, pos: int) -> None:
        game = self.game
        assert game is not None
        tokens = game.tokens
        while True:
            for match in _MOVETEXT_TOKEN.finditer(text, pos):
                kind = match.lastgroup
                simple = _SIMPLE_KINDS.get(kind)  # type: ignore[arg-type]
                if simple is not None:
                    tokens.append(Token(simple, match.group(kind), number))  # type: ignore[arg-type]
                elif kind == "number":
                    continue
                elif kind == "semicolon":
                    tokens.append(Token(TokenKind.COMMENT, text[match.end():].strip(), number))
                    return
                else:  # an opening brace: the comment may end on this line or a later one
                    start = match.end()
                    close = text.find("}", start)
                    self.comment_line = number
                    if close < 0:
                        self.comment = [text[start:]]
                        return
                    self.comment = [text[start:close]]
                    self._close_comment()
                    pos = close + 1
                    break
            else:
                return

    def close(self, end_offset: int) -> None:
        self._finish(end_offset)


def split_games(
    stream: BinaryIO,
    *,
    source: str,
    offset: int = 0,
    line: int = 1,
    limit: int | None = None,
) -> Iterator[RawGame]:
    """Yield the raw games of a binary PGN stream read from ``offset`` (at line ``line``).

    The stream is read line by line, so memory stays proportional to one game. ``limit``
    stops after that many games.
    """
    splitter = _Splitter(source)
    end = offset
    for number, start, size, text in _physical_lines(stream, offset, line):
        splitter.feed(number, start, size, text)
        end = start + size
        while splitter.finished:
            yield splitter.finished.pop(0)
            if limit is not None and splitter.emitted >= limit:
                return
    splitter.close(end)
    while splitter.finished:
        yield splitter.finished.pop(0)
        if limit is not None and splitter.emitted >= limit:
            return


# --------------------------------------------------------------------------------------------
# Replay: raw games played on a board
# --------------------------------------------------------------------------------------------

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


@dataclass(frozen=True, slots=True)
class PgnNotice:
    """Something worth reporting that does not break a game (a null move, a missing result)."""

    message: str
    source: str
    line: int
    token: str = ""

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}: {self.message}"
        return f"{where} at {_show(self.token)}" if self.token else where


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


def needs_chess960(fen: str) -> bool:
    """Whether a FEN has castling rights that only Chess960 allows (decided from the text).

    A right names a rook: ``K``/``Q`` the outermost rook on that side of the king (X-FEN), a
    file letter that rook's file (Shredder-FEN). Chess960 is needed when a valid right's king
    is off the e-file or its rook off the a- or h-file; rights naming no rook are ignored, and
    malformed FENs answer False (the board reports them).
    """
    fields = fen.split()
    if len(fields) < 3 or fields[2] == "-":
        return False
    ranks = fields[0].split("/")
    if len(ranks) != 8:
        return False
    for text, king, rook, upper in ((ranks[7], "K", "R", True), (ranks[0], "k", "r", False)):
        row = "".join("." * int(ch) if ch.isdigit() else ch for ch in text)
        home = row.find(king)
        if len(row) != 8 or home < 0:
            continue
        for right in fields[2]:
            if right.isupper() != upper:
                continue
            letter = right.upper()
            if letter == "K":
                files = [f for f in range(home + 1, 8) if row[f] == rook][-1:]
            elif letter == "Q":
                files = [f for f in range(home) if row[f] == rook][:1]
            else:
                file = ord(letter) - ord("A")
                files = [file] if 0 <= file < 8 and row[file] == rook else []
            if files and (home != 4 or files[0] not in (0, 7)):
                return True
    return False


def _start_board(fen: str | None, chess960: bool) -> Board:
    """The board a game starts from; a FEN with Chess960-only castling rights turns 960 on."""
    if fen is None:
        return Board(STARTING_FEN, chess960=chess960)
    return Board(fen, chess960=chess960 or needs_chess960(fen))


def _parse_word(board: Board, word: str) -> Board:
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
                    branch = frame.board.copy()
                    branch.pop()
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
            frame.moves.append(PgnMove(move.uci(), san, token.line))
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
) -> Iterator[PgnGame]:
    """Stream the games of a PGN file (a path or a binary stream), one at a time.

    A broken game comes back with ``error`` set (and its moves up to the error); reading goes
    on with the next game. ``offset``/``line`` start reading in the middle of a file (at the
    start of a game); ``limit`` stops after that many games.
    """
    if isinstance(source, (str, Path)):
        label = name or str(source)
        with open(source, "rb") as stream:
            if offset:
                stream.seek(offset)
            yield from _read(stream, label, keep_variations, offset, line, limit)
    else:
        label = name or str(getattr(source, "name", "<stream>"))
        yield from _read(source, label, keep_variations, offset, line, limit)


def _read(
    stream: BinaryIO, label: str, keep: bool, offset: int, line: int, limit: int | None
) -> Iterator[PgnGame]:
    for raw in split_games(stream, source=label, offset=offset, line=line, limit=limit):
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
