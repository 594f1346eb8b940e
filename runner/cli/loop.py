"""Running a command's coroutine on the chosen event loop (runner/protocol/loop.py decides)."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, TypeVar

from runner.cli.errors import UserError

__all__ = ["run_async"]

_T = TypeVar("_T")


def run_async(main: Coroutine[Any, Any, _T]) -> _T:
    """Run `main` to its end on the loop ``RUNNER_LOOP`` chooses (asyncio's by default); a bad
    choice is the user's to fix (exit 2)."""
    from runner.protocol.loop import LoopChoiceError, run  # here: asyncio only when playing

    try:
        return run(main)
    except LoopChoiceError as exc:
        raise UserError(str(exc)) from None
