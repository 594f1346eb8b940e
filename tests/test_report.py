"""Tournament reports over real SQLite databases filled through the store's recording API.

Each tournament's games are chosen by hand (who wins which game, how it ends, how long it
lasts), so every figure of the report is checked against counts worked out here and against
`runner.stats` called directly. The HTML page is opened in a real headless browser (Debian's
chromium): a copy of it with a measuring script appended reports the plots' sizes from the
browser's layout, and a screenshot of the page itself is checked to hold a real picture.
"""

from __future__ import annotations

import json
import math
import os
import re
import struct
import subprocess
import sys
import tracemalloc
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from statistics import NormalDist
from typing import Any

import pytest
from conftest import require_binary
from sqlalchemy import insert, select
from typer.testing import CliRunner

from runner.cli.app import app
from runner.clock import TimeControl
from runner.config.model import TournamentFormat
from runner.game.record import GameRecord, GameSpec, GameTermination
from runner.report.build import Report, ReportError, build_report, headline_counts
from runner.report.render import render_html, render_json, render_text, report_json
from runner.rules import Result
from runner.stats import (
    Z95,
    EloModel,
    Pentanomial,
    SprtSpec,
    Trinomial,
    match_stats,
    rate_engines,
    sprt,
)
from runner.stats import Pairing as RatedPairing
from runner.store import (
    Database,
    EngineRowValues,
    GameStatus,
    create_tournament,
    finish_tournament,
    open_database,
    record_game,
)
from runner.store.models import EngineRow, GameRow
from runner.store.store import ReportRows
from runner.tournament.pairing import Pairing, ScheduledGame, gauntlet, match, round_robin
from runner.tournament.scoreboard import Scoreboard
from runner.types import MoveRecord

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
SPRT_CONFIG = {"elo0": 0.0, "elo1": 10.0, "alpha": 0.05, "beta": 0.05, "model": "normalized",
               "maxgames": 400}


@dataclass(frozen=True)
class Planned:
    """One game as the test wants it: the first-listed engine's score, how it ends, length."""

    score: float
    """Score of the encounter's first-listed engine (1, 0.5 or 0)."""
    termination: str
    plies: int
    reason: str = ""


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    """An empty, migrated SQLite database in a temporary directory."""
    database = open_database(f"sqlite:///{tmp_path / 'runner.db'}")
    try:
        yield database
    finally:
        database.close()


def _result(job: ScheduledGame, first: str, score: float) -> Result:
    """The PGN result of `job` when engine `first` scores `score`."""
    return Result.from_white_points(score if job.white == first else 1 - score)


def _record(job: ScheduledGame, result: str, termination: str, start: datetime, *,
            plies: int = 0, seconds: float = 30, reason: str = "") -> GameRecord:
    """The game loop's record of a game of `job` ending as asked, `plies` long."""
    control = TimeControl.parse("10+0.1")
    return GameRecord(
        white=job.white, black=job.black, spec=GameSpec(control, control),
        moves=(MoveRecord("e4", uci="e2e4"),) * plies, result=result,
        termination=GameTermination(termination), reason=reason, started_at=start,
        ended_at=start + timedelta(seconds=seconds), final_fen="8/8/8/8/8/8/8/8 w - - 0 1")


def _store(db: Database, schedule: Pairing, engines: Sequence[str], plan: Sequence[Planned],
           *, fmt: str, sprt_config: dict[str, object] | None = None, name: str = "t",
           minutes_between: int = 1) -> int:
    """A tournament whose jobs are played as `plan` says (one entry per job, in order)."""
    config: dict[str, object] = {"name": name, "format": fmt,
                                 "engines": [{"name": e} for e in engines], "sprt": sprt_config}
    with db.session() as session:
        tid = create_tournament(session, name=name, config=config, fingerprint=f"fp-{name}",
                                engines=[EngineRowValues(e, ["engine", e]) for e in engines],
                                total_games=schedule.total()).id
    for job, want in zip(schedule.jobs(), plan, strict=False):
        first = schedule.encounters[job.encounter][0]
        start = T0 + timedelta(minutes=minutes_between * job.index)
        record = _record(job, _result(job, first, want.score), want.termination, start,
                         plies=want.plies, reason=want.reason)
        with db.session() as session:
            record_game(session, tid, job, record, pgn=f'[Event "{name}"]\n\n*\n')
    return tid


# -- a two-engine match: every number by hand --------------------------------------------------

