"""The console scripts ``runner-fastchess`` and ``runner-cutechess`` (and ``runner fastchess
ARGS...`` / ``runner cutechess ARGS...``): the peer's argv, untouched, to the peer's parser.

Only the peer's parser is imported before it has answered: ``-help``, ``--version`` and a
refused command line cost no more than reading the words (frameworks call ``--version`` on
every start); the run's modules are imported only for a run.
"""

from __future__ import annotations

import gc
import importlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from runner.dropin.contract import DropinRun

__all__ = ["PEERS", "OwnOptions", "cutechess", "fastchess", "main", "own_options"]

PEERS = ("fastchess", "cutechess")
"""The peers whose command lines the runner takes."""


EVENTS_OPTIONS = ("-events", "--events")
"""Our option, which the peers lack: the run's events as JSON lines to a file (or ``-``)."""
EVENTS_MOVES = ("-events-moves", "--events-moves")
"""With it, every move too."""
REPORT_OPTIONS = ("-report", "--report")
"""Our option: the per-engine diagnostics tables printed after the peer's last line."""


@dataclass(frozen=True)
class OwnOptions:
    """The runner's own words on a peer's command line, taken out before the peer reads it
    (so that the same run continues with or without them)."""

    events: str | None = None
    events_moves: bool = False
    report: bool = False
    """Print the per-engine diagnostics (`runner report`'s faults and search tables) after
    the run's last line (on standard error when the events take standard output)."""


def own_options(argv: Sequence[str]) -> tuple[list[str], OwnOptions] | str:
    """`argv` without the runner's own options, and those options; or the line that refuses
    them (``-events`` without a file, ``-events-moves`` without ``-events``)."""
    rest: list[str] = []
    events: str | None = None
    moves = report = False
    words = iter(argv)
    for word in words:
        if word in EVENTS_OPTIONS:
            events = next(words, None)
            if events is None or (events.startswith("-") and events != "-"):
                return f"{word} needs a file (or - for standard output)"
        elif word in EVENTS_MOVES:
            moves = True
        elif word in REPORT_OPTIONS:
            report = True
        else:
            rest.append(word)
    if moves and events is None:
        return "-events-moves needs -events FILE as well"
    return rest, OwnOptions(events, moves, report)


def main(peer: str, argv: Sequence[str]) -> int:
    """Answer or play the command line `argv` (the words after the program's name) as `peer`
    does; returns the exit status."""
    taken = own_options(argv)
    if isinstance(taken, str):
        sys.stderr.write(f"runner-{peer}: {taken}\n")
        return 2
    words, own = taken
    prepared = _prepare(peer, words, own.events == "-")
    if isinstance(prepared, int):
        return prepared
    run, play = prepared

    # Frameworks read the lines as they come, through a pipe, where Python would buffer them.
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(line_buffering=True)
    return play(run, own)


def _prepare(peer: str, argv: Sequence[str], events_on_stdout: bool = False,
             ) -> int | tuple[DropinRun, Callable[[DropinRun, OwnOptions], int]]:
    """The command line read: the exit status of an answer given (help, version, a refusal),
    or the run and `runner.dropin.driver.play` to play it.

    The cyclic garbage collector is paused from the parser's first import to the driver's
    last: a run's imports (the configuration and schedule the parser builds, then the store,
    SQLAlchemy and the tournament) create some 100,000 objects that live as long as the
    process, and the collector's passes over them while they are created cost about a tenth
    of the run's start-up (issue 30). Once imported they are frozen (no full collection walks
    them again while games run, as `runner.cli.loop.run_async` does for ``runner match``) and
    the collector is started again, before anything is played. `events_on_stdout`: the
    events take standard output, so a refusal the peer prints there goes to stderr."""
    from runner.dropin.contract import Immediate, PeerUsageError

    paused = gc.isenabled()
    gc.disable()
    try:
        parse = importlib.import_module(f"runner.dropin.{peer}").parse
        try:
            answer = parse(list(argv))
        except PeerUsageError as exc:
            # With ``-events -`` standard output holds JSON lines only: the peer's line moves.
            to_stdout = exc.stream == "stdout" and not events_on_stdout
            stream = sys.stdout if to_stdout else sys.stderr
            stream.write(exc.line if exc.line.endswith("\n") else exc.line + "\n")
            stream.flush()
            return exc.exit_code
        if isinstance(answer, Immediate):
            if answer.text:
                sys.stdout.write(answer.text if answer.text.endswith("\n") else answer.text + "\n")
                sys.stdout.flush()
            return answer.exit_code
        from runner.dropin.driver import play

        gc.freeze()
        return answer, play
    finally:
        if paused:
            gc.enable()


def _exit(peer: str) -> None:
    """Run `peer`'s command line from sys.argv and exit with its status."""
    try:
        status = main(peer, sys.argv[1:])
    except BrokenPipeError:  # the reader went away (``| head``): nothing left to say
        status = 1
    sys.exit(status)


def fastchess() -> None:
    """Entry point of ``runner-fastchess``: fastchess's command line."""
    _exit("fastchess")


def cutechess() -> None:
    """Entry point of ``runner-cutechess``: cutechess-cli's command line."""
    _exit("cutechess")
