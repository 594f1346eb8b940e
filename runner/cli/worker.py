"""``runner worker check``: what each Dask worker offers, and which engines it can start."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from runner.cli.errors import err_console, exit_on_error, fail, missing_extra, unwrapped
from runner.cli.group import RunnerGroup
from runner.text import shown

worker_app = typer.Typer(help="Inspect the Dask workers a tournament would run on, or join a "
                         "runner serve as a remote worker.",
                         no_args_is_help=True, cls=RunnerGroup)
_out = unwrapped(Console(highlight=False))


@worker_app.command("check")
def worker_check(
    config_file: Path | None = typer.Argument(None, help="Tournament file whose engines to try."),
    cluster: str | None = typer.Option(None, "--cluster", metavar="ADDR",
                                       help="Dask scheduler (default: the file's \\[cluster] "
                                            "address, else this machine)."),
) -> None:
    """List each worker with its cores and slots, start each of the tournament's engines
    there once (its id line and protocol) and list the Syzygy tables it has of those the
    file names; exit 1 when a worker cannot start an engine or has none of the tables."""
    # Here, not at the top: `runner worker check --help` loads none of the run's code.
    from runner.cli.loop import run_async
    from runner.cluster.worker import check_worker, engine_json
    from runner.config.check import ConfigError
    from runner.config.parse import load_config
    from runner.tournament.runtime import engine_config

    engines: list[str] = []
    tablebases: tuple[str, ...] = ()
    if config_file is not None:
        try:
            config = load_config(config_file)
        except ConfigError as exc:
            raise exit_on_error(exc) from None
        engines = [engine_json(engine_config(entry)) for entry in config.engines]
        tablebases = tuple(str(path) for path in config.adjudication.tablebases)
        if cluster is None and config.cluster is not None:
            cluster = config.cluster.address
    if cluster is None:
        reports = [run_async(check_worker(engines, tablebases))]
    else:
        reports = _on_cluster(cluster, engines, tablebases)
    if not reports:
        raise fail(f"no worker is connected to the Dask scheduler at {cluster}")
    missing = 0
    for report in reports:
        missing += _show(report)
    raise typer.Exit(1 if missing else 0)


@worker_app.command("join")
def worker_join(
    server: str = typer.Option(..., "--server", metavar="URL",
                               help="The runner serve to work for (https://HOST:PORT)."),
    token_file: Path = typer.Option(..., "--token-file", metavar="FILE",
                                    help="A file holding this worker's token (runner token add "
                                         "NAME --role worker)."),
    concurrency: int = typer.Option(1, "--concurrency", min=1, max=1024,
                                    help="Games played at once here."),
    engines_file: Path | None = typer.Option(
        None, "--engines", metavar="FILE",
        help="This machine's allow-list of engines (default: $RUNNER_WORKER_ENGINES): the "
             "only engines it plays, started with the commands written there, and the only "
             "repositories it builds (its [[recipes]])."),
    build_cache: Path | None = typer.Option(
        None, "--build-cache", metavar="DIR",
        help="Where the branch tests' sides built here are kept (default: "
             "$RUNNER_BUILD_CACHE, else the user's cache directory)."),
    syzygy: list[Path] = typer.Option([], "--syzygy", metavar="DIR",
                                      help="A Syzygy directory to announce (repeatable)."),
) -> None:
    """Join a runner serve's fleet over outbound HTTP(S): play the batches it hands out
    with the engines this machine allows (a branch test's sides built here, from the
    repositories its recipes name), upload each game as it ends. Ctrl-C finishes the
    running games and hands the rest back; a second Ctrl-C hands everything back at once."""
    import os
    import signal

    try:  # here: the fleet extra is optional, and this says how to add it
        from runner.fleet.client import (
            JoinRefused,
            JoinSettings,
            WorkerClient,
            own_benches,
            own_engines,
            own_recipes,
            plain_http_refused,
            stderr_progress,
        )
    except ImportError as exc:
        raise missing_extra(exc, "runner worker join", "fleet") from None
    from runner.cli.loop import run_async
    from runner.cluster.worker import ENGINES_FILE_ENV
    from runner.config.check import ConfigError

    if (why := plain_http_refused(server)) is not None:
        raise fail(why)
    try:
        token = token_file.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise fail(f"--token-file {token_file}: {exc.strerror}") from None
    if not token:
        raise fail(f"--token-file {token_file}: the file is empty")
    chosen = engines_file or (Path(os.environ[ENGINES_FILE_ENV])
                              if os.environ.get(ENGINES_FILE_ENV) else None)
    if chosen is None:
        raise fail("runner worker join needs this machine's engines file (--engines FILE or "
                   f"{ENGINES_FILE_ENV}): it plays only the engines listed there")
    try:
        engines = own_engines(chosen)
        recipes = own_recipes(chosen)
        benches = own_benches(chosen)
    except ConfigError as exc:
        raise exit_on_error(exc) from None
    for directory in syzygy:
        if not directory.is_dir():
            raise fail(f"--syzygy {directory}: no such directory")
    client = WorkerClient(
        JoinSettings(server, token, concurrency, engines, syzygy=tuple(syzygy),
                     recipes=recipes, build_cache=build_cache, benches=benches),
        say=lambda line: err_console.print(line, highlight=False, markup=False),
        progress=stderr_progress())

    async def main() -> None:
        import asyncio

        loop = asyncio.get_running_loop()
        for number in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(number, client.stop)
        await client.run()

    try:
        run_async(main())
    except JoinRefused as exc:
        raise fail(str(exc)) from None
    err_console.print(f"stopped: {client.uploaded} games uploaded", highlight=False,
                      markup=False)


_DB = typer.Option(None, "--db", help="Database URL (default: $RUNNER_DB, else ./runner.db).")


@worker_app.command("list")
def worker_list(db: str | None = _DB) -> None:
    """The remote workers that joined the service of this database: their machine, bench
    speed and clock factor, games counted, when last heard from, flag and whether blocked."""
    from runner.cli.errors import open_db

    with open_db(db, create=False) as store:
        workers = store.fleet.workers()
    table = Table(title="Remote workers", title_justify="left")
    for column in ("ID", "Name", "Token", "Cores", "Engines", "Speed", "Factor",
                   "Engines' benches", "Games", "Last seen", "Flag", "Blocked"):
        table.add_column(column)
    for worker in workers:
        table.add_row(str(worker.id), Text(shown(worker.name)), Text(shown(worker.principal or "")),
                      str(worker.info.get("cores", "")), str(len(worker.info.get("engines", ()))),
                      str(worker.info.get("nps") or "-"), f"{worker.info.get('factor', 1.0):g}",
                      Text(shown(_engine_benches(worker.info))), str(worker.games),
                      worker.last_seen.strftime("%Y-%m-%d %H:%M:%S"),
                      Text(shown(worker.flag or "")), "yes" if worker.blocked else "")
    _out.print(table)


def _engine_benches(info: Mapping[str, Any]) -> str:
    """A worker's benches of its engines, as registered: each engine's speed and factor."""
    factors = info.get("engine_factors") or {}
    parts = []
    for entry in info.get("engine_speeds") or ():
        name = str(entry.get("engine", ""))
        if entry.get("failed"):
            parts.append(f"{name} failed")
        else:
            factor = factors.get(name)
            parts.append(f"{name} {entry.get('nps', 0)}"
                         + ("" if factor is None else f" x{float(factor):g}"))
    return ", ".join(parts) or "-"


@worker_app.command("block")
def worker_block(worker_id: int = typer.Argument(..., min=1, help="The worker's id."),
                 unblock: bool = typer.Option(False, "--unblock", help="Unblock it instead."),
                 db: str | None = _DB) -> None:
    """Block a remote worker (its next request is refused and it gets no more games), or
    unblock it with --unblock."""
    from runner.cli.errors import open_db

    with open_db(db, create=False) as store:
        if store.fleet.worker(worker_id) is None:
            raise fail(f"no worker {worker_id} in {store.shown_url}")
        store.fleet.block(worker_id, not unblock)
    err_console.print(f"worker {worker_id} {'unblocked' if unblock else 'blocked'}",
                      highlight=False, markup=False)


def _on_cluster(address: str, engines: list[str],
                tablebases: tuple[str, ...]) -> list[dict[str, Any]]:
    """Run the check on every worker of the scheduler at `address`."""
    from runner.cluster.worker import check_worker

    try:  # here: distributed is an optional extra, and only --cluster needs it
        from distributed import Client

        from runner.cluster.scheduler import CONNECT_TIMEOUT
    except ImportError as exc:
        raise missing_extra(exc, "checking a cluster's workers (--cluster)", "cluster") from None

    try:
        client = Client(address, timeout=CONNECT_TIMEOUT, name="runner-worker-check")
    except (OSError, TimeoutError) as exc:
        raise fail(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    try:
        replies = client.run(check_worker, engines, tablebases)
    finally:
        client.close()
    return [replies[key] for key in sorted(replies)]


def _show(report: dict[str, Any]) -> int:
    """Print one worker's report; returns how many engines it cannot start."""
    slots = "-" if report["slots"] is None else f"{report['slots']:g}"
    threads = "-" if report["threads"] is None else str(report["threads"])
    where = report["address"] or "this machine (no --cluster)"
    name = "" if report["worker"] == where else f"{report['worker']} at "
    _out.print(Text(shown(f"worker {name}{where}: {report['cores']} cores, "
                          f"{threads} threads, {slots} slots")))
    if report.get("engines_file_error"):
        _out.print(Text(shown(f"  engines file: {report['engines_file_error']}", multiline=True),
                        style="red"))
    missing = _show_tables(report.get("tablebases"))
    if not report["engines"]:
        return missing
    table = Table("engine", "starts", "id", "protocol", "command or problem")
    failed = 0
    for entry in report["engines"]:
        failed += not entry["ok"]
        table.add_row(Text(shown(entry["name"])),
                      "yes" if entry["ok"] else Text("NO", style="bold red"),
                      Text(shown(entry["id"] or "")), Text(shown(entry["protocol"])),
                      Text(shown(" ".join(entry["command"]) if entry["ok"] else entry["text"],
                                 multiline=True)))
    _out.print(table)
    return failed + missing


def _show_tables(entry: dict[str, Any] | None) -> int:
    """Print the worker's Syzygy tables; 1 when it has none of those the tournament names."""
    if entry is None:
        return 0
    where = ":".join(entry["directories"])
    if entry["text"] or not entry["tables"]:
        _out.print(Text(shown(f"  tablebases: NONE ({entry['text'] or 'no tables'} in {where})",
                              multiline=True), style="bold red"))
        return 1
    complete = entry["complete_pieces"]
    line = (f"  tablebases: {entry['tables']} tables, complete to {complete} pieces"
            if complete >= 3 else f"  tablebases: {entry['tables']} tables, none complete")
    if entry["max_pieces"] > complete:
        line += f", some of {entry['max_pieces']}"
    _out.print(Text(shown(f"{line} ({where})")))
    return 0


def register(app: typer.Typer) -> None:
    """Add ``worker`` to the ``runner`` application."""
    app.add_typer(worker_app, name="worker")
