"""cutechess-cli users' habits (issue 21 item 19) and a concurrency that cannot blow up (item 16).

cutechess-cli prints ``Score of A vs B: W - L - D  [ratio] N`` after every game of a match, a
ranking table for tournaments of more engines (every ``-ratinginterval`` games and at the end),
and takes ``-tournament``, ``-repeat``, ``-recover``, ``-srand`` and ``-ratinginterval``. The
runner does the same, whether or not its output is a terminal (here it never is).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from runner.cli.vocabulary import CommandLineError, read_arguments
from runner.config.model import TournamentFormat

pytestmark = pytest.mark.timeout(120)


def _engine(name: str) -> list[str]:
    return ["--engine", "cmd=python", "arg=-m", "arg=engine", "arg=--level", "arg=1",
            f"name={name}"]


def _runner(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "runner", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=110,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


SCORE = re.compile(r"^Score of a vs b: (\d+) - (\d+) - (\d+)  \[(\d\.\d{3})\] (\d+)$")


def test_a_match_prints_the_score_line_after_every_game(tmp_path: Path) -> None:
    done = _runner("match", *_engine("a"), *_engine("b"), "--each", "tc=2+0.05", "--rounds", "2",
                   "--ratinginterval", "2", "--db", str(tmp_path / "r.db"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    scores = [SCORE.match(line) for line in lines if line.startswith("Score of")]
    # One per game (4), then the final summary's.
    assert len(scores) == 5 and all(scores), lines
    counts = [int(m.group(5)) for m in scores if m]
    assert counts == [1, 2, 3, 4, 4]
    for match in scores:
        assert match is not None
        wins, losses, draws, games = (int(match.group(i)) for i in (1, 2, 3, 5))
        ratio = match.group(4)
        assert wins + losses + draws == games
        assert ratio == f"{(wins + draws / 2) / games:.3f}"
    # Every second game (--ratinginterval 2) the whole summary follows the score line.
    after = [lines[i + 1] for i, line in enumerate(lines[:-1]) if line.startswith("Score of")]
    assert sum(line.startswith("Elo difference:") for line in after) == 3


@pytest.mark.parametrize("command", ["roundrobin", "gauntlet"])
def test_tournaments_of_three_engines_print_a_ranking_table_off_a_terminal(
        tmp_path: Path, command: str) -> None:
    done = _runner(command, *_engine("a"), *_engine("b"), *_engine("c"), "--each", "tc=2+0.05",
                   "--concurrency", "2", "--db", str(tmp_path / "r.db"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("Rank Name"))
    assert lines[header].split() == ["Rank", "Name", "Elo", "+/-", "Games", "Score", "Draw"]
    rows = [line.split() for line in lines[header + 1:header + 4]]
    assert [row[0] for row in rows] == ["1", "2", "3"]
    assert sorted(row[1] for row in rows) == ["a", "b", "c"]
    games = {row[1]: int(row[4]) for row in rows}
    # A round-robin plays every pairing (2 games each); a gauntlet only a's.
    assert games == ({"a": 4, "b": 4, "c": 4} if command == "roundrobin"
                     else {"a": 4, "b": 2, "c": 2})


def test_cutechess_spellings_mean_what_they_mean_there() -> None:
    three = [*_engine("a"), *_engine("b"), *_engine("c"), "--each", "tc=1+0"]
    assert read_arguments([*three, "--tournament", "gauntlet"], "match").config().format \
        is TournamentFormat.GAUNTLET
    assert read_arguments([*three, "-tournament", "round-robin"], "match").config().format \
        is TournamentFormat.ROUND_ROBIN
    assert read_arguments([*three, "--tournament", "gauntlet"], "gauntlet").config().format \
        is TournamentFormat.GAUNTLET
    with pytest.raises(CommandLineError, match="contradicts 'runner gauntlet'"):
        read_arguments([*three, "--tournament", "round-robin"], "gauntlet")
    with pytest.raises(CommandLineError, match="--tournament 'knockout'"):
        read_arguments([*three, "--tournament", "knockout"], "match")
    # -repeat (alone or 2) is what every opening gets anyway; another count is refused.
    assert read_arguments([*three, "-repeat"], "roundrobin").config() \
        == read_arguments([*three, "-repeat", "2"], "roundrobin").config()
    with pytest.raises(CommandLineError, match="--repeat 4"):
        read_arguments([*three, "-repeat", "4"], "roundrobin")
    assert read_arguments([*three, "-recover"], "roundrobin").config().recover is True
    # -srand N seeds the random opening order, as --openings seed=N.
    book = ["--openings", f"file={REPO / 'configs' / 'openings' / 'demo.epd'}", "order=random"]
    seeded = read_arguments([*three, *book, "-srand", "42"], "roundrobin").config()
    assert seeded.openings is not None and seeded.openings.seed == 42
    with pytest.raises(CommandLineError, match="disagree"):
        read_arguments([*three, *book, "seed=7", "-srand", "42"], "roundrobin")
    assert read_arguments([*three, "-ratinginterval", "10"], "match").rating_interval == 10
    with pytest.raises(CommandLineError, match="--ratinginterval"):
        read_arguments([*three, "-ratinginterval", "-1"], "match")


def test_a_huge_concurrency_is_capped_at_the_games_with_one_warning_line(tmp_path: Path) -> None:
    """Issue 21 item 16: --concurrency 1000000 for a 4-game schedule used to take minutes and
    gigabytes; it runs as 4 slots, and says in one line that they outnumber the cores."""
    done = _runner("match", *_engine("a"), *_engine("b"), "--each", "tc=2+0.05", "--rounds", "2",
                   "--concurrency", "1000000", "--db", str(tmp_path / "r.db"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("concurrency")]
    cores = os.cpu_count() or 1
    if cores < 4:
        assert len(warnings) == 1, done.stderr
        assert "capped at 4" in warnings[0] and f"{cores} CPU core" in warnings[0]
    else:
        assert len(warnings) == 1 and "capped at 4" in warnings[0], done.stderr
    assert "4 of 4 games stored" in done.stderr


def test_a_minutes_seconds_time_control_plays_and_tags_seconds(tmp_path: Path) -> None:
    # cutechess-cli's 0:10+0.1 (10 s + 0.1 s): accepted on the command line, and the PGN
    # TimeControl tag is written in seconds as cutechess-cli writes it.
    pgn = tmp_path / "out.pgn"
    done = _runner("match", *_engine("a"), *_engine("b"), "--each", "tc=0:10+0.1",
                   "--games", "2", "--pgnout", str(pgn), "--db", str(tmp_path / "r.db"),
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    tags = re.findall(r'^\[TimeControl "([^"]*)"\]$', pgn.read_text(), re.MULTILINE)
    assert tags == ["10+0.1", "10+0.1"]
