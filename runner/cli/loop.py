"""Running a command's coroutine on the chosen event loop (runner/protocol/loop.py decides)."""

from __future__ import annotations

import gc
from collections.abc import Coroutine
from typing import Any, TypeVar

from runner.cli import release_collector
from runner.cli.errors import UserError
from runner.protocol.loop import LoopChoiceError, run

__all__ = ["run_async"]

_T = TypeVar("_T")


def run_async(main: Coroutine[Any, Any, _T]) -> _T:
    """Run `main` to its end on the loop ``RUNNER_LOOP`` chooses (asyncio's by default); a bad
    choice is the user's to fix (exit 2)."""
    # Everything imported so far lives as long as the process: moved out of the collector's
    # reach, it is not walked again by every full collection while games run (about 45 ms of
    # CPU in a 100-game match, two full collections over SQLAlchemy's and typer's objects).
    gc.freeze()
    release_collector()  # paused for the start-up's imports (runner.cli.hold_collector)
    try:
        return run(main)
    except LoopChoiceError as exc:
        raise UserError(str(exc)) from None