# match("A", "B", games=10): pair k's first game has A as White for even k, B for odd k.
# A's scores per pair: WW, WD, DD, WL, LD -> W/D/L 4/4/2 = 6 points of 10;
# pentanomial [LL, LD, DD+WL, WD, WW] = [0, 1, 2, 1, 1], one of the DD+WL pairs a WL.
MATCH_PLAN = (
    Planned(1, "checkmate", 41),
    Planned(1, "time forfeit", 60, "White loses on time (5 ms over)"),  # B (White) flags
    Planned(1, "resignation", 80),
    Planned(0.5, "threefold repetition", 33),
    Planned(0.5, "stalemate", 120),
    Planned(0.5, "time forfeit", 95,  # B (White) flags, but A cannot mate
            "White loses on time, but Black cannot mate: draw (12 ms over)"),
    Planned(1, "adjudication", 70),
    Planned(0, "disconnect", 12, "A disconnects (exit code 11)"),
    Planned(0, "illegal move", 50, "White makes an illegal move: e1e3"),
    Planned(0.5, "adjudication", 100),
)


def _match(db: Database, stored_decision: str | None = None) -> int:
    tid = _store(db, match("A", "B", games=10), ["A", "B"], MATCH_PLAN, fmt="match",
                 sprt_config=SPRT_CONFIG)
    if stored_decision is not None:
        with db.session() as session:
            finish_tournament(session, tid, sprt_decision=stored_decision)
    return tid


def test_match_report_numbers_by_hand(any_db: Database) -> None:
    db = any_db
    schedule = match("A", "B", games=10)
    colors = [(job.white, job.black) for job in schedule]
    # The faults below are put down to the engine that held the color the plan names.
    assert colors[1] == ("B", "A") and colors[5] == ("B", "A")
    assert colors[7] == ("A", "B") and colors[8] == ("A", "B")
    tid = _match(db, stored_decision="H1")
    with db.session() as session:
        report = build_report(ReportRows(session), tid)

    assert report.format is TournamentFormat.MATCH and report.reference == "A"
    assert (report.games_played, report.games_planned) == (10, 10)
    (pairing,) = report.pairings
    assert (pairing.first, pairing.second) == ("A", "B")
    assert pairing.trinomial == Trinomial(4, 4, 2)
    assert pairing.pentanomial == Pentanomial(0, 1, 2, 1, 1, wl_pairs=1)
    penta_stats = match_stats(Pentanomial(0, 1, 2, 1, 1, wl_pairs=1))
    spec = SprtSpec(0.0, 10.0, 0.05, 0.05, EloModel.NORMALIZED)
    assert pairing.stats == match_stats(Pentanomial(0, 1, 2, 1, 1, wl_pairs=1), spec)
    assert pairing.wdl_stats == match_stats(Trinomial(4, 4, 2))
    assert pairing.wdl_stats is not None and pairing.wdl_stats.draw_ratio == pytest.approx(0.4)
    assert penta_stats.pair_draw_ratio == pytest.approx(2 / 5)  # the counts', not regularised
    assert report.draw_ratio == pytest.approx(0.4)

    first, second = report.standings
    assert (first.engine, first.reference, first.rank) == ("A", True, 1)
    assert (first.games, first.points, first.wins, first.draws, first.losses) == (10, 6, 4, 4, 2)
    assert first.score == pytest.approx(0.6)
    assert first.elo == 0.0 and first.elo_error95 is None and first.los is None
    assert (second.engine, second.points, second.wins, second.losses) == ("B", 4, 2, 4)
    mirrored = match_stats(Pentanomial(1, 1, 2, 1, 0, wl_pairs=1))  # B's own point of view
    assert second.elo == pytest.approx(mirrored.elo) == pytest.approx(-penta_stats.elo)
    assert second.elo_error95 == pytest.approx(penta_stats.elo_error95)
    assert second.los == pytest.approx(mirrored.los) == pytest.approx(1 - penta_stats.los)
    assert second.elo < 0

    assert report.sprt is not None
    expected = sprt(Pentanomial(0, 1, 2, 1, 1, wl_pairs=1), spec)
    assert report.sprt.result == expected
    assert report.sprt.stored_decision == "H1" and report.sprt.maxgames == 400
    assert (report.llr_series[-1].games, report.llr_series[-1].llr) == (10, expected.llr)
    assert [p.games for p in report.llr_series] == list(range(1, 11))
    # After game 1 (A wins, no pair complete yet) the LLR is that of W/D/L 1/0/0.
    assert report.llr_series[0].llr == pytest.approx(sprt(Trinomial(1, 0, 0), spec).llr)

    (series,) = report.elo_series
    assert series.label == "A vs B" and series.points[-1].games == 10
    assert series.points[-1].elo == pytest.approx(penta_stats.elo)
    assert series.points[-1].elo_error95 == pytest.approx(penta_stats.elo_error95)

    ends = {t.termination: (t.games, t.white_wins, t.black_wins, t.draws)
            for t in report.terminations}
    assert ends == {
        GameTermination.CHECKMATE: (1, 1, 0, 0), GameTermination.TIME_FORFEIT: (2, 0, 1, 1),
        GameTermination.RESIGNATION: (1, 0, 1, 0),
        GameTermination.THREEFOLD_REPETITION: (1, 0, 0, 1),
        GameTermination.STALEMATE: (1, 0, 0, 1), GameTermination.ADJUDICATION: (2, 0, 1, 1),
        GameTermination.DISCONNECT: (1, 0, 1, 0), GameTermination.ILLEGAL_MOVE: (1, 0, 1, 0),
    }
    assert [t.games for t in report.terminations] == sorted(
        (t.games for t in report.terminations), reverse=True)
    faults = {f.engine: f for f in report.faults}
    assert (faults["B"].time_forfeits, faults["B"].total) == (2, 2)  # lost one, drew one
    assert (faults["A"].crashes, faults["A"].illegal_moves, faults["A"].total) == (1, 1, 2)
    assert report.unattributed_faults == 0

    plies = [p.plies for p in MATCH_PLAN]
    assert report.mean_plies == pytest.approx(sum(plies) / 10)
    assert sum(b.games for b in report.lengths) == 10
    widths = {b.high - b.low + 1 for b in report.lengths}
    assert widths == {5}  # 12..120 plies: the first round width giving under 30 bins
    for low, high in ((10, 14), (95, 99), (120, 124)):
        (bin_,) = [b for b in report.lengths if b.low == low]
        assert bin_.games == sum(low <= n <= high for n in plies)


