"""A peer's PGN and EPD files kept in step with the database, whatever stopped the last run.

The database is the authority: a game counts once it is stored, and the peer's output writes
it to its files only after that (then prints its ``Finished game`` line). A runner killed
between the two (``kill -9`` right after a commit, a full disk) leaves a file that lacks stored
games, and a kill in the middle of a write leaves a torn one at its end. So every run that
continues a tournament first repairs each file against the stored games (`repair_games`,
`repair_lines`), as ``runner run`` does with ``--pgnout``: a torn tail is cut, and the stored
games the file lacks are appended. The files hold no offsets of ours (they are the peer's, and
may hold other runs' games before ours), so a game is recognised by what identifies it in
either peer's PGN: its ``White``, ``Black`` and ``Round`` tags, its moves and its result
(`game_key`), looked for among the whole games at the end of the file, newest first, up to the
first one that is not a stored game of the run (games without a result, which cutechess-cli
writes when a stop cuts them short, are passed over). An EPD file is repaired alike, line by line.

Every write is whole or nothing (`append_whole`): a write that fails (no space left, an I/O
error) is cut back to where it began and raised as `OutputFileError`, one line naming the file,
so that no run leaves a game cut in the middle of its moves.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import BinaryIO

__all__ = ["GameKey", "OutputFileError", "Repaired", "append_whole", "game_key", "repair_games",
           "repair_lines"]

_TAG = re.compile(r'^\[([A-Za-z0-9_]+) "((?:[^"\\]|\\.)*)"\]$', re.MULTILINE)
_COMMENT = re.compile(r"\{[^}]*\}")
_NUMBER = re.compile(r"\d+\.+")
_RESULTS = frozenset({"1-0", "0-1", "1/2-1/2", "*"})
_GAME_START = b"\n\n["
"""Where one game ends and the next begins in either peer's PGN (movetext never starts with a
bracket)."""


class OutputFileError(Exception):
    """A peer's output file cannot be written or repaired: one line naming the file and why."""


@dataclass(frozen=True)
class Repaired:
    """What a repair did to one file."""

    cut: int
    """Bytes of a torn tail cut off (0: none)."""
    appended: int
    """Stored games (or lines) the file lacked, appended."""


def append_whole(handle: BinaryIO, data: bytes, path: str, what: str) -> None:
    """Append `data` to `handle` (an unbuffered file of `path`, opened for appending) and
    sync it to disk; when any of it fails, cut the file back to its size before and raise
    OutputFileError naming `what`."""
    fd = handle.fileno()
    start = os.fstat(fd).st_size
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, start)
        raise OutputFileError(f"cannot write {what} to {path}: {exc.strerror or exc}") from None


GameKey = tuple[str | None, str | None, str | None, tuple[str, ...]]
"""White, Black, Round and the movetext's words (moves and result) of one game."""


def game_key(text: str) -> GameKey:
    """What identifies a game in a peer's PGN: White, Black, Round, the moves and the result
    (comments, move numbers and the other tags left out: a game rebuilt from the database has
    the same key as the one written when it was played)."""
    head, _sep, movetext = text.partition("\n\n")
    tags = dict(_TAG.findall(head))
    words = tuple(word for word in _COMMENT.sub(" ", movetext).split()
                  if not _NUMBER.fullmatch(word))
    return tags.get("White"), tags.get("Black"), tags.get("Round"), words


def _whole(text: str) -> bool:
    """Whether a game's text is complete: tags, then movetext ending in a result."""
    _head, sep, movetext = text.partition("\n\n")
    words = _COMMENT.sub(" ", movetext).split()
    return bool(sep) and bool(words) and words[-1] in _RESULTS


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise OutputFileError(f"cannot read {path}: {exc.strerror or exc}") from None


def _starts(data: bytes) -> list[int]:
    """The offsets at which the games of a PGN file begin."""
    starts = [0] if data else []
    at = data.find(_GAME_START)
    while at >= 0:
        starts.append(at + 2)
        at = data.find(_GAME_START, at + 2)
    return starts


