"""The JSON API of branch tests: submit one, list them, read one, and an admin's approve,
pause, resume, stop (one route) and priority (runner.service.branches runs them)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from enum import StrEnum
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Query, Request, status
from fastapi.responses import JSONResponse

from runner.config.check import ConfigError
from runner.report.wire import Wire, wire_data
from runner.service.branches import BranchQueue
from runner.service.manager import Conflict
from runner.service.payloads import ProblemsBody, Submitted
from runner.service.routing import (
    OPEN_READ,
    PROBLEMS,
    REFUSED,
    SUBMIT_BODY,
    UNAUTHORIZED,
    Admin,
    Read,
    Write,
    problem,
)
from runner.service.security import Principal
from runner.service.stages import StageJson, test_result, test_stages
from runner.service.submission import parse_body
from runner.store.store import BranchTestRecord

__all__ = ["BranchTestJson", "BranchTestList", "BuildJson", "TestAction", "router", "test_json"]

router = APIRouter(prefix="/api/tests", tags=["branch tests"])
"""The routes of branch tests."""

TestId = Annotated[int, Path(ge=1, le=2**31 - 1, description="The test's id.")]


class BuildJson(Wire):
    """One side built on one machine: the commit, the machine, its bench, its log's end."""

    side: str
    commit: str
    machine: str
    nodes: int | None
    nps: int | None
    cached: bool
    seconds: float
    log: str


class BranchTestJson(Wire):
    """A branch test: what was asked, where it stands and its stages."""

    id: int
    name: str
    recipe: str
    author: str | None
    """The name of the token that submitted it (null: the service's own token)."""
    base_ref: str
    base_sha: str
    dev_ref: str
    dev_sha: str
    state: str
    """approval, pending, building, running, paused, finished, failed or stopped."""
    result: str
    """Once over: passed, rejected, inconclusive, failed or stopped; else empty."""
    priority: int
    share: float
    stage: int
    """The stage playing or last played (0: the first)."""
    stages: list[StageJson]
    """Each stage; an ended one with its figures (a running one's are its tournament's)."""
    message: str | None
    """Why it failed or stopped (a build's last lines, a wrong bench), or how it ended."""
    builds: list[BuildJson]
    """Each side built on each machine (the service's host for now), with its bench."""
    created_at: str
    updated_at: str
    commits: list[list[str]] | None = None
    """The commits dev has that base has not, (hash, subject); in one test's answer only."""


class BranchTestList(Wire):
    """``GET /api/tests``: every test, newest first."""

    tests: list[BranchTestJson]


class TestAction(StrEnum):
    """What an admin does to a test (``POST /api/tests/ID/ACTION``)."""

    APPROVE = "approve"
    """Queue a test that waits for an admin's approval."""
    PAUSE = "pause"
    """Pause it: its stage stops after the games being played."""
    RESUME = "resume"
    """Put a paused test back in the queue."""
    STOP = "stop"
    """Stop it for good (its running games are cut)."""


def _queue(request: Request) -> BranchQueue:
    queue: BranchQueue = request.app.state.branch_queue
    return queue


def test_json(record: BranchTestRecord, commits: list[tuple[str, str]] | None = None,
              stages: list[StageJson] | None = None) -> BranchTestJson:
    """A stored test as the API answers it (with the commits between, and the stages with
    the running one's figures, when given)."""
    return BranchTestJson(
        id=record.id, name=record.name, recipe=record.recipe, author=record.author,
        base_ref=record.base_ref, base_sha=record.base_sha, dev_ref=record.dev_ref,
        dev_sha=record.dev_sha, state=record.state, result=test_result(record),
        priority=record.priority, share=record.share, stage=record.stage,
        stages=test_stages(record) if stages is None else stages, message=record.message,
        builds=[BuildJson.model_validate(b) for b in record.builds],
        created_at=record.created_at.isoformat(), updated_at=record.updated_at.isoformat(),
        commits=None if commits is None else [list(pair) for pair in commits])


