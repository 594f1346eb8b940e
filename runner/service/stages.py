"""What a branch test shows of each stage, in one shape for the API, the pages and the
store: its label and time control, its tournament, and its figures (games, LLR with its
bounds, decision, Elo, pentanomial counts, each machine's games). A stage that ended keeps
its figures with the test (`BranchTestRecord.results`), so the tests' list reads no report
but the running stages'; and a test's result (passed, rejected...) is read from them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runner.build.testfile import branch_stages
from runner.report.tree import WorkerJson
from runner.report.wire import Finite, Wire
from runner.service.payloads import TournamentDetail, TournamentSummary
from runner.store.store import BranchTestRecord

__all__ = ["RESULTS", "StageJson", "stage_figures", "test_result", "test_stages"]

RESULTS = ("passed", "rejected", "inconclusive", "failed", "stopped")
"""A test's result once it is over: its last stage's SPRT accepted H1 (passed) or H0
(rejected), neither, a build or bench that failed it, or an admin's stop."""


class StageJson(Wire):
    """One stage of a test: its label, time control, tournament and figures so far."""

    label: str
    tc: str
    tournament_id: int | None
    url: str | None
    status: str = "not started"
    games: int = 0
    planned: int = 0
    llr: Finite = None
    lower: Finite = None
    upper: Finite = None
    decision: str | None = None
    elo: Finite = None
    elo_error95: Finite = None
    pentanomial: list[int] = []
    machines: list[WorkerJson] = []
    """Each machine's games of the stage (its pairs, crashes, time losses, residual), when
    they were played on several (Dask or remote workers); none on the service's host."""


def stage_figures(stage: StageJson, found: TournamentSummary | None) -> StageJson:
    """`stage` with its tournament's progress, and with a detail its LLR, Elo and
    pentanomial counts too (unchanged without either)."""
    if found is None:
        return stage
    update: dict[str, Any] = {"status": found.status, "games": found.done_games,
                              "planned": found.total_games, "decision": found.sprt_decision}
    if isinstance(found, TournamentDetail):
        report = found.report
        sprt = report.sprt
        pairing = report.pairings[0] if report.pairings else None
        stats = None if pairing is None else pairing.stats
        update.update({
            "llr": None if sprt is None else sprt.llr,
            "lower": None if sprt is None else sprt.lower_bound,
            "upper": None if sprt is None else sprt.upper_bound,
            "decision": found.sprt_decision or (None if sprt is None else sprt.decision),
            "elo": None if stats is None else stats.elo,
            "elo_error95": None if stats is None else stats.elo_error95,
            "pentanomial": [] if pairing is None else list(pairing.pentanomial),
            "machines": list(report.workers)})
    return stage.model_copy(update=update)


def test_stages(record: BranchTestRecord) -> list[StageJson]:
    """A test's stages as its stored submission names them, with the figures kept of the
    stages that ended (the running one's come from its tournament: `stage_figures`)."""
    shown = []
    for index, (label, tc) in enumerate(branch_stages(record.spec)):
        tournament = record.tournaments[index] if index < len(record.tournaments) else None
        stage = StageJson(label=label, tc=tc, tournament_id=tournament,
                          url=None if tournament is None else f"/api/tournaments/{tournament}")
        if index < len(record.results):
            stage = _kept(stage, record.results[index])
        shown.append(stage)
    return shown


def _kept(stage: StageJson, stored: Mapping[str, Any]) -> StageJson:
    """`stage` with its stored figures (a row written by an older version: unchanged)."""
    try:
        kept = StageJson.model_validate({**stored, "label": stage.label, "tc": stage.tc,
                                         "tournament_id": stage.tournament_id,
                                         "url": stage.url})
    except ValueError:
        return stage
    return kept


def test_result(record: BranchTestRecord) -> str:
    """The test's result once it is over (one of `RESULTS`), else ``""``."""
    if record.state in ("failed", "stopped"):
        return record.state
    if record.state != "finished":
        return ""
    decision = record.results[-1].get("decision") if record.results else None
    return {"H1": "passed", "H0": "rejected"}.get(str(decision), "inconclusive")
