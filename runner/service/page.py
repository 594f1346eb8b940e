"""The service's web page: the list of tournaments with a submit form, and a live tournament page.

Server-rendered HTML (Jinja2, every string escaped) plus two small hand-written scripts, no
library and no build step: ``static/page.js`` submits through the JSON API and follows a
tournament's event stream, ``static/draw.js`` draws what it hears (boards that move, clocks,
the Elo and LLR plots as inline SVG). Nothing is loaded from outside the service:
the static files come from this router, by name from a fixed list, and every page is sent with
a Content-Security-Policy that allows only this origin (no inline script, no foreign host).
"""

from __future__ import annotations

import functools
import tomllib
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, Response

from runner.service.manager import SNAPSHOT_GAMES
from runner.service.payloads import GameFinishedEvent, TournamentDetail
from runner.text import undirected

if TYPE_CHECKING:
    from fastapi.templating import Jinja2Templates

__all__ = ["CONTENT_SECURITY_POLICY", "FINISHED_ROWS", "STATIC_FILES", "example_config",
           "not_found_page", "plain", "render_page", "router"]

_HERE = Path(__file__).resolve().parent
_STATIC = _HERE / "static"

STATIC_FILES: dict[str, str] = {
    "draw.js": "text/javascript; charset=utf-8",
    "page.js": "text/javascript; charset=utf-8",
    "page.css": "text/css; charset=utf-8",
    "workers.js": "text/javascript; charset=utf-8",
}
"""The files ``/static/{name}`` serves, with their media types: nothing else on disk is reachable."""

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
"""Only this origin's script, style and connections: injected markup could run nothing."""

_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}

def plain(value: object) -> object:
    """A value as the page prints it: text without direction controls (else unchanged)."""
    return undirected(value) if isinstance(value, str) else value


@functools.cache
def _templates() -> Jinja2Templates:
    """The page templates; autoescape is on for every template, whatever its file name, and
    every printed value goes through `plain`. Built when a page is first rendered: Jinja2 is
    about a tenth of ``runner serve``'s imports, and a service that only answers the API (a
    worker's hub, the tests) renders none (issue 38)."""
    import jinja2
    from fastapi.templating import Jinja2Templates

    templates = Jinja2Templates(env=jinja2.Environment(
        loader=jinja2.FileSystemLoader(_HERE / "templates"), autoescape=True,
        undefined=jinja2.StrictUndefined, finalize=plain))
    templates.env.filters["when"] = _when
    return templates

router = APIRouter(include_in_schema=False)
"""The HTML routes (``/``, ``/tournaments/{id}``, ``/docs``) and the static files
(``/static/{name}``)."""

_PREFERRED_ENGINES = ("bundled", "bundled-v1")

FINISHED_ROWS = SNAPSHOT_GAMES
"""Finished games the tournament page lists (the newest; the PGN and report have them all)."""


