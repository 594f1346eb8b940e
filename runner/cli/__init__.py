"""The `runner` command line: Typer commands, the cutechess vocabulary, live views.

The top layer: it may import every other room, and nothing of ours imports it. Commands
translate words into the typed config and hand it to the tournament, the report or the store.
"""

from __future__ import annotations

import errno
import gc
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

__all__ = ["hold_collector", "main", "play_words", "release_collector", "run_file_words",
           "run_words", "typer_reads", "version_text"]

_HELD_FOR = frozenset({"run", "resume", "match", "gauntlet", "roundrobin", "tune", "play",
                       "engine", "worker", "list", "stats", "--help", "--version"})
"""The commands whose start-up runs without the cyclic collector: the ones that play (through
`runner.cli.loop.run_async`, which starts it again before the first game) and the short ones
that print and exit. The others (serve, export, report, pgn check...) may run long without
the loop, so they keep it."""
_held = [False]
"""Whether `hold_collector` paused the collector (and `release_collector` may restart it)."""


def hold_collector(argv: Sequence[str]) -> None:
    """Pause the cyclic garbage collector while the command `argv` (the words after
    ``runner``) starts, when it is one of `_HELD_FOR` or none is given (the help).

    Importing the store, the tournament and the command line creates some 100,000 objects
    that live as long as the process and about 500 cyclic garbage ones: the collector's passes
    over them while they are created cost about a tenth of a run's start-up (issue 30)."""
    if (not argv or argv[0] in _HELD_FOR) and gc.isenabled():
        gc.disable()
        _held[0] = True


def release_collector() -> None:
    """Start the collector again if `hold_collector` paused it."""
    if _held[0]:
        _held[0] = False
        gc.enable()


_WORDS_ONLY = frozenset({"match", "gauntlet", "roundrobin"})
"""The commands whose every word is read by `runner.cli.vocabulary`, none by Typer (click
hands them over untouched, `runner.cli.help.PASSTHROUGH`), so that they run without Typer."""


def typer_reads(words: Sequence[str]) -> bool:
    """Whether click would act on one of the words after ``runner match`` itself rather than
    hand it over: the help flag (with or without a value) and the ``--`` it drops. Such a
    command line goes through Typer as before; tests/test_cli_startup.py checks that click
    hands over every other word unchanged."""
    return any(w == "--" or w == "--help" or w.startswith("--help=") for w in words)


def play_words(command: str, words: list[str]) -> NoReturn:
    """Run ``runner COMMAND WORDS`` (a match, gauntlet or round-robin) without Typer and exit
    as its Typer command would: Typer and rich's help cost a match run a fifth of its
    start-up (issue 38) and read none of its words. Exits as Typer does: a `UserError` is
    said with code 2, Ctrl-C during start-up is 130, a closed pipe 1."""

    def play() -> None:
        from runner.cli.tournament import cli_run

        cli_run(words, command)

    _without_typer(play)


_RUN_FLAGS = {"--quiet": "quiet", "-q": "quiet", "--force": "force", "--new": "new",
              "--events-moves": "events_moves"}
"""``runner run``'s flags (runner.cli.plays.run_command), by the keyword each sets."""
_RUN_VALUES = {"--db": "db", "--concurrency": "concurrency", "--workers": "workers",
               "--cluster": "cluster", "--events": "events"}
"""``runner run``'s options that take a value, by keyword."""
_RUN_LEAST = {"concurrency": 1, "workers": 0}
"""Its whole-number options and the least value each takes (their ``min``)."""


