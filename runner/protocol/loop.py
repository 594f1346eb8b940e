"""The event loop the runner's commands run on: uvloop when it is installed, else asyncio's.

One place decides, so that every command that plays games (``runner run``, ``match``,
``play``, ``check``...) runs on the same loop, and so that the tests can put the engine
process layer on either. ``RUNNER_LOOP`` overrides the choice: ``asyncio`` (asyncio's own
loop even when uvloop is installed), ``uvloop`` (fail when it is not installed) or ``auto``
(the default). uvloop is an optional extra (``pip install '.[fast]'``): a plain
``pip install .`` compiles nothing and runs on asyncio's loop.
"""

from __future__ import annotations

import asyncio
import importlib
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["LOOP_ENV", "LoopChoiceError", "loop_factory", "loop_name", "run"]

LOOP_ENV = "RUNNER_LOOP"
"""The environment variable that overrides the choice of event loop."""

_CHOICES = ("auto", "asyncio", "uvloop")

_T = TypeVar("_T")


class LoopChoiceError(RuntimeError):
    """``RUNNER_LOOP`` names an unknown loop, or uvloop when it is not installed."""


def _requested() -> str:
    value = os.environ.get(LOOP_ENV, "").strip().lower() or "auto"
    if value not in _CHOICES:
        raise LoopChoiceError(f"environment variable {LOOP_ENV}={os.environ[LOOP_ENV]!r}: "
                              f"expected one of {', '.join(_CHOICES)}")
    return value


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop constructor when it is to be used, else None (asyncio's own loop)."""
    requested = _requested()
    if requested == "asyncio":
        return None
    try:
        uvloop = importlib.import_module("uvloop")
    except ImportError as exc:
        if requested == "uvloop":
            raise LoopChoiceError(f"environment variable {LOOP_ENV}=uvloop, but uvloop is not "
                                  f"installed ({exc}); pip install 'cecp-runner[fast]'") from exc
        return None
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
        return runner.run(main)
