"""What stands between the network and the tournaments: the token, body sizes, submit rate.

Writes need ``Authorization: Bearer TOKEN`` (reads too, when the operator asks): the token is
compared in constant time, and a service started without one refuses every write. Request
bodies are bounded (413) whether or not they announce their length, and each client address
may submit only so many tournaments a minute (429 with ``Retry-After``).
"""

from __future__ import annotations

import math
import secrets
import time
from collections import OrderedDict
from typing import Any

from fastapi import HTTPException, Request, status
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from runner.service.settings import ServiceSettings

__all__ = ["BodyLimit", "RateLimiter", "bearer", "check_token"]

bearer = HTTPBearer(auto_error=False, description="The service's token (RUNNER_TOKEN).")
"""The Bearer scheme, as the OpenAPI document shows it."""


def check_token(settings: ServiceSettings, credentials: HTTPAuthorizationCredentials | None,
                *, write: bool) -> None:
    """Refuse a request without the right token (401); reads pass unless protected."""
    if not write and not settings.read_token_required:
        return
    expected = settings.token
    if expected is None:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "this service has no token set (RUNNER_TOKEN or --token-file): writes are off",
            headers={"WWW-Authenticate": "Bearer"})
    given = credentials.credentials if credentials is not None else ""
    if not secrets.compare_digest(given.encode("utf-8"), expected.encode("utf-8")):
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "missing or wrong token",
                            headers={"WWW-Authenticate": "Bearer"})


class RateLimiter:
    """A token bucket per client address: `per_minute` requests, bursts up to that many."""

    def __init__(self, per_minute: float, *, clients: int = 10_000) -> None:
        """`clients` bounds the addresses remembered (the least recent are forgotten)."""
        self.per_minute = per_minute
        self.capacity = max(1.0, per_minute)
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._clients = clients

    def check(self, request: Request) -> None:
        """Take one request from the client's bucket, or refuse it with 429."""
        if self.per_minute <= 0:
            return
        key = request.client.host if request.client is not None else "?"
        now = time.monotonic()
        tokens, last = self._buckets.pop(key, (self.capacity, now))
        tokens = min(self.capacity, tokens + (now - last) * self.per_minute / 60.0)
        if tokens < 1.0:
            self._buckets[key] = (tokens, now)
            wait = math.ceil((1.0 - tokens) * 60.0 / self.per_minute)
            raise HTTPException(status.HTTP_429_TOO_MANY_REQUESTS,
                                f"too many submissions; try again in {wait} s",
                                headers={"Retry-After": str(wait)})
        self._buckets[key] = (tokens - 1.0, now)
        while len(self._buckets) > self._clients:
            self._buckets.popitem(last=False)


class BodyLimit:
    """ASGI middleware: a request body over `limit` bytes gets 413, announced or not."""

    def __init__(self, app: Any, limit: int) -> None:
        """Wrap `app`; `limit` is in bytes."""
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Refuse an announced oversize body at once; cut a streamed one when it grows past."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    announced = int(value)
                except ValueError:
                    await _refuse(send, 400, "bad Content-Length")
                    return
                if announced > self.limit:
                    await _refuse(send, 413, f"request body over {self.limit} bytes")
                    return
        received = 0
        started = False

        async def counting_receive() -> Any:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    raise _TooLarge
            return message

        async def watching_send(message: Any) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, watching_send)
        except _TooLarge:
            if not started:
                await _refuse(send, 413, f"request body over {self.limit} bytes")


class _TooLarge(Exception):
    """A streamed body grew past the limit."""


async def _refuse(send: Any, code: int, text: str) -> None:
    import json

    body = json.dumps({"detail": text}).encode()
    await send({"type": "http.response.start", "status": code,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