def test_tablebase_adjudications_are_counted_apart(db: Database) -> None:
    """Games the Syzygy tables ended are a termination of their own in every format, beside
    (not inside) the score adjudications."""
    plan = (Planned(1, "tablebase", 60, "White wins by adjudication: SyzygyTB"),
            Planned(0.5, "tablebase", 90, "Draw by adjudication: SyzygyTB"),
            Planned(0.5, "tablebase", 70, "Draw by adjudication: SyzygyTB"),
            Planned(1, "adjudication", 50, "White wins by adjudication"))
    tid = _store(db, match("A", "B", games=4), ["A", "B"], plan, fmt="match")
    with db.session() as session:
        report = build_report(ReportRows(session), tid)
    ends = {t.label: (t.games, t.draws) for t in report.terminations}
    assert ends == {"tablebase": (3, 2), "adjudication": (1, 0)}
    rows = {row["termination"]: row["games"] for row in report_json(report)["terminations"]}
    assert rows == {"tablebase": 3, "adjudication": 1}
    text = render_text(report, width=100)
    assert re.search(r"tablebase\s+│\s+3\s+│\s+1\s+│\s+0\s+│\s+2\b", text), text
    html = render_html(report)
    assert re.search(r">tablebase<.*?>3<", html, re.S), html[:2000]


def test_time_forfeit_draw_blames_the_flagging_side(db: Database) -> None:
    """Pair 2's second game: B is White, loses on time, A cannot mate: a draw put on B."""
    schedule = match("A", "B", games=10)
    assert schedule.job(5).white == "B"
    tid = _match(db)
    with db.session() as session:
        report = build_report(ReportRows(session), tid)
    assert {f.engine: f.time_forfeits for f in report.faults} == {"A": 0, "B": 2}


def test_json_round_trip_has_stats_keys_and_no_inf(db: Database) -> None:
    tid = _match(db)
    # A second tournament where one side wins every game: figures hit the clamps.
    sweep = [Planned(1, "checkmate", 30)] * 4
    _store(db, match("X", "Y", rounds=2), ["X", "Y"], sweep, fmt="match", name="sweep")
    with db.session() as session:
        report = build_report(ReportRows(session), tid)
        latest = build_report(ReportRows(session))
    assert latest.name == "sweep"
    for rep in (report, latest):
        text = render_json(rep)
        assert not re.search(r"\b(Infinity|NaN)\b", text)
        data = json.loads(text)
        assert data == report_json(rep)
        stats = data["pairings"][0]["stats"]
        assert set(stats) == {"games", "pairs", "score", "elo", "elo_error95", "los",
                              "draw_ratio", "pair_draw_ratio", "nelo", "nelo_error95", "sprt"}
    data = json.loads(render_json(report))
    assert data["pairings"][0]["pentanomial"] == [0, 1, 2, 1, 1]
    assert (data["pairings"][0]["wins"], data["pairings"][0]["draws"],
            data["pairings"][0]["losses"]) == (4, 4, 2)
    assert data["standings"][0]["score"] == pytest.approx(0.6)
    assert data["standings"][0]["los"] is None and data["standings"][0]["elo_error95"] is None
    assert set(data["sprt"]) >= {"llr", "lower_bound", "upper_bound", "decision"}
    assert data["sprt"]["decision"] == report.sprt.result.decision.value  # type: ignore[union-attr]
    assert data["draw_ratio"] == pytest.approx(0.4)
    swept = json.loads(render_json(latest))["pairings"][0]["stats"]
    assert swept["score"] == pytest.approx(2.0015 / 2.004) and math.isfinite(swept["elo"])
    assert swept["los"] == pytest.approx(1.0)


