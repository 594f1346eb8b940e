"""The branch tests' pages: the list (each test as one line of work: its stages' results
side by side, the running one's LLR as a bar and its games so far; filters by recipe,
author, state, result and name) and one test's page (its refs and the commits between, each
stage with its LLR, Elo and pentanomial counts and a link to its tournament's live page,
plots and games, each build on each machine with its bench and log, and why it failed).
Server-rendered like the tournament pages (runner.service.page): every string escaped, no
script needed. The list reads the figures kept with each test and a report only for the
stages running now."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from runner.build import GitError
from runner.config.check import ConfigError
from runner.service.branch_api import BranchTestJson, test_json
from runner.service.branches import BranchQueue
from runner.service.page import not_found_page, render_page
from runner.service.stages import RESULTS

__all__ = ["router"]

router = APIRouter(include_in_schema=False)
"""The HTML routes ``/tests`` and ``/tests/{id}``."""

_STATES = ("approval", "pending", "building", "running", "paused", "finished", "failed", "stopped")


def _queue(request: Request) -> BranchQueue:
    queue: BranchQueue = request.app.state.branch_queue
    return queue


def _protected(request: Request) -> bool:
    return bool(getattr(request.app.state.settings, "read_token_required", False))


@router.get("/tests", response_class=HTMLResponse)
async def tests_page(request: Request, recipe: str = "", author: str = "", state: str = "",
                     result: str = "", name: str = "") -> HTMLResponse:
    """Every branch test, filtered by recipe, author, state, result and a part of the name."""
    chosen = {"recipe": recipe, "author": author, "state": state, "result": result,
              "name": name}
    context: dict[str, Any] = {"protected": True, "rows": [], "recipes": [], "authors": [],
                               "states": _STATES, "results": RESULTS, "chosen": chosen}
    if _protected(request):
        return render_page(request, "tests.html", context)
    queue = _queue(request)
    found = await queue.tests()
    views = [test_json(t) for t in found]
    shown: list[BranchTestJson] = []
    for record, view in zip(found, views, strict=True):
        if ((not recipe or view.recipe == recipe) and (not author or view.author == author)
                and (not state or view.state == state) and (not result or view.result == result)
                and (not name or name.casefold() in view.name.casefold())):
            shown.append(test_json(record, stages=await queue.stages(record, report=True))
                         if record.state == "running" else view)
    context.update(protected=False, rows=shown, recipes=sorted({v.recipe for v in views}),
                   authors=sorted({v.author for v in views if v.author}))
    return render_page(request, "tests.html", context)


@router.get("/tests/{test_id}", response_class=HTMLResponse)
async def test_page(request: Request, test_id: str) -> HTMLResponse:
    """One branch test: refs, commits between, stages with their figures, builds, why it
    failed."""
    if (len(test_id) > 10 or not (test_id.isascii() and test_id.isdigit())
            or not 1 <= int(test_id) < 2**31):
        return not_found_page(request, "There is no such test.")
    if _protected(request):
        return render_page(request, "test.html", {"protected": True, "test": None,
                                                  "commits": []})
    queue = _queue(request)
    found = await queue.test(int(test_id))
    if found is None:
        return not_found_page(request, f"There is no test {test_id}.")
    try:
        commits: list[tuple[str, str]] | None = await queue.commits(found)
    except (ConfigError, GitError, OSError):  # the page shows the rest without them
        commits = None
    view = test_json(found, stages=await queue.stages(found, report=True))
    return render_page(request, "test.html", {"protected": False, "test": view,
                                              "commits": commits})
