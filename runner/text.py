"""Foreign text made harmless to show, and the test a name must pass to be one line of text.

Engine names, tournament names, engines' messages and stderr lines, and anything read back
from the database may hold characters a terminal acts on instead of showing: ESC starts
sequences that set the window title, move the cursor or recolour everything after it, C1
codes (U+0080-U+009F) do the same on terminals that honour them, CR and BS overwrite what was
printed, and bidirectional overrides (U+202A-U+202E, U+2066-U+2069) or zero-width format
characters make text read differently from what it is. `shown` writes every such character
as a visible backslash escape (``\\x1b``, ``\\u202e``), so the text can be printed anywhere;
`name_problem` says why a configured name is not a single line of printable text.

This module imports nothing of the runner: every room may use it.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["name_problem", "shown", "undirected", "unprintable"]

_CONTROL_NAMES = {"\0": "NUL", "\a": "BELL", "\b": "BACKSPACE", "\t": "TAB",
                  "\n": "LINE FEED", "\r": "CARRIAGE RETURN", "\x1b": "ESCAPE",
                  "\x7f": "DELETE"}
"""Names for the controls Unicode leaves unnamed that a user is most likely to meet."""


def _harmless(char: str) -> bool:
    """Whether `char` is shown as itself: printable, or a plain space of some width.

    `str.isprintable` refuses every control (Cc), format (Cf: bidi overrides and isolates,
    zero-width joiners, the BOM), line and paragraph separator, surrogate, private-use and
    unassigned character, and every space but U+0020; spaces such as U+00A0 are harmless.
    """
    return char.isprintable() or unicodedata.category(char) == "Zs"


def unprintable(text: str) -> str | None:
    """The first character of `text` a terminal would not simply show, or None."""
    if text.isprintable():
        return None
    for char in text:
        if not _harmless(char):
            return char
    return None


def _escape(char: str) -> str:
    """One character as a backslash escape, in Python's notation."""
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


_NOT_PLAIN_ASCII = re.compile(r"[^ -~]")
"""Any character but printable ASCII: the only ones `shown` needs to look at one by one."""
_NOT_PLAIN_LINES = re.compile(r"[^ -~\n]")
"""The same, line feeds excepted (kept in multi-line text)."""


def shown(text: str, *, multiline: bool = False) -> str:
    """`text` safe to print: each character a terminal could act on becomes a visible escape.

    A tab becomes a space; with `multiline`, line feeds are kept (a multi-line message), else
    they are escaped too. Printable text comes back unchanged, and quickly: pages of
    report and PGN text pass through here.
    """
    probe = text.replace("\n", " ") if multiline else text
    if probe.isprintable():
        return text

    def replace(match: re.Match[str]) -> str:
        char = match.group()
        if _harmless(char):
            return char
        if char == "\t":
            return " "
        return _escape(char)

    return (_NOT_PLAIN_LINES if multiline else _NOT_PLAIN_ASCII).sub(replace, text)


def name_problem(text: str, limit: int) -> str | None:
    """Why `text` cannot be a name (of an engine, of a tournament), or None when it can.

    A name is sent to engines (CECP ``name``) and written in PGN tags and on terminals: it is
    one line of printable text of at most `limit` characters (blank names are the caller's
    to refuse, each with its own words).
    """
    bad = unprintable(text)
    if bad is not None:
        what = _CONTROL_NAMES.get(bad) or unicodedata.name(bad, "a control character")
        return (f"contains U+{ord(bad):04X} ({what}): a name is one line of printable text, "
                "without control or format characters")
    if len(text) > limit:
        return f"is {len(text)} characters long: at most {limit}"
    return None


_DIRECTION_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Characters that change the direction of the text around them: embeddings, overrides,
isolates and marks."""


def undirected(text: str) -> str:
    """`text` without direction controls: in a name on a page they could make it show
    something else than what is there ("1-0" read as "0-1")."""
    return _DIRECTION_CONTROLS.sub("", text)
