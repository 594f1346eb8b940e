"""What stands between the network and the tournaments: the token, body sizes, submit rate.

Writes need ``Authorization: Bearer TOKEN`` (reads too, when the operator asks): the service's
own token (an admin's) is compared in constant time, the others (``runner token add``, each
with a role) are found by their SHA-256; a service with no token at all refuses every write,
and a token sent over plain HTTP from another machine is refused. Wrong
tokens are throttled per client (`TokenThrottle`). Request bodies are bounded (413) whether or
not they announce their length, each client may submit only so many tournaments a minute
(429 with ``Retry-After``) and hold only so many event streams (`StreamSlots`).

A "client" is its address, or for IPv6 its /64 network (`client_key`): one host commonly has
a whole /64 to pick addresses from.
"""

from __future__ import annotations

import hashlib
import ipaddress
import math
import secrets
import time
from collections import Counter, OrderedDict
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
from fastapi import HTTPException, Request, status
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.requests import ClientDisconnect

from runner.service.settings import ServiceSettings

__all__ = ["BodyLimit", "CachedTokens", "Principal", "RateLimiter", "StreamSlots", "TokenBook",
           "TokenThrottle", "bearer", "check_token", "client_key", "loopback",
           "refuse_plain_http", "request_key"]

bearer = HTTPBearer(auto_error=False, description="The service's token (RUNNER_TOKEN).")
"""The Bearer scheme, as the OpenAPI document shows it."""


def client_key(host: str) -> str:
    """The key limits are counted by: the address, or an IPv6 address's /64 network."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return host


def request_key(request: Request) -> str:
    """The client key of a request's peer (the direct peer: proxy headers are not trusted)."""
    return client_key(request.client.host if request.client is not None else "?")


@dataclass(frozen=True)
class Principal:
    """Who a request's token names: the token's name and its role."""

    name: str
    role: str


class TokenBook(Protocol):
    """The tokens made with ``runner token add``, as the service reads them."""

    def find(self, token: str) -> Principal | None:
        """The live token whose text is `token` (None: unknown or revoked)."""

    def any_live(self) -> bool:
        """Whether any such token is live."""


class CachedTokens:
    """A `TokenBook` that keeps each live token it found for `ttl` seconds: a worker's
    uploads and heartbeats, many a second, do not each read the database.

    Only tokens found are kept (a token just made works at once), by their SHA-256 (the
    text is not kept). A revoked token is refused once its entry is `ttl` old, and at once
    by every `fresh` lookup: the routes that start new work (a worker registering, asking
    for a batch) read the book every time, so a revoked worker finishes at most the uploads
    of `ttl` seconds and gets no more work."""

    def __init__(self, book: TokenBook, ttl: float, *, size: int = 4096) -> None:
        """Wrap `book`; at most `size` tokens are kept (the oldest go first)."""
        self.book = book
        self.ttl = ttl
        self.size = size
        self._kept: OrderedDict[str, tuple[Principal, float]] = OrderedDict()

    def kept(self, token: str) -> bool:
        """Whether `find(token)` answers without reading the book."""
        entry = self._kept.get(_token_key(token))
        return entry is not None and entry[1] > time.monotonic()

    def find(self, token: str) -> Principal | None:
        """The live token whose text is `token`, from the entries kept when young enough."""
        entry = self._kept.get(_token_key(token))
        if entry is not None and entry[1] > time.monotonic():
            return entry[0]
        return self.find_fresh(token)

    def find_fresh(self, token: str) -> Principal | None:
        """The live token whose text is `token`, read from the book (and kept again)."""
        key = _token_key(token)
        found = self.book.find(token)
        self._kept.pop(key, None)
        if found is not None:
            self._kept[key] = (found, time.monotonic() + self.ttl)
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)
        return found

    def fresh(self) -> TokenBook:
        """The book as the routes starting new work read it: every lookup a fresh one."""
        return _FreshTokens(self)

    def any_live(self) -> bool:
        """Whether any token of the book is live."""
        return self.book.any_live()


