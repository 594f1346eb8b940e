"""The remote workers' routes: register, ask for a batch, heartbeat, upload a game, end a
batch (``runner worker join`` is their client). Present only when the service takes workers
(``runner serve --accept-workers``); every route needs a worker's token (or an admin's).

A job goes out without the service's command, directory or environment of its engines: a
worker starts each engine from its own allow-list, by name, and never runs a command it was
sent. A refusal is one line with its status (409: the batch is no longer the worker's; 422:
not a game it was given, and the worker is flagged; 404: register again). The answers to a
heartbeat and an upload say whether the batch's run winds down (`WindDown`: finish the
running games and hand the rest back, or cut them).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, HTTPException, Path, Request, Response, status
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials
from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from runner.build.benches import MachineBuild
from runner.build.placed import orders_data
from runner.fleet.batches import WindDown
from runner.fleet.builds import WorkerBuild
from runner.fleet.hub import FleetHub, Joined
from runner.fleet.scheduler import Refusal
from runner.fleet.speed import scale_job
from runner.game.job import GameJob
from runner.game.record import GameRecord
from runner.service.manager import TournamentManager
from runner.service.payloads import ErrorBody
from runner.service.routing import Credentials, settings_of
from runner.service.security import (
    CachedTokens,
    TokenBook,
    check_token,
    refuse_plain_http,
    request_key,
)
from runner.service.settings import ServiceSettings

__all__ = ["TOKEN_TTL", "BatchOffer", "Beat", "Counted", "Heartbeat", "Registered", "Upload",
           "WorkerInfo", "router"]

router = APIRouter(prefix="/api/workers", tags=["workers"])
"""The workers' routes."""

WorkerId = Annotated[int, Path(ge=1, le=2**31 - 1, description="The worker's id.")]
BatchId = Annotated[int, Path(ge=1, le=2**31 - 1, description="The batch's id.")]
TOKEN_TTL = 5.0
"""Seconds a worker's token found in the database is trusted for its uploads, heartbeats
and batch ends without reading it again (a revoked token: see `CachedTokens`)."""
_REFUSED: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (401, 403, 404, 409, 413, 422, 429, 503)}


class EngineSpeedInfo(BaseModel):
    """A worker's bench of one engine of its allow-list with a bench of its own."""

    engine: str = Field(max_length=200)
    nps: int = Field(default=0, ge=0, le=10**12,
                     description="Its nodes per second per game slot (0: the bench failed).")
    nodes: int = Field(default=0, ge=0, le=10**15, description="The bench's node count.")
    failed: str | None = Field(default=None, max_length=1000,
                               description="Why the bench failed (its games are then scaled "
                                           "by the machine's bench).")


class WorkerInfo(BaseModel):
    """What a joining worker says of itself."""

    name: str = Field(min_length=1, max_length=200)
    concurrency: int = Field(ge=1, le=1024, description="Games it plays at once.")
    cores: int = Field(ge=1, le=100_000)
    memory_mb: int = Field(ge=0, le=1 << 40)
    os: str = Field(max_length=200)
    version: str = Field(max_length=100, description="Its runner's version.")
    wire: int = Field(default=1, ge=1, le=10_000,
                      description="The version of the workers' exchange it speaks (absent: 1, "
                                  "a worker from before the version was sent).")
    engines: list[Annotated[str, Field(max_length=200)]] = Field(
        max_length=1000, description="The engines its own allow-list permits, by name.")
    repositories: list[Annotated[str, Field(max_length=1000)]] = Field(
        default=[], max_length=1000,
        description="The repositories its own allow-list permits it to build (its recipes').")
    syzygy: list[Annotated[str, Field(max_length=500)]] = Field(default=[], max_length=100)
    syzygy_pieces: int = Field(default=0, ge=0, le=7,
                               description="Up to how many pieces its tables reach (0: none).")
    nps: int = Field(default=0, ge=0, le=10**12,
                     description="Its bench speed per game slot: the bundled engine's fixed "
                                 "search, in nodes per second (0: not benched).")
    bench_nodes: int = Field(default=0, ge=0, le=10**15,
                             description="The bench's node count (the same on every machine "
                                         "for one runner version).")
    engine_speeds: list[EngineSpeedInfo] = Field(
        default=[], max_length=1000,
        description="Its benches of the engines of its allow-list that have their own.")


