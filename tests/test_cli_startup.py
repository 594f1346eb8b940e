"""Commands that only read or compute import neither the config model nor Typer's help renderer.

`runner stats` and `runner list` must start fast (issue 17: under 0.3 s on an idle machine):
the cutechess vocabulary (and the config model, statistics and rules behind it) is imported
when a game command reads its words or renders its help, and `typer.rich_utils` (rich.markdown,
pygments) only when help is rendered.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROBE = (
    "import atexit, sys\n"
    "def _report():\n"
    "    names = ('runner.cli.vocabulary', 'runner.config.model', 'typer.rich_utils')\n"
    "    print('LOADED', *[n for n in names if n in sys.modules], file=sys.stderr)\n"
    "atexit.register(_report)\n"
    "sys.argv = ['runner', *sys.argv[1:]]\n"
    "from runner.cli.app import main\n"
    "main()\n"
)
ROOT = Path(__file__).resolve().parent.parent


def _loaded(*args: str) -> list[str]:
    """The watched modules loaded by one ``runner`` command run in a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                          timeout=120, env=env, cwd=ROOT)
    line = [x for x in done.stderr.splitlines() if x.startswith("LOADED")][-1]
    return line.split()[1:]


def test_stats_imports_no_vocabulary_and_no_help_renderer() -> None:
    assert _loaded("stats", "--wdl", "10", "5", "3") == []


def test_match_help_still_loads_the_vocabulary_it_shows() -> None:
    assert _loaded("match", "--help") == [
        "runner.cli.vocabulary", "runner.config.model", "typer.rich_utils"]
