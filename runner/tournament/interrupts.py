"""Stop signals while games run: Ctrl-C, SIGTERM and SIGHUP, and the exit status they give.

One rule for ``runner run`` (and the commands that run tournaments) and ``runner play``: the
first Ctrl-C asks for a gentle stop, the second for an abort; SIGTERM (a service manager,
``kill``) and SIGHUP (the terminal closed) ask for the abort at once, as Ctrl-C twice would,
since nobody is there to press it again. Whatever the signal, engines are then stopped to the
end (quit, SIGTERM, SIGKILL) and the process exits with 128 + the first signal's number (130
for Ctrl-C), as shells report a command a signal ended, so that scripts can tell.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable
from types import TracebackType

__all__ = ["STOP_SIGNALS", "Interrupts", "exit_status"]

STOP_SIGNALS: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))
"""The signals a run handles (SIGHUP does not exist on Windows)."""


def exit_status(signum: int) -> int:
    """The exit status of a run a signal interrupted: 128 + its number (130 for SIGINT)."""
    return 128 + signum


class Interrupts:
    """While entered, stop signals call `on_stop(hard)` instead of killing the process.

    The first SIGINT asks for a gentle stop (``hard=False``), a second one, or any SIGTERM or
    SIGHUP, for an abort (``hard=True``). `first` is the first signal received, if any.
    """

    def __init__(self, on_stop: Callable[[bool], None]) -> None:
        self.on_stop = on_stop
        self.first: int | None = None
        self.count = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._installed: list[int] = []

    @property
    def exit_status(self) -> int | None:
        """128 + the first signal's number, or None when no signal came."""
        return None if self.first is None else exit_status(self.first)

    def _received(self, signum: int) -> None:
        self.count += 1
        if self.first is None:
            self.first = signum
        self.on_stop(signum != signal.SIGINT or self.count > 1)

    def __enter__(self) -> Interrupts:
        loop = asyncio.get_running_loop()
        self._loop = loop
        for number in STOP_SIGNALS:
            # Not in the main thread, or no signals on this platform: nothing to handle.
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(number, self._received, int(number))
                self._installed.append(number)
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 trace: TracebackType | None) -> None:
        assert self._loop is not None
        for number in self._installed:
            self._loop.remove_signal_handler(number)
        self._installed.clear()