class Registered(BaseModel):
    """The worker's id and the terms it works under."""

    id: int
    lease_seconds: float = Field(description="A batch is taken back after this long without "
                                             "a heartbeat.")
    max_upload_bytes: int
    factor: float = Field(description="Its batches' clocks are the tournaments' times this "
                                      "(the service's reference speed over its own), but "
                                      "for the engines in engine_factors.")
    engine_factors: dict[str, float] = Field(
        default_factory=dict,
        description="The factor of each engine whose own bench it measured and this service "
                    "declares a reference for; a game's factor is the geometric mean of its "
                    "two sides' (the machine's for a side without one).")
    slow_engines: list[str] = Field(
        default_factory=list,
        description="Its engines whose own bench is too slow for their reference: it gets "
                    "none of their games.")


class BatchOffer(BaseModel):
    """A batch of games to play: each a `GameJob` as JSON text, its engines without any
    command (the worker starts them from its own allow-list)."""

    id: int
    tournament_id: int
    lease_seconds: float
    factor: float = Field(description="The worker's machine factor (each job's own is in "
                                      "factors).")
    jobs: list[str]
    factors: list[float] = Field(
        default_factory=list,
        description="Each job's clocks are the tournament's times this, in the jobs' order.")
    names: dict[str, str] = Field(
        default_factory=dict,
        description="The allow-list name of each engine the jobs name otherwise (a tuning "
                    "pair's plus and minus sides are the tuned engine); its options from the "
                    "service are then checked as a submitter's.")
    builds: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="The build order of each engine the jobs name that the worker builds "
                    "itself (a branch test's side: the service's recipe and the commit); it "
                    "reports each build before it plays.")


class Upload(BaseModel):
    """One finished game of a batch."""

    index: int = Field(ge=0, le=2**31 - 1, description="The game's place in the schedule.")
    seconds: float = Field(ge=0.0, le=1e7)
    record: dict[str, Any] = Field(description="The game's `GameRecord`, as JSON.")


class BuildReported(BaseModel):
    """A worker's build of one ordered engine: its record (the bench it measured), or why
    it failed."""

    engine: str = Field(max_length=200)
    build: MachineBuild | None = None
    failed: str | None = Field(default=None, max_length=20_000)


class BuildReport(BaseModel):
    """The worker's builds of its batch's ordered engines, sent before it plays them."""

    builds: list[BuildReported] = Field(max_length=100)


class BuildsTaken(BaseModel):
    """The builds agree with the expected benches: the batch may be played."""

    builds: int


class Beat(BaseModel):
    """A heartbeat's body: the games of the batch the worker started since its last one."""

    started: list[Annotated[int, Field(ge=0, le=2**31 - 1)]] = Field(
        default=[], max_length=10_000,
        description="The schedule indexes of the batch's games it started (sent again until "
                    "a heartbeat is answered; a game reported twice counts as started once).")


class Heartbeat(BaseModel):
    """A batch extended, and whether its run winds down."""

    lease_seconds: float
    wind_down: WindDown = Field(
        default=WindDown.NONE,
        description="none: play on; finish: the run stops softly, finish the running games, "
                    "upload them and end the batch; cut: the run stopped hard, cut the "
                    "running games and end the batch.")


class Counted(BaseModel):
    """An uploaded game stored and counted, and whether its run winds down now."""

    wind_down: WindDown = WindDown.NONE


