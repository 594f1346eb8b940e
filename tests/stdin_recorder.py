"""Run an engine and copy every line written to its standard input into a file, as it passes.

``python stdin_recorder.py LOG PROGRAM [ARGS...]``: the engine is started without a shell,
with this process's standard output and error; each line read here is appended to LOG
(unbuffered) and then passed on. The engine is killed when this process dies (Linux
PR_SET_PDEATHSIG), so a runner that kills the recorder leaves no engine behind; when the
input ends the engine's input is closed and its exit status becomes this process's.
"""

from __future__ import annotations

import contextlib
import ctypes
import signal
import subprocess
import sys

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the recorder goes."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def main(argv: list[str]) -> int:
    """Copy stdin to the log and to the engine; the engine's exit status."""
    if len(argv) < 2:
        sys.stderr.write("usage: stdin_recorder.py LOG PROGRAM [ARGS...]\n")
        return 2
    log_path, command = argv[0], argv[1:]
    engine = subprocess.Popen(command, stdin=subprocess.PIPE, preexec_fn=_die_with_parent)
    assert engine.stdin is not None
    with open(log_path, "ab", buffering=0) as log:
        for line in sys.stdin.buffer:
            log.write(line)
            try:
                engine.stdin.write(line)
                engine.stdin.flush()
            except BrokenPipeError:
                break
    with contextlib.suppress(BrokenPipeError):
        engine.stdin.close()
    return engine.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