def run_words(words: Sequence[str]) -> dict[str, object] | None:
    """The arguments of ``runner run WORDS`` as `runner.cli.plays.run_command` receives them
    from Typer, when every word is one this reading is sure of: the file, each option once
    or more (the last one counts, as with click), ``--opt VALUE`` or ``--opt=VALUE``, a whole
    number written in ASCII digits within its range. Anything else (help, ``--``, an unknown
    or misspelt option, a missing or dash-led value, a second file) answers None, and Typer
    reads the words, says what is wrong as before and exits as before (issue 38: Typer,
    rich's console and pydantic, which coerces the file's path, were about half of what
    ``runner run`` imported)."""
    found: dict[str, object] = {}
    given = iter(words)
    for word in given:
        if word in _RUN_FLAGS:
            found[_RUN_FLAGS[word]] = True
            continue
        name, equals, value = word.partition("=")
        if name in _RUN_VALUES:
            if not equals:
                value = next(given, "")
            if not value or value.startswith("-"):
                return None
            key = _RUN_VALUES[name]
            if key in _RUN_LEAST:
                if not (value.isascii() and value.isdigit()) or int(value) < _RUN_LEAST[key]:
                    return None
                found[key] = int(value)
            else:
                found[key] = value
        elif word and not word.startswith("-") and "config_file" not in found:
            found["config_file"] = word
        else:
            return None
    return found if "config_file" in found else None


def run_file_words(found: dict[str, object]) -> NoReturn:
    """Run ``runner run`` with the arguments `run_words` read, as its Typer command does,
    and exit as Typer would (see `play_words`)."""

    def play() -> None:
        from pathlib import Path

        from runner.cli.tournament import events_target, run_file

        def text(key: str) -> str | None:
            value = found.get(key)
            return None if value is None else str(value)

        def number(key: str) -> int | None:
            value = found.get(key)
            return value if isinstance(value, int) else None

        # What runner.cli.plays.run_command does with the same values.
        run_file(Path(str(found["config_file"])), db=text("db"),
                 concurrency=number("concurrency"), quiet=bool(found.get("quiet")),
                 force=bool(found.get("force")), new=bool(found.get("new")),
                 workers=number("workers"), cluster=text("cluster"),
                 events=events_target(text("events"), bool(found.get("events_moves"))))

    _without_typer(play)


def _without_typer(play: Callable[[], None]) -> NoReturn:
    """Run `play` (a command's body) and exit as Typer's own main would: a `UserError` is
    said with code 2, Ctrl-C during start-up is 130, a closed pipe 1."""
    from runner.cli.errors import UserError, report_error

    try:
        play()
        sys.exit(0)  # a command that returns exits 0 under Typer
    except UserError as exc:
        report_error(str(exc))
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        # Nothing more reaches the reader; flushing at exit must not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.dup2(devnull, sys.stderr.fileno())
        sys.exit(1)


def version_text() -> str:
    """What ``runner --version`` prints: the package's version, then which code runs."""
    from runner import __version__
    from runner.compiled import describe

    return f"runner (cecp-runner) {__version__}\n{describe()}\n"


def main() -> None:
    """Entry point of the ``runner`` console script and of ``python -m runner``: the drop-ins'
    words go to their parser before Typer and rich are imported (``runner fastchess
    --version`` costs what ``runner-fastchess --version`` does), every other command line to
    `runner.cli.app.main`, the collector paused first where `hold_collector` says. A lone
    ``--version`` is answered here too, as Typer's ``--version`` would, and so are
    ``runner match|gauntlet|roundrobin WORDS`` (`play_words`) unless a word asks for help,
    and ``runner run FILE ...`` when `run_words` is sure of every word."""
    argv = sys.argv[1:]
    hold_collector(argv)
    if argv == ["--version"]:  # Typer's answer, without Typer (a test keeps the two equal)
        sys.stdout.write(version_text())
        sys.exit(0)
    if argv and argv[0] in ("fastchess", "cutechess"):
        from runner.dropin.main import main as dropin

        sys.exit(dropin(argv[0], argv[1:]))
    if argv and argv[0] in _WORDS_ONLY and not typer_reads(argv[1:]):
        play_words(argv[0], argv[1:])
    if argv and argv[0] == "run" and (found := run_words(argv[1:])) is not None:
        run_file_words(found)
    from runner.cli.app import main as typer_main

    typer_main()
