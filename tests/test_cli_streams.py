"""The command line's plain lines written without rich (runner.cli.streams, issue 38): to a
pipe or a file they must be the bytes rich's console writes, and a run that prints only
such lines must not import rich."""

from __future__ import annotations

import io
import sys

import pytest

from runner.cli.streams import Stream, unwrapped

LINES = ["Score of a vs b: 1 - 1 - 0  [0.500] 2", "[bold red]not markup[/] :cat: x", "",
         "wide 漢字 and a long line " * 12, "trailing spaces   ", "two\nlines", "tab\there",
         "bell\a, backspace\b, return\r, form feed\f", "escape \x1b[31m kept", "ü é ß"]


@pytest.mark.parametrize("stderr", [False, True])
def test_a_plain_line_is_what_rich_writes_to_a_pipe(stderr: bool,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from rich.console import Console

    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)
    for soft_wrap in (None, True):
        mine, theirs = io.StringIO(), io.StringIO()
        monkeypatch.setattr(sys, "stderr" if stderr else "stdout", mine)
        stream = Stream(stderr=stderr)
        rich = unwrapped(Console(file=theirs, emoji=False))
        for line in LINES:
            stream.line(line, soft_wrap=soft_wrap)
            rich.print(line, highlight=False, markup=False, soft_wrap=soft_wrap)
        assert mine.getvalue() == theirs.getvalue()
        assert stream.is_terminal is False
    # Only the lines rich changes (a tab, a control code it removes) needed its console.
    assert stream._console is not None


def test_a_terminal_or_a_forced_colour_goes_through_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    monkeypatch.setenv("FORCE_COLOR", "1")
    stream = Stream(stderr=False)
    stream.line("plain")
    assert stream._console is not None and stream.is_terminal is True
    assert "plain" in sys.stdout.getvalue()
