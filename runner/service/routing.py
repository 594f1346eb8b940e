"""What every router of the service shares: the token checks as route dependencies, the app
state's settings and manager, the OpenAPI response entries of refusals, and the 422 of a
refused submission with its problems shown safely.

The JSON API of tournaments, of tuning runs, of branch tests and of workers are separate
routers; each reads these from here rather than from one another.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials

from runner.report.wire import wire_data
from runner.service.manager import TournamentManager
from runner.service.payloads import ErrorBody, Problem, ProblemsBody
from runner.service.security import Principal, bearer, check_token, refuse_plain_http, request_key
from runner.service.settings import ServiceSettings

__all__ = [
    "OPEN_READ",
    "PROBLEMS",
    "REFUSED",
    "REFUSED_AS_JSON",
    "SUBMIT_BODY",
    "UNAUTHORIZED",
    "UNAUTHORIZED_AS_JSON",
    "Admin",
    "Credentials",
    "Read",
    "Write",
    "manager_of",
    "problem",
    "refused",
    "settings_of",
]

Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
"""The request's bearer token, if any."""

SUBMIT_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "application/toml": {"schema": {"type": "string"}},
            "text/plain": {"schema": {"type": "string"}},
            "application/json": {"schema": {"type": "object"}},
        },
    },
}
"""The documented body of a submission: TOML text or a JSON object."""
PROBLEMS: dict[str, Any] = {
    "model": ProblemsBody,
    "description": "The configuration's problems: key path, value and message of each."}
"""The 422 of a refused submission."""
UNAUTHORIZED: dict[str, Any] = {
    "model": ErrorBody,
    "description": "Missing or wrong token (writes always; reads when the service protects "
                   "them: --protect-reads)."}
"""The 401 of a missing or wrong token."""
REFUSED: dict[str, Any] = {"model": ErrorBody}
"""Any other refusal (no such tournament, a conflict, too many requests, ...): one line."""
# A route whose body is not JSON (the stream, PGN, HTML) refuses in JSON all the same; FastAPI
# would put a "model" under the route's own media type, so these name the schema themselves
# (ErrorBody is in the document's components through the JSON routes' refusals).
REFUSED_AS_JSON: dict[str, Any] = {"content": {"application/json": {
    "schema": {"$ref": "#/components/schemas/ErrorBody"}}}}
"""A refusal of a route whose own body is not JSON."""
UNAUTHORIZED_AS_JSON: dict[str, Any] = {**REFUSED_AS_JSON,
                                        "description": UNAUTHORIZED["description"]}
"""The 401 of a route whose own body is not JSON."""
# Reads need no token unless the service protects them: the document offers both ways (an
# empty requirement is "none"), so that clients and generated tests do not insist on one.
OPEN_READ: dict[str, Any] = {"security": [{}]}
"""The security entry of a read route."""


def settings_of(request: Request) -> ServiceSettings:
    """The service's settings, from the app's state."""
    settings: ServiceSettings = request.app.state.settings
    return settings


def manager_of(request: Request) -> TournamentManager:
    """The service's tournament manager, from the app's state."""
    manager: TournamentManager = request.app.state.manager
    return manager


def _checked_token(request: Request, credentials: HTTPAuthorizationCredentials | None, *,
                   write: bool, roles: tuple[str, ...] = ("admin", "submitter"),
                   ) -> Principal | None:
    refuse_plain_http(request, credentials)
    return check_token(settings_of(request), credentials, write=write,
                       throttle=request.app.state.token_throttle, key=request_key(request),
                       book=getattr(request.app.state, "tokens", None), roles=roles)


def _reader(request: Request, credentials: Credentials) -> None:
    _checked_token(request, credentials, write=False)


def _writer(request: Request, credentials: Credentials) -> Principal | None:
    return _checked_token(request, credentials, write=True)


def _admin(request: Request, credentials: Credentials) -> None:
    _checked_token(request, credentials, write=True, roles=("admin",))


Read = Depends(_reader)
"""A reader's token when the service protects reads (none needed otherwise)."""
Write = Depends(_writer)
"""A submitter's or an admin's token."""
Admin = Depends(_admin)
"""An admin's token."""


def refused(problems: ProblemsBody) -> JSONResponse:
    """A 422 with the submission's problems."""
    return JSONResponse(status_code=422, content=wire_data(problems))


def problem(settings: ServiceSettings, key: str, value: str, message: str,
            text: str) -> Problem:
    """One problem of a refused submission as the API shows it: the service's own
    directories are not named (paths are shown relative to the books directory) and every
    field is one line of bounded length."""
    root = str(settings.books_root)

    def shown(field: str, limit: int) -> str:
        field = field.replace(root + "/", "").replace(root, ".")
        field = " ".join("".join(c if c.isprintable() else " " for c in field).split())
        return field if len(field) <= limit else field[: limit - 3] + "..."

    return Problem(key=shown(key, 200), value=shown(value, 200), message=shown(message, 500),
                   text=shown(text, 900))
