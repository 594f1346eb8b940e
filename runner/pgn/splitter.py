"""The PGN splitter: a byte stream cut into raw games, with line numbers, and no chess in it.

It knows the PGN import format (tag pairs, brace and semicolon comments, ``%`` escape lines,
recursive variations, NAGs, game termination markers); `runner.pgn.reader` replays what it
yields on the rules core's board.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from typing import BinaryIO, NamedTuple

__all__ = [
    "MAX_LINE_BYTES",
    "PgnError",
    "RawGame",
    "Token",
    "TokenKind",
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
# A tag pair whose value has unescaped quotes in it, as python-chess 1.11 writes them:
# the value runs to the last quote before the closing bracket at the end of the line.
_LOOSE_TAG_PAIR = re.compile(r'\[\s*([A-Za-z0-9][A-Za-z0-9_+#=:-]*)\s+"(.*)"\s*\]')
_UNESCAPE = re.compile(r'\\([\\"])')
_SPACE = re.compile(rb"[ \t]")

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
        super().__init__(f"{where} at {show_token(token)}" if token else where)


def show_token(token: str, limit: int = 40) -> str:
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
    warnings: list[PgnError] = field(default_factory=list)
    """What was read leniently (the game is fine, the file was not quite PGN)."""
    end_offset: int = 0


def unescape_tag_value(raw: str) -> str:
    """Undo the PGN string escapes (backslash before a quote or a backslash); any other
    backslash is kept, as python-chess and pgn-extract keep it."""
    return _UNESCAPE.sub(r"\1", raw) if "\\" in raw else raw


def _physical_lines(
    stream: BinaryIO, offset: int, line: int, source: str = "", max_line: int | None = None
) -> Iterator[tuple[int, int, int, str, bool]]:
    """Yield (line number, byte offset, byte length, text without end of line, continued)
    per line, where `continued` marks a piece that goes on the line of the piece before.

    A line longer than MAX_LINE_BYTES comes in several pieces with the same line number, so
    that a file of binary junk never makes one unbounded read. A piece ends after its last
    space or tab where it has one, so that no move, number or UTF-8 character is cut in two:
    the rest is carried over to the start of the next piece (each byte is read once).
    With `max_line`, a line longer than that many bytes is a PgnError naming it, raised
    before any piece of it beyond the bound is read.
    """
    first = offset == 0
    carry = b""
    continued = False
    so_far = 0  # bytes of the current line already given out
    while True:
        want = MAX_LINE_BYTES if max_line is None else min(MAX_LINE_BYTES, max_line - so_far + 1)
        raw = carry + stream.readline(max(want - len(carry), 1))
        carry = b""
        if not raw:
            return
        if max_line is not None and so_far + len(raw.rstrip(b"\r\n")) > max_line:
            raise PgnError(f"line longer than {max_line} bytes (the most a book line may have)",
                           source=source, line=line)
        if not raw.endswith(b"\n") and len(raw) >= MAX_LINE_BYTES:
            cut = _last_space(raw)
            if cut > 0:
                raw, carry = raw[:cut], raw[cut:]
        size = len(raw)
        body = raw
        if first and raw.startswith(_BOM):
            body = raw[len(_BOM) :]
        first = False
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            text = body.decode("latin-1")
        yield line, offset, size, text.rstrip("\r\n"), continued
        offset += size
        continued = not raw.endswith(b"\n")
        so_far = so_far + size if continued else 0
        if not continued:
            line += 1


def _last_space(piece: bytes) -> int:
    """Where a piece of a long line may end: after its last space or tab; in a piece with
    none (one huge comment word), before a UTF-8 character that the read cut in two."""
    end = 0
    start = max(0, len(piece) - 4096)  # almost always near the end: look there first
    while True:
        for match in _SPACE.finditer(piece, start):
            end = match.end()
        if end or start == 0:
            break
        start = 0
    if end:
        return end
    lead = len(piece) - 1
    while lead > 0 and len(piece) - lead < 4 and piece[lead] & 0xC0 == 0x80:
        lead -= 1  # back over continuation bytes to the character's lead byte
    first = piece[lead]
    needed = 2 if first & 0xE0 == 0xC0 else 3 if first & 0xF0 == 0xE0 else 4 if first & 0xF8 == 0xF0 else 1
    return lead if len(piece) - lead < needed else 0


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
        self.line_comment = False  # a ';' comment runs to the end of the (long) line
        self.line_comment_text = ""

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

    def feed(self, number: int, offset: int, size: int, text: str, continued: bool = False
             ) -> None:
        blank = not text.strip()
        if continued:
            self._continue_line(number, text, blank)
            return
        self.line_comment = False
        if self.comment is not None:
            self._comment_line(number, offset, text, blank)
        elif self.state is _State.BETWEEN:
            self._between(number, offset, text, blank)
        elif self.state is _State.TAGS:
            self._tags(number, offset, text, blank)
        else:
            self._movetext_line(number, offset, text, blank)
        self.previous_blank = blank

    def _continue_line(self, number: int, text: str, blank: bool) -> None:
        """The next piece of a line longer than MAX_LINE_BYTES: it goes on whatever the line
        was doing (no new tag, no game boundary, no escape line starts in mid-line)."""
        if self.game is None:
            return
        if self.line_comment:
            # The ';' comment goes on: its token grows by this piece (pieces end in a space).
            self.line_comment_text += text
            tokens = self.game.tokens
            tokens[-1] = Token(TokenKind.COMMENT, self.line_comment_text.strip(), tokens[-1].line)
            return
        if blank:
            return
        if self.comment is not None:
            close = text.find("}")
            if close < 0:
                self.comment.append(text)
                return
            self.comment.append(text[:close])
            self._close_comment()
            self._lex(number, text, close + 1)
        elif self.state is _State.MOVETEXT:
            self._lex(number, text, 0)

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
        if single is None and _TAG_PAIR.match(stripped) is None:
            single = _LOOSE_TAG_PAIR.fullmatch(stripped.rstrip())
            if single is not None:
                # Read as python-chess and pgn-extract do, and say so: writers must escape.
                game.warnings.append(PgnError(
                    f"tag {single.group(1)} has unescaped quotes in its value; read up to the"
                    " last quote", source=self.source, line=number, token=stripped))
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
                    self.line_comment_text = text[match.end():]
                    tokens.append(Token(TokenKind.COMMENT, self.line_comment_text.strip(), number))
                    self.line_comment = True
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
    max_line: int | None = None,
) -> Iterator[RawGame]:
    """Yield the raw games of a binary PGN stream read from ``offset`` (at line ``line``).

    The stream is read line by line, so memory stays proportional to one game. ``limit``
    stops after that many games; ``max_line`` makes a longer line a PgnError.
    """
    splitter = _Splitter(source)
    end = offset
    for number, start, size, text, continued in _physical_lines(stream, offset, line, source,
                                                                max_line):
        splitter.feed(number, start, size, text, continued)
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
