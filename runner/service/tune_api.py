"""Tuning runs through the service: the JSON API (submit a tuning file, list, read one, an
admin's stop and resume) and a run's page, which draws theta over the iterations with the
graph `runner report` draws (`runner.report.render.tuning_plot`). `runner.service.tunes`
checks and runs them."""

from __future__ import annotations

import asyncio
import copy
from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Query, Request, status
from fastapi.responses import HTMLResponse, JSONResponse, Response

from runner.config.check import ConfigError
from runner.report.render import tuning_plot
from runner.service.manager import Conflict
from runner.service.page import not_found_page, render_page
from runner.service.payloads import ProblemsBody, StateChange, Submitted
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
    refused,
)
from runner.service.settings import ServiceSettings
from runner.service.submission import parse_body, take_placement
from runner.service.tunes import TuneList, TuneRuns, TuneStatus, check_tune

__all__ = ["page_router", "router"]

router = APIRouter(prefix="/api/tunes", tags=["tuning runs"])
"""The JSON routes of tuning runs."""
page_router = APIRouter(include_in_schema=False)
"""The HTML routes ``/tunes``, ``/tunes/{id}`` and its graph ``/tunes/{id}/theta.svg``."""

TuneId = Annotated[int, Path(ge=1, le=2**31 - 1, description="The tuning run's id.")]


def _runs(request: Request) -> TuneRuns:
    runs: TuneRuns = request.app.state.tunes
    return runs


@router.post("", status_code=status.HTTP_201_CREATED, dependencies=[Write],
             openapi_extra=SUBMIT_BODY, response_model=Submitted,
             responses={400: REFUSED, 401: UNAUTHORIZED, 409: REFUSED, 422: PROBLEMS,
                        429: REFUSED, 413: REFUSED})
async def submit(request: Request) -> Submitted | JSONResponse:
    """Submit a tuning run: a tuning file (``runner tune``'s keys) as TOML text or JSON; the
    same file again continues its stored run."""
    settings: ServiceSettings = request.app.state.settings
    body = await request.body()  # first: a body over the limit is refused, not counted
    request.app.state.rate_limiter.check(request)
    try:
        data = parse_body(body, request.headers.get("content-type", ""))
        placement = take_placement(data, settings)
        _runs(request).check_placement(placement)  # before the engine may be started
        submitted = copy.deepcopy(data)  # kept as sent: a restart checks it again
        config = await asyncio.to_thread(check_tune, data, settings,
                                         request.app.state.declared_options)
        tune_id = await _runs(request).submit(config, placement, submitted)
    except ConfigError as exc:
        return refused(ProblemsBody(detail=[
            problem(settings, p.key, p.value, p.message, str(p)) for p in exc.problems]))
    except Conflict as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from None
    return Submitted(id=tune_id, url=f"/api/tunes/{tune_id}")


@router.get("", dependencies=[Read], openapi_extra=OPEN_READ,
            responses={401: UNAUTHORIZED, 429: REFUSED})
async def list_tunes(request: Request) -> TuneList:
    """Every tuning run, oldest first, with its state and theta."""
    return TuneList(tunes=await _runs(request).summaries())


@router.get("/{tune_id}", dependencies=[Read], openapi_extra=OPEN_READ,
            responses={401: UNAUTHORIZED, 404: REFUSED, 429: REFUSED})
async def tune_status(request: Request, tune_id: TuneId) -> TuneStatus:
    """A tuning run's state, theta, values as option words and every iteration."""
    found = await _runs(request).status(tune_id)
    if found is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no tuning run {tune_id}")
    return found


@router.post("/{tune_id}/stop", dependencies=[Admin],
             responses={401: UNAUTHORIZED, 404: REFUSED, 429: REFUSED})
async def stop(request: Request, tune_id: TuneId,
               hard: Annotated[bool, Query(description="Cut the running games too.")] = False,
               ) -> StateChange:
    """Stop a tuning run: no new pair; with ``hard=true`` the running games are cut."""
    try:
        state = await _runs(request).stop(tune_id, hard=hard)
    except LookupError:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no tuning run {tune_id}") from None
    return StateChange(id=tune_id, status=state)


@router.post("/{tune_id}/resume", dependencies=[Admin],
             responses={401: UNAUTHORIZED, 404: REFUSED, 409: REFUSED, 429: REFUSED})
async def resume(request: Request, tune_id: TuneId) -> StateChange:
    """Play a stopped tuning run's missing iterations (with the same draws)."""
    runs = _runs(request)
    if await runs.status(tune_id, iterations=False) is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no tuning run {tune_id}")
    try:
        state = await runs.resume(tune_id)
    except Conflict as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from None
    return StateChange(id=tune_id, status=state)


def _page_id(tune_id: str) -> int | None:
    """A page path's run id, or None for anything but a plain positive number."""
    if (len(tune_id) > 10 or not (tune_id.isascii() and tune_id.isdigit())
            or not 1 <= int(tune_id) < 2**31):
        return None
    return int(tune_id)


def _protected(request: Request) -> bool:
    return bool(getattr(request.app.state.settings, "read_token_required", False))


@page_router.get("/tunes", response_class=HTMLResponse)
async def tunes_page(request: Request) -> HTMLResponse:
    """Every tuning run with its state, progress and values."""
    if _protected(request):
        return render_page(request, "tunes.html", {"protected": True, "tunes": []})
    return render_page(request, "tunes.html", {"protected": False,
                                                "tunes": await _runs(request).summaries()})


@page_router.get("/tunes/{tune_id}", response_class=HTMLResponse)
async def tune_page(request: Request, tune_id: str) -> HTMLResponse:
    """A tuning run's page: its state, values, theta over the iterations and each iteration."""
    number = _page_id(tune_id)
    if number is None:
        return not_found_page(request, "There is no such tuning run.")
    if _protected(request):
        return render_page(request, "tune.html", {"protected": True, "tune": None})
    found = await _runs(request).status(number)
    if found is None:
        return not_found_page(request, f"There is no tuning run {number}.")
    return render_page(request, "tune.html", {"protected": False, "tune": found})


@page_router.get("/tunes/{tune_id}/theta.svg")
async def tune_plot(request: Request, tune_id: str) -> Response:
    """The run's theta over its iterations: the graph `runner report` draws, as an image
    (every text in it escaped by the renderer)."""
    number = _page_id(tune_id)
    series = None if number is None or _protected(request) else \
        await _runs(request).series(number)
    plot = tuning_plot(series)
    if plot is None:
        return Response(status_code=404)
    return Response(plot, media_type="image/svg+xml",
                    headers={"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store",
                             "Content-Security-Policy": "default-src 'none'"})
