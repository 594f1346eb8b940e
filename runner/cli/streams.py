"""The command line's two output streams, stdout and stderr, as rich prints to them.

A run's plain lines (its score lines, "Started game", "Tournament 1 finished") are written
by rich's console with markup, highlighting and wrapping off: to a pipe or a file rich then
writes the text unchanged. Importing rich (its console, styles, text and `inspect`) was a
fifth of a quiet ``runner match``'s start-up (issue 38), so such a line is written directly
where rich would write it unchanged, and the console is built (rich imported) on first use:
by a terminal, a styled message, or a line holding what rich would change.
"""

from __future__ import annotations

import builtins
import os
import sys
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["Stream", "unwrapped"]

_RICH_CHANGES = frozenset("\t\a\b\v\f\r")
"""What rich's text changes in a line it prints: tabs (expanded to its tab stops) and the
control codes it removes (bell, backspace, vertical tab, form feed, carriage return)."""
_RICH_ENVIRONMENT = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")
"""Variables that make rich treat a stream as a terminal (or not) whatever it is."""


def unwrapped(console: Console) -> Console:
    """`console`, set never to cut a printed line when it is not a terminal: rich cut every
    line at 80 columns (or $COLUMNS) in a log or a pipe, so ``grep`` missed a ``Finished game``
    line split in two. Tables still fit the width; a terminal still wraps what is too long."""
    console.soft_wrap = not console.is_terminal
    return console


class Stream:
    """stdout or stderr of the command line: a rich console for styled output, built on first
    use, and `line` for plain lines, written without rich where rich writes them as they are."""

    def __init__(self, *, stderr: bool) -> None:
        self.stderr = stderr
        self._console: Console | None = None

    @property
    def console(self) -> Console:
        """The stream's rich console (emoji codes left as text, see `unwrapped`)."""
        if self._console is None:
            from rich.console import Console

            self._console = unwrapped(Console(stderr=self.stderr, emoji=False))
        return self._console

    def _file(self) -> TextIO:
        """Where the stream writes now (a test may have replaced sys.stdout)."""
        return sys.stderr if self.stderr else sys.stdout

    def _plain(self) -> bool:
        """Whether rich would take this stream for no terminal and print to the file itself:
        not a terminal, no variable forcing rich's answer, no notebook or IDLE shell."""
        if any(name in os.environ for name in _RICH_ENVIRONMENT):
            return False
        if hasattr(builtins, "get_ipython") or "DATABRICKS_RUNTIME_VERSION" in os.environ:
            return False
        if getattr(sys.stdin, "__module__", "").startswith("idlelib"):
            return False
        try:
            return not self._file().isatty()
        except (AttributeError, ValueError):  # no file, or a closed one: rich's own answer
            return False

    @property
    def is_terminal(self) -> bool:
        """Whether rich takes the stream for a terminal (a live view, colours, wrapping)."""
        return False if self._plain() else self.console.is_terminal

    def line(self, text: str, *, soft_wrap: bool | None = None) -> None:
        """Print `text` as ``console.print(text, highlight=False, markup=False,
        soft_wrap=soft_wrap)`` does: its characters as they are, then a newline."""
        if self._plain() and _RICH_CHANGES.isdisjoint(text):
            file = self._file()
            file.write(text + "\n")
            file.flush()
        else:
            self.console.print(text, highlight=False, markup=False, soft_wrap=soft_wrap)
