"""The report's time diagnostics per engine (issue 43): the clock each move was asked with,
the time share, the least time left, moves near the flag and the selective depth, per worker
where games ran on several; on hand-made records and rows, then on a real gauntlet of Debian
engines checked against its stored moves counted here."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import REPO, require_binary

from runner.clock import TimeControl
from runner.game.record import GameRecord, GameSpec, GameTermination
from runner.report.build import search_figures
from runner.rules import Result
from runner.store import Database
from runner.store.models import EngineRow, GameRow, MoveRow, TournamentRow
from runner.store.queries import SearchTotals, search_totals
from runner.store.records import GameStatus
from runner.types import MoveRecord

T0 = datetime(2026, 11, 28, tzinfo=UTC)


def _record(moves: tuple[MoveRecord, ...], *, fen: str | None = None, head_start: bool = False,
            tc: str = "10+0.5") -> GameRecord:
    control = TimeControl.parse(tc)
    return GameRecord(white="w", black="b",
                      spec=GameSpec(white_tc=control, black_tc=control, start_fen=fen,
                                    clock_head_start=head_start),
                      moves=moves, result=Result.DRAW, termination=GameTermination.ADJUDICATION,
                      reason="", started_at=T0, ended_at=T0, final_fen="")


def test_each_move_is_asked_with_what_the_mover_s_previous_move_left() -> None:
    moves = (MoveRecord(san="e4", book=True), MoveRecord(san="e5", book=True),
             MoveRecord(san="Nf3", time=2.0, time_left=8.5),
             MoveRecord(san="Nc6", time=1.0, time_left=9.5),
             MoveRecord(san="Bb5", time=8.0, time_left=1.0),
             MoveRecord(san="a6", time=0.5, time_left=9.5))
    assert _record(moves).clocks_asked() == (None, None, 10.0, 10.0, 8.5, 9.5)
    # cutechess's clock starts with one increment more; Black to move first in the FEN.
    fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    black_first = (MoveRecord(san="e5", time=1.0, time_left=9.0),
                   MoveRecord(san="Nf3", time=3.0, time_left=7.5),
                   MoveRecord(san="Nc6", time=1.0, time_left=8.5))
    assert _record(black_first, fen=fen, head_start=True).clocks_asked() == (10.5, 10.5, 9.0)
    untimed = (MoveRecord(san="e4", time=0.1), MoveRecord(san="e5", time=0.1))
    assert _record(untimed, tc="depth=2").clocks_asked() == (None, None)


def _totals(engine: str, worker: str | None, moves: int, **sums: float) -> SearchTotals:
    base = dict(depth_sum=0, depth_moves=0, time_ms=moves * 100, nodes=0, node_time_ms=0)
    return SearchTotals(engine, moves, worker=worker, **{**base, **sums})  # type: ignore[arg-type]


def test_an_engine_s_figures_add_its_workers_and_are_shown_per_worker_when_several() -> None:
    rows = [_totals("a", "w1", 10, seldepth_sum=60, seldepth_moves=10, share_sum=1.0,
                    clock_moves=10, least_left_ms=400, near_flag=1),
            _totals("a", "w2", 30, seldepth_sum=90, seldepth_moves=10, share_sum=3.0,
                    clock_moves=30, least_left_ms=-5, near_flag=2),
            _totals("b", "w1", 20)]
    overall, per_worker = search_figures(rows, ["a", "b"])
    a, b = overall
    assert (a.moves, a.mean_seldepth, a.least_left_ms, a.near_flag) == (40, 7.5, -5, 3)
    assert a.mean_time_share == pytest.approx(0.1)
    assert (b.mean_seldepth, b.mean_time_share, b.least_left_ms, b.near_flag) == (None, None,
                                                                                  None, 0)
    assert [(s.worker, s.engine, s.moves) for s in per_worker] == [
        ("w1", "a", 10), ("w1", "b", 20), ("w2", "a", 30)]
    alone, none = search_figures([_totals("a", None, 5)], ["a", "b"])
    assert [s.engine for s in alone] == ["a"] and none == ()


def test_the_store_sums_time_shares_least_left_and_moves_near_the_flag(any_db: Database) -> None:
    """Hand-made rows, on SQLite and PostgreSQL: a book move (White's), then Black's moves
    asked with 10 s, 4 s, 0.5 s and 10 s on the clock and White's without a clock."""
    with any_db.session() as session:
        tournament = TournamentRow(name="t", config={}, fingerprint="f")
        session.add(tournament)
        session.flush()
        white = EngineRow(tournament_id=tournament.id, name="w", command=["w"])
        black = EngineRow(tournament_id=tournament.id, name="b", command=["b"])
        session.add_all([white, black])
        session.flush()
        game = GameRow(tournament_id=tournament.id, job_index=0, round=1, pair_index=0,
                       game_in_pair=0, white_id=white.id, black_id=black.id, opening_index=0,
                       status=GameStatus.DONE, worker="node-1")
        session.add(game)
        session.flush()
        # (time, clock when asked, clock after with the increment, seldepth)
        plies = [(None, None, None, None),  # a book move: not counted
                 (2000, 10000, 8500, 12), (100, None, None, None),
                 (3700, 4000, 800, 9), (100, None, None, 5),
                 (480, 500, 520, None), (100, None, None, None),
                 (10, 10000, 10490, 20)]
        for ply, (time_ms, clock, left, sel) in enumerate(plies, start=1):
            session.add(MoveRow(game_id=game.id, ply=ply, san="x", uci="a1a1", time_ms=time_ms,
                                clock_ms=clock, time_left_ms=left, seldepth=sel))
        totals = {t.engine: t for t in search_totals(session, tournament.id)}
    b, w = totals["b"], totals["w"]
    assert w.worker == b.worker == "node-1"
    assert (w.moves, w.clock_moves, w.seldepth_moves, w.seldepth_sum) == (3, 0, 1, 5)
    assert (b.moves, b.clock_moves, b.seldepth_moves, b.seldepth_sum) == (4, 4, 3, 41)
    assert b.share_sum == pytest.approx(2000 / 10000 + 3700 / 4000 + 480 / 500 + 10 / 10000)
    # Left after each search: 8000, 300 (7.5% of 4000: not near), 20 (4% of 500 and of the
    # 500 ms added: near), 9990.
    assert (b.least_left_ms, b.near_flag) == (20, 1)
    assert w.least_left_ms is None and w.near_flag == 0


def _runner(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "runner", *args], cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True,
                          text=True, timeout=300)