class _FreshTokens:
    """`CachedTokens` read afresh on every lookup."""

    def __init__(self, cache: CachedTokens) -> None:
        self._cache = cache

    def find(self, token: str) -> Principal | None:
        """The live token whose text is `token`, read from the book."""
        return self._cache.find_fresh(token)

    def any_live(self) -> bool:
        """Whether any token of the book is live."""
        return self._cache.any_live()


def _token_key(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def loopback(host: str | None) -> bool:
    """Whether a client's address is this machine's (None: a Unix socket, also local)."""
    if host is None:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def check_token(settings: ServiceSettings, credentials: HTTPAuthorizationCredentials | None,
                *, write: bool, throttle: TokenThrottle | None = None, key: str = "",
                book: TokenBook | None = None,
                roles: tuple[str, ...] = ("admin", "submitter")) -> Principal | None:
    """The principal a request's token names, or a refusal: 401 without the right token
    (reads pass unless protected), 403 when its role is not one of `roles`. The service's
    own token (RUNNER_TOKEN, --token-file) is an admin's; `book` holds the others. With a
    `throttle`, a client (`key`) that guessed wrong too often is refused (429) for a while,
    whatever token it sends now."""
    if not write and not settings.read_token_required:
        return None
    if throttle is not None:
        throttle.check(key)
    given = credentials.credentials if credentials is not None else ""
    principal: Principal | None = None
    expected = settings.token
    if given and expected is not None and secrets.compare_digest(given.encode("utf-8"),
                                                                  expected.encode("utf-8")):
        principal = Principal("service token", "admin")
    elif given and book is not None:
        principal = book.find(given)
    if principal is None:
        if expected is None and (book is None or not book.any_live()):
            raise HTTPException(
                status.HTTP_401_UNAUTHORIZED,
                "this service has no token set (RUNNER_TOKEN, --token-file or runner token "
                "add): writes are off", headers={"WWW-Authenticate": "Bearer"})
        if throttle is not None and given:
            throttle.failed(key)
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "missing, wrong or revoked token",
                            headers={"WWW-Authenticate": "Bearer"})
    if write and principal.role not in roles:
        raise HTTPException(status.HTTP_403_FORBIDDEN,
                            f"a {principal.role} token may not do this (it takes: "
                            f"{', '.join(roles)})")
    return principal


def refuse_plain_http(request: Request, credentials: HTTPAuthorizationCredentials | None,
                      ) -> None:
    """Refuse (403) a token sent over plain HTTP from another machine: it crossed the
    network readable. Behind an HTTPS proxy on this machine the request comes from loopback;
    behind one named by --trusted-proxy, the scheme and client are the ones it forwarded
    (uvicorn puts them in the ASGI scope), so a client that reached the proxy over plain
    HTTP from elsewhere is refused too. Nobody else's forwarding headers are believed."""
    if credentials is None or request.url.scheme == "https":
        return
    host = request.client.host if request.client is not None else None
    if not loopback(host):
        raise HTTPException(status.HTTP_403_FORBIDDEN,
                            "a token is refused over plain HTTP from another machine: serve "
                            "with --ssl-certfile/--ssl-keyfile, or behind an HTTPS proxy")


class TokenThrottle:
    """Wrong tokens per client: the `free`-th wrong token, and each one after it, shuts the
    client out for a penalty that doubles (1 s, 2 s, 4 s... up to `longest`). During a penalty every
    request that needs the token is refused with 429 and ``Retry-After``, the right token
    included: otherwise a guesser would just keep guessing and be told when it hit. A client
    quiet for `forget` seconds starts afresh; at most `clients` are remembered (the least
    recently seen are forgotten first). A request without any token is not a guess."""

    def __init__(self, free: int, *, longest: float = 300.0, forget: float = 900.0,
                 clients: int = 10_000) -> None:
        """`free`: the wrong tokens that start the penalties (0: no throttle)."""
        self.free = free
        self.longest = longest
        self.forget = forget
        self.clients = clients
        # key -> (wrong tokens so far, shut out until (monotonic), last wrong token)
        self._seen: OrderedDict[str, tuple[int, float, float]] = OrderedDict()

    def check(self, key: str) -> None:
        """Refuse (429) a client serving a penalty."""
        if self.free <= 0:
            return
        entry = self._seen.get(key)
        if entry is None:
            return
        now = time.monotonic()
        failures, until, last = entry
        if now - last > self.forget:
            del self._seen[key]
            return
        if now < until:
            wait = math.ceil(until - now)
            raise HTTPException(status.HTTP_429_TOO_MANY_REQUESTS,
                                f"too many wrong tokens from your address; try again in "
                                f"{wait} s", headers={"Retry-After": str(wait)})

    def failed(self, key: str) -> None:
        """Count a wrong token from `key` (and start its penalty once past the free ones)."""
        if self.free <= 0:
            return
        now = time.monotonic()
        failures, until, last = self._seen.pop(key, (0, 0.0, now))
        if now - last > self.forget:
            failures, until = 0, 0.0
        failures += 1
        if failures >= self.free:
            until = now + min(self.longest, 2.0 ** (failures - self.free))
        self._seen[key] = (failures, until, now)
        while len(self._seen) > self.clients:
            self._seen.popitem(last=False)