def test_empty_tournament_and_unknown_id(db: Database) -> None:
    tid = _store(db, match("A", "B"), ["A", "B"], [], fmt="match", sprt_config=SPRT_CONFIG)
    with db.session() as session:
        report = build_report(ReportRows(session), tid)
        with pytest.raises(ReportError, match="no tournament with id 99"):
            build_report(ReportRows(session), 99)
    assert report.games_played == 0 and report.pairings == () and report.draw_ratio is None
    assert [s.elo for s in report.standings] == [None, None]
    assert report.sprt is not None and report.sprt.result is None
    data = json.loads(render_json(report))
    assert data["sprt"]["llr"] is None and data["lengths"]["bins"] == []
    assert "A" in render_text(report) and "<svg" not in render_html(report)


def test_unscored_games_are_counted_apart(db: Database) -> None:
    """A stored '*' game (runner error) shows among terminations but not in the figures."""
    plan = [Planned(1, "checkmate", 20), Planned(0.5, "stalemate", 40)]
    schedule = match("A", "B", rounds=2)
    tid = _store(db, schedule, ["A", "B"], plan, fmt="match")
    with db.session() as session:
        record_game(session, tid, schedule.job(2), _record(
            schedule.job(2), "*", "error", T0 + timedelta(hours=1), seconds=0, reason="boom"))
        report = build_report(ReportRows(session), tid)
    assert report.games_played == 3
    assert report.pairings[0].trinomial == Trinomial(1, 1, 0)
    assert {t.termination: t.unfinished
            for t in report.terminations}[GameTermination.ERROR] == 1
    assert any("no result that scores" in note for note in report.notes)


# -- a round-robin of three engines and a gauntlet ---------------------------------------------


def test_round_robin_crosstable_and_ratings(any_db: Database) -> None:
    db = any_db
    engines = ["A", "B", "C"]
    schedule = round_robin(engines, rounds=2)
    wanted = {("A", "B"): 1.0, ("A", "C"): 0.5, ("B", "C"): 0.75}  # share of the points
    plan = []
    for job in schedule:
        first, second = schedule.encounters[job.encounter]
        share = wanted.get((first, second))
        if share is None:
            share = 1 - wanted[(second, first)]
        score = share if share in (0.0, 0.5, 1.0) else (1.0 if job.game_in_pair == 0 else 0.5)
        if share == 0.25:
            score = 0.0 if job.game_in_pair == 0 else 0.5
        plan.append(Planned(score, "adjudication", 60 + job.index))
    tid = _store(db, schedule, engines, plan, fmt="round-robin")
    with db.session() as session:
        report = build_report(ReportRows(session), tid)

    assert report.format is TournamentFormat.ROUND_ROBIN and report.games_played == 12
    pairs = {(p.first, p.second): p for p in report.pairings}
    assert pairs[("A", "B")].trinomial == Trinomial(4, 0, 0)
    assert pairs[("A", "C")].trinomial == Trinomial(0, 4, 0)
    assert pairs[("B", "C")].trinomial == Trinomial(2, 2, 0)
    assert pairs[("A", "B")].pentanomial.low_to_high == (0, 0, 0, 0, 2)
    assert pairs[("A", "C")].pentanomial.low_to_high == (0, 0, 2, 0, 0)
    assert pairs[("B", "C")].pentanomial.low_to_high == (0, 0, 0, 2, 0)

    assert report.crosstable is not None
    cells = report.crosstable.cells
    assert report.crosstable.engines == ("A", "B", "C")
    expected = [[None, (4, 4), (2, 4)], [(0, 4), None, (3, 4)], [(2, 4), (1, 4), None]]
    got = [[None if c is None else (c.points, c.games) for c in row] for row in cells]
    assert got == expected

    # Ratings anchored at the reference A, which sits at 0 (not at minus the average).
    ratings = rate_engines([RatedPairing("A", "B", Trinomial(4, 0, 0)),
                            RatedPairing("A", "C", Trinomial(0, 4, 0)),
                            RatedPairing("B", "C", Trinomial(2, 2, 0))], anchor="A")
    assert [s.engine for s in report.standings] == [e.name for e in ratings.engines]
    for standing in report.standings:
        rated = ratings.by_name(standing.engine)
        assert standing.elo == pytest.approx(rated.elo)
        if standing.reference:
            assert standing.elo == 0.0 and standing.elo_error95 is None
        else:
            assert standing.elo_error95 == pytest.approx(rated.error95)
    points = {s.engine: s.points for s in report.standings}
    assert points == {"A": 6, "B": 3, "C": 3}
    # LOS comes from the same rating as the Elo beside it: Phi(Elo / sd).
    los = {s.engine: s.los for s in report.standings}
    assert los["A"] is None
    for name in ("B", "C"):
        rated = ratings.by_name(name)
        assert los[name] == pytest.approx(NormalDist().cdf(rated.elo / (rated.error95 / Z95)))
        assert (los[name] - 0.5) * rated.elo > 0
    assert {s.label for s in report.elo_series} == {"B", "C"}
    assert report.elo_series[0].points[-1].elo == pytest.approx(
        ratings.by_name(report.elo_series[0].label).elo)
    assert report.sprt is None and report.llr_series == ()
    text = render_text(report, width=120)
    assert "Crosstable" in text and "4/4" in text and "1.5/4" not in text and "3/4" in text