@router.post("", status_code=status.HTTP_201_CREATED,
             openapi_extra=SUBMIT_BODY, response_model=Submitted,
             responses={400: REFUSED, 401: UNAUTHORIZED, 403: REFUSED, 422: PROBLEMS,
                        429: REFUSED, 413: REFUSED})
async def submit_test(request: Request,
                      principal: Annotated[Principal | None, Write]) -> Submitted | JSONResponse:
    """Submit a branch test: a tournament's keys and a ``[branch]`` table (a recipe of the
    service's engines file, base and dev refs, stages), as TOML text or a JSON object; a
    submitter's waits for an admin's approval on a service started with --approval."""
    body = await request.body()
    request.app.state.rate_limiter.check(request)
    try:
        data: dict[str, Any] = parse_body(body, request.headers.get("content-type", ""))
        approved = not (request.app.state.settings.approval and principal is not None
                        and principal.role != "admin")
        test_id = await _queue(request).submit(
            data, approved=approved, author=None if principal is None else principal.name)
    except ConfigError as exc:
        settings = request.app.state.settings
        problems = ProblemsBody(detail=[problem(settings, p.key, p.value, p.message, str(p))
                                        for p in exc.problems])
        return JSONResponse(status_code=422, content=wire_data(problems))
    return Submitted(id=test_id, url=f"/api/tests/{test_id}")


@router.get("", response_model=BranchTestList, dependencies=[Read], openapi_extra=OPEN_READ,
            responses={401: UNAUTHORIZED})
async def list_tests(request: Request) -> BranchTestList:
    """Every branch test, newest first, with its state and stages."""
    queue = _queue(request)
    return BranchTestList(tests=[test_json(t, stages=await queue.stages(t))
                                 for t in await queue.tests()])


@router.get("/{test_id}", response_model=BranchTestJson, dependencies=[Read],
            openapi_extra=OPEN_READ, responses={401: UNAUTHORIZED, 404: REFUSED})
async def read_test(request: Request, test_id: TestId) -> BranchTestJson:
    """One branch test, with the commits between its base and dev."""
    queue = _queue(request)
    found = await queue.test(test_id)
    if found is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no test {test_id}")
    try:
        commits = await queue.commits(found)
    except (ConfigError, OSError, RuntimeError):
        commits = None  # the mirror is gone or the recipe left the engines file
    return test_json(found, commits, await queue.stages(found))


_CHANGED: dict[int | str, dict[str, Any]] = {401: UNAUTHORIZED, 403: REFUSED,
                                             404: REFUSED, 409: REFUSED}


@router.post("/{test_id}/priority", response_model=BranchTestJson, dependencies=[Admin],
             responses=_CHANGED)
async def prioritise_test(request: Request, test_id: TestId,
                          value: Annotated[int, Query(ge=-1000, le=1000)]) -> BranchTestJson:
    """Give a test another priority (higher starts first)."""
    return await _change(request, test_id, lambda queue: queue.prioritise(test_id, value))


@router.post("/{test_id}/{action}", response_model=BranchTestJson, dependencies=[Admin],
             responses=_CHANGED)
async def change_test(request: Request, test_id: TestId, action: TestAction) -> BranchTestJson:
    """An admin's action on a test: approve (queue a test waiting for approval), pause (its
    stage stops after the games being played), resume (back in the queue) or stop (for
    good, its running games cut)."""
    return await _change(request, test_id, lambda queue: queue.change(test_id, action.value))


async def _change(request: Request, test_id: int,
                  act: Callable[[BranchQueue], Awaitable[BranchTestRecord]]) -> BranchTestJson:
    """Run an admin's change; 404 for an unknown test, 409 when its state refuses it."""
    try:
        record = await act(_queue(request))
    except KeyError:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no test {test_id}") from None
    except Conflict as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from None
    return test_json(record)
