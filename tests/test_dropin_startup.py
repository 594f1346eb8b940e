"""The drop-ins at the edges of a run (issue 39): an engine that cannot start is named with its
cause as the peer names it, and fastchess's ``Total Time`` counts the run's start-up.

The real peers (``../shared/peers``, skipped when absent) and the drop-ins run the same argv
and their lines are compared, the figures that vary with time masked.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, require_binary

PEERS = REPO.parent / "shared" / "peers"


def _env(where: Path) -> dict[str, str]:
    return {**os.environ, "PATH": f"{os.environ.get('PATH', '')}:/usr/games",
            "PYTHONPATH": str(REPO), "RUNNER_DB": str(where / "runner.db")}


def _run(program: list[str], argv: list[str], where: Path) -> subprocess.CompletedProcess[str]:
    where.mkdir(parents=True, exist_ok=True)
    return subprocess.run([*program, *argv], cwd=where, env=_env(where), capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL)


def _masked(text: str) -> list[str]:
    text = re.sub(r"Total Time: \S+", "Total Time: T", text)
    text = re.sub(r"run: \S+ -config", "run: P -config", text)
    return text.splitlines()


def _peer(name: str) -> list[str]:
    path = PEERS / name
    if not os.access(path, os.X_OK):
        pytest.skip(f"{name} is absent ({path}; see ../shared/peers/README.md)")
    return [str(path)]


@pytest.mark.parametrize("first", [["cmd=stockfsh", "name=a"], ["name=a"]],
                         ids=["misspelt", "no-cmd"])
def test_fastchess_engine_that_cannot_start_is_named_with_its_cause(
        first: list[str], tmp_path: Path) -> None:
    """``Started game 1 of 2``, then ``Fatal; a engine startup failure: "posix_spawn failed:
    No such file or directory"`` and the interrupted run's lines, exit 1: as fastchess."""
    require_binary("stockfish")
    argv = ["-engine", *first, "-engine", "cmd=stockfish", "name=b", "-each", "tc=1+0.01",
            "-rounds", "1"]
    theirs = _run(_peer("fastchess"), argv, tmp_path / "peer")
    ours = _run([sys.executable, "-m", "runner", "fastchess"], argv, tmp_path / "ours")
    assert 'Fatal; a engine startup failure: "posix_spawn failed: No such file or directory"' \
        in theirs.stdout.splitlines()
    assert _masked(ours.stdout) == _masked(theirs.stdout), ours.stderr
    assert ours.returncode == theirs.returncode == 1
    assert "Traceback" not in ours.stderr


def test_cutechess_engine_that_cannot_start_is_named_with_its_cause(tmp_path: Path) -> None:
    """An engine program that exists but cannot be run (its interpreter is missing):
    cutechess-cli's two-line warning on stderr, the match ended, exit 0."""
    require_binary("fairymax")
    program = tmp_path / "broken"
    program.write_text("#!/nonexistent/interpreter\n")
    program.chmod(0o755)
    argv = ["-engine", f"cmd={program}", "proto=xboard", "name=x", "-engine", "cmd=fairymax",
            "proto=xboard", "-each", "tc=40/2", "-rounds", "1"]
    theirs = _run(_peer("cutechess-cli"), argv, tmp_path / "peer")
    ours = _run([sys.executable, "-m", "runner", "cutechess"], argv, tmp_path / "ours")
    expected = ["Warning: Cannot start engine x:", f"Cannot execute command: {program}"]
    assert theirs.stderr.splitlines() == expected
    assert ours.stderr.splitlines() == expected
    assert ours.returncode == theirs.returncode == 0
    assert ours.stdout.splitlines()[-1] == "Finished match"


def test_fastchess_total_time_counts_the_start_up(tmp_path: Path) -> None:
    """fastchess's clock starts with its process: a drop-in that spent two seconds before its
    output existed prints at least two seconds (today's output counted from its own birth)."""
    script = """
import io, sys, time
time.sleep(2.2)
from runner.dropin.fastchess.output import FastchessOutput
from runner.dropin.fastchess.settings import EngineSummary, FastchessSettings
from runner.store import TournamentStatus
from runner.tournament.events import RunOutcome
from runner.tournament.scoreboard import Scoreboard
stream = io.StringIO()
settings = FastchessSettings(engines=(EngineSummary("a"), EngineSummary("b")))
output = FastchessOutput(stream, settings, probe=lambda engine: (None, {}))
outcome = RunOutcome(tournament_id=1, status=TournamentStatus.FINISHED, total_games=0,
                     done=0, played_now=0, scoreboard=Scoreboard(["a", "b"]))
output.run_ended(outcome, interrupted=False)
sys.stdout.write(stream.getvalue())
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=_env(tmp_path),
                          capture_output=True, text=True, timeout=120, check=True)
    found = re.search(r"Total Time: (\d\d):(\d\d):(\d\d)", done.stdout)
    assert found, done.stdout + done.stderr
    hours, minutes, seconds = (int(part) for part in found.groups())
    assert hours * 3600 + minutes * 60 + seconds >= 2
