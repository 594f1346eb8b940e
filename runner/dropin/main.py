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
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from runner.dropin.contract import DropinRun

__all__ = ["PEERS", "cutechess", "fastchess", "main"]

PEERS = ("fastchess", "cutechess")
"""The peers whose command lines the runner takes."""


def main(peer: str, argv: Sequence[str]) -> int:
    """Answer or play the command line `argv` (the words after the program's name) as `peer`
    does; returns the exit status."""
    prepared = _prepare(peer, argv)
    if isinstance(prepared, int):
        return prepared
    run, play = prepared

    # Frameworks read the lines as they come, through a pipe, where Python would buffer them.
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(line_buffering=True)
    return play(run)


def _prepare(peer: str, argv: Sequence[str]) -> int | tuple[DropinRun, Callable[[DropinRun], int]]:
    """The command line read: the exit status of an answer given (help, version, a refusal),
    or the run and `runner.dropin.driver.play` to play it.

    The cyclic garbage collector is paused from the parser's first import to the driver's
    last: a run's imports (the configuration and schedule the parser builds, then the store,
    SQLAlchemy and the tournament) create some 100,000 objects that live as long as the
    process, and the collector's passes over them while they are created cost about a tenth
    of the run's start-up (issue 30). Once imported they are frozen (no full collection walks
    them again while games run, as `runner.cli.loop.run_async` does for ``runner match``) and
    the collector is started again, before anything is played."""
    from runner.dropin.contract import Immediate, PeerUsageError

    paused = gc.isenabled()
    gc.disable()
    try:
        parse = importlib.import_module(f"runner.dropin.{peer}").parse
        try:
            answer = parse(list(argv))
        except PeerUsageError as exc:
            stream = sys.stdout if exc.stream == "stdout" else sys.stderr
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
