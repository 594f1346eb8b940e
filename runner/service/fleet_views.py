"""What the service shows of its remote workers: ``GET /api/workers`` and the ``/workers``
page (name, speed, clock factor, batches, games, residual, flags, blocked), and an admin's
block and unblock (``POST /api/workers/{id}/block`` and ``.../unblock``).

The residual is fishtest's per tournament: the one shown is of the newest tournament the
workers played (its report's worker table, read through the report cache like any other
report), and a worker the test or the crash/time rule flags there shows that flag beside any
flag a refused upload gave it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Request, status
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, Field

from runner.service.manager import TournamentManager
from runner.service.page import render_page
from runner.service.payloads import ErrorBody
from runner.service.routing import Admin, Read, settings_of
from runner.store.store import Store

__all__ = ["EngineSpeedRow", "WorkerRow", "WorkersJson", "page_router", "router"]

router = APIRouter(prefix="/api/workers", tags=["workers"])
"""The workers' list and an admin's block/unblock."""
page_router = APIRouter(include_in_schema=False)
"""The ``/workers`` page."""

WorkerId = Annotated[int, Path(ge=1, le=2**31 - 1, description="The worker's id.")]


class EngineSpeedRow(BaseModel):
    """A worker's bench of one of its engines with a bench of its own."""

    engine: str
    nps: int = Field(description="Its nodes per second per game slot (0: the bench failed).")
    factor: float | None = Field(description="Its games' factor on this worker (null: this "
                                             "service declares no reference for it, or the "
                                             "bench failed: the machine's factor).")
    failed: str | None = Field(description="Why the bench failed.")
    slow: bool = Field(description="Too slow for its reference: the worker gets none of "
                                   "its games.")


class WorkerRow(BaseModel):
    """One registered worker as the service shows it."""

    id: int
    name: str
    cores: int
    concurrency: int
    nps: int = Field(description="Its bench speed per game slot (0: not benched).")
    factor: float = Field(description="Its clocks are the tournaments' times this (the "
                                      "machine's bench), but for its engines' own.")
    engines: list[EngineSpeedRow] = Field(description="Its benches of its engines that have "
                                                      "their own.")
    batches: int
    games: int = Field(description="Its games counted, in every tournament.")
    last_seen: str
    flag: str | None = Field(description="Why an upload of it was refused, if one was.")
    blocked: bool
    residual: float | None = Field(description="Its residual in the newest tournament the "
                                               "workers played (null: not in the test).")
    colour: str | None = Field(description="green, yellow or red, as fishtest shows it.")
    bad: str | None = Field(description="Why fishtest's rules flag it in that tournament.")


class WorkersJson(BaseModel):
    """The workers, and the tournament their residuals are of."""

    tournament_id: int | None
    workers: list[WorkerRow]


async def workers_json(request: Request) -> WorkersJson:
    """Every registered worker with its figures, and its standing in the newest tournament
    played on the workers."""
    manager: TournamentManager = request.app.state.manager
    store: Store = manager.store
    workers, batches, newest = await asyncio.to_thread(
        lambda: (store.fleet.workers(), store.fleet.batch_counts(), store.fleet.newest()))
    standing = {}
    if newest is not None and (detail := await manager.detail(newest)) is not None:
        standing = {w.worker: w for w in detail.report.workers}
    rows = []
    for w in workers:
        info = w.info
        mine = standing.get(w.name)
        rows.append(WorkerRow(
            id=w.id, name=w.name, cores=int(info.get("cores", 0)),
            concurrency=int(info.get("concurrency", 1)), nps=int(info.get("nps", 0)),
            factor=float(info.get("factor", 1.0)), engines=_engine_rows(info),
            batches=batches.get(w.id, 0), games=w.games,
            last_seen=w.last_seen.strftime("%Y-%m-%d %H:%M:%S"), flag=w.flag,
            blocked=w.blocked, residual=None if mine is None else mine.residual,
            colour=None if mine is None else mine.colour,
            bad=mine.why if mine is not None and mine.flagged else None))
    return WorkersJson(tournament_id=newest, workers=rows)


def _engine_rows(info: Mapping[str, Any]) -> list[EngineSpeedRow]:
    """The engines' own benches a worker registered, with the factors the service gave."""
    factors = info.get("engine_factors") or {}
    slow = set(info.get("slow_engines") or ())
    rows = []
    for entry in info.get("engine_speeds") or ():
        if not isinstance(entry, Mapping):
            continue
        name = str(entry.get("engine", ""))
        factor = factors.get(name) if isinstance(factors, Mapping) else None
        failed = entry.get("failed")
        rows.append(EngineSpeedRow(engine=name, nps=int(entry.get("nps", 0)),
                                   factor=None if factor is None else float(factor),
                                   failed=None if failed is None else str(failed),
                                   slow=name in slow))
    return rows


@router.get("", dependencies=[Read],
            responses={code: {"model": ErrorBody} for code in (401, 429)})
async def list_workers(request: Request) -> WorkersJson:
    """The remote workers: speed, clock factor, batches, games, residual, flags, blocked."""
    return await workers_json(request)


async def _block(request: Request, worker_id: int, blocked: bool) -> WorkerRow:
    store: Store = request.app.state.manager.store
    if await asyncio.to_thread(store.fleet.worker, worker_id) is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no worker {worker_id}")
    await asyncio.to_thread(store.fleet.block, worker_id, blocked)
    if (hub := request.app.state.manager.placements.fleet) is not None:
        hub.recheck(worker_id)  # refused from its very next request
    found = [w for w in (await workers_json(request)).workers if w.id == worker_id]
    return found[0]


@router.post("/{worker_id}/block", dependencies=[Admin],
             responses={code: {"model": ErrorBody} for code in (401, 403, 404, 429)})
async def block(request: Request, worker_id: WorkerId) -> WorkerRow:
    """Block a worker (an admin): its next request is refused and it gets no more games."""
    return await _block(request, worker_id, True)


@router.post("/{worker_id}/unblock", dependencies=[Admin],
             responses={code: {"model": ErrorBody} for code in (401, 403, 404, 429)})
async def unblock(request: Request, worker_id: WorkerId) -> WorkerRow:
    """Let a blocked worker work again (an admin)."""
    return await _block(request, worker_id, False)


@page_router.get("/workers", response_class=HTMLResponse)
async def workers_page(request: Request) -> HTMLResponse:
    """The workers table."""
    if settings_of(request).read_token_required:
        return render_page(request, "workers.html", {"protected": True, "view": None})
    return render_page(request, "workers.html", {"protected": False,
                                                 "view": await workers_json(request)})