def _engine_names(engines_file: Path | None) -> list[str]:
    """The names the service's engines file allows, in file order ([] when it cannot be read)."""
    if engines_file is None:
        return []
    try:
        with open(engines_file, "rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError):
        return []
    engines = data.get("engines")
    if not isinstance(engines, list):
        return []
    return [e["name"] for e in engines if isinstance(e, dict) and isinstance(e.get("name"), str)]


def example_config(names: list[str]) -> str:
    """A small valid submission naming two allowed engines (the bundled ones when allowed)."""
    chosen = [n for n in _PREFERRED_ENGINES if n in names]
    if len(chosen) < 2:
        chosen = names[:2] if len(names) >= 2 else list(_PREFERRED_ENGINES)
    listed = ", ".join(_toml_string(n) for n in chosen)
    return (
        f'name = {_toml_string(chosen[0] + " vs " + chosen[1])}\n'
        'format = "match"\n'
        f"engines = [{listed}]\n"
        'tc = "5+0.05"\n'
        "rounds = 10\n"
        "games = 2\n"
        "concurrency = 2\n"
    )


def _toml_string(text: str) -> str:
    """A TOML basic string (JSON's escapes are valid TOML escapes for these characters)."""
    import json

    return json.dumps(text, ensure_ascii=False)


def _settings(request: Request) -> Any:
    """The app's ServiceSettings."""
    return request.app.state.settings


def _engines_file(settings: Any) -> Path | None:
    """The settings' engines file, if it has one."""
    path = getattr(settings, "engines_file", None)
    return Path(path) if path is not None else None


def _when(value: object) -> str:
    """A timestamp as the page shows it: ``2026-11-24 01:02:03`` (UTC as stored)."""
    if value is None or value == "":
        return ""
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    text = str(value)
    return text.replace("T", " ")[:19]


def render_page(request: Request, name: str, context: dict[str, Any], status_code: int = 200) -> HTMLResponse:
    """A template rendered with the page's security headers."""
    response = _templates().TemplateResponse(request, name, context, status_code=status_code)
    response.headers.update(_HEADERS)
    return response


@router.get("/", response_class=HTMLResponse)
async def index(request: Request) -> HTMLResponse:
    """The list of tournaments and the submit form."""
    settings = _settings(request)
    protected = bool(getattr(settings, "read_token_required", False))
    # With reads protected the list is not rendered here: the script fetches it with the token.
    summaries = [] if protected else await request.app.state.manager.summaries()
    names = _engine_names(_engines_file(settings))
    return render_page(request, "index.html", {
        "tournaments": summaries, "protected": protected, "engine_names": names,
        "example": example_config(names),
    })


@router.get("/tournaments/{tournament_id}", response_class=HTMLResponse)
async def tournament_page(request: Request, tournament_id: str) -> HTMLResponse:
    """One tournament, live: standings, plots, boards of the running games, finished games."""
    if (len(tournament_id) > 10 or not (tournament_id.isascii() and tournament_id.isdigit())
            or not 1 <= int(tournament_id) < 2**31):
        return not_found_page(request, "There is no such tournament.")  # a page, not a JSON 422
    return await _tournament_page(request, int(tournament_id))


async def _tournament_page(request: Request, tournament_id: int) -> HTMLResponse:
    settings = _settings(request)
    protected = bool(getattr(settings, "read_token_required", False))
    detail: TournamentDetail | None = None
    finished: list[GameFinishedEvent] = []
    if not protected:
        manager = request.app.state.manager
        detail = await manager.detail(tournament_id)
        if detail is None:
            return not_found_page(request, f"There is no tournament {tournament_id}.")
        finished = await manager.finished_games(tournament_id, newest=FINISHED_ROWS)
    return render_page(request, "tournament.html", {
        "tid": tournament_id, "detail": detail, "protected": protected,
        "report": None if detail is None else detail.report,
        "finished": list(reversed(finished[-FINISHED_ROWS:])), "finished_rows": FINISHED_ROWS,
    })


@router.get("/tournaments/{tournament_id}/games/{index}", response_class=HTMLResponse)
async def game_page(request: Request, tournament_id: str, index: str) -> HTMLResponse:
    """One finished game, replayed: the script reads it from the API and steps the board."""
    if not all(len(part) <= 10 and part.isascii() and part.isdigit()
               for part in (tournament_id, index)) \
            or not 1 <= int(tournament_id) < 2**31 or not int(index) < 2**31:
        return not_found_page(request, "There is no such game.")
    protected = bool(getattr(_settings(request), "read_token_required", False))
    return render_page(request, "game.html", {"tid": int(tournament_id), "index": int(index),
                                        "protected": protected})


def not_found_page(request: Request, message: str) -> HTMLResponse:
    """The 404 page."""
    return render_page(request, "404.html", {"message": message}, status_code=404)


@router.get("/docs", response_class=HTMLResponse)
async def api_docs(request: Request) -> HTMLResponse:
    """The API's routes, from its OpenAPI document, with a link to that document.

    FastAPI's own /docs is Swagger UI loaded from a CDN: blank without internet, and refused
    by this page's Content-Security-Policy anyway. No well-kept package ships its assets
    (swagger-ui-bundle's last release is of 2023 and none is installed with FastAPI), so
    this page lists the routes itself and leaves interactive use to the user's own client.
    """
    document = request.app.openapi()
    routes = []
    for path, operations in document.get("paths", {}).items():
        for method, operation in operations.items():
            summary = (operation.get("description") or operation.get("summary") or "")
            routes.append({"method": method.upper(), "path": path,
                           "summary": summary.split("\n\n")[0]})
    return render_page(request, "docs.html", {"routes": routes,
                                        "openapi_url": request.app.openapi_url or ""})


@router.api_route("/static/{name}", methods=["GET", "HEAD"])
async def static_file(request: Request, name: str) -> Response:
    """One of the page's static files, by its name in `STATIC_FILES` (404 for any other)."""
    media_type = STATIC_FILES.get(name)
    if media_type is None:
        return not_found_page(request, "There is no such file.")
    return FileResponse(_STATIC / name, media_type=media_type,
                        headers={"X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache"})
