"""The event loop the runner's commands run on: asyncio's own, or uvloop when asked for.

One place decides, so that every command that plays games (``runner run``, ``match``,
``play``, ``engine check``...) runs on the same loop, and so that the tests and
``benchmarks/peers.py --loops`` can put the engine process layer on either.
``RUNNER_LOOP=uvloop`` runs on uvloop (it must be installed: ``pip install uvloop``);
unset or ``asyncio``, asyncio's own loop.

asyncio's loop stays the default because uvloop saves too little here: measured with
``benchmarks/peers.py --loops asyncio,uvloop`` (100 games, interleaved, two runs), the
runner's CPU per ply was 3.5% lower on uvloop on average (about 10 us of 250-320 us on
fairymax and stockfish, lower in 15 of 16 pairs of runs); what a ply costs is the runner's own
Python (line handling, the referee, the store), the loop's part of it was already one callback
per chunk read. The engine process layer works on both: it needs only the public transport API.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from runner.text import shown

__all__ = ["LOOP_ENV", "LoopChoiceError", "loop_factory", "loop_name", "run"]

LOOP_ENV = "RUNNER_LOOP"
"""The environment variable that chooses the event loop."""

_CHOICES = ("asyncio", "uvloop")

_T = TypeVar("_T")


class LoopChoiceError(RuntimeError):
    """``RUNNER_LOOP`` names an unknown loop, or uvloop when it is not installed."""


def _requested() -> str:
    value = os.environ.get(LOOP_ENV, "").strip().lower() or "asyncio"
    if value not in _CHOICES:
        raise LoopChoiceError(f"environment variable {LOOP_ENV}={os.environ[LOOP_ENV]!r}: "
                              f"expected one of {', '.join(_CHOICES)}")
    return value


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop constructor when it was asked for, else None (asyncio's own loop)."""
    if _requested() == "asyncio":
        return None
    try:
        uvloop = importlib.import_module("uvloop")
    except ImportError as exc:
        raise LoopChoiceError(f"environment variable {LOOP_ENV}=uvloop, but uvloop is not "
                              f"installed ({exc}); pip install uvloop") from exc
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def loop_name() -> str:
    """``uvloop`` or ``asyncio``: the loop `run` would use now."""
    return "asyncio" if loop_factory() is None else "uvloop"


def run(main: Coroutine[Any, Any, _T]) -> _T:
    """`asyncio.run` on the chosen loop (Python 3.11 has ``loop_factory`` only on Runner)."""
    try:
        factory = loop_factory()
    except LoopChoiceError:
        main.close()  # never awaited: say so quietly rather than with a warning
        raise
    with asyncio.Runner(loop_factory=factory) as runner:
        runner.get_loop().set_exception_handler(_escaped_report)
        return runner.run(main)


def _escaped_report(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """asyncio's report of an error nobody handled, on one line with its control characters
    escaped: the error may quote an engine's stderr, which must never reach a terminal raw."""
    message = str(context.get("message") or "unhandled error in the event loop")
    exc = context.get("exception")
    if exc is not None:
        message += f": {type(exc).__name__}: {exc}"
    sys.stderr.write(shown(message) + "\n")
