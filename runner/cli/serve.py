"""``runner serve``: the service (JSON API, event stream, web page) on uvicorn."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import typer

from runner.cli.errors import err_console, exit_on_error, fail

__all__ = ["serve_command"]


def serve_command(
    host: str = typer.Option("127.0.0.1", "--host",
                             help="Address to listen on (loopback by default; anything else "
                                  "is reachable from other machines)."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="TCP port."),
    db: str | None = typer.Option(
        None, "--db", metavar="URL",
        help="SQLAlchemy URL or SQLite file (default: $RUNNER_DB, else ./runner.db)."),
    engines: Path = typer.Option(
        Path("configs/engines.toml"), "--engines", metavar="FILE",
        help="The allow-list: submitted tournaments name engines from this file only."),
    books: Path | None = typer.Option(
        None, "--books", metavar="DIR",
        help="Opening files a submission may name (default: the engines file's directory)."),
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
) -> None:
    """Serve the JSON API (/docs), the event streams and the web page (/): submit tournaments,
    watch them live, read their games and reports."""
    try:
        import uvicorn

        from runner.service.app import create_app
        from runner.service.settings import ServiceSettings, token_from
    except ImportError as exc:
        raise fail(f"runner serve needs the service extra ({exc.name} is missing): "
                   "pip install 'cecp-runner[service]'") from None
    from runner.cli.errors import open_db
    from runner.config.check import ConfigError
    from runner.config.engines import load_engines_file

    if workers is not None and cluster is not None:
        raise fail("--workers and --cluster exclude each other")
    try:
        load_engines_file(engines)
    except ConfigError as exc:
        raise exit_on_error(exc) from None
    if books is not None and not books.is_dir():
        raise fail(f"--books {books}: no such directory")
    try:
        token = token_from(os.environ.get("RUNNER_TOKEN"), token_file)
    except OSError as exc:
        raise fail(f"--token-file {token_file}: {exc.strerror}") from None
    database = open_db(db)  # checked, created and migrated here: errors name the database
    settings = ServiceSettings(
        db_url=database.url, engines_file=engines, books_dir=books, token=token,
        read_token_required=protect_reads, host=host, port=port, workers=workers,
        cluster=cluster, max_running=max_running,
        max_concurrency=concurrency or (os.cpu_count() or 1), submit_rate=submit_rate,
        cors_origins=tuple(cors))
    if token is None:
        err_console.print("no token (RUNNER_TOKEN or --token-file): the service is read-only",
                          highlight=False, markup=False)
    if not _loopback(host):
        err_console.print(f"listening on {host}: reachable from other machines"
                          f"{'' if token else ' with no token'}", highlight=False, markup=False)
    from runner.protocol.loop import LoopChoiceError, loop_name

    try:
        loop = loop_name()
    except LoopChoiceError as exc:
        raise fail(str(exc)) from None
    app = create_app(settings, db=database)

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

    # The loop the CLI's runs use (RUNNER_LOOP; asyncio's own by default), not uvicorn's
    # pick: it would take uvloop whenever installed.
    server = Server(uvicorn.Config(app, host=host, port=port, log_level="info", loop=loop,
                                   proxy_headers=False, server_header=False,
                                   timeout_graceful_shutdown=10))
    try:
        server.run()
    finally:
        database.close()


def _loopback(host: str) -> bool:
    """Whether `host` is a loopback address (a name other than localhost counts as not)."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
