"""Users' and engines' text reaches the terminal as itself: a ``[/]`` or ``[bold]`` in an engine
name, a tournament name, a configuration value or an engine's answer is printed, never read as
rich markup (an unmatched closing tag used to end the command with a MarkupError traceback),
and a ``:cat:`` is never turned into an emoji (rich does that even with markup off)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO

NAME = "v[/]2 [bold]x"


def _runner(*args: str, cwd: Path,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "runner", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=180, env={**os.environ, "PYTHONPATH": str(REPO),
                                                       "COLUMNS": "200", **(env or {})})


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


# -- every place foreign text reaches the terminal ------------------------------------------------

EVIL_CECP = """\
import sys
for line in sys.stdin:
    word = line.split()[0] if line.split() else ""
    if word == "protover":
        print('feature myname="[/]evil [bold]cecp" ping=1 usermove=1 done=1')
    elif word == "ping":
        print("pong " + line.split()[1])
    elif word in ("go", "usermove"):
        sys.stderr.write("[/] stderr [bold]noise\\n")
        print("1-0 {[/]claim [bold]x [link=http://e]y}")
    elif word == "quit":
        break
    sys.stdout.flush()
"""

EVIL_UCI = """\
import sys
for line in sys.stdin:
    word = line.split()[0] if line.split() else ""
    if word == "uci":
        print("id name [/]evil [bold]uci")
        print("option name Style[/]:cat: type combo default [b]a var [b]a var [/]c")
        print("uciok")
    elif word == "isready":
        print("readyok")
    elif word == "go":
        sys.stderr.write("[/] stderr [bold]noise\\n")
        if "--crash" in sys.argv:
            sys.exit(3)
        print("info string [/]hello")
        print("bestmove e2e4")
    elif word == "quit":
        break
    sys.stdout.flush()
"""

TOURNAMENT = "t[/] [bold]x [link=http://e]y :thumbs_up:"
CLAIMER = "a[/]b :cat: [red]"
MOVER = "[link=x]c:smile:"


def _hostile_tournament(tmp_path: Path) -> Path:
    """A tournament file whose every name is markup: a false claimer (CECP) against a UCI
    engine whose move as Black is illegal; the PGN goes to a directory with markup too."""
    (tmp_path / "cecp.py").write_text(EVIL_CECP)
    (tmp_path / "uci.py").write_text(EVIL_UCI)
    (tmp_path / "[bold]d" / "[").mkdir(parents=True)  # the pgnout's directory: not created
    config = tmp_path / "hostile.toml"
    config.write_text(
        f'name = "{TOURNAMENT}"\nformat = "match"\ntc = "depth=1"\ngames = 2\n'
        'pgnout = "[bold]d/[/]out.pgn"\n'
        f'[[engines]]\nname = "{CLAIMER}"\ncommand = ["python", "{tmp_path / "cecp.py"}"]\n'
        f'[[engines]]\nname = "{MOVER}"\nprotocol = "uci"\n'
        f'command = ["python", "{tmp_path / "uci.py"}"]\n')
    return config


def test_every_place_prints_foreign_text_as_written(tmp_path: Path) -> None:
    config = _hostile_tournament(tmp_path)
    db = ["--db", str(tmp_path / "h.db")]
    plain = _runner("run", str(config), *db, cwd=tmp_path)  # per-game lines and summary
    assert plain.returncode == 0, plain.stderr
    assert f"Finished game 1 ({CLAIMER} vs {MOVER})" in plain.stderr
    assert "[/]claim [bold]x [link=http://e]y" in plain.stderr  # the claim's comment
    assert f"Score of {CLAIMER} vs {MOVER}" in plain.stdout
    assert "[/]claim" in (tmp_path / "[bold]d" / "[/]out.pgn").read_text()
    live = _runner("run", str(config), *db, "--new", cwd=tmp_path,
                   env={"TTY_COMPATIBLE": "1", "TTY_INTERACTIVE": "1"})  # the live view
    assert live.returncode == 0, live.stderr
    assert "MarkupError" not in live.stderr and TOURNAMENT in live.stderr
    assert CLAIMER in live.stderr and MOVER in live.stderr
    resumed = _runner("resume", "1", *db, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert f"Resuming tournament 1 ({TOURNAMENT!r})" in resumed.stderr
    listed = _runner("list", *db, cwd=tmp_path)
    assert listed.returncode == 0 and TOURNAMENT in listed.stdout, listed.stderr
    report = _runner("report", "1", *db, cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert TOURNAMENT in report.stdout and f"{CLAIMER} vs {MOVER}" in report.stdout
    page = _runner("report", "1", "--format", "html", *db, cwd=tmp_path)
    assert page.returncode == 0 and "a[/]b :cat: [red]" in page.stdout, page.stderr
    exported = _runner("export", "1", "--engine", CLAIMER, *db, cwd=tmp_path)
    assert exported.returncode == 0 and "[/]claim" in exported.stdout, exported.stderr


def test_engine_check_prints_an_engines_words_as_written(tmp_path: Path) -> None:
    (tmp_path / "uci.py").write_text(EVIL_UCI)
    checked = _runner("engine", "check", "--proto", "uci", "--movetime", "0.1", "--",
                      sys.executable, str(tmp_path / "uci.py"), cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Style[/]:cat:" in checked.stdout and "[b]a | [/]c" in checked.stdout
    crashed = _runner("engine", "check", "--proto", "uci", "--movetime", "0.1", "--",
                      sys.executable, str(tmp_path / "uci.py"), "--crash", cwd=tmp_path)
    assert crashed.returncode == 1 and "Traceback" not in crashed.stderr
    assert "[/] stderr [bold]noise" in crashed.stdout  # the failure and the transcript
    assert "id name [/]evil [bold]uci" in crashed.stdout


def test_play_prints_engine_names_as_written(tmp_path: Path) -> None:
    played = _runner("play", "--engine", "cmd=python", "arg=-m", "arg=engine", "name=[/]w:cat:",
                     "--engine", "cmd=python", "arg=-m", "arg=engine", "name=[bold]b",
                     "--each", "depth=1", "--maxmoves", "2", cwd=tmp_path)
    assert played.returncode == 0, played.stderr
    assert "[/]w:cat: vs [bold]b:" in played.stderr and '[White "[/]w:cat:"]' in played.stdout
