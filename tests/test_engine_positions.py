"""What an engine is told of the position (issue 26): an opening a CECP engine without
``setboard`` cannot be told (castling rights lost with king and rook at home: ``edit`` gives
them back) stops the run before its first game, naming the engine, the opening and what to
do; an opening whose moves lose the rights is told as its root position and the moves, and is
played. Real engines over real pipes (Debian's fairymax, hoichess); skipped when absent.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, require_binary

from runner.books.openings import Opening
from runner.protocol.engine import EngineConfig
from runner.rules import STARTING_FEN, Board
from runner.tournament.events import TournamentError
from runner.tournament.pairing import match
from runner.tournament.positions import refuse_untellable_openings
from runner.types import Variant

UNTELLABLE = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w Kq - 0 1"
"""King and rooks at home, White's queenside and Black's kingside rights lost."""

BOOK = """rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1
rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1
rnbqkbnr/pppppppp/8/8/2P5/8/PP1PPPPP/RNBQKBNR b KQkq - 0 1
rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R b KQkq - 1 1
""" + UNTELLABLE + "\n"


def _match(tmp_path: Path, book: str, rounds: int) -> subprocess.CompletedProcess[str]:
    fairymax = require_binary("fairymax")
    return subprocess.run(
        [sys.executable, "-m", "runner", "match", "--engine", f"cmd={fairymax}", "name=fm1",
         "--engine", f"cmd={fairymax}", "name=fm2", "--each", "st=0.05", "--openings",
         f"file={book}", "--rounds", str(rounds), "--games", "2", "--db", "sqlite:///r.db"],
        cwd=tmp_path, capture_output=True, text=True, timeout=240,
        env={**os.environ, "PYTHONPATH": str(REPO)})


def _stored(tmp_path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(tmp_path / "r.db") as db:
        return list(db.execute("SELECT result, termination FROM games"))


@pytest.mark.timeout(300)
def test_an_untellable_fifth_opening_stops_the_run_before_game_one(tmp_path: Path) -> None:
    """Seen: games 1-4 were played, then the run stopped part-way at the fifth opening (and
    before that refusal, fairymax castled illegally and was forfeited)."""
    (tmp_path / "x.epd").write_text(BOOK)
    done = _match(tmp_path, "x.epd", rounds=5)
    out = done.stdout + done.stderr
    assert done.returncode == 2, out
    assert "Traceback" not in out
    text = " ".join(out.split())  # the terminal wraps the line
    assert "engine fm1 cannot be given opening 5" in text, out
    assert "x.epd:5" in text and UNTELLABLE in text and "setboard" in text, out
    assert "remove such positions from the book" in text, out
    assert _stored(tmp_path) == []
    assert "Started game" not in out


def _fairymax(tmp_path: Path, name: str) -> EngineConfig:
    workdir = tmp_path / name
    workdir.mkdir()
    return EngineConfig(name=name, argv=(require_binary("fairymax"),), working_dir=workdir,
                        quit_timeout=2.0, terminate_timeout=1.0)


def _hoichess(tmp_path: Path, name: str) -> EngineConfig:
    workdir = tmp_path / name
    workdir.mkdir()
    return EngineConfig(name=name, argv=(require_binary("hoichess"),), working_dir=workdir,
                        quit_timeout=2.0, terminate_timeout=1.0)


@pytest.mark.timeout(60)
def test_only_the_engine_without_setboard_is_refused_and_only_for_its_own_games(
        tmp_path: Path) -> None:
    """hoichess has setboard: it is told the position. A refusal names fairymax, and an
    untellable opening in a pair fairymax does not play (or has played) refuses nothing."""
    engines = {"hoi": _hoichess(tmp_path, "hoi"), "fm": _fairymax(tmp_path, "fm"),
               "hoi2": _hoichess(tmp_path, "hoi2")}
    opening = Opening(fen=UNTELLABLE, index=6, source="book.epd:7")
    pairing = match("hoi", "fm", games=8)
    with pytest.raises(TournamentError) as refused:
        asyncio.run(refuse_untellable_openings({3: opening}, {}, pairing, set(), engines,
                                               Variant.STANDARD))
    assert str(refused.value).startswith("engine fm cannot be given opening 7 (book.epd:7) ")
    assert "2 of its games" in str(refused.value)
    # Both games of pair 3 stored already (a resumed run): nothing left to refuse.
    asyncio.run(refuse_untellable_openings({3: opening}, {}, pairing, {6, 7}, engines,
                                           Variant.STANDARD))
    # A pair half played before (its opening stored with its first game): the other game is
    # refused too, the dealt opening for that pair giving way to the stored one.
    with pytest.raises(TournamentError, match="the stored opening of game pair 4 .*1 of its"):
        asyncio.run(refuse_untellable_openings({}, {3: Opening(fen=UNTELLABLE)}, pairing, {6},
                                               engines, Variant.STANDARD))
    asyncio.run(refuse_untellable_openings({3: opening}, {3: Opening(fen=BOOK.split("\n")[0])},
                                           pairing, {6}, engines, Variant.STANDARD))
    # Two engines with setboard: the same opening is told to them.
    asyncio.run(refuse_untellable_openings({3: opening}, {}, match("hoi", "hoi2", games=8),
                                           set(), engines, Variant.STANDARD))


PGN_BOOK = """[Event "rooks out and back"]
[Result "*"]

