"""What cutechess-cli and runner-cutechess write to a CECP engine on the same command line.

Each engine of a command line is wrapped by `stdin_recorder.py`, which copies every line the
runner writes to the engine's standard input into a file; both runners play the same argv
(one game), and `dialogue` reads a file back up to and including the engine's first search
(its first ``go``: the first move of the game is in it for either side), normalised only where the
two must differ: ``ping`` lines (cutechess-cli pings before every search with random numbers;
the runner pings once a game is set up, and probes a quiet engine at start-up), the
opponent's clock (``otim``: the time the opponent took) and the moves after the opening (the
engines' choices), and the ``accepted``/``rejected`` answers to features (each
runner answers for what it implements). A restarted engine's last process is read.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PEERS = REPO.parent / "shared" / "peers"
BOOKS = REPO.parent / "shared" / "data" / "books"
RECORDER = Path(__file__).resolve().parent / "stdin_recorder.py"
RUN_TIMEOUT = 180.0
ENGINE_PATH = f"{os.environ.get('PATH', '')}:/usr/games"

_MOVE = re.compile(r"[a-h][1-8][a-h][1-8][qrbn]?")


@dataclass(frozen=True)
class Scenario:
    """One comparison: two engines (program words after ``cmd=``, optional extra ``-engine``
    words), the ``-each`` words, and the rest of the command line (openings...)."""

    name: str
    engines: tuple[tuple[str, ...], tuple[str, ...]]
    each: tuple[str, ...]
    rest: tuple[str, ...] = ()
    book_plies: int = 0
    """Moves the opening plays before the engines' own (compared as written)."""
    clock_values: bool = True
    """False: ``time`` values are not compared (only that ``time`` is sent)."""
    features_by_chance: bool = False
    """True for gnuchess 6.2.7: whether its features arrive at start-up is chance (its input
    thread holds stdin while another waits for it), for cutechess-cli as for the runner; the
    lines that depend on them (``usermove``, ``computer``, ``name``) are not compared."""

    def programs(self) -> list[str]:
        """The engines' programs, for the skip check."""
        return [words[0] for words in self.engines]


def cutechess_cli() -> Path | None:
    """The real cutechess-cli, if it is here and runs (it links Qt 6)."""
    binary = PEERS / "cutechess-cli"
    if not binary.is_file():
        return None
    try:
        done = subprocess.run([str(binary), "--version"], capture_output=True, timeout=30,
                              check=False)
    except OSError:
        return None
    return binary if done.returncode == 0 else None


def missing_program(scenario: Scenario) -> str | None:
    """The first of the scenario's engines not installed, or None."""
    for program in scenario.programs():
        if shutil.which(program, path=ENGINE_PATH) is None:
            return program
    return None


def argv(scenario: Scenario, logs: Sequence[Path]) -> list[str]:
    """The words after the program's name, each engine wrapped by the recorder."""
    words: list[str] = []
    for (program, *extra), log in zip(scenario.engines, logs, strict=True):
        engine = shutil.which(program, path=ENGINE_PATH)
        assert engine is not None
        words += ["-engine", f"cmd={sys.executable}", f"arg={RECORDER}", f"arg={log}",
                  f"arg={engine}", "proto=xboard", *extra]
    return [*words, "-each", *scenario.each, "-games", "1", "-maxmoves", "3", *scenario.rest]


def play(tool: str, scenario: Scenario, tmp: Path) -> tuple[list[Path], str]:
    """Play the scenario's one game with ``cutechess-cli`` (the real one) or
    ``runner-cutechess`` (ours, run from this checkout); the engines' input files and the
    tool's output."""
    folder = tmp / tool
    folder.mkdir(parents=True, exist_ok=True)
    logs = [folder / f"engine{n}.in" for n in (1, 2)]
    words = argv(scenario, logs)
    if tool == "cutechess-cli":
        binary = cutechess_cli()
        assert binary is not None
        command = [str(binary), *words]
    else:
        command = [sys.executable, "-m", "runner", "cutechess", *words]
    env = dict(os.environ, PYTHONPATH=str(REPO), RUNNER_DB=str(folder / "runner.db"),
               PATH=ENGINE_PATH)
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, env=env,
                          timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL, check=False)
    return logs, done.stdout + done.stderr


def dialogue(log: Path, book_plies: int = 0, *, clock_values: bool = True,
             features_by_chance: bool = False) -> list[str]:
    """The lines written to one engine's last process up to its first ``go``, normalised
    (see the module): the first `book_plies` moves are the opening's, any later one the
    opponent's choice; `clock_values` False writes ``time N`` for each ``time`` line;
    `features_by_chance` (see `Scenario`) drops what depends on the engine's features."""
    if not log.exists():
        return []
    lines = log.read_text(encoding="latin-1").splitlines()
    starts = [i for i, line in enumerate(lines) if line == "xboard"]
    lines = lines[starts[-1] if starts else 0:]
    out: list[str] = []
    moves = 0
    for index, line in enumerate(lines):
        if line.startswith(("accepted ", "rejected ", "ping ")):
            continue
        if features_by_chance:
            if line == "computer" or line.startswith("name "):
                continue
            line = line.removeprefix("usermove ")
        if _MOVE.fullmatch(line.removeprefix("usermove ")) and not _dummy(lines, index):
            moves += 1
            line = line if moves <= book_plies else "<move>"
        elif line.startswith("otim ") or (line.startswith("time ") and not clock_values):
            line = f"{line.split()[0]} N"
        out.append(line)
        if line == "go":
            break
    return out


def _dummy(lines: list[str], index: int) -> bool:
    """A move that only hands the turn to Black before a position is set up."""
    following = lines[index + 1] if index + 1 < len(lines) else ""
    return following == "edit" or following.startswith("setboard ")