_COUNTED = {how: Counted(wind_down=how).model_dump_json().encode() for how in WindDown}
"""The upload's answers, encoded once (a busy fleet uploads many games a second)."""


class Ended(BaseModel):
    """A batch ended: its games not uploaded go to other workers."""

    returned: int


def _hub(request: Request) -> FleetHub:
    manager: TournamentManager = request.app.state.manager
    if manager.placements.fleet is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND,
                            "this service takes no remote workers (runner serve "
                            "--accept-workers)")
    return manager.placements.fleet


def _check(request: Request, credentials: HTTPAuthorizationCredentials | None,
           book: TokenBook) -> str:
    found = check_token(settings_of(request), credentials, write=True,
                        throttle=request.app.state.token_throttle, key=request_key(request),
                        book=book, roles=("worker", "admin"))
    assert found is not None  # a write always names who sends it, or is refused
    return found.name


async def _principal(request: Request, credentials: Credentials) -> str:
    """The name of the token sending the request: a worker's (``runner token add NAME
    --role worker``), or an admin's (the service's own token included). A token found
    lately is trusted for `TOKEN_TTL` seconds without reading the database (uploads and
    heartbeats come many a second)."""
    refuse_plain_http(request, credentials)
    cache: CachedTokens = request.app.state.worker_tokens
    if credentials is None or cache.kept(credentials.credentials):
        return _check(request, credentials, cache)
    return await run_in_threadpool(_check, request, credentials, cache)


async def _principal_fresh(request: Request, credentials: Credentials) -> str:
    """As `_principal`, the token read from the database every time: a route that starts
    new work (register, ask for a batch) refuses a token revoked a moment ago."""
    refuse_plain_http(request, credentials)
    cache: CachedTokens = request.app.state.worker_tokens
    return await run_in_threadpool(_check, request, credentials, cache.fresh())


Principal = Annotated[str, Depends(_principal)]
FreshPrincipal = Annotated[str, Depends(_principal_fresh)]


@contextlib.contextmanager
def _answered() -> Iterator[None]:
    """The hub's `Refusal` as the HTTP refusal a worker reads: its status and one line."""
    try:
        yield
    except Refusal as refusal:
        raise HTTPException(refusal.status, refusal.text) from None


async def _joined(request: Request, worker_id: int, principal: str) -> Joined:
    with _answered():
        return await _hub(request).joined(worker_id, principal)


@router.post("", status_code=status.HTTP_201_CREATED, responses=_REFUSED)
async def register(request: Request, info: WorkerInfo,
                   principal: FreshPrincipal) -> Registered:
    """Register a worker: what it is and which engines it may run."""
    hub = _hub(request)
    with _answered():
        joined = await hub.register(info.name, principal, info.model_dump())
    settings: ServiceSettings = request.app.state.settings
    return Registered(id=joined.id, lease_seconds=hub.lease_seconds,
                      max_upload_bytes=settings.max_upload_bytes, factor=joined.factor,
                      engine_factors=dict(joined.engine_factors),
                      slow_engines=list(joined.slow_engines))


@router.post("/{worker_id}/batch", response_model=BatchOffer,
             responses={200: {"model": BatchOffer},
                                              204: {"description": "Nothing to play now."},
                                              **_REFUSED})
async def request_batch(request: Request, worker_id: WorkerId,
                        principal: FreshPrincipal) -> BatchOffer | Response:
    """Ask for a batch of games (204: none for this worker now; ask again later)."""
    joined = await _joined(request, worker_id, principal)
    leased = await _hub(request).request(joined)
    if leased is None:
        return Response(status_code=status.HTTP_204_NO_CONTENT)
    batch = leased.batch
    left = batch.left()
    return BatchOffer(id=batch.id, tournament_id=leased.tournament_id,
                      lease_seconds=leased.lease_seconds, factor=batch.factor,
                      jobs=[_without_commands(scale_job(job, batch.scaling(job.index).factor))
                            .to_json() for job in left],
                      factors=[batch.scaling(job.index).factor for job in left],
                      names=dict(leased.names), builds=orders_data(leased.orders))


