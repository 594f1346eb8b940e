"""The branch tests' pages: the list (running ones with their LLR and games so far, then the
queue and the finished; filters by recipe, state and name) and one test's page (its refs and
the commits between, each stage with its LLR, Elo and pentanomial counts and a link to its
tournament's live page, plots and games, and why it failed). Server-rendered like the
tournament pages (runner.service.page): every string escaped, no script needed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from runner.build import GitError
from runner.config.check import ConfigError
from runner.service.branch_api import BranchTestJson, test_json
from runner.service.branches import BranchQueue
from runner.service.page import not_found_page, render_page

__all__ = ["StageView", "router"]

router = APIRouter(include_in_schema=False)
"""The HTML routes ``/tests`` and ``/tests/{id}``."""

_STATES = ("approval", "pending", "building", "running", "paused", "finished", "failed", "stopped")


@dataclass(frozen=True)
class StageView:
    """What a test's page shows of one stage."""

    label: str
    tc: str
    tournament_id: int | None
    status: str
    games: int
    planned: int
    llr: float | None
    lower: float | None
    upper: float | None
    decision: str | None
    elo: str
    pentanomial: list[int]


async def _stage(request: Request, label: str, tc: str, tournament_id: int | None) -> StageView:
    """A stage's figures from its tournament's detail (none before it is submitted)."""
    empty = StageView(label, tc, tournament_id, "not started", 0, 0, None, None, None, None,
                      "", [])
    if tournament_id is None:
        return empty
    detail = await request.app.state.manager.detail(tournament_id)
    if detail is None:
        return empty
    report = detail.report
    sprt = report.sprt
    pairing = report.pairings[0] if report.pairings else None
    stats = None if pairing is None else pairing.stats
    elo = "" if stats is None else f"{stats.elo:+.1f} ± {stats.elo_error95:.1f}"
    return StageView(label, tc, tournament_id, detail.status, detail.done_games,
                     detail.total_games, None if sprt is None else sprt.llr,
                     None if sprt is None else sprt.lower_bound,
                     None if sprt is None else sprt.upper_bound,
                     detail.sprt_decision or (None if sprt is None else sprt.decision), elo,
                     [] if pairing is None else list(pairing.pentanomial))


def _queue(request: Request) -> BranchQueue:
    queue: BranchQueue = request.app.state.branch_queue
    return queue


def _protected(request: Request) -> bool:
    return bool(getattr(request.app.state.settings, "read_token_required", False))


@router.get("/tests", response_class=HTMLResponse)
async def testsrender_page(request: Request, recipe: str = "", state: str = "",
                     name: str = "") -> HTMLResponse:
    """Every branch test, filtered by recipe, state and a part of the name."""
    if _protected(request):
        return render_page(request, "tests.html", {"protected": True, "rows": [], "recipes": [],
                                             "states": _STATES, "chosen": {}})
    found = await _queue(request).tests()
    recipes = sorted({t.recipe for t in found})
    shown = [t for t in found
             if (not recipe or t.recipe == recipe) and (not state or t.state == state)
             and (not name or name.casefold() in t.name.casefold())]
    rows: list[tuple[BranchTestJson, StageView | None]] = []
    for test in shown:
        view = test_json(test)
        current = view.stages[min(test.stage, len(view.stages) - 1)] if view.stages else None
        stage = None if current is None else await _stage(
            request, current.label, current.tc, current.tournament_id)
        rows.append((view, stage))
    return render_page(request, "tests.html", {
        "protected": False, "rows": rows, "recipes": recipes, "states": _STATES,
        "chosen": {"recipe": recipe, "state": state, "name": name}})


@router.get("/tests/{test_id}", response_class=HTMLResponse)
async def testrender_page(request: Request, test_id: str) -> HTMLResponse:
    """One branch test: refs, commits between, stages with their figures, why it failed."""
    if (len(test_id) > 10 or not (test_id.isascii() and test_id.isdigit())
            or not 1 <= int(test_id) < 2**31):
        return not_found_page(request, "There is no such test.")
    if _protected(request):
        return render_page(request, "test.html", {"protected": True, "test": None, "stages": [],
                                            "commits": []})
    queue = _queue(request)
    found = await queue.test(int(test_id))
    if found is None:
        return not_found_page(request, f"There is no test {test_id}.")
    try:
        commits: list[tuple[str, str]] | None = await queue.commits(found)
    except (ConfigError, GitError, OSError):  # the page shows the rest without them
        commits = None
    view = test_json(found)
    stages = [await _stage(request, s.label, s.tc, s.tournament_id) for s in view.stages]
    context: dict[str, Any] = {"protected": False, "test": view, "stages": stages,
                               "commits": commits}
    return render_page(request, "test.html", context)
