"""The cutechess vocabulary is read by one parser: ``runner play``, ``match``, ``gauntlet``,
``roundrobin`` and ``engine check`` accept the same words with the same meaning, find engines
by the same rule and list every word in their ``--help``."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO
from typer.testing import CliRunner

from runner.cli.app import app
from runner.cli.vocabulary import (
    OPTIONS,
    PLAY,
    TOURNAMENT,
    CommandLineError,
    read_arguments,
    read_engine,
)
from runner.config.check import ConfigError
from runner.config.model import Castling960Style
from runner.config.parse import load_config
from runner.config.programs import GAMES_DIRS, find_program, searched_places
from runner.pgn.reader import parse_games
from runner.tournament.runtime import adjudication_rules, engine_config

ENGINES = shlex.split(
    "--engine 'cmd=python -m engine' name=kxr castling960=kxr ponder=false "
    "--engine cmd=python arg=-m arg=engine arg=--level arg=1 name=oo option.Hash=16 "
    "--each tc=2+0.05 --draw movecount=8 score=10 --maxmoves 10")
COMMANDS = ("play", "match", "gauntlet", "roundrobin", "engine check")


def _runner(*args: str, cwd: Path, env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "runner", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})


def test_play_and_match_read_the_same_engine_keys_with_the_same_meaning() -> None:
    play = read_arguments(ENGINES, "play").config()
    match = read_arguments(ENGINES, "match").config()
    assert play.engines == match.engines
    assert play.adjudication == match.adjudication
    first, second = play.engines
    assert first.castling960 is Castling960Style.KXR and first.ponder is False
    assert second.castling960 is Castling960Style.OO and second.options == (("Hash", "16"),)
    assert engine_config(first).castling960 == "kxr" and engine_config(first).ponder is False
    assert first.command[0] == sys.executable and first.name == "kxr"
    # --draw without movenumber= starts at move 40 as a tournament file's draw table does.
    rules = adjudication_rules(play.adjudication)
    assert (rules.draw_move_number, rules.draw_move_count, rules.draw_score) == (40, 8, 10)
    assert rules.max_moves == 10
    pondering = read_arguments(["--engine", "cmd=python", "ponder=on", "--engine", "cmd=python",
                                "--each", "depth=1"],
                               "play").config()
    assert engine_config(pondering.engines[0]).ponder is True
    assert [e.name for e in pondering.engines] == ["python", "python-2"]


@pytest.mark.parametrize("words, message", [
    (["bogus=1"], "unknown engine key 'bogus' in 'bogus=1'"),
    (["tc"], "'tc' is not of the form key=value"),
])
def test_a_bad_engine_word_is_refused_with_one_message(words: list[str], message: str) -> None:
    args = ["--engine", "cmd=python", *words, "--engine", "cmd=python"]
    refused = {}
    for command in ("play", "match", "gauntlet", "roundrobin"):
        with pytest.raises(CommandLineError) as caught:
            read_arguments(args, command)
        refused[command] = str(caught.value)
    with pytest.raises(CommandLineError) as caught:
        read_engine(args[:-2])
    refused["engine check"] = str(caught.value)
    assert set(refused.values()) == {refused["play"]} and message in refused["play"]


def test_bad_values_are_reported_by_the_configuration_checks_for_every_command() -> None:
    args = ["--engine", "cmd=python", "castling960=e1g1", "proto=xboard", "--engine",
            "cmd=python", "--each", "tc=1+0", "--draw", "score=x"]
    for command in ("play", "match"):
        with pytest.raises(ConfigError) as caught:
            read_arguments(args, command).config()
        text = str(caught.value)
        assert 'engines[0].castling960 = "e1g1": expected one of: oo, kxr' in text
        assert 'adjudication.draw.score = "x": expected integer, not string' in text
    with pytest.raises(CommandLineError, match="--draw: 'moves=3' is not one of movenumber="):
        read_arguments(["--engine", "cmd=python", "--draw", "moves=3"], "play")
    with pytest.raises(CommandLineError, match="unknown option --openings for 'runner play'"):
        read_arguments(["--engine", "cmd=python", "--openings", "file=x.epd"], "play")


def test_tablebase_words_are_the_files_keys_for_play_and_the_tournaments(tmp_path: Path) -> None:
    """``-tb PATHS -tbpieces N -tbignore50 -tbadjudicate X`` (cutechess-cli's and
    fastchess's words) fill the same keys a file's [adjudication] table holds."""
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "KQvK.rtbw").write_bytes(b"")
    words = ["--engine", "cmd=python", "--engine", "cmd=python", "--each", "tc=1+0",
             "-tb", f"{tmp_path / 'a'}:{tmp_path / 'b'}", "-tbpieces", "5", "-tbignore50",
             "-tbadjudicate", "DRAW"]
    for command in ("play", "match", "gauntlet", "roundrobin"):
        arguments = read_arguments(words, command)
        assert arguments.table["adjudication"] == {
            "tablebases": f"{tmp_path / 'a'}:{tmp_path / 'b'}", "tbpieces": 5,
            "tbignore50": True, "tbadjudicate": "DRAW"}
        rules = adjudication_rules(arguments.config().adjudication)
        assert rules.tablebases == (str(tmp_path / "a"), str(tmp_path / "b"))
        assert (rules.tb_pieces, rules.tb_ignore_50, rules.tb_wins, rules.tb_draws) == \
            (5, True, False, True)
    with pytest.raises(ConfigError) as caught:
        read_arguments([*words[:6], "--tb", str(tmp_path / "none"), "--tbpieces", "x"],
                       "match").config()
    assert f'adjudication.tablebases = "{tmp_path / "none"}": no such directory' in str(caught.value)
    assert 'adjudication.tbpieces = "x": expected integer' in str(caught.value)
    with pytest.raises(CommandLineError, match="--tbignore50 takes no value"):
        read_arguments([*words[:6], "--tbignore50", "yes"], "match")


@pytest.mark.timeout(60)
def test_play_and_match_refuse_an_unknown_key_with_the_same_message(tmp_path: Path) -> None:
    args = ["--engine", "cmd=python", "bogus=1", "--engine", "cmd=python", "--each", "tc=1+0"]
    play = _runner("play", *args, cwd=tmp_path)
    match = _runner("match", *args, "--db", f"sqlite:///{tmp_path / 'r.db'}", cwd=tmp_path)
    assert play.returncode == match.returncode == 2
    assert "unknown engine key 'bogus'" in play.stderr
    assert play.stderr == match.stderr
    assert not (tmp_path / "r.db").exists()


@pytest.mark.timeout(180)
def test_play_and_match_run_the_same_words_end_to_end(tmp_path: Path) -> None:
    play = _runner("play", *ENGINES, cwd=tmp_path)
    assert play.returncode == 0, play.stderr
    games = parse_games(play.stdout)
    assert len(games) == 1 and games[0].ok
    assert games[0].tags["White"] == "kxr" and games[0].tags["Black"] == "oo"
    assert len(games[0].uci_moves) <= 20
    match = _runner("match", *ENGINES, "--rounds", "1", "--db", f"sqlite:///{tmp_path / 'r.db'}",
                    "--quiet", cwd=tmp_path)
    assert match.returncode == 0, match.stderr
    line = next(line for line in match.stdout.splitlines() if line.startswith("Score of "))
    assert line.startswith("Score of kxr vs oo: ") and line.endswith(" 2")


@pytest.mark.timeout(60)
def test_engine_check_reads_an_engine_in_the_vocabulary(tmp_path: Path) -> None:
    done = _runner("engine", "check", "--movetime", "0.2", "--engine", "cmd=python -m engine",
                   "arg=--uci", "proto=uci", "option.Hash=8", "name=bundled", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "UCI_Chess960" in done.stdout and "legal (" in done.stdout


def _debian_only(program: str) -> str:
    """The program's path in /usr/games or /usr/local/games, or skip."""
    for folder in GAMES_DIRS:
        if os.access(Path(folder) / program, os.X_OK):
            return str(Path(folder) / program)
    pytest.skip(f"{program} is not installed in {' or '.join(GAMES_DIRS)}")


def test_cmd_fairymax_is_found_in_usr_games_by_every_command(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    expected = _debian_only("fairymax")
    # A login shell's PATH often lacks /usr/games: the lookup must not depend on it.
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    args = ["--engine", "cmd=fairymax", "--engine", "cmd=fairymax", "--each", "tc=1+0"]
    for command in ("play", "match", "gauntlet", "roundrobin"):
        config = read_arguments(args, command).config()
        assert [e.command[0] for e in config.engines] == [expected, expected], command
        assert [e.name for e in config.engines] == ["fairymax", "fairymax-2"]
    assert read_engine(args[:2]).command == (expected,)
    toml = tmp_path / "t.toml"
    toml.write_text('format = "match"\ntc = "1+0"\n[[engines]]\nname = "a"\ncommand = "fairymax"\n'
                    '[[engines]]\nname = "b"\ncommand = ["fairymax", "-x"]\n')
    assert [e.command for e in load_config(toml).engines] == [(expected,), (expected, "-x")]


def test_find_program_is_one_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert find_program("python") == find_program("python3") == sys.executable
    tool = tmp_path / "bin" / "tool"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    assert find_program("bin/tool", base=tmp_path) == str(tool)
    assert find_program("./tool", directory=tool.parent) == str(tool)
    assert find_program("tool", directory=tool.parent) == str(tool)
    monkeypatch.setenv("PATH", str(tool.parent))
    assert find_program("tool") == str(tool)
    assert find_program("no-such-engine-xyz") is None
    assert searched_places("no-such-engine-xyz") == "on PATH or in /usr/games, /usr/local/games"
    assert searched_places("./x", base=tmp_path) == f"at {tmp_path / 'x'}"


@pytest.mark.parametrize("command", COMMANDS)
def test_every_word_of_the_vocabulary_is_in_the_help(command: str) -> None:
    done = CliRunner().invoke(app, [*command.split(), "--help"], env={"COLUMNS": "120"})
    assert done.exit_code == 0, done.output
    kind = {"play": PLAY, "engine check": "engine check"}.get(command, TOURNAMENT)
    options = [option for option in OPTIONS if kind in option.commands]
    assert options, command
    for option in options:
        assert f"--{option.name}" in done.output, (command, option.name)
        for key in option.keys:
            assert f"{key.name}=" in done.output, (command, option.name, key.name)
    assert "option.NAME=VALUE" in done.output and "castling960=oo|kxr" in done.output
    assert "ponder=true|false" in done.output
    if command != "engine check":
        assert "movenumber=N" in done.output and "default 40" in done.output
