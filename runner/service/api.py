"""The JSON API: submit, list, read, stop and resume tournaments; their events, PGN and report.

Every route reads the manager and settings from the app's state (config passed, never
global). Problems with a submitted configuration come back as 422 with one entry per problem
(key path, value, message: the CLI's own wording); nothing is stored for such a submission.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Depends, Header, HTTPException, Path, Query, Request, status
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, StreamingResponse
from fastapi.sse import EventSourceResponse, ServerSentEvent

from runner.config.check import ConfigError, ConfigProblem
from runner.game.record import GameTermination
from runner.rules import Result
from runner.service.declared import DeclaredOptions
from runner.service.gameview import GameView, game_pgn, game_view
from runner.service.hub import SlowReader
from runner.service.manager import Conflict, TournamentManager
from runner.service.payloads import (
    GameFinishedEvent,
    GameStartedEvent,
    MoveEvent,
    NoticeEvent,
    ProblemsBody,
    SnapshotEvent,
    SprtEvent,
    StandingsEvent,
    StateChange,
    StatusEvent,
    Submitted,
    TournamentDetail,
    TournamentFinishedEvent,
    TournamentList,
)
from runner.service.routing import (
    OPEN_READ,
    PROBLEMS,
    REFUSED,
    REFUSED_AS_JSON,
    SUBMIT_BODY,
    UNAUTHORIZED,
    UNAUTHORIZED_AS_JSON,
    Admin,
    Read,
    Write,
    manager_of,
    problem,
    refused,
    settings_of,
)
from runner.service.security import (
    StreamSlots,
    request_key,
)
from runner.service.settings import ServiceSettings
from runner.service.submission import SOURCE, check_submission, parse_body, take_placement
from runner.tournament.events import DatabaseFailure, TournamentError

__all__ = ["router"]

log = logging.getLogger(__name__)

router = APIRouter(prefix="/api", tags=["tournaments"])
"""The JSON API's routes."""

TournamentId = Annotated[int, Path(ge=1, le=2**31 - 1, description="The tournament's id.")]

if TYPE_CHECKING:
    StreamData = ServerSentEvent
else:
    # What FastAPI documents as each event's JSON data (the OpenAPI item schema); the
    # generator itself yields the events already encoded, as ServerSentEvent.
    StreamData = (SnapshotEvent | GameStartedEvent | MoveEvent | GameFinishedEvent
                  | StandingsEvent | NoticeEvent | StatusEvent | TournamentFinishedEvent
                  | SprtEvent)


class HeavySlots:
    """Heavy reads (a report, a PGN export) in flight per client address: one anonymous client
    may not keep every worker busy."""

    def __init__(self, per_client: int) -> None:
        """At most `per_client` at once for each address."""
        self.per_client = max(1, per_client)
        self._held: dict[str, int] = {}

    def take(self, client: str) -> Callable[[], None]:
        """Hold a slot for `client` (HTTPException 429 when it has none left); returns the
        function that gives it back (calling it again is harmless)."""
        if self._held.get(client, 0) >= self.per_client:
            raise HTTPException(status.HTTP_429_TOO_MANY_REQUESTS,
                                f"at most {self.per_client} reports or exports at once per "
                                "client; try again when one has finished",
                                headers={"Retry-After": "2"})
        self._held[client] = self._held.get(client, 0) + 1
        given: list[bool] = []

        def give_back() -> None:
            if given:
                return
            given.append(True)
            left = self._held.get(client, 1) - 1
            if left > 0:
                self._held[client] = left
            else:
                self._held.pop(client, None)

        return give_back


def _heavy_slots(request: Request) -> HeavySlots:
    slots: HeavySlots | None = getattr(request.app.state, "heavy_slots", None)
    if slots is None:
        slots = HeavySlots(settings_of(request).heavy_reads_per_client)
        request.app.state.heavy_slots = slots
    return slots


def _client(request: Request) -> str:
    return request.client.host if request.client is not None else ""


async def _known(manager: TournamentManager, tournament_id: int) -> None:
    if not await manager.exists(tournament_id):
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no tournament {tournament_id}")


@router.post("/tournaments", status_code=status.HTTP_201_CREATED, dependencies=[Write],
             openapi_extra=SUBMIT_BODY,
             response_model=Submitted,
             responses={400: REFUSED, 401: UNAUTHORIZED, 422: PROBLEMS, 429: REFUSED,
                        413: REFUSED, 503: REFUSED})
async def submit(request: Request) -> Submitted | JSONResponse:
    """Submit a tournament: its configuration as TOML text or as a JSON object."""
    settings = settings_of(request)
    body = await request.body()  # first: a body over the limit is refused, not counted
    request.app.state.rate_limiter.check(request)
    try:
        data = parse_body(body, request.headers.get("content-type", ""))
        placement = take_placement(data, settings)
        config = await asyncio.to_thread(_checked, data, settings,
                                         request.app.state.declared_options)
        tournament_id = await manager_of(request).submit(config, placement)
    except ConfigError as exc:
        return refused(ProblemsBody(detail=[
            problem(settings, p.key, p.value, p.message, str(p)) for p in exc.problems]))
    except DatabaseFailure as exc:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, str(exc)) from None
    except TournamentError as exc:  # found when the tournament is set up (a short book, say)
        return refused(ProblemsBody(detail=[problem(settings, "", "", str(exc), str(exc))]))
    return Submitted(id=tournament_id, url=f"/api/tournaments/{tournament_id}")