def test_gauntlet_rates_each_opponent_against_the_first_engine(db: Database) -> None:
    schedule = gauntlet("G", ["X", "Y"], rounds=1, games=4)
    scores = {"X": [1, 1, 0.5, 1], "Y": [0, 0.5, 0.5, 0.5]}  # G's scores, in play order
    plan = []
    for job in schedule:
        opponent = job.white if job.black == "G" else job.black
        plan.append(Planned(scores[opponent].pop(0), "checkmate", 40))
    tid = _store(db, schedule, ["G", "X", "Y"], plan, fmt="gauntlet")
    with db.session() as session:
        report = build_report(ReportRows(session), tid)
    assert report.format is TournamentFormat.GAUNTLET and report.crosstable is None
    by_name = {s.engine: s for s in report.standings}
    pairs = {(p.first, p.second): p for p in report.pairings}
    assert set(pairs) == {("G", "X"), ("G", "Y")}
    assert pairs[("G", "X")].trinomial == Trinomial(3, 1, 0)
    assert pairs[("G", "Y")].trinomial == Trinomial(0, 3, 1)
    for opponent, pair in (("X", pairs[("G", "X")]), ("Y", pairs[("G", "Y")])):
        own = match_stats(headline_counts(pair.trinomial.swapped(), pair.pentanomial.swapped()))
        assert by_name[opponent].elo == pytest.approx(own.elo)
        assert by_name[opponent].los == pytest.approx(own.los)
    assert by_name["G"].points == 5 and by_name["G"].games == 8
    assert by_name["X"].elo < 0 < by_name["Y"].elo  # Y did better against G than X did
    assert [s.label for s in report.elo_series] == ["G vs X", "G vs Y"]


def _board_of(schedule: Pairing, engines: Sequence[str], plan: Sequence[Planned]) -> Scoreboard:
    """The live scoreboard fed the games `_store` stores for the same plan."""
    board = Scoreboard(engines)
    for job, want in zip(schedule.jobs(), plan, strict=False):
        first = schedule.encounters[job.encounter][0]
        board.add(job.white, job.black, _result(job, first, want.score), job.pair)
    return board


def _rank_rows(board: Scoreboard) -> dict[str, tuple[str, str]]:
    """Engine -> (Elo, margin) as the end-of-run ranking lines print them."""
    rows = {}
    for line in board.ranking_lines()[1:]:
        words = line.split()
        rows[words[1]] = (words[-5], words[-4])
    return rows


@pytest.mark.parametrize("fmt", ["gauntlet", "round-robin"])
def test_end_of_run_ranking_and_report_show_the_same_figures(db: Database, fmt: str) -> None:
    # Issue 31: the run's table (maximum likelihood, average at 0) and the report
    # (head-to-head, reference at 0) disagreed on the same games; the reference of a
    # round-robin report was not at 0, and LOS did not follow the Elo beside it.
    engines = ["R", "P", "Q"]
    if fmt == "gauntlet":
        schedule = gauntlet("R", ["P", "Q"], rounds=2, games=4)
    else:
        schedule = round_robin(engines, rounds=4)
    scores = [1, 0.5, 0, 1, 0.5, 0.5, 1, 0, 1, 1, 0.5, 0, 0.5, 1, 0, 0.5] * 3
    plan = [Planned(scores[k], "checkmate", 40) for k, _ in enumerate(schedule.jobs())]
    tid = _store(db, schedule, engines, plan, fmt=fmt)
    with db.session() as session:
        report = build_report(ReportRows(session), tid)
    ranked = _rank_rows(_board_of(schedule, engines, plan))
    assert list(ranked) == [s.engine for s in report.standings]
    for standing in report.standings:
        assert standing.elo is not None
        margin = "-" if standing.elo_error95 is None else f"{standing.elo_error95:.0f}"
        assert ranked[standing.engine] == (f"{standing.elo:.0f}", margin), standing.engine
        if standing.reference:
            assert standing.elo == 0.0 and standing.los is None
        else:
            assert standing.los is not None and (standing.los - 0.5) * standing.elo >= 0
            assert (standing.los > 0.5) == (standing.elo > 0)
    # Issue 39: what the standings' Elo is, said alike by the run's table and the report
    # (a round-robin's fit differs from its pairings' head-to-head figures).
    board = _board_of(schedule, engines, plan)
    basis = ("Elo: each engine against R, from game pairs" if fmt == "gauntlet" else
             "Elo: the rating that fits every game, R = 0 (each pairing's own figures are "
             "head-to-head)")
    assert board.ranking_basis() == basis
    text, _, page = _views(report)
    assert f"Standings' {basis}" in " ".join(text.split())
    assert f"Standings' {basis}".replace("'", "&#x27;") in page


