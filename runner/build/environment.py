"""The environment a build, a bench or git gets (a short allow-list, never the runner's own),
and how a build's or a bench's processes are stopped.

A build runs the repository's code, so whatever the runner holds (a service token, a
database URL with its password, cloud credentials) must not reach it; rather than strip what
looks secret, only the few variables a compiler needs are passed on.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterable

__all__ = ["PASSED", "clean_environment", "stop_group"]

PASSED = ("PATH", "LANG", "LC_ALL", "TZ", "SOURCE_DATE_EPOCH")
"""The variables taken from the runner's own environment (when it has them)."""

_SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"


def clean_environment(extra: Iterable[tuple[str, str]] = (), *,
                      home: str | None = None) -> dict[str, str]:
    """The allow-listed variables, `extra` (a recipe's own) and HOME/TMPDIR set to `home`."""
    env = {key: os.environ[key] for key in PASSED if key in os.environ}
    env.setdefault("PATH", _SAFE_PATH)
    # git must not prompt for a password on a terminal, nor read the user's configuration.
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    if home is not None:
        env["HOME"] = home
        env["TMPDIR"] = home
    env.update(extra)
    return env


def stop_group(process: subprocess.Popen[bytes]) -> None:
    """Kill `process`'s process group (a build's compilers, an engine's helpers) and reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=10)
