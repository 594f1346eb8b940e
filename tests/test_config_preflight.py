"""What a run needs is checked before anything is played or stored (issue 21 items 12 and 14):
time controls with which a game can end, a name, writable output files, and opening books
that can serve every opening of the schedule. Each refusal names file, key and value, exits 2
without a traceback and leaves no tournament row behind."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from runner.cli.vocabulary import read_arguments
from runner.config.check import ConfigError
from runner.config.parse import load_config, parse_config

REPO = Path(__file__).resolve().parent.parent
ENGINE = '["python", "-m", "engine", "--level", "1"]'


def _toml(directory: Path, top: str = 'tc = "10+0.1"', tail: str = "",
          name: str = 'name = "t"') -> Path:
    path = directory / "t.toml"
    path.write_text(f'{name}\nformat = "match"\n{top}\n'
                    f'[[engines]]\nname = "a"\ncommand = {ENGINE}\n'
                    f'[[engines]]\nname = "b"\ncommand = {ENGINE}\n{tail}')
    return path


def _problems(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    return [str(problem) for problem in caught.value.problems]


def _runner(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "runner", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "1000"})


# -- item 12: games must be able to end; tournaments need a name ------------------------------


@pytest.mark.parametrize(("tc", "words"), [
    ("0", "gives no time at all"),
    ("0+0", "gives no time at all"),
    ("40/0", "gives no time at all"),
    ("inf", "no limit on thinking time"),
    ("infinite", "no limit on thinking time"),
    ("tc=inf timemargin=50", "no limit on thinking time"),
])
def test_time_controls_that_never_end_a_game_are_refused(tmp_path: Path, tc: str, words: str
                                                         ) -> None:
    problems = _problems(_toml(tmp_path, f'tc = "{tc}"'))
    assert len(problems) == 1
    assert problems[0].startswith(f'{tmp_path / "t.toml"}: tc = "{tc}": ') and words in problems[0]


@pytest.mark.parametrize("tc", ["inf depth=1", "tc=inf nodes=500", "depth=3", "st=1", "0+0.1",
                                "10+0.1", "40/60"])
def test_time_controls_that_end_a_game_are_accepted(tc: str) -> None:
    from runner.config.check import unfinishable

    assert unfinishable(tc) is None


def test_a_per_engine_limit_makes_an_infinite_tournament_clock_finishable(tmp_path: Path) -> None:
    path = _toml(tmp_path, 'tc = "inf"')
    text = path.read_text().replace(f"command = {ENGINE}\n", f'command = {ENGINE}\ntc = "depth=2"\n')
    path.write_text(text)
    config = load_config(path)
    assert [config.time_control(e).depth for e in config.engines] == [2, 2]
    # ...but one engine left with the infinite clock is refused, at the key it comes from.
    path.write_text(text.replace('tc = "depth=2"\n', "", 1))
    (problem,) = _problems(path)
    assert ': tc = "inf": no limit on thinking time' in problem
    path.write_text(text.replace('tc = "depth=2"', 'tc = "inf"', 1))
    (problem,) = _problems(path)
    assert ': engines[0].tc = "inf": no limit' in problem


def test_cutechess_tc_inf_with_depth_keeps_working_on_the_command_line() -> None:
    # The peers benchmark's form: -each tc=inf depth=1.
    words = ["--engine", "cmd=python", "arg=-m", "arg=engine", "--engine", "cmd=python",
             "arg=-m", "arg=engine", "--each", "tc=inf", "depth=1"]
    config = read_arguments(words, "match").config()
    assert config.time_control(config.engines[0]).depth == 1
    with pytest.raises(ConfigError, match="no limit on thinking time"):
        read_arguments(words[:-1], "match").config()


@pytest.mark.parametrize("name", ['name = ""', 'name = "   "'])
def test_an_empty_tournament_name_is_refused(tmp_path: Path, name: str) -> None:
    (problem,) = _problems(_toml(tmp_path, name=name))
    assert ": name = " in problem and "needs a name" in problem


def test_play_without_a_time_control_is_refused_at_once(tmp_path: Path) -> None:
    done = _runner("play", "--engine", "cmd=python", "arg=-m", "arg=engine", "--engine",
                   "cmd=python", "arg=-m", "arg=engine", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "engines[0].tc" in done.stderr and "--each tc=" in done.stderr
    assert "Traceback" not in done.stderr


# -- item 14: outputs and books checked before the first game and before any row --------------


def test_pgnout_that_cannot_be_written_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "a-dir").mkdir()
    # pgnout is taken from the directory the runner is started in: absolute paths here.
    for value, words in ((f"{tmp_path}/a-dir", "is a directory"),
                         (f"{tmp_path}/a-file/out.pgn", "is not a directory"),
                         ("", "name is empty"),
                         # Issue 31: as export -o, a missing directory is not created.
                         (f"{tmp_path}/new/dir/out.pgn", f"directory {tmp_path}/new/dir does not exist")):
        (problem,) = _problems(_toml(tmp_path, f'tc = "10+0.1"\npgnout = "{value}"'))
        assert f': pgnout = "{value}": the PGN output file' in problem and words in problem
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("path", ["/proc/version", "/proc/self/status"])
def test_a_pgnout_file_that_opens_but_refuses_writes_is_refused(tmp_path: Path,
                                                               path: str) -> None:
    # Issue 31: as root, files of /proc open for appending and fail at the first write, after
    # game 1 was played and stored; the check now writes nothing to them and sees the refusal.
    if not Path(path).is_file():
        pytest.skip(f"{path} is not there (no procfs)")
    (problem,) = _problems(_toml(tmp_path, f'tc = "10+0.1"\npgnout = "{path}"'))
    assert f': pgnout = "{path}": the PGN output file' in problem, problem
    assert "cannot" in problem, problem
    done = _runner("match", "--engine", "cmd=python -m engine --level 1", "name=a",
                   "--engine", "cmd=python -m engine --level 1", "name=b", "--each", "tc=10+0.1",
                   "--games", "2", "--pgnout", path, "--db", str(tmp_path / "r.db"), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert path in done.stderr and "Started game" not in done.stderr, done.stderr
    assert not (tmp_path / "r.db").exists()


def test_a_read_only_pgnout_file_is_refused_where_it_cannot_be_appended_to(
        tmp_path: Path) -> None:
    read_only = tmp_path / "ro.pgn"
    read_only.write_text("")
    read_only.chmod(0o444)
    try:
        os.close(os.open(read_only, os.O_WRONLY | os.O_APPEND))
    except PermissionError:
        (problem,) = _problems(_toml(tmp_path, f'tc = "10+0.1"\npgnout = "{read_only}"'))
        assert "not writable" in problem, problem
    else:
        pytest.skip("this user (root) may append to a read-only file: the run could write it")


def test_a_polyglot_file_of_a_partial_entry_is_refused(tmp_path: Path) -> None:
    (tmp_path / "odd.bin").write_bytes(bytes(33))
    (problem,) = _problems(_toml(tmp_path, tail='[openings]\nfile = "odd.bin"\n'))
    assert ': openings.file = "odd.bin": not a Polyglot book: 33 bytes' in problem


def _tournament_rows(db: Path) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(db) as connection:
        tables = {row[0] for row in connection.execute("select name from sqlite_master")}
        if "tournaments" not in tables:
            return 0
        return int(connection.execute("select count(*) from tournaments").fetchone()[0])


GOOD_FEN = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1"
C960 = "bqnb1rkr/pppppppp/8/8/8/8/PPPPPPPP/BQNB1RKR"
"""A Chess960 start (king g1, rooks f1 and h1) whose castling rights standard chess lacks."""


@pytest.mark.parametrize(("name", "text", "words"), [
    ("bad.epd", f"{GOOD_FEN}\n{GOOD_FEN}\nnot a position at all\n", "bad.epd:3: bad position"),
    ("check.epd", f"{GOOD_FEN}\n4k3/8/8/8/8/8/8/4K2r b - -\n", "side to move field 'b'"),
    ("bad.pgn", '[Event "a"]\n\n1. e4 e5 *\n\n[Event "b"]\n\n1. e4 Qxh8 *\n', "Qxh8"),
    ("fen.pgn", '[Event "a"]\n[FEN "8/8/8/8/8/8/8/8 w - - 0 1"]\n\n*\n', "white king, found 0"),
    # Chess960 positions in a standard tournament's book (issue 31): the book's own castling
    # field is named with its line, before any game (it used to stop the run at game 1).
    ("c960.epd", f"{GOOD_FEN}\n{C960} w KQkq - 0 1\n{GOOD_FEN}\n",
     "c960.epd:2: bad position 'bqnb1rkr/pppppppp/8/8/8/8/PPPPPPPP/BQNB1...': castling field "
     "'KQkq'"),
    ("shredder.epd", f"{GOOD_FEN}\n{GOOD_FEN}\n{C960} w HFhf - 0 1\n",
     "shredder.epd:3: bad position 'bqnb1rkr/pppppppp/8/8/8/8/PPPPPPPP/BQNB1...': castling "
     "field 'HFhf'"),
    ("c960.pgn", f'[Event "a"]\n\n1. e4 *\n\n[Event "b"]\n[SetUp "1"]\n[FEN "{C960} w HFhf - 0 1"]'
     '\n\n1. e4 *\n', "c960.pgn:5: FEN tag 'bqnb1rkr/pppppppp/8/8/8/8/PPPPPPPP/BQNB1...': "
     "castling field 'HFhf'"),
    # Openings already over (issue 31): each named with its line before any game is played.
    ("stalemate.epd", f"{GOOD_FEN}\n7k/5Q2/6K1/8/8/8/8/8 b - - 0 1\n",
     "stalemate.epd:2: the opening is already over (stalemate)"),
    ("mated.epd", f"{GOOD_FEN}\n{GOOD_FEN}\n7k/6Q1/6K1/8/8/8/8/8 b - - 0 1\n",
     "mated.epd:3: the opening is already over (checkmate)"),
    ("clock.epd", f"{GOOD_FEN}\n4k3/8/8/8/8/8/4P3/4K3 w - - 12 5\n",
     "clock.epd:2: halfmove clock 12 is more than the 8 plies a game has played by move 5"),
    ("mate.pgn", '[Event "a"]\n\n1. e4 *\n\n[Event "b"]\n\n1. f3 e5 2. g4 Qh4# *\n',
     "mate.pgn:5: the opening is already over (checkmate after its moves)"),
])
def test_a_book_that_cannot_serve_the_schedule_stops_the_run_before_any_row(
        tmp_path: Path, name: str, text: str, words: str) -> None:
    (tmp_path / name).write_text(text)
    config = _toml(tmp_path, 'tc = "10+0.1"\nrounds = 3',  # three pairs: every line is served
                   f'[openings]\nfile = "{name}"\n')
    db = tmp_path / "r.db"
    done = _runner("run", str(config), "--db", f"sqlite:///{db}", "--quiet", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and words in done.stderr, done.stderr
    assert f"{config}: openings.file" in done.stderr
    assert _tournament_rows(db) == 0


def test_export_to_an_unwritable_path_says_so_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "a-dir").mkdir()
    for target in ("a-dir", "missing/out.pgn"):
        done = _runner("export", "--out", target, "--db", f"sqlite:///{tmp_path / 'r.db'}",
                       cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert f"--out {target}: the file" in done.stderr and "Traceback" not in done.stderr


def test_parse_config_reports_every_preflight_problem_at_once(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config({"name": "", "format": "match", "tc": "inf", "pgnout": str(tmp_path),
                      "engines": [{"name": "a", "command": ["python"]},
                                  {"name": "b", "command": ["python"]}]},
                     source="cli")
    keys = sorted(problem.key for problem in caught.value.problems)
    assert keys == ["name", "pgnout", "tc"]


def test_maxmoves_is_read_at_the_top_as_on_the_command_line(tmp_path: Path) -> None:
    """Issue 31: --maxmoves is top-level on the command line and the README calls a word and
    its key the same; a file took it only under [adjudication]."""
    top = load_config(_toml(tmp_path, 'tc = "10+0.1"\nmaxmoves = 40'))
    assert top.adjudication.maxmoves == 40
    nested = load_config(_toml(tmp_path, tail="[adjudication]\nmaxmoves = 40\n"))
    assert nested.adjudication == top.adjudication and nested.fingerprint() == top.fingerprint()
    both = load_config(_toml(tmp_path, 'tc = "10+0.1"\nmaxmoves = 40',
                             "[adjudication]\nmaxmoves = 40\n"))
    assert both.adjudication.maxmoves == 40
    (problem,) = _problems(_toml(tmp_path, 'tc = "10+0.1"\nmaxmoves = 40',
                                 "[adjudication]\nmaxmoves = 50\n"))
    assert "maxmoves = 40: disagrees with adjudication.maxmoves = 50" in problem
    (problem,) = _problems(_toml(tmp_path, 'tc = "10+0.1"\nmaxmoves = 0'))
    assert problem.startswith(f"{tmp_path / 't.toml'}: maxmoves = 0")


@pytest.mark.parametrize(("fen", "over"), [
    ("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", None),
    ("4k3/8/8/8/8/8/4P3/4K3 w - - 1 1", "halfmove clock 1 is more than the 0 plies"),
    ("4k3/8/8/8/8/8/4P3/4K3 b - - 1 1", None),   # one ply played: a clock of 1 is reachable
    ("4k3/8/8/8/8/8/4P3/4K3 b - - 2 1", "halfmove clock 2 is more than the 1 plies"),
    ("4k3/8/8/8/8/8/4P3/4K3 w - - 8 5", None),
    ("4k3/8/8/8/8/8/4P3/4K3 b - - 9 5", None),
    ("4k3/8/8/8/8/8/4P3/4K3 b - - 10 5", "halfmove clock 10 is more than the 9 plies"),
    ("4k3/8/8/8/8/8/4P3/4K3 w - - 100 60", "fifty moves"),
    ("4k3/8/8/8/8/8/8/4K3 w - - 0 1", "insufficient material"),
])
def test_an_opening_no_game_can_be_played_from_is_told_why(fen: str, over: str | None) -> None:
    from runner.books.openings import Opening
    from runner.tournament.openings import opening_over

    why = opening_over(Opening(fen=fen, index=0, source="book.epd:1"))
    assert why == over if over is None else (why is not None and over in why)