def _views(report: Report) -> tuple[str, dict[str, Any], str]:
    """The report as text, JSON data and HTML."""
    return render_text(report, width=200), json.loads(render_json(report)), render_html(report)


def test_a_sweep_shows_fishtests_figures_in_every_view(db: Database) -> None:
    # Issue 31: text said "+inf +/- n/a" where JSON said 977.19 +/- 4138.3 for the same sweep.
    schedule = match("X", "Y", games=4)
    plan = [Planned(1, "checkmate", 30)] * 4
    tid = _store(db, schedule, ["X", "Y"], plan, fmt="match")
    with db.session() as session:
        report = build_report(ReportRows(session), tid)
    text, data, page = _views(report)
    pairing = data["pairings"][0]
    head = match_stats(Pentanomial(0, 0, 0, 0, 2, wl_pairs=0))
    wdl = match_stats(Trinomial(4, 0, 0))
    assert pairing["stats"]["elo"] == pytest.approx(head.elo)
    assert pairing["stats"]["elo_error95"] == pytest.approx(head.elo_error95)
    assert pairing["wdl_stats"]["elo"] == pytest.approx(wdl.elo)
    shown_head = f"{head.elo:+.1f} +/- {head.elo_error95:.1f}"
    shown_wdl = f"{wdl.elo:+.1f} +/- {wdl.elo_error95:.1f}"
    for view in (text, page):
        assert "inf" not in view and shown_head in view and shown_wdl in view
    assert pairing["stats"]["pair_draw_ratio"] == 0.0  # the counts', not the regulariser's
    assert "0.1%" not in text
    live = _board_of(schedule, ["X", "Y"], plan).summary_lines()
    # Issue 39: the live line shows the report's headline figure (from pairs), and says so.
    assert f"Elo difference: {head.elo:.1f} +/- {head.elo_error95:.1f}," in live[1]
    assert live[1].endswith(", from 2 game pairs")


@pytest.mark.parametrize("played", [1, 2])
def test_one_game_or_one_pair_gives_no_figures_in_any_view(db: Database, played: int) -> None:
    # Issue 31: one pair gave "Elo -189.7 +/- 56" and "nElo -2001 +/- 41458" (the
    # regulariser's spread); one game a zero-width Elo band.
    schedule = match("X", "Y", games=4)
    plan = [Planned(0, "checkmate", 30), Planned(0.5, "stalemate", 30)][:played]
    tid = _store(db, schedule, ["X", "Y"], plan, fmt="match")
    with db.session() as session:
        report = build_report(ReportRows(session), tid)
    text, data, page = _views(report)
    pairing = data["pairings"][0]
    assert pairing["stats"]["elo"] is None and pairing["stats"]["nelo"] is None
    assert pairing["stats"]["los"] is None and pairing["stats"]["elo_error95"] is None
    other = next(s for s in data["standings"] if not s["reference"])
    assert other["elo"] is None and other["los"] is None
    pairs_row = next(line for line in text.splitlines() if "X vs Y" in line)
    assert pairs_row.count("n/a") >= 3  # Elo, nElo, LOS
    assert "n/a" in page and not re.search(r"[+-]\d+\.\d +/- ", page.split("Game pairs")[0]
                                             if played == 1 else "")
    assert all(p.elo_error95 > 0 for s in report.elo_series for p in s.points)
    live = _board_of(schedule, ["X", "Y"], plan).summary_lines()
    # The live line shows the pairing's one figure: none from one game or one pair, as the
    # report's headline figure (issue 39: it showed the W/D/L figure, the report another).
    assert "Elo difference: n/a, LOS: n/a," in live[1]
    assert live[1].endswith(", from 1 game" if played == 1 else ", from 1 game pair")
    if played == 2:  # two games: the W/D/L figures exist, labelled so in the report
        wdl = match_stats(Trinomial(0, 1, 1))
        assert pairing["wdl_stats"]["elo"] == pytest.approx(wdl.elo)
        assert f"{wdl.elo:+.1f} +/- {wdl.elo_error95:.1f}" in text


# -- the CLI -----------------------------------------------------------------------------------


@pytest.mark.timeout(60)
def test_cli_report_formats_and_errors(db: Database, tmp_path: Path) -> None:
    tid = _match(db)
    _store(db, round_robin(["P", "Q", "R"]), ["P", "Q", "R"],
           [Planned(1, "checkmate", 30)] * 6, fmt="round-robin", name="later")
    url = db.url

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "runner", "report", "--db", url, *args],
                              capture_output=True, text=True, timeout=60)

    latest = run("--format", "json")
    assert latest.returncode == 0, latest.stderr
    assert json.loads(latest.stdout)["tournament"]["name"] == "later"
    out = tmp_path / "match.json"
    chosen = run(str(tid), "--format", "json", "--out", str(out))
    assert chosen.returncode == 0 and chosen.stdout == ""
    assert json.loads(out.read_text())["pairings"][0]["pentanomial"] == [0, 1, 2, 1, 1]
    missing = run("99")
    assert missing.returncode == 2 and "no tournament with id 99" in missing.stderr
    # The same command in process, through the application's own Typer object.
    runner_cli = CliRunner()
    text = runner_cli.invoke(app, ["report", str(tid), "--db", url])
    assert text.exit_code == 0 and "Standings" in text.output and "SPRT A vs B" in text.output
    page = tmp_path / "page.html"
    html_run = runner_cli.invoke(app, ["report", "--db", url, "-f", "html", "-o", str(page)])
    assert html_run.exit_code == 0 and page.read_text().startswith("<!DOCTYPE html>")
    bad = runner_cli.invoke(app, ["report", "--db", url, "--format", "pdf"])
    assert bad.exit_code == 2 and "unknown --format" in bad.output