def _without_commands(job: GameJob) -> GameJob:
    """The job as a worker gets it: no engine command, directory or environment of ours
    (each engine's command is only its name, which the worker looks up in its own file)."""
    return dataclasses.replace(
        job, white=dataclasses.replace(job.white, argv=(job.white.name,), working_dir=None,
                                       env=None),
        black=dataclasses.replace(job.black, argv=(job.black.name,), working_dir=None,
                                  env=None))


@router.post("/{worker_id}/batches/{batch_id}/builds", responses=_REFUSED)
async def builds(request: Request, worker_id: WorkerId, batch_id: BatchId, report: BuildReport,
                 principal: Principal) -> BuildsTaken:
    """Report the builds of the batch's ordered engines and their benches (409: a failed
    build or a wrong bench ended the run; the batch is not to be played)."""
    joined = await _joined(request, worker_id, principal)
    with _answered():
        await _hub(request).built(joined, batch_id, [
            WorkerBuild(entry.engine, entry.build, entry.failed) for entry in report.builds])
    return BuildsTaken(builds=len(report.builds))


@router.post("/{worker_id}/batches/{batch_id}/heartbeat", responses=_REFUSED)
async def heartbeat(request: Request, worker_id: WorkerId, batch_id: BatchId,
                    principal: Principal,
                    beat: Annotated[Beat | None, Body()] = None) -> Heartbeat:
    """Keep the batch: its deadline moves a lease ahead; the games the worker says it
    started are reported as started (422, flagged: a game not in the batch)."""
    joined = await _joined(request, worker_id, principal)
    with _answered():
        seconds, how = await _hub(request).heartbeat(
            joined, batch_id, () if beat is None else beat.started)
    return Heartbeat(lease_seconds=seconds, wind_down=how)


@dataclasses.dataclass(frozen=True)
class _UploadBody:
    """An `Upload` as the route reads it: the record typed at once (one parse of the body,
    in pydantic's core, rather than a dictionary validated, dumped and parsed again)."""

    index: Annotated[int, Field(ge=0, le=2**31 - 1)]
    seconds: Annotated[float, Field(ge=0.0, le=1e7)]
    record: GameRecord


@functools.cache
def _upload_adapter() -> TypeAdapter[_UploadBody]:
    return TypeAdapter(_UploadBody)


@router.post("/{worker_id}/batches/{batch_id}/games", status_code=status.HTTP_201_CREATED,
             responses={201: {"model": Counted}, **_REFUSED}, openapi_extra={"requestBody": {
                 "required": True,
                 "content": {"application/json": {"schema": Upload.model_json_schema()}}}})
async def upload(request: Request, worker_id: WorkerId, batch_id: BatchId,
                 principal: Principal) -> Response:
    """Upload one finished game of the batch (an `Upload`): stored and counted before the
    answer (a `Counted`: whether the run winds down now)."""
    joined = await _joined(request, worker_id, principal)
    try:
        game = _upload_adapter().validate_json(await request.body())
    except ValidationError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT,
                            f"not an upload of a game record ({_first_line(exc)})") from None
    with _answered():
        how = await _hub(request).upload(joined, batch_id, game.index, game.record,
                                         game.seconds)
    return Response(_COUNTED[how], status_code=status.HTTP_201_CREATED,
                    media_type="application/json")


@router.post("/{worker_id}/batches/{batch_id}/end", responses=_REFUSED)
async def end(request: Request, worker_id: WorkerId, batch_id: BatchId,
              principal: Principal) -> Ended:
    """End the batch: the games not uploaded go to other workers."""
    joined = await _joined(request, worker_id, principal)
    with _answered():
        return Ended(returned=await _hub(request).end(joined, batch_id))


def _first_line(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return text[:300]
