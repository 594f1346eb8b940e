"""The PGN move comments of the drop-ins take each move's score and depth from the engine's
lines as the peer takes them (issue 39: 367 of 879 comments of runner-fastchess showed a depth
one higher than fastchess's).

fastchess (``UciEngine::lastInfoLine``): every figure from one line, the last scored ``info``
of the first PV, an exact score preferred to a bound. cutechess-cli (``UciEngine::parseInfo``
merged line after line): the latest depth and the latest score, a bound noticed only when a
word follows it in the score. Checked on constructed lines, then against the real peers'
PGN on the same games: stockfish on one thread at a node limit plays the same games for
every tool and stops in the middle of a depth, where the rules differ.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import REPO, require_binary

from runner.clock import TimeControl
from runner.dropin.cutechess.pgn import cutechess_pgn
from runner.dropin.cutechess.results import cute_result
from runner.dropin.fastchess.pgn import game_pgn
from runner.dropin.fastchess.settings import FastchessSettings
from runner.game.record import GameRecord, GameSpec, GameTermination
from runner.protocol.engine import TranscriptEntry
from runner.rules import Result
from runner.types import MoveRecord

PEERS = REPO.parent / "shared" / "peers"
DEMO = REPO / "configs" / "openings" / "demo.epd"
T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)

_SEARCH = [  # what stockfish prints when a node limit stops it in the middle of depth 10
    "info depth 9 seldepth 12 multipv 1 score cp 28 nodes 9000 nps 90000 hashfull 3 "
    "tbhits 0 time 100 pv e2e4 e7e5",
    "info depth 10 seldepth 14 multipv 2 score cp 5 nodes 12000 pv d2d4",
    "info depth 10 seldepth 14 multipv 1 score cp 40 lowerbound nodes 15000 nps 91000 "
    "hashfull 4 tbhits 0 time 160 pv e2e4",
    "info string NNUE evaluation using nn.nnue",
    "bestmove e2e4 ponder e7e5",
]


def _record(lines: list[str]) -> GameRecord:
    """One game of one move (White's e2e4, its search's lines as given), then resigned."""
    sent = [TranscriptEntry(1.0, ">", "position startpos"), TranscriptEntry(1.0, ">", "go nodes 15000")]
    got = [TranscriptEntry(1.0 + n / 100, "<", text) for n, text in enumerate(lines)]
    move = MoveRecord(san="e4", uci="e2e4", score_cp=40, depth=10, time=0.2, nodes=15000,
                      seldepth=14)
    tc = TimeControl(nodes=15000)
    return GameRecord(white="a", black="b", spec=GameSpec(white_tc=tc, black_tc=tc),
                      moves=(move,), result=Result.WHITE_WINS,
                      termination=GameTermination.RESIGNATION, reason="b resigns",
                      started_at=T0, ended_at=T0, final_fen="",
                      protocol_lines=((*sent, *got), ()))


def _comment(pgn: str) -> str:
    found = re.search(r"\{([^}]*)\}", pgn)
    assert found, pgn
    return found.group(1)


def test_fastchess_takes_every_figure_from_the_last_exact_line_of_the_first_pv() -> None:
    settings = FastchessSettings(pgn_file="x.pgn", pgn_nodes=True, pgn_seldepth=True,
                                 pgn_nps=True, pgn_pv=True)
    comment = _comment(game_pgn(_record(_SEARCH), 1, settings, {}, {}))
    assert comment.startswith('+0.28/9 0.200s, n=9000, sd=12, nps=90000, pv="e2e4 e7e5"')
    only_bound = [line for line in _SEARCH if " depth 9 " not in line]
    assert _comment(game_pgn(_record(only_bound), 1, settings, {}, {})).startswith(
        '+0.40/10 0.200s, n=15000, sd=14, nps=91000, pv="e2e4"')
    # Nothing but the move: fastchess knows no figure for it.
    assert _comment(game_pgn(_record(["bestmove e2e4"]), 1, settings, {}, {})).startswith(
        '/0 0.200s, n=0, sd=0, nps=0, pv=""')


def test_cutechess_takes_the_latest_depth_and_score_of_the_first_pv() -> None:
    record = _record(_SEARCH)
    end = cute_result(record.result, record.termination, record.reason)
    assert _comment(cutechess_pgn(record, end)).startswith("+0.40/10 0.20s")
    noticed = [*_SEARCH[:2], "info depth 10 score lowerbound cp 40 nodes 15000 pv e2e4",
               "bestmove e2e4"]
    assert _comment(cutechess_pgn(_record(noticed), end)).startswith("+0.28/10 0.20s")


# ----------------------------------------------------------------------------- the real peers
def _book(tmp_path: Path) -> Path:
    path = tmp_path / "book.epd"
    path.write_text("".join(line for line in DEMO.read_text().splitlines(keepends=True)
                            if not line.startswith("#")))
    return path


def _play(program: list[str], argv: list[str], where: Path) -> str:
    where.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PATH": f"{os.environ.get('PATH', '')}:/usr/games",
           "PYTHONPATH": str(REPO), "RUNNER_DB": str(where / "runner.db")}
    done = subprocess.run([*program, *argv], cwd=where, env=env, capture_output=True,
                          text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return (where / "out.pgn").read_text()


def _comments(pgn: str) -> list[str]:
    """Every move comment with its time left out (the one figure that differs by run)."""
    return [re.sub(r" \d+(?:\.\d+)?s\b", "", text) for text in re.findall(r"\{([^}]*)\}", pgn)]


def _peer(name: str) -> list[str]:
    path = PEERS / name
    if not os.access(path, os.X_OK):
        pytest.skip(f"{name} is absent ({path}; see ../shared/peers/README.md)")
    return [str(path)]


@pytest.mark.slow  # CI time: about 27 s; the comment writer's own tests stay fast
def test_fastchess_comments_match_fastchess_on_the_same_games(tmp_path: Path) -> None:
    require_binary("stockfish")
    argv = ["-engine", "cmd=stockfish", "name=a", "-engine", "cmd=stockfish", "name=b",
            "-each", "tc=inf", "nodes=15000", "-rounds", "1", "-openings",
            f"file={_book(tmp_path)}", "format=epd", "-pgnout", "file=out.pgn"]
    theirs = _comments(_play(_peer("fastchess"), argv, tmp_path / "peer"))
    ours = _comments(_play([sys.executable, "-m", "runner", "fastchess"], argv,
                           tmp_path / "ours"))
    assert len(theirs) > 50
    assert ours == theirs


@pytest.mark.slow
def test_cutechess_comments_match_cutechess_on_the_same_games(tmp_path: Path) -> None:
    require_binary("stockfish")
    argv = ["-engine", "cmd=stockfish", "proto=uci", "name=a", "-engine", "cmd=stockfish",
            "proto=uci", "name=b", "-each", "tc=inf", "nodes=15000", "-rounds", "1", "-games",
            "2", "-repeat", "-openings", f"file={_book(tmp_path)}", "format=epd",
            "-pgnout", "out.pgn"]
    theirs = _comments(_play(_peer("cutechess-cli"), argv, tmp_path / "peer"))
    ours = _comments(_play([sys.executable, "-m", "runner", "cutechess"], argv,
                           tmp_path / "ours"))
    assert len(theirs) > 50
    assert ours == theirs