def test_a_gauntlet_of_debian_engines_reports_its_clocks_as_stored(tmp_path: Path) -> None:
    stockfish, fairymax = require_binary("stockfish"), require_binary("fairymax")
    (tmp_path / "t.toml").write_text(
        'name = "d"\nformat = "gauntlet"\nrounds = 1\ngames = 2\ntc = "2+0.05"\n'
        'concurrency = 2\n'
        f'[[engines]]\nname = "sf"\ncommand = ["{stockfish}"]\nprotocol = "uci"\n'
        f'[[engines]]\nname = "fmax"\ncommand = ["{fairymax}"]\n'
        '[adjudication]\nmaxmoves = 20\n')
    db = tmp_path / "r.db"
    run = _runner(tmp_path, "run", "t.toml", "--db", f"sqlite:///{db}", "--quiet")
    assert run.returncode == 0, run.stdout + run.stderr
    done = _runner(tmp_path, "report", "--format", "json", "--db", f"sqlite:///{db}")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    search = {s["engine"]: s for s in report["search"]}
    assert report["search_by_worker"] == []
    with sqlite3.connect(db) as conn:
        names = dict(conn.execute("select id, name from engines"))
        rows = conn.execute(
            "select g.white_id, g.black_id, m.ply, m.time_ms, m.clock_ms, m.time_left_ms, "
            "m.seldepth from moves m join games g on g.id = m.game_id "
            "where g.status = 'done' and m.time_ms is not null").fetchall()
    own: dict[str, list[tuple[int, int, int, int | None]]] = {}
    for white, black, ply, time_ms, clock, left, sel in rows:
        assert clock is not None and left is not None, "every timed move has its clocks"
        own.setdefault(names[white if ply % 2 else black], []).append((time_ms, clock, left, sel))
    assert set(own) == set(search) == {"sf", "fmax"}
    for name, moves in own.items():
        got = search[name]
        assert got["moves"] == len(moves)
        assert got["least_left_ms"] == min(c - t for t, c, _, _ in moves)
        assert got["mean_time_share"] == pytest.approx(sum(t / c for t, c, _, _ in moves)
                                                       / len(moves))
        near = sum(1 for t, c, left, _ in moves
                   if c - t < 0.05 * c or c - t < 0.05 * (left - (c - t)))
        assert got["near_flag"] == near
        sels = [s for *_, s in moves if s is not None]
        assert got["mean_seldepth"] == (sum(sels) / len(sels) if sels else None)
    assert search["sf"]["mean_seldepth"] is not None, "stockfish reports its seldepth"
    text = _runner(tmp_path, "report", "--db", f"sqlite:///{db}")
    assert "Near flag" in text.stdout and "Time/clock" in text.stdout, text.stdout
