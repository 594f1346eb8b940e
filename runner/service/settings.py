"""What the operator of ``runner serve`` chose: address, database, engines, limits, tokens."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

__all__ = ["ACCESS_LOGS", "DEFAULT_ENGINES_FILE", "AccessLog", "ServiceSettings"]

AccessLog = Literal["all", "workers-quiet", "none"]
"""Which requests the access log has a line for (`ServiceSettings.access_log`)."""
ACCESS_LOGS: tuple[AccessLog, ...] = get_args(AccessLog)
"""The values of `AccessLog`, as ``runner serve --access-log`` offers them."""

DEFAULT_ENGINES_FILE = Path("configs/engines.toml")
"""The allow-list of engines when none is given (the repository's file of known engines)."""


@dataclass(frozen=True)
class ServiceSettings:
    """The service's configuration: passed to the app, never read from globals."""

    db_url: str
    engines_file: Path = DEFAULT_ENGINES_FILE
    """The allow-list: a submitted tournament may name only these engines."""
    books_dir: Path | None = None
    """Opening files a submission may name (by a path inside it); None: the engines file's
    directory."""
    tablebases_dir: Path | None = None
    """Syzygy directories a submission may name for tablebase adjudication (this directory or
    folders inside it); None: a submission may name none."""
    token: str | None = None
    """The Bearer token for writes (and reads, with `read_token_required`); None refuses writes."""
    read_token_required: bool = False
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int | None = None
    """Play on a local Dask cluster of this many worker processes (None: in this process)."""
    cluster: str | None = None
    """Play on this Dask scheduler (tcp://host:port) instead."""
    accept_workers: bool = False
    """Remote workers (``runner worker join``) may register, and a submission may place its
    games on them (``"placement": "workers"``)."""
    worker_lease_seconds: float = 60.0
    """Seconds a batch stays a worker's without a heartbeat; then its games go to another."""
    worker_reference_nps: int | None = None
    """The bundled engine's bench speed (nodes/s) this service's time controls are meant
    for: each worker's clocks are scaled by it over the worker's own (None: not scaled)."""
    worker_max_factor: float = 4.0
    """The largest clock factor accepted: a slower worker is refused when it joins."""
    max_upload_bytes: int = 4 * 1024 * 1024
    """The largest body a worker may send (a game with its engines' transcripts; 413 beyond)."""
    max_concurrency: int = field(default_factory=lambda: os.cpu_count() or 1)
    """The most games one tournament may play at once (a submission asking more is capped)."""
    max_running: int = 1
    """Tournaments playing at once; the others wait in the order they came."""
    max_body_bytes: int = 64 * 1024
    """The largest request body accepted (413 beyond it)."""
    submit_rate: float = 10.0
    """Submissions accepted per client address per minute (429 beyond it)."""
    max_streams: int = 1000
    """Event streams open at once, all clients together (503 beyond it)."""
    max_streams_per_client: int = 20
    """Event streams open at once from one client address (429 beyond it; 0: no limit).
    Behind a reverse proxy every client has the proxy's address: raise it or use 0."""
    header_timeout: float = 10.0
    """Seconds a connection has to send a complete request head (from its opening, or from
    the first byte of a later request on a kept-alive connection); then it is closed."""
    body_timeout: float = 30.0
    """Seconds a request has to send its whole body after its head; then it is closed."""
    keep_alive_timeout: float = 5.0
    """Seconds an idle kept-alive connection stays open between requests."""
    access_log: AccessLog = "workers-quiet"
    """Which requests get a line in uvicorn's access log: ``all``; ``workers-quiet``, all but
    the remote workers' batch traffic answered with success (their uploads and heartbeats
    come many a second, and the line cost about a sixth of the event loop's time under
    load; a refusal still gets its line); ``none``."""
    max_connections: int = 2000
    """Connections open at once (beyond: 503 and closed at once). Lowered at start to fit
    under the process's limit of open files."""
    max_connections_per_client: int = 100
    """Connections open at once from one client address (0: no limit; behind a reverse
    proxy raise it or use 0)."""
    token_failures: int = 5
    """Wrong tokens from one client address before it is shut out for a while (429; the
    penalty doubles with each further wrong token, up to 5 minutes; 0: no throttle)."""
    stream_queue: int = 2000
    """Events waiting for one slow client before its stream is closed (it reconnects and
    resumes from its Last-Event-ID)."""
    ssl_certfile: Path | None = None
    """Serve HTTPS with this certificate (PEM; with `ssl_keyfile`)."""
    ssl_keyfile: Path | None = None
    trusted_proxies: tuple[str, ...] = ()
    """Addresses or networks of reverse proxies whose X-Forwarded-Proto and X-Forwarded-For
    are believed (uvicorn's proxy headers): behind them a request's scheme and client are
    the ones the proxy saw. Empty: forwarding headers are ignored."""
    approval: bool = False
    """A submitter's branch test waits for an admin's approval before it is queued."""
    build_cache: Path | None = None
    """Where branch tests' engines are built and kept (None: the user's cache directory)."""
    cors_origins: tuple[str, ...] = ()
    """Origins allowed by CORS; empty: CORS off."""
    # -- heavy reads and what a submission may ask (issue 26)
    render_workers: int = 1
    """Processes that build reports and long lists off the event loop that referees games
    (0: a thread of the service instead, which competes with the games for the interpreter)."""
    heavy_reads_per_client: int = 2
    """Heavy reads (report, PGN export) one client address may have in flight (429 beyond)."""
    max_engines: int = 32
    """Engines one submission may name."""
    max_games: int = 100_000
    """Games one submission may schedule."""
    min_base_seconds: float = 1.0
    """The least base time of a clock period, unless its increment is at least
    `min_increment_seconds` (a game must be playable, not lost on time by design)."""
    min_increment_seconds: float = 0.05
    """The increment that makes a base time under `min_base_seconds` acceptable."""
    max_base_seconds: float = 6 * 3600.0
    """The most base time of a clock period."""
    min_movetime_seconds: float = 0.05
    """The least fixed time per move (``st=``)."""
    max_movetime_seconds: float = 600.0
    """The most fixed time per move."""
    max_depth: int = 64
    """The deepest depth limit (``depth=``); a game limited by depth alone must end."""
    max_nodes: int = 1_000_000_000
    """The most nodes per move (``nodes=``)."""
    move_ceiling_seconds: float = 60.0
    """The longest a move may take on a side without a running clock (``depth=``, ``nodes=``,
    ``inf``): past it the move is lost on time. A run in which nothing moves for that long
    and `STALL_GRACE` more is stopped, saying why (runner.service.watchdog)."""
    max_hash_mb: int = 1024
    """The largest hash table or memory option (Hash, Memory, ...) in MB."""
    max_threads: int = field(default_factory=lambda: os.cpu_count() or 1)
    """The most threads or cores one engine may be told to use (Threads, Cores, ...)."""

    @property
    def books_root(self) -> Path:
        """The directory submitted opening files are looked up in."""
        return (self.books_dir or self.engines_file.parent).resolve()


def token_from(value: str | None, file: Path | None) -> str | None:
    """The write token: from a file (first line) when given, else the value (RUNNER_TOKEN)."""
    if file is not None:
        text = file.read_text(encoding="utf-8").strip()
        return text or None
    return value or None