# -- memory stays flat -------------------------------------------------------------------------


def _bulk(db: Database, games: int) -> tuple[int, Trinomial]:
    """A match of `games` synthetic games inserted with Core executemany; its id and A's
    W/D/L counted here."""
    schedule = match("A", "B", rounds=games // 2)
    with db.session() as session:
        tid = create_tournament(session, name=f"bulk{games}", fingerprint="x",
                                config={"format": "match", "sprt": SPRT_CONFIG},
                                engines=[EngineRowValues("A", ["a"]), EngineRowValues("B", ["b"])],
                                total_games=games).id
        ids = dict(session.execute(select(EngineRow.name, EngineRow.id)
                                   .where(EngineRow.tournament_id == tid)).all())
    results = ("1-0", "1/2-1/2", "0-1", "1-0", "1/2-1/2")
    with db.engine.begin() as connection:
        connection.execute(insert(GameRow.__table__), [
            {"tournament_id": tid, "job_index": i, "round": job.round,
             "pair_index": job.pair, "game_in_pair": job.game_in_pair,
             "white_id": ids[job.white], "black_id": ids[job.black], "opening_index": job.pair,
             "status": GameStatus.DONE, "result": results[i % 5], "termination": "checkmate",
             "plies": 20 + i % 150, "ended_at": T0 + timedelta(seconds=i),
             "pgn": "1. e4 e5 " * 40}
            for i in range(games) for job in (schedule.job(i),)])
    a_scores = [_HALF[results[i % 5]] if schedule.job(i).white == "A"
                else 2 - _HALF[results[i % 5]] for i in range(games)]
    return tid, Trinomial(a_scores.count(2), a_scores.count(1), a_scores.count(0))


_HALF = {"1-0": 2, "1/2-1/2": 1, "0-1": 0}


def _peak(db: Database, tid: int) -> int:
    """Peak Python allocation while building and rendering one report."""
    tracemalloc.start()
    try:
        with db.session() as session:
            render_html(build_report(ReportRows(session), tid))
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_report_memory_does_not_grow_with_the_games(db: Database) -> None:
    (small, _), (large, counts) = _bulk(db, 5_000), _bulk(db, 25_000)
    _peak(db, small)  # warm caches (compiled queries) before measuring
    small_peak, large_peak = _peak(db, small), _peak(db, large)
    # Five times the games (and ~10 MB more PGN text) may not cost even 1 MB more.
    assert large_peak - small_peak < 1_000_000, (small_peak, large_peak)
    with db.session() as session:
        report = build_report(ReportRows(session), large)
    assert report.games_played == 25_000 and len(report.llr_series) == 200
    assert report.pairings[0].trinomial == counts and counts.draws == 10_000


# -- the HTML page in a real browser -----------------------------------------------------------

_PROBE = """<pre id="probe"></pre><script>
const out = [];
for (const svg of document.querySelectorAll("svg.plot")) {
  const box = svg.getBoundingClientRect();
  const marks = svg.querySelectorAll("path.line, path.band, rect.bar, line.bound");
  const sized = [...marks].filter(m => { const b = m.getBBox(); return b.width > 0 || b.height > 0; });
  out.push({plot: svg.dataset.plot, width: box.width, height: box.height,
            marks: marks.length, sized: sized.length,
            lines: svg.querySelectorAll("path.line").length,
            bands: svg.querySelectorAll("path.band").length,
            bars: svg.querySelectorAll("rect.bar").length,
            bounds: svg.querySelectorAll("line.bound").length});
}
document.getElementById("probe").textContent = JSON.stringify(out);
</script>"""


def _chromium(args: Sequence[str], profile: Path) -> subprocess.CompletedProcess[str]:
    """Headless chromium with a throw-away profile (no sandbox: tests may run as root)."""
    binary = require_binary("chromium")
    return subprocess.run(
        [binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--no-first-run", f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=90)


def _png_pixels(path: Path) -> tuple[int, int, bytes]:
    """Width, height and the raw (filtered) scanline bytes of an 8-bit PNG."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    chunks, offset = [], 8
    while offset < len(data):
        length = struct.unpack(">I", data[offset:offset + 4])[0]
        kind = data[offset + 4:offset + 8]
        if kind == b"IDAT":
            chunks.append(data[offset + 8:offset + 8 + length])
        offset += 12 + length
    return width, height, zlib.decompress(b"".join(chunks))


@pytest.mark.timeout(240)
def test_html_report_renders_in_a_real_browser(db: Database, tmp_path: Path) -> None:
    tid = _match(db, stored_decision="continue")
    with db.session() as session:
        report = build_report(ReportRows(session), tid)
    page = render_html(report)
    assert "<script" not in page and "http://" not in page.replace(
        'xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in page
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")

    probe_page = tmp_path / "probe.html"
    probe_page.write_text(page.replace("</body>", _PROBE + "</body>"), encoding="utf-8")
    dumped = _chromium(["--virtual-time-budget=2000", "--dump-dom", probe_page.as_uri()],
                       tmp_path / "profile-dom")
    found = re.search(r'<pre id="probe">(.*?)</pre>', dumped.stdout, re.S)
    assert found, f"no measurement in chromium's DOM dump: {dumped.stderr[-2000:]}"
    plots = {p["plot"]: p for p in json.loads(found.group(1).replace("&quot;", '"'))}
    assert set(plots) == {"elo", "llr", "lengths"}
    for plot in plots.values():
        assert plot["width"] > 300 and plot["height"] > 150
        assert plot["sized"] == plot["marks"] > 0
    assert plots["elo"]["lines"] == 1 and plots["elo"]["bands"] == 1
    assert plots["llr"]["lines"] == 1 and plots["llr"]["bounds"] == 2
    assert plots["lengths"]["bars"] == len(report.lengths)

    shot = Path(os.environ.get("REPORT_SCREENSHOT_DIR", tmp_path)) / "report.png"
    taken = _chromium(["--window-size=1000,2600", f"--screenshot={shot}", path.as_uri()],
                      tmp_path / "profile-shot")
    assert shot.exists(), f"chromium took no screenshot: {taken.stderr[-2000:]}"
    width, height, pixels = _png_pixels(shot)
    assert (width, height) == (1000, 2600)
    assert len(set(pixels)) > 50, "the screenshot is (nearly) blank"


def _old_row(engines: Sequence[str]) -> dict[str, object]:
    """A whole configuration as an older runner stored it: no ``variant``, ``affinity`` or
    ``cluster`` (added since), and keys this version no longer has, at the top, in an
    engine entry and in the ``sprt`` table."""
    return {
        "name": "old", "format": "gauntlet", "tc": "10+0.1", "rounds": 1, "games": 2,
        "engines": [{"name": e, "command": ["/bin/engine", e], "written_command": ["engine", e],
                     "env": [], "castling960": "oo", "retired_engine_key": True}
                    for e in engines],
        "sprt": {**SPRT_CONFIG, "confidence": 0.95},
        "retired_top_level_key": "x",
    }


def test_an_old_row_is_read_through_the_config_model(db: Database) -> None:
    """The report reads a stored configuration through `TournamentConfig`, tolerating keys a
    runner stored that this one does not know: the SPRT, the format and the engine order
    come from such a row (a raw read of the ``sprt`` table refused its unknown key and
    showed no SPRT)."""
    from runner.store.resume import replace_config

    tid = _match(db)
    with db.session() as session:
        replace_config(session, tid, config=_old_row(["B", "A"]), fingerprint="fp-old",
                       total_games=10)
        report = build_report(ReportRows(session), tid)
    assert report.sprt is not None and report.sprt.maxgames == 400, report.notes
    assert report.sprt.spec == SprtSpec(0.0, 10.0, 0.05, 0.05, EloModel.NORMALIZED)
    assert report.format is TournamentFormat.GAUNTLET  # as stored, not guessed (a match)
    assert report.engines == ("B", "A") and report.reference == "B"
    assert not any("SPRT" in note for note in report.notes), report.notes

    # A partial row (no engine commands: an older schema) is read setting by setting.
    partial = {"format": "round_robin", "engines": [{"name": "B"}, {"name": "A"}],
               "sprt": {**SPRT_CONFIG, "confidence": 0.95}, "retired_top_level_key": 1}
    with db.session() as session:
        replace_config(session, tid, config=partial, fingerprint="fp-partial", total_games=10)
        report = build_report(ReportRows(session), tid)
    assert report.sprt is not None and report.sprt.maxgames == 400, report.notes
    assert report.format is TournamentFormat.ROUND_ROBIN
    assert report.engines == ("B", "A")

    # An SPRT table that does not fit the model is named in a note, and no SPRT is shown.
    broken = {**partial, "sprt": {"elo0": "low", "elo1": 10.0}}
    with db.session() as session:
        replace_config(session, tid, config=broken, fingerprint="fp-broken", total_games=10)
        report = build_report(ReportRows(session), tid)
    assert report.sprt is None
    assert any("SPRT settings are unusable" in note and "elo0" in note
               for note in report.notes), report.notes
