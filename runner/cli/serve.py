"""``runner serve``: the service (JSON API, event stream, web page) on uvicorn."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import typer

from runner.cli.errors import err_console, exit_on_error, fail, missing_extra, open_db
from runner.config.check import ConfigError
from runner.service.settings import DEFAULT_ENGINES_FILE

__all__ = ["serve_command"]


def serve_command(
    host: str = typer.Option("127.0.0.1", "--host",
                             help="Address to listen on (loopback by default; anything else "
                                  "is reachable from other machines)."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="TCP port."),
    db: str | None = typer.Option(
        None, "--db", metavar="URL",
        help="SQLAlchemy URL or SQLite file (default: $RUNNER_DB, else ./runner.db)."),
    engines_file: Path = typer.Option(
        DEFAULT_ENGINES_FILE, "--engines", metavar="FILE", envvar="RUNNER_ENGINES",
        help="The allow-list: submitted tournaments name engines from this file only "
             "(default: $RUNNER_ENGINES, else configs/engines.toml of a checkout)."),
    books_dir: Path | None = typer.Option(
        None, "--books", metavar="DIR",
        help="Opening files a submission may name (default: the engines file's directory)."),
    tablebases_dir: Path | None = typer.Option(
        None, "--tablebases", metavar="DIR",
        help="Syzygy tables a submission may adjudicate with: this directory or folders "
             "inside it (default: none)."),
    token_file: Path | None = typer.Option(
        None, "--token-file", metavar="FILE",
        help="Read the write token from this file (default: $RUNNER_TOKEN; without either, "
             "writes are refused)."),
    read_token_required: bool = typer.Option(
        False, "--protect-reads", help="Reads need the token as well."),
    workers: int | None = typer.Option(
        None, "--workers", min=1, help="Play on a local Dask cluster of N worker processes."),
    cluster: str | None = typer.Option(
        None, "--cluster", metavar="ADDR", help="Play on this Dask scheduler (tcp://HOST:PORT)."),
    accept_workers: bool = typer.Option(
        False, "--accept-workers",
        help="Let remote workers join (runner worker join) and submissions place games on "
             "them (\"placement\": \"workers\")."),
    worker_lease_seconds: float | None = typer.Option(
        None, "--worker-lease", min=1.0, metavar="SECONDS",
        help="Seconds a worker's batch stays its own without a heartbeat (default 60)."),
    worker_reference_nps: int | None = typer.Option(
        None, "--worker-reference-nps", min=1, metavar="NPS",
        help="Scale each worker's clocks by this bench speed (python -m engine bench's "
             "nodes/s) over its own (default: not scaled)."),
    worker_max_factor: float = typer.Option(
        4.0, "--worker-max-factor", min=1.0, metavar="F",
        help="Refuse a worker whose clocks would be scaled by more than this."),
    max_running: int = typer.Option(1, "--max-running", min=1,
                                    help="Tournaments playing at once; others wait in order."),
    max_concurrency: int | None = typer.Option(
        None, "--max-concurrency", min=1,
        help="The most games one tournament may play at once (default: the CPU cores)."),
    submit_rate: float = typer.Option(10.0, "--submit-rate", min=0.0,
                                      help="Submissions per client address per minute."),
    cors_origins: list[str] = typer.Option([], "--cors-origin", metavar="ORIGIN",
                                   help="Allow this origin by CORS (repeatable; default: none)."),
    trusted_proxies: list[str] = typer.Option(
        [], "--trusted-proxy", metavar="ADDR",
        help="A reverse proxy (address or network) whose X-Forwarded-Proto and "
             "X-Forwarded-For are believed (repeatable; default: none)."),
    header_timeout: float = typer.Option(
        10.0, "--header-timeout", min=0.0, metavar="SECONDS",
        help="Close a connection that has not sent a complete request head in this time "
             "(0: never)."),
    body_timeout: float = typer.Option(
        30.0, "--body-timeout", min=0.0, metavar="SECONDS",
        help="Close a request whose body is not all in this long after its head (0: never)."),
    keep_alive_timeout: float = typer.Option(
        5.0, "--keep-alive-timeout", min=0.1, metavar="SECONDS",
        help="Close a kept-alive connection idle this long between requests."),
    access_log: str = typer.Option(
        "workers-quiet", "--access-log", metavar="all|workers-quiet|none",
        help="Which requests get a line in the access log: all; all but the remote "
             "workers' uploads, heartbeats and batches answered with success "
             "(workers-quiet, the default: they come many a second); none."),
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
    max_hash_mb: int | None = typer.Option(
        None, "--max-hash", min=1, metavar="MB",
        help="The largest hash or memory option a submission may set (default 1024)."),
    max_threads: int | None = typer.Option(
        None, "--max-threads", min=1,
        help="The most threads or cores a submission may give one engine (default: the CPU "
             "cores)."),
    move_ceiling_seconds: float | None = typer.Option(
        None, "--move-ceiling", min=0.05, metavar="SECONDS",
        help="The longest a move may take without a clock (depth=, nodes=): past it the move "
             "is lost on time, and a run with no move for that long (and 30 s) is stopped "
             "(default 60)."),
    render_workers: int | None = typer.Option(
        None, "--render-workers", min=0,
        help="Processes that build reports off the loop that referees games (default 1; 0: a "
             "thread, which competes with the games)."),
    heavy_reads_per_client: int | None = typer.Option(
        None, "--heavy-reads-per-client", min=1,
        help="Reports and PGN exports one address may have in flight (429 beyond; default 2)."),
    ssl_certfile: Path | None = typer.Option(
        None, "--ssl-certfile", metavar="FILE",
        help="Serve HTTPS with this certificate (PEM); tokens from other machines are "
             "refused over plain HTTP."),
    ssl_keyfile: Path | None = typer.Option(
        None, "--ssl-keyfile", metavar="FILE", help="The certificate's private key (PEM)."),
    approval: bool = typer.Option(
        False, "--approval", help="A submitter's branch test waits for an admin's approval "
                                  "(POST /api/tests/ID/approve) before it is queued."),
    build_cache: Path | None = typer.Option(
        None, "--build-cache", metavar="DIR",
        help="Where branch tests' engines are built (default: ~/.cache/cecp-runner)."),
) -> None:
    """Serve the JSON API (/docs), the event streams and the web page (/): submit tournaments,
    watch them live, read their games and reports."""
    chosen = {key: value for key, value in locals().items() if key not in ("db", "token_file")}
    try:  # here, not at the top: the service extra is optional, and this says how to add it
        from runner.service.server import ServeRefused, serve

        if importlib.util.find_spec("jinja2") is None:  # the page's, imported on first render
            raise ModuleNotFoundError("No module named 'jinja2'", name="jinja2")
    except ImportError as exc:
        raise missing_extra(exc, "runner serve", "service") from None
    try:
        serve({**chosen, "cors_origins": tuple(cors_origins),
               "trusted_proxies": tuple(trusted_proxies)}, db=db, token_file=token_file,
              open_store=open_db, say=lambda line: err_console.print(
                  line, highlight=False, markup=False))
    except ServeRefused as exc:
        raise fail(str(exc)) from None
    except ConfigError as exc:
        raise exit_on_error(exc) from None


def register(app: typer.Typer) -> None:
    """Add ``serve`` to the ``runner`` application."""
    app.command("serve")(serve_command)
