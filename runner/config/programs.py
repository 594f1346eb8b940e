"""Where engine programs are found: one rule for tournament files and the command line.

A program written with a slash is a path (relative to the engine's ``dir``, else to the file
that names it). A bare name is looked for in the engine's ``dir``, then on PATH, then in
Debian's /usr/games and /usr/local/games, where the packaged engines live but which a login
shell's PATH often lacks. ``python`` and ``python3`` mean the interpreter running the runner,
so the bundled engine starts in whatever virtual environment is active.
"""

from __future__ import annotations

import os
import shutil
import sys
from enum import Enum
from pathlib import Path

__all__ = ["GAMES_DIRS", "ProgramLookup", "find_program", "searched_places"]

GAMES_DIRS = ("/usr/games", "/usr/local/games")
"""Where Debian installs engines; searched after PATH."""

_PYTHON = ("python", "python3")


class ProgramLookup(Enum):
    """When an engine's program must be there: when the configuration is read (a missing
    one is a configuration problem), or only when a game starts it (the configuration keeps
    the command as written and the game that starts the engine fails, as fastchess does)."""

    AT_LOAD = "at-load"
    AT_START = "at-start"


def _is_path(program: str) -> bool:
    """Whether `program` names a file by path rather than a name to search for."""
    return os.sep in program or bool(os.altsep and os.altsep in program)


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_program(program: str, directory: Path | None = None, base: Path | None = None) -> str | None:
    """The executable `program` names, or None: see the module docstring for the rule."""
    if program in _PYTHON:
        return sys.executable
    if _is_path(program):
        candidate = Path(program)
        if not candidate.is_absolute():
            candidate = (directory or base or Path.cwd()) / candidate
        # Absolute, but symlinks kept: a virtualenv's bin/python is a link to the base
        # interpreter, and only the link's path makes Python use the venv's packages.
        return os.path.abspath(candidate) if _executable(candidate) else None
    if directory is not None and _executable(directory / program):
        return str(directory / program)
    return shutil.which(program) or shutil.which(program, path=os.pathsep.join(GAMES_DIRS))


def searched_places(program: str, directory: Path | None = None, base: Path | None = None) -> str:
    """Where `find_program` looked, as words for a not-found message."""
    if _is_path(program):
        return f"at {(directory or base or Path.cwd()) / program}"
    games = ", ".join(GAMES_DIRS)
    return (f"in {directory}, on PATH or in {games}" if directory is not None
            else f"on PATH or in {games}")