def _checked(data: dict[str, Any], settings: ServiceSettings,
             declared: DeclaredOptions | None) -> Any:
    """`check_submission`, where anything it did not foresee is a refusal in one line (a
    422, logged as one line), never a 500 with a traceback."""
    try:
        return check_submission(data, settings, declared)
    except ConfigError:
        raise
    except Exception as exc:
        log.warning("a submission could not be checked: %s: %s", type(exc).__name__,
                    " ".join(str(exc).split())[:200])
        raise ConfigError([ConfigProblem(
            SOURCE, "", "", f"the configuration could not be checked ({type(exc).__name__})")]) \
            from None


@router.get("/tournaments", dependencies=[Read], openapi_extra=OPEN_READ,
            responses={401: UNAUTHORIZED, 429: REFUSED})
async def list_tournaments(request: Request) -> TournamentList:
    """Every tournament, oldest first, with its progress."""
    return TournamentList(tournaments=await manager_of(request).summaries())


@router.get("/tournaments/{tournament_id}", dependencies=[Read], openapi_extra=OPEN_READ,
            responses={401: UNAUTHORIZED, 404: REFUSED, 429: REFUSED})
async def tournament(request: Request, tournament_id: TournamentId) -> TournamentDetail:
    """A tournament's status, standings, Elo, pentanomial counts, SPRT and running games."""
    found = await manager_of(request).detail(tournament_id)
    if found is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no tournament {tournament_id}")
    return found


@router.post("/tournaments/{tournament_id}/stop", dependencies=[Admin],
             responses={401: UNAUTHORIZED, 404: REFUSED, 409: REFUSED, 429: REFUSED})
async def stop(request: Request, tournament_id: TournamentId,
               hard: Annotated[bool, Query(description="Cut the running games too.")] = False,
               ) -> StateChange:
    """Stop a tournament: no new games; with ``hard=true`` the running games are cut."""
    manager = manager_of(request)
    await _known(manager, tournament_id)
    try:
        state = await manager.stop(tournament_id, hard=hard)
    except Conflict as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from None
    return StateChange(id=tournament_id, status=state)


@router.post("/tournaments/{tournament_id}/resume", dependencies=[Admin],
             responses={401: UNAUTHORIZED, 404: REFUSED, 409: REFUSED, 429: REFUSED})
async def resume(request: Request, tournament_id: TournamentId) -> StateChange:
    """Play a stopped or interrupted tournament's missing games."""
    manager = manager_of(request)
    await _known(manager, tournament_id)
    try:
        state = await manager.resume(tournament_id)
    except Conflict as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from None
    except ValueError as exc:  # a stored configuration this version cannot read
        raise HTTPException(status.HTTP_409_CONFLICT, str(exc)) from None
    return StateChange(id=tournament_id, status=state)


async def _stream_allowed(request: Request, tournament_id: TournamentId,
                          ) -> AsyncIterator[None]:
    """A stream slot, taken before the stream starts (a generator's errors would come after
    its headers) and given back when the response ends (FastAPI runs the rest of a
    dependency with yield after the response)."""
    await _known(manager_of(request), tournament_id)
    slots: StreamSlots = request.app.state.stream_slots
    key = request_key(request)
    slots.acquire(key)  # after the last await: no other request slips in between
    try:
        yield
    finally:
        slots.release(key)


@router.get("/tournaments/{tournament_id}/events",
            dependencies=[Read, Depends(_stream_allowed)],
            response_class=EventSourceResponse, openapi_extra=OPEN_READ,
            responses={401: UNAUTHORIZED_AS_JSON, 404: REFUSED_AS_JSON, 429: REFUSED_AS_JSON,
                       503: REFUSED_AS_JSON})
async def events(request: Request, tournament_id: TournamentId,
                 last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
                 ) -> AsyncIterator[StreamData]:
    """Server-Sent Events: snapshot, game_started, move, game_finished, standings, notice,
    status, tournament_finished. A reconnecting client sends Last-Event-ID and misses no
    finished game."""
    manager = manager_of(request)
    event_log = manager.log(tournament_id)
    if not event_log.closed and await manager.is_finished(tournament_id):
        event_log.close()  # finished before this process started: nothing more will come
    stream = event_log.follow(
        (last_event_id or "")[:64],
        lambda: manager.snapshot(tournament_id),
        lambda: manager.finished_games(tournament_id))
    first = True
    try:
        async for event in stream:
            # raw_data: the JSON text encoded once per event, not once per reader.
            yield ServerSentEvent(raw_data=event.text, event=event.kind, id=event.id,
                                  retry=2000 if first else None)
            first = False
    except SlowReader:
        return  # the client reconnects with its last id and catches up from the log


