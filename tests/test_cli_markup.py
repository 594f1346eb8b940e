"""Users' and engines' text reaches the terminal as itself: a ``[/]`` or ``[bold]`` in an engine
name, a tournament name, a configuration value or an engine's answer is printed, never read as
rich markup (an unmatched closing tag used to end the command with a MarkupError traceback)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO

NAME = "v[/]2 [bold]x"


def _runner(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "runner", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=180, env={**os.environ, "PYTHONPATH": str(REPO),
                                                       "COLUMNS": "200"})


def test_engine_and_tournament_names_with_markup_print_as_written(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'm.db'}"
    played = _runner("match", "--engine", "cmd=python", "arg=-m", "arg=engine", f"name={NAME}",
                     "--engine", "cmd=python", "arg=-m", "arg=engine", "arg=--level", "arg=1",
                     "name=[red]other", "--each", "depth=1", "--maxmoves", "8", "--games", "2",
                     "--db", db, cwd=tmp_path)
    assert played.returncode == 0, played.stderr
    assert "MarkupError" not in played.stderr
    assert f"Score of {NAME} vs [red]other" in played.stdout
    listed = _runner("list", "--db", db, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    report = _runner("report", "--db", db, cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert NAME in report.stdout and "[red]other" in report.stdout


def test_a_config_error_quoting_markup_is_printed_whole(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text('name = "t"\nformat = "match"\ntc = "[/]"\n'
                      '[[engines]]\nname = "a"\ncommand = ["python", "-m", "engine"]\n'
                      '[[engines]]\nname = "b"\ncommand = ["python", "-m", "engine"]\n')
    result = _runner("run", str(config), "--db", f"sqlite:///{tmp_path / 'x.db'}", cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "[/]" in result.stderr and "tc" in result.stderr


def test_a_bad_database_url_with_markup_is_reported(tmp_path: Path) -> None:
    result = _runner("list", "--db", "nosuch[/]://x", cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "nosuch[/]://x" in result.stderr