1. Nf3 Nf6 2. e3 e6 3. Be2 Be7 4. Rg1 Rg8 5. Rh1 Rh8 *

[Event "kings out and back"]
[Result "*"]

1. e3 e6 2. Ke2 Ke7 3. Ke1 Ke8 4. Nf3 Nf6 5. Be2 Be7 *
"""


@pytest.mark.timeout(300)
def test_a_pgn_opening_whose_moves_lose_castling_is_played_by_fairymax(tmp_path: Path) -> None:
    """The rights are lost by the book moves, so the engine is told the root position (``new``)
    and the moves, and knows them lost: no refusal, no illegal castling, every game stored.
    The same final positions as an EPD book are refused before the first game."""
    (tmp_path / "b.pgn").write_text(PGN_BOOK)
    done = _match(tmp_path, "b.pgn", rounds=4)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    stored = _stored(tmp_path)
    assert len(stored) == 8, out
    assert "illegal" not in out.lower(), out
    assert not [row for row in stored if "illegal" in str(row).lower()]


@pytest.mark.timeout(60)
def test_the_same_positions_without_their_moves_are_refused(tmp_path: Path) -> None:
    """The final positions of the PGN book above, given as bare positions, are what ``edit``
    would misstate: fairymax is refused them before the first game."""
    finals = {}
    for pair, moves in enumerate(("g1f3 g8f6 e2e3 e7e6 f1e2 f8e7 h1g1 h8g8 g1h1 g8h8",
                                  "e2e3 e7e6 e1e2 e8e7 e2e1 e7e8 g1f3 g8f6 f1e2 f8e7")):
        board = Board(STARTING_FEN)
        for move in moves.split():
            board.push(board.parse_uci(move))
        finals[pair] = Opening(fen=board.fen(), index=pair, source=f"finals.epd:{pair + 1}")
    engines = {"fm1": _fairymax(tmp_path, "fm1"), "fm2": _fairymax(tmp_path, "fm2")}
    with pytest.raises(TournamentError, match="engine fm1 cannot be given opening 1 "):
        asyncio.run(refuse_untellable_openings(finals, {}, match("fm1", "fm2", games=4), set(),
                                               engines, Variant.STANDARD))


@pytest.mark.timeout(300)
def test_on_dask_workers_the_run_also_stops_before_game_one(tmp_path: Path) -> None:
    """The check belongs to the tournament, not the scheduler: a run on a LocalCluster
    (``--workers 1``) stops alike, the engine started on the coordinator to read its features."""
    pytest.importorskip("distributed", reason="distributed is not installed (pip install "
                        "'.[cluster]')")
    fairymax = require_binary("fairymax")
    (tmp_path / "x.epd").write_text(BOOK)
    (tmp_path / "t.toml").write_text(
        'name = "cl"\nformat = "match"\nrounds = 5\ngames = 2\ntc = "st=0.05"\n'
        f'[[engines]]\nname = "fm1"\ncommand = ["{fairymax}"]\n'
        f'[[engines]]\nname = "fm2"\ncommand = ["{fairymax}"]\n'
        '[openings]\nfile = "x.epd"\n')
    done = subprocess.run(
        [sys.executable, "-m", "runner", "run", "t.toml", "--workers", "1", "--db",
         "sqlite:///r.db"], cwd=tmp_path, capture_output=True, text=True, timeout=240,
        env={**os.environ, "PYTHONPATH": str(REPO)})
    out = done.stdout + done.stderr
    assert done.returncode == 2, out
    assert "engine fm1 cannot be given opening 5" in " ".join(out.split()), out
    assert _stored(tmp_path) == []