class StreamSlots:
    """Event streams held, all clients together (`total`, 503 beyond) and per client
    (`per_client`, 429 beyond; 0: no limit per client)."""

    def __init__(self, total: int, per_client: int) -> None:
        """The two limits."""
        self.total = total
        self.per_client = per_client
        self.held: Counter[str] = Counter()
        self.count = 0

    def acquire(self, key: str) -> None:
        """Take a slot for `key`, or refuse the stream."""
        if self.count >= self.total:
            raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE,
                                "too many event streams open", headers={"Retry-After": "5"})
        if self.per_client and self.held[key] >= self.per_client:
            raise HTTPException(status.HTTP_429_TOO_MANY_REQUESTS,
                                f"too many event streams from your address (at most "
                                f"{self.per_client}); close one first",
                                headers={"Retry-After": "5"})
        self.held[key] += 1
        self.count += 1

    def release(self, key: str) -> None:
        """Give back a slot taken by `acquire`."""
        self.count -= 1
        self.held[key] -= 1
        if self.held[key] <= 0:
            del self.held[key]


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
        key = request_key(request)
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
    """ASGI middleware: a request body over `limit` bytes gets 413, announced or not; a client
    gone before its body was in ends the request quietly."""

    def __init__(self, app: Any, limit: int, *, larger: dict[str, int] | None = None) -> None:
        """Wrap `app`; `limit` is in bytes; `larger` gives paths under a prefix their own
        limit (a worker's game upload carries its engines' transcripts)."""
        self.app = app
        self.default_limit = limit
        self.larger = dict(larger or {})

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Refuse an announced oversize body at once; cut a streamed one when it grows past."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        limit = next((size for prefix, size in self.larger.items() if path.startswith(prefix)),
                     self.default_limit)
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    announced = int(value)
                except ValueError:
                    await _refuse(send, 400, "bad Content-Length")
                    return
                if announced > limit:
                    await _refuse(send, 413, f"request body over {limit} bytes")
                    return
        received = 0
        started = False

        async def counting_receive() -> Any:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise _TooLarge
            return message

        async def watching_send(message: Any) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, watching_send)
        except ClientDisconnect:
            # Gone before its body was all in (or closed for being too slow about it):
            # nobody to answer, and a traceback each time would let a client fill the log.
            return
        except BaseExceptionGroup as group:
            # An event stream whose reader went away (or a shutdown) while FastAPI's SSE
            # producer still had an event to hand to its keep-alive task: the producer's send
            # fails on the closed stream. The response had started; nobody is left to answer.
            _, rest = group.split((anyio.BrokenResourceError, anyio.ClosedResourceError))
            if started and rest is None:
                return
            raise
        except _TooLarge:
            if not started:
                await _refuse(send, 413, f"request body over {limit} bytes")


class _TooLarge(Exception):
    """A streamed body grew past the limit."""


async def _refuse(send: Any, code: int, text: str) -> None:
    from runner.report.wire import wire_text
    from runner.service.payloads import ErrorBody

    body = wire_text(ErrorBody(detail=text)).encode()
    await send({"type": "http.response.start", "status": code,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
