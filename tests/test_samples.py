"""Training samples (`runner export --format samples`): one ``FEN,score,result`` line per
chosen position, as c-chess-cli's ``-sample`` lays them out; python-chess checks the FENs."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import chess
import pytest
from conftest import REPO

from runner.report.samples import SampleFilter, game_samples
from runner.rules import Result


@dataclass(frozen=True)
class _Ply:
    uci: str
    score_cp: int | None = None
    mate: int | None = None


# 1. e4 (book) e5 (book) 2. Nf3 Nc6 3. Bc4 Nf6 4. Ng5 d5 5. exd5 Nxd5 6. Nxf7 Kxf7 7. Qf3+ Ke6
_GAME = [_Ply("e2e4"), _Ply("e7e5"), _Ply("g1f3", 30), _Ply("b8c6", -25), _Ply("f1c4", 35),
         _Ply("g8f6", -20), _Ply("f3g5", 60), _Ply("d7d5", -40), _Ply("e4d5", 55),
         _Ply("f6d5", -50), _Ply("g5f7", 80), _Ply("e8f7", -90), _Ply("d1f3", None, 7),
         _Ply("f7e6", -300)]


def _oracle_fens(plies: list[_Ply]) -> list[str]:
    board = chess.Board()
    fens = []
    for ply in plies:
        fens.append(board.fen())
        board.push_uci(ply.uci)
    return fens


def test_every_scored_ply_after_the_book_is_a_sample_with_the_mover_s_result() -> None:
    fens = _oracle_fens(_GAME)
    lines = list(game_samples(None, False, 2, _GAME, Result.WHITE_WINS))
    # Book plies 0-1 and the mate-scored ply 12 are left out.
    expected_plies = [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13]
    assert [line.rsplit(",", 2)[0] for line in lines] == [fens[i] for i in expected_plies]
    assert [int(line.rsplit(",", 2)[1]) for line in lines] == \
        [_GAME[i].score_cp for i in expected_plies]
    # White won: 2 where White is to move, 0 where Black is.
    assert [line.rsplit(",", 1)[1] for line in lines] == \
        ["2" if i % 2 == 0 else "0" for i in expected_plies]


def test_filters_leave_out_checks_captures_and_all_but_every_nth_ply() -> None:
    fens = _oracle_fens(_GAME)
    every = list(game_samples(None, False, 2, _GAME, Result.DRAW, SampleFilter(every=4)))
    assert [line.rsplit(",", 2)[0] for line in every] == [fens[4], fens[8]]
    assert all(line.endswith(",1") for line in every)
    quiet = list(game_samples(None, False, 2, _GAME, Result.BLACK_WINS,
                              SampleFilter(skip_check=True, skip_captures=True)))
    kept = [line.rsplit(",", 2)[0] for line in quiet]
    board = chess.Board()
    for ply in _GAME:
        if board.fen() in kept:
            assert not board.is_check() and not board.is_capture(chess.Move.from_uci(ply.uci))
        board.push_uci(ply.uci)
    # 5. exd5, 5... Nxd5, 6. Nxf7, 6... Kxf7 are captures, 7... Ke6 answers a check.
    assert fens[8] not in kept and fens[11] not in kept and fens[13] not in kept
    assert fens[2] in kept


def test_an_unfinished_game_gives_no_sample_and_a_bad_filter_is_refused() -> None:
    assert list(game_samples(None, False, 0, _GAME, Result.UNFINISHED)) == []
    with pytest.raises(ValueError, match="every"):
        SampleFilter(every=0)


def test_runner_export_writes_samples_of_a_real_run(tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text(
        'name = "s"\nformat = "round-robin"\nrounds = 1\ngames = 2\ntc = "2+0.02"\n'
        'concurrency = 2\n'
        '[[engines]]\nname = "one"\ncommand = ["python", "-m", "engine", "--level", "1"]\n'
        '[[engines]]\nname = "two"\ncommand = ["python", "-m", "engine", "--level", "2"]\n'
        '[adjudication]\nmaxmoves = 16\n')
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    db = f"sqlite:///{tmp_path / 'r.db'}"

    def runner(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "runner", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)

    assert runner("run", "t.toml", "--db", db, "--quiet").returncode == 0
    done = runner("export", "--format", "samples", "--skip-check", "--db", db)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines, done.stderr
    assert f"{len(lines)} positions of tournament 1 exported" in done.stderr
    for line in lines:
        fen, score, result = line.rsplit(",", 2)
        board = chess.Board(fen)
        assert board.is_valid() and not board.is_check(), line
        int(score)
        assert result in ("0", "1", "2"), line
    refused = runner("export", "--every", "2", "--db", db)
    assert refused.returncode != 0 and "--format samples" in refused.stderr
