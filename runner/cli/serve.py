"""``runner serve``: the service (JSON API, event stream, web page) on uvicorn."""

from __future__ import annotations

import asyncio
import dataclasses
import ipaddress
import os
from pathlib import Path
from typing import Any

import typer

from runner.cli.errors import err_console, exit_on_error, fail, open_db
from runner.config.check import ConfigError
from runner.config.engines import load_engines_file
from runner.protocol.loop import LoopChoiceError, loop_name

__all__ = ["serve_command"]

DEFAULT_ENGINES = Path("configs/engines.toml")
"""The allow-list of a source checkout, relative to where the service is started."""


def serve_command(
    host: str = typer.Option("127.0.0.1", "--host",
                             help="Address to listen on (loopback by default; anything else "
                                  "is reachable from other machines)."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="TCP port."),
    db: str | None = typer.Option(
        None, "--db", metavar="URL",
        help="SQLAlchemy URL or SQLite file (default: $RUNNER_DB, else ./runner.db)."),
    engines: Path = typer.Option(
        DEFAULT_ENGINES, "--engines", metavar="FILE", envvar="RUNNER_ENGINES",
        help="The allow-list: submitted tournaments name engines from this file only "
             "(default: $RUNNER_ENGINES, else configs/engines.toml of a checkout)."),
    books: Path | None = typer.Option(
        None, "--books", metavar="DIR",
        help="Opening files a submission may name (default: the engines file's directory)."),
    tablebases: Path | None = typer.Option(
        None, "--tablebases", metavar="DIR",
        help="Syzygy tables a submission may adjudicate with: this directory or folders "
             "inside it (default: none)."),
    token_file: Path | None = typer.Option(
        None, "--token-file", metavar="FILE",
        help="Read the write token from this file (default: $RUNNER_TOKEN; without either, "
             "writes are refused)."),
    protect_reads: bool = typer.Option(
        False, "--protect-reads", help="Reads need the token as well."),
    workers: int | None = typer.Option(
        None, "--workers", min=1, help="Play on a local Dask cluster of N worker processes."),
    cluster: str | None = typer.Option(
        None, "--cluster", metavar="ADDR", help="Play on this Dask scheduler (tcp://HOST:PORT)."),
    max_running: int = typer.Option(1, "--max-running", min=1,
                                    help="Tournaments playing at once; others wait in order."),
    concurrency: int | None = typer.Option(
        None, "--max-concurrency", min=1,
        help="The most games one tournament may play at once (default: the CPU cores)."),
    submit_rate: float = typer.Option(10.0, "--submit-rate", min=0.0,
                                      help="Submissions per client address per minute."),
    cors: list[str] = typer.Option([], "--cors-origin", metavar="ORIGIN",
                                   help="Allow this origin by CORS (repeatable; default: none)."),
    header_timeout: float = typer.Option(
        10.0, "--header-timeout", min=0.0, metavar="SECONDS",
        help="Close a connection that has not sent a complete request head in this time "
             "(0: never)."),
    body_timeout: float = typer.Option(
        30.0, "--body-timeout", min=0.0, metavar="SECONDS",
        help="Close a request whose body is not all in this long after its head (0: never)."),
    keep_alive: float = typer.Option(
        5.0, "--keep-alive-timeout", min=0.1, metavar="SECONDS",
        help="Close a kept-alive connection idle this long between requests."),
    max_connections: int = typer.Option(
        2000, "--max-connections", min=1,
        help="Connections open at once; more are answered 503 and closed (lowered to fit "
             "the process's limit of open files)."),
    max_connections_per_client: int = typer.Option(
        100, "--max-connections-per-client", min=0,
        help="Connections open at once from one address (an IPv6 /64); 0: no limit (behind "
             "a reverse proxy every client has its address)."),
    max_streams: int = typer.Option(
        1000, "--max-streams", min=1, help="Event streams open at once (503 beyond)."),
    max_streams_per_client: int = typer.Option(
        20, "--max-streams-per-client", min=0,
        help="Event streams open at once from one address (429 beyond); 0: no limit."),
    token_failures: int = typer.Option(
        5, "--token-failures", min=0,
        help="Wrong tokens from one address before it is shut out (429, even with the right "
             "token, for 1 s, doubling with each further wrong one up to 5 min); 0: off."),
    max_engines: int | None = typer.Option(
        None, "--max-engines", min=2, help="Engines one submission may name (default 32)."),
    max_games: int | None = typer.Option(
        None, "--max-games", min=1, help="Games one submission may schedule (default 100000)."),
    max_hash: int | None = typer.Option(
        None, "--max-hash", min=1, metavar="MB",
        help="The largest hash or memory option a submission may set (default 1024)."),
    max_threads: int | None = typer.Option(
        None, "--max-threads", min=1,
        help="The most threads or cores a submission may give one engine (default: the CPU "
             "cores)."),
    move_ceiling: float | None = typer.Option(
        None, "--move-ceiling", min=0.05, metavar="SECONDS",
        help="The longest a move may take without a clock (depth=, nodes=): past it the move "
             "is lost on time, and a run with no move for that long (and 30 s) is stopped "
             "(default 60)."),
    render_workers: int | None = typer.Option(
        None, "--render-workers", min=0,
        help="Processes that build reports off the loop that referees games (default 1; 0: a "
             "thread, which competes with the games)."),
    heavy_reads: int | None = typer.Option(
        None, "--heavy-reads-per-client", min=1,
        help="Reports and PGN exports one address may have in flight (429 beyond; default 2)."),
) -> None:
    """Serve the JSON API (/docs), the event streams and the web page (/): submit tournaments,
    watch them live, read their games and reports."""
    try:  # here, not at the top: the service extra is optional, and this says how to add it
        import uvicorn

        from runner.service.app import create_app
        from runner.service.connections import (
            BACKLOG,
            ConnectionGuard,
            GuardedH11Protocol,
            fd_budget,
            raise_fd_limit,
        )
        from runner.service.settings import ServiceSettings, token_from
    except ImportError as exc:
        raise fail(f"runner serve needs the service extra ({exc.name} is missing): "
                   "pip install 'cecp-runner[service]'") from None

    if workers is not None and cluster is not None:
        raise fail("--workers and --cluster exclude each other")
    if engines == DEFAULT_ENGINES and not engines.is_file():
        # Started outside a checkout (an installed wheel has no engines file): the allow-list
        # decides what strangers may run on this machine, so none is made up; say how to give it.
        raise fail("runner serve needs an engines file (the allow-list of engines a submission "
                   f"may name) and there is no {engines} here: give one with --engines FILE "
                   "or RUNNER_ENGINES=FILE")
    try:
        load_engines_file(engines)
    except ConfigError as exc:
        raise exit_on_error(exc) from None
    if books is not None and not books.is_dir():
        raise fail(f"--books {books}: no such directory")
    if tablebases is not None and not tablebases.is_dir():
        raise fail(f"--tablebases {tablebases}: no such directory")
    try:
        token = token_from(os.environ.get("RUNNER_TOKEN"), token_file)
    except OSError as exc:
        raise fail(f"--token-file {token_file}: {exc.strerror}") from None
    store = open_db(db)  # checked, created and migrated here: errors name the database
    settings = ServiceSettings(
        db_url=store.url, engines_file=engines, books_dir=books, tablebases_dir=tablebases,
        token=token,
        read_token_required=protect_reads, host=host, port=port, workers=workers,
        cluster=cluster, max_running=max_running,
        max_concurrency=concurrency or (os.cpu_count() or 1), submit_rate=submit_rate,
        cors_origins=tuple(cors), header_timeout=header_timeout, body_timeout=body_timeout,
        keep_alive_timeout=keep_alive, max_connections=max_connections,
        max_connections_per_client=max_connections_per_client, max_streams=max_streams,
        max_streams_per_client=max_streams_per_client, token_failures=token_failures,
        # Given only when set: the defaults live in ServiceSettings, once.
        **{key: value for key, value in (
            ("max_engines", max_engines), ("max_games", max_games), ("max_hash_mb", max_hash),
            ("max_threads", max_threads), ("render_workers", render_workers),
            ("heavy_reads_per_client", heavy_reads)) if value is not None})
    if move_ceiling is not None:
        settings = dataclasses.replace(settings, move_ceiling_seconds=move_ceiling)
    if token is None:
        err_console.print("no token (RUNNER_TOKEN or --token-file): the service is read-only",
                          highlight=False, markup=False)
    if not _loopback(host):
        err_console.print(f"listening on {host}: reachable from other machines"
                          f"{'' if token else ' with no token'}", highlight=False, markup=False)
    try:
        loop = loop_name()
    except LoopChoiceError as exc:
        raise fail(str(exc)) from None
    app = create_app(settings, store=store)

    # Every connection takes a descriptor: the cap must stay under the limit of open files,
    # or accept() fails (EMFILE) and nobody gets in, the operator included.
    budget = fd_budget(raise_fd_limit(), games=max_running * settings.max_concurrency)
    if settings.max_connections > budget:
        err_console.print(f"--max-connections {settings.max_connections} lowered to {budget}: "
                          f"the limit of open files (ulimit -n) leaves room for no more",
                          highlight=False, markup=False)
    guard = ConnectionGuard(
        header_timeout=header_timeout, body_timeout=body_timeout,
        max_connections=min(settings.max_connections, budget),
        max_connections_per_client=max_connections_per_client)

    class Server(uvicorn.Server):
        """Ends the event streams as shutdown begins: uvicorn waits for open connections
        before the app's own shutdown, and a stream would otherwise never end."""

        async def shutdown(self, sockets: Any = None) -> None:
            manager = getattr(app.state, "manager", None)
            if manager is not None:
                manager.end_streams()
            await super().shutdown(sockets)

        def handle_exit(self, sig: int, frame: Any) -> None:
            # uvicorn skips the app's shutdown on a second Ctrl-C (engines would be left to
            # the death signal, tournaments marked running, a traceback printed); the
            # shutdown is bounded already (running games are cut), so only a third forces.
            self.signals_seen += 1
            if self.signals_seen < 3:
                self._captured_signals.append(sig)
                self.should_exit = True
                return
            super().handle_exit(sig, frame)

        signals_seen = 0

        async def startup(self, sockets: Any = None) -> None:
            guard.install(asyncio.get_running_loop())
            await super().startup(sockets)

    # The loop the CLI's runs use (RUNNER_LOOP; asyncio's own by default), not uvicorn's
    # pick: it would take uvloop whenever installed.
    config = uvicorn.Config(app, host=host, port=port, log_level="info", loop=loop,
                            proxy_headers=False, server_header=False,
                            timeout_graceful_shutdown=10, http=GuardedH11Protocol,
                            timeout_keep_alive=keep_alive,  # type: ignore[arg-type]
                            backlog=BACKLOG)
    config.guard = guard  # type: ignore[attr-defined]  # read by each GuardedH11Protocol
    server = Server(config)
    try:
        server.run()
    finally:
        store.close()


def _loopback(host: str) -> bool:
    """Whether `host` is a loopback address (a name other than localhost counts as not)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def register(app: typer.Typer) -> None:
    """Add ``serve`` to the ``runner`` application."""
    app.command("serve")(serve_command)
