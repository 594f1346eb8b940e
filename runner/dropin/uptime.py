"""When this process started, on the monotonic clock: where a peer's ``Total Time`` begins.

fastchess measures its total time from the start of its ``main`` to after its engines are
stopped; a drop-in spends its start-up (the interpreter, its imports, the database opened,
the engines asked) before its output exists, so its figure begins at the process's start, as
the kernel recorded it (``/proc/self/stat``), which is what a user timing the command sees.
"""

from __future__ import annotations

import os
import time

__all__ = ["process_started"]


def process_started() -> float:
    """The moment this process started, as a `time.monotonic` value (now when the system
    does not say)."""
    now_monotonic = time.monotonic()
    try:
        with open("/proc/self/stat", "rb") as handle:
            stat = handle.read()
        # The fields after the command name (in parentheses, possibly with spaces in it):
        # the 22nd field of the line, the start time in clock ticks after boot.
        ticks = int(stat[stat.rindex(b")") + 2:].split()[19])
        since_boot = time.clock_gettime(time.CLOCK_BOOTTIME)
        hertz = os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return now_monotonic
    elapsed = since_boot - ticks / hertz
    return now_monotonic - elapsed if 0 <= elapsed < 86400 * 365 else now_monotonic