@router.get("/tournaments/{tournament_id}/pgn", dependencies=[Read],
            response_class=StreamingResponse, openapi_extra=OPEN_READ, responses={
                200: {"content": {"application/x-chess-pgn": {"schema": {"type": "string"}}}},
                401: UNAUTHORIZED_AS_JSON, 404: REFUSED_AS_JSON, 429: REFUSED_AS_JSON})
async def pgn(request: Request, tournament_id: TournamentId,
              engine: Annotated[str | None, Query(max_length=200)] = None,
              result: Result | None = None,
              termination: GameTermination | None = None) -> StreamingResponse:
    """The tournament's games as PGN, streamed; filters as ``runner export``."""
    manager = manager_of(request)
    await _known(manager, tournament_id)
    from runner.app.reading import pgn_games

    if engine is not None:  # a typo would answer an empty file with 200, as if it had no games
        engines = await asyncio.to_thread(_engines_of, manager, tournament_id)
        if engine not in engines:
            raise HTTPException(
                status.HTTP_404_NOT_FOUND,
                f"engine {engine!r}: no engine of that name in tournament {tournament_id} "
                f"(its engines: {', '.join(engines)})")
    give_back = _heavy_slots(request).take(_client(request))

    def games() -> Iterator[str]:
        # Sent in pieces of some 64 KB, not a game at a time: each piece is one hop from this
        # thread to the event loop, which has games to referee.
        try:
            piece: list[str] = []
            size = 0
            for text in pgn_games(manager.store, tournament_id, engine=engine, result=result,
                                  termination=termination):
                piece.append(text)
                size += len(text)
                if size >= 65536:
                    yield "".join(piece)
                    piece, size = [], 0
            if piece:
                yield "".join(piece)
        finally:
            give_back()

    body = games()
    weakref.finalize(body, give_back)  # also when the response is never sent
    return StreamingResponse(
        body, media_type="application/x-chess-pgn",
        headers={"Content-Disposition": f'attachment; filename="tournament-{tournament_id}.pgn"'})


GameIndex = Annotated[int, Path(ge=0, le=2**31 - 1,
                                 description="The game's place in the schedule (0-based).")]


@router.get("/tournaments/{tournament_id}/games/{index}", dependencies=[Read],
            response_model=GameView, openapi_extra=OPEN_READ,
            responses={401: UNAUTHORIZED, 404: REFUSED, 429: REFUSED})
async def game(request: Request, tournament_id: TournamentId, index: GameIndex) -> GameView:
    """One finished game: its moves, with the position, both clocks and the engine's score
    after each (the page's game view replays it)."""
    manager = manager_of(request)
    await _known(manager, tournament_id)
    found = await asyncio.to_thread(game_view, manager.store, tournament_id, index)
    if found is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND,
                            f"no finished game {index} in tournament {tournament_id}")
    return found


@router.get("/tournaments/{tournament_id}/games/{index}/pgn", dependencies=[Read],
            response_class=PlainTextResponse, openapi_extra=OPEN_READ, responses={
                200: {"content": {"application/x-chess-pgn": {"schema": {"type": "string"}}}},
                401: UNAUTHORIZED_AS_JSON, 404: REFUSED_AS_JSON, 429: REFUSED_AS_JSON})
async def game_pgn_file(request: Request, tournament_id: TournamentId,
                        index: GameIndex) -> PlainTextResponse:
    """One finished game as a PGN file."""
    manager = manager_of(request)
    await _known(manager, tournament_id)
    text = await asyncio.to_thread(game_pgn, manager.store, tournament_id, index)
    if text is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND,
                            f"no finished game {index} in tournament {tournament_id}")
    return PlainTextResponse(text, media_type="application/x-chess-pgn", headers={
        "Content-Disposition":
            f'attachment; filename="tournament-{tournament_id}-game-{index + 1}.pgn"'})


def _engines_of(manager: TournamentManager, tournament_id: int) -> tuple[str, ...]:
    """The engines of a tournament, in entry order (none when it has gone)."""
    info = manager.store.info(tournament_id)
    return () if info is None else info.engines


@router.get("/tournaments/{tournament_id}/report.html", dependencies=[Read],
            response_class=HTMLResponse, openapi_extra=OPEN_READ,
            responses={401: UNAUTHORIZED_AS_JSON, 404: REFUSED_AS_JSON,
                       429: REFUSED_AS_JSON})
async def report_html(request: Request, tournament_id: TournamentId) -> HTMLResponse:
    """The same page as ``runner report --format html`` (built off the event loop, once per
    number of games stored)."""
    manager = manager_of(request)
    await _known(manager, tournament_id)
    give_back = _heavy_slots(request).take(_client(request))
    try:
        return HTMLResponse(await manager.report_html(tournament_id))
    finally:
        give_back()