def _truncate(path: str, size: int) -> None:
    try:
        os.truncate(path, size)
    except OSError as exc:
        raise OutputFileError(f"cannot cut the torn end of {path}: {exc.strerror or exc}") from None


def _append_all(path: str, pieces: Iterable[str], lead: bytes, what: str) -> None:
    try:
        handle = open(path, "ab", buffering=0)  # noqa: SIM115 - closed below
    except OSError as exc:
        raise OutputFileError(f"cannot open {path}: {exc.strerror or exc}") from None
    with handle:
        if lead:
            append_whole(handle, lead, path, what)
        for piece in pieces:
            append_whole(handle, piece.encode(), path, what)


def repair_games(path: str, stored: Sequence[str]) -> Repaired:
    """Make the PGN file `path` end with every game in `stored` (their texts as the peer writes
    them, rebuilt from the database): a torn game at its end is cut when it is one of the run's,
    and the stored games not found among the whole games at its end are appended, in order."""
    data = _read(path)
    if not stored:
        return Repaired(0, 0)
    data = data or b""
    keys = [game_key(text) for text in stored]
    names = {key[0] for key in keys} | {key[1] for key in keys}
    starts = _starts(data)
    games = list(zip(starts, [*starts[1:], len(data)], strict=True)) if starts else []
    cut = 0
    if games:
        start = games[-1][0]
        tail = data[start:].decode("utf-8", "replace")
        if not _whole(tail):
            white, black, _round, _words = game_key(tail)
            if {white, black} - {None} <= names:  # torn by a run of ours, not another's game
                cut = len(data) - start
                _truncate(path, start)
                data = data[:start]
            games.pop()  # not a game of the run's: the run's games are looked for before it
    wanted = Counter(keys)
    for start, end in reversed(games):
        key = game_key(data[start:end].decode("utf-8", "replace"))
        if key[3][-1:] == ("*",):
            continue  # a game a stop cut short (cutechess writes it): never stored, not a stop
        if wanted[key] <= 0:
            break
        wanted[key] -= 1
    missing = []
    for key, text in zip(keys, stored, strict=True):
        if wanted[key] > 0:
            wanted[key] -= 1
            missing.append(text)
    if missing:
        # A file that ends without its blank line gets it first: each game stays whole.
        lead = b"" if not data or data.endswith(b"\n\n") else \
            (b"\n" if data.endswith(b"\n") else b"\n\n")
        _append_all(path, missing, lead, "a stored game")
    return Repaired(cut, len(missing))


def repair_lines(path: str, stored: Sequence[str]) -> Repaired:
    """Make the EPD file `path` end with every line of `stored` (each ending in a line break):
    a torn last line that begins one of them is cut, and the lines not found at the end of the
    file (newest first, up to the first line that is not one of them) are appended."""
    data = _read(path)
    if data is None or not stored:
        if stored:
            _append_all(path, stored, b"", "a stored game's position")
        return Repaired(0, len(stored))
    cut = 0
    text = data.decode("utf-8", "replace")
    if text and not text.endswith("\n"):
        partial = text[text.rfind("\n") + 1:]
        if any(line.startswith(partial) for line in stored):
            cut = len(partial.encode("utf-8", "replace"))
            _truncate(path, len(data) - cut)
            text = text[:len(text) - len(partial)]
    wanted = Counter(stored)
    for line in reversed(text.splitlines(keepends=True)):
        if wanted[line] <= 0:
            break
        wanted[line] -= 1
    missing = []
    for line in stored:
        if wanted[line] > 0:
            wanted[line] -= 1
            missing.append(line)
    if missing:
        lead = b"\n" if text and not text.endswith("\n") else b""
        _append_all(path, missing, lead, "a stored game's position")
    return Repaired(cut, len(missing))
