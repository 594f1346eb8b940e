"""The service's FastAPI app: the JSON API, the page, and the manager's life around them."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

from runner import __version__
from runner.app.run import Placement
from runner.build import default_cache
from runner.service import api, branch_api, fleet_api, fleet_views, testpages, tune_api
from runner.service.branches import BranchQueue
from runner.service.declared import DeclaredOptions
from runner.service.manager import TournamentManager
from runner.service.page import router as page_router
from runner.service.security import (
    BodyLimit,
    CachedTokens,
    Principal,
    RateLimiter,
    StreamSlots,
    TokenThrottle,
)
from runner.service.settings import ServiceSettings
from runner.service.tunes import TuneRuns, check_tune
from runner.store.store import Store

__all__ = ["create_app"]


def create_app(settings: ServiceSettings, *, store: Store | None = None,
               manager: TournamentManager | None = None) -> FastAPI:
    """The app for `settings`; the database is opened (and migrated) when it starts, unless
    its store is given, and the tournaments it owns are resumed."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        opened = store if store is not None else Store.open(settings.db_url)
        app.state.manager = manager or TournamentManager(settings, opened)
        app.state.tokens = StoreTokens(opened)
        app.state.worker_tokens = CachedTokens(app.state.tokens, fleet_api.TOKEN_TTL)
        app.state.branch_queue = BranchQueue(settings, opened, app.state.manager,
                                             settings.build_cache or default_cache())
        app.state.tunes = TuneRuns(
            opened, _tune_placements(app.state.manager, settings),
            app.state.manager.placements.fleet,
            functools.partial(check_tune, settings=settings,
                              declared=app.state.declared_options))
        try:
            await app.state.manager.start()
            await app.state.branch_queue.start()
            await app.state.tunes.start()
            yield
        finally:
            await app.state.tunes.close()
            await app.state.branch_queue.close()
            await app.state.manager.close()
            if store is None:
                opened.close()

    # No Swagger UI or ReDoc: both load their script from a CDN (a blank page offline);
    # /docs is the page's own list of routes (runner/service/page.py).
    app = FastAPI(
        title="cecp-runner", version=__version__, lifespan=lifespan,
        docs_url=None, redoc_url=None,
        description="Submit, watch and read chess-engine tournaments.")
    app.state.settings = settings
    app.state.rate_limiter = RateLimiter(settings.submit_rate)
    app.state.declared_options = DeclaredOptions()
    app.state.token_throttle = TokenThrottle(settings.token_failures)
    app.state.stream_slots = StreamSlots(settings.max_streams, settings.max_streams_per_client)
    app.include_router(api.router)
    app.include_router(branch_api.router)
    app.include_router(tune_api.router)
    app.include_router(tune_api.page_router)
    if settings.accept_workers:
        app.include_router(fleet_api.router)
        app.include_router(fleet_views.router)
        app.include_router(fleet_views.page_router)
    app.include_router(page_router)
    app.include_router(testpages.router)
    if settings.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=list(settings.cors_origins),
                           allow_methods=["GET", "POST"],
                           allow_headers=["Authorization", "Content-Type", "Last-Event-ID"])
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes,
                       larger={fleet_api.router.prefix + "/": settings.max_upload_bytes})
    return app


def _tune_placements(manager: TournamentManager, settings: ServiceSettings,
                     ) -> dict[str | None, Placement]:
    """Where a tuning run may play: the operator's choice, this host, the Dask cluster and
    the remote workers when the service has them."""
    offered: dict[str | None, Placement] = {None: manager.placements.of(None),
                                            "host": manager.placements.of("host")}
    if settings.workers or settings.cluster:
        offered["cluster"] = manager.placements.of("cluster")
    if manager.placements.fleet is not None:
        offered["workers"] = manager.placements.of("workers")
    return offered


class StoreTokens:
    """The tokens of the service's database (``runner token add``), as requests check them."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def find(self, token: str) -> Principal | None:
        """The live token whose text is `token` (None: unknown or revoked)."""
        found = self._store.tokens.find(token)
        return None if found is None else Principal(found.name, found.role)

    def any_live(self) -> bool:
        """Whether any token of the database is live."""
        return self._store.tokens.any_live()
