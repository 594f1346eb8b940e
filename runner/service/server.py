"""Serving the service: the operator's choices checked, the app built, uvicorn run until stopped.

``runner serve`` only hands its words over (`serve`); what is checked before anything listens
(the allow-list, the directories, the token, the loop), how connections are capped to fit the
limit of open files, and how shutdown ends the event streams and survives a second Ctrl-C
are decided here. Importing this module needs the service extra (uvicorn, FastAPI).
"""

from __future__ import annotations

import asyncio
import dataclasses
import ipaddress
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI

from runner.build import load_recipes
from runner.config.engines import load_bench_declarations, load_engines_file
from runner.protocol.loop import LoopChoiceError, loop_name
from runner.service.access_log import ACCESS_LOGGER, quiet_workers
from runner.service.app import create_app
from runner.service.connections import (
    BACKLOG,
    ConnectionGuard,
    GuardedH11Protocol,
    fd_budget,
    raise_fd_limit,
)
from runner.service.settings import (
    ACCESS_LOGS,
    DEFAULT_ENGINES_FILE,
    ServiceSettings,
    token_from,
)
from runner.store.store import Store

__all__ = ["ServeRefused", "serve"]


class ServeRefused(ValueError):
    """The operator's choices cannot be served; the message says which and why, in one line."""


def serve(chosen: Mapping[str, Any], *, db: str | None, token_file: Path | None,
          open_store: Callable[[str | None], Store], say: Callable[[str], None]) -> None:
    """Serve until stopped (blocking): `chosen` are `ServiceSettings` fields the operator set
    (None: the default), `db` the database (opened by `open_store`, which says what is wrong
    with it), `token_file` the write token's file (else ``$RUNNER_TOKEN``); `say` hears the
    warnings. ServeRefused, or ConfigError for the engines file, before anything listens."""
    given = {key: value for key, value in chosen.items() if value is not None}
    if "workers" in given and "cluster" in given:
        raise ServeRefused("--workers and --cluster exclude each other")
    engines = Path(given.get("engines_file", DEFAULT_ENGINES_FILE))
    if engines == DEFAULT_ENGINES_FILE and not engines.is_file():
        # Started outside a checkout (an installed wheel has no engines file): the allow-list
        # decides what strangers may run on this machine, so none is made up; say how to give it.
        raise ServeRefused(
            "runner serve needs an engines file (the allow-list of engines a submission may "
            f"name) and there is no {engines} here: give one with --engines FILE or "
            "RUNNER_ENGINES=FILE")
    load_engines_file(engines)
    load_recipes(engines)  # a branch test's recipe is checked before anything listens too
    load_bench_declarations(engines)  # and the engines' benches and reference speeds
    for key, flag in (("books_dir", "--books"), ("tablebases_dir", "--tablebases")):
        if key in given and not Path(given[key]).is_dir():
            raise ServeRefused(f"{flag} {given[key]}: no such directory")
    if ("ssl_certfile" in given) != ("ssl_keyfile" in given):
        raise ServeRefused("--ssl-certfile and --ssl-keyfile go together")
    for proxy in given.get("trusted_proxies", ()):
        try:
            ipaddress.ip_network(proxy, strict=False)
        except ValueError:
            # Not '*' or a host name either: believing anyone's forwarding headers would let
            # any client say it came over HTTPS, or from this machine.
            raise ServeRefused(f"--trusted-proxy {proxy}: not an IP address or network") \
                from None
    if given.get("access_log", "workers-quiet") not in ACCESS_LOGS:
        raise ServeRefused(f"--access-log {given['access_log']}: not one of "
                           f"{', '.join(ACCESS_LOGS)}")
    for key, flag in (("ssl_certfile", "--ssl-certfile"), ("ssl_keyfile", "--ssl-keyfile")):
        if key in given and not Path(given[key]).is_file():
            raise ServeRefused(f"{flag} {given[key]}: no such file")
    try:
        token = token_from(os.environ.get("RUNNER_TOKEN"), token_file)
    except OSError as exc:
        raise ServeRefused(f"--token-file {token_file}: {exc.strerror}") from None
    store = open_store(db)  # checked, created and migrated here: errors name the database
    try:
        settings = dataclasses.replace(ServiceSettings(db_url=store.url, token=token), **given)
        _warn(settings, say)
        try:
            loop = loop_name()
        except LoopChoiceError as exc:
            raise ServeRefused(str(exc)) from None
        _server(settings, store, loop, say).run()
    finally:
        store.close()


def _warn(settings: ServiceSettings, say: Callable[[str], None]) -> None:
    """Tell the operator what is open to whom."""
    if settings.token is None:
        say("no token (RUNNER_TOKEN or --token-file): the service is read-only")
    if not _loopback(settings.host):
        say(f"listening on {settings.host}: reachable from other machines"
            f"{'' if settings.token else ' with no service token'}")
        if settings.ssl_certfile is None:
            say("no --ssl-certfile: tokens from other machines are refused over plain HTTP "
                "(serve TLS, or put an HTTPS proxy on this machine in front)")


def _server(settings: ServiceSettings, store: Store, loop: str,
            say: Callable[[str], None]) -> uvicorn.Server:
    """The uvicorn server of the app for `settings` on `loop`, its connections guarded."""
    app = create_app(settings, store=store)
    # Every connection takes a descriptor: the cap must stay under the limit of open files,
    # or accept() fails (EMFILE) and nobody gets in, the operator included.
    budget = fd_budget(raise_fd_limit(), games=settings.max_running * settings.max_concurrency)
    if settings.max_connections > budget:
        say(f"--max-connections {settings.max_connections} lowered to {budget}: the limit of "
            "open files (ulimit -n) leaves room for no more")
    guard = ConnectionGuard(
        header_timeout=settings.header_timeout, body_timeout=settings.body_timeout,
        max_connections=min(settings.max_connections, budget),
        max_connections_per_client=settings.max_connections_per_client)
    # The loop the CLI's runs use (RUNNER_LOOP; asyncio's own by default), not uvicorn's
    # pick: it would take uvloop whenever installed.
    config = uvicorn.Config(app, host=settings.host, port=settings.port, log_level="info",
                            loop=loop, server_header=False,
                            # Forwarding headers only from the proxies the operator named.
                            proxy_headers=bool(settings.trusted_proxies),
                            forwarded_allow_ips=list(settings.trusted_proxies) or None,
                            timeout_graceful_shutdown=10, http=GuardedH11Protocol,
                            timeout_keep_alive=settings.keep_alive_timeout,  # type: ignore[arg-type]
                            backlog=BACKLOG, ssl_certfile=settings.ssl_certfile,
                            ssl_keyfile=settings.ssl_keyfile,
                            access_log=settings.access_log != "none")
    config.guard = guard  # type: ignore[attr-defined]  # read by each GuardedH11Protocol
    quiet_workers(logging.getLogger(ACCESS_LOGGER), settings.access_log == "workers-quiet")
    return _Server(config, app, guard)


class _Server(uvicorn.Server):
    """Ends the event streams as shutdown begins: uvicorn waits for open connections before
    the app's own shutdown, and a stream would otherwise never end."""

    def __init__(self, config: uvicorn.Config, app: FastAPI, guard: ConnectionGuard) -> None:
        super().__init__(config)
        self.service_app = app
        self.guard = guard
        self.signals_seen = 0

    async def shutdown(self, sockets: Any = None) -> None:
        """End the streams, then shut down as uvicorn does."""
        manager = getattr(self.service_app.state, "manager", None)
        if manager is not None:
            manager.end_streams()
        await super().shutdown(sockets)

    def handle_exit(self, sig: int, frame: Any) -> None:
        """Exit on the first signal, and on a second still through the app's shutdown."""
        # uvicorn skips the app's shutdown on a second Ctrl-C (engines would be left to the
        # death signal, tournaments marked running, a traceback printed); the shutdown is
        # bounded already (running games are cut), so only a third forces.
        self.signals_seen += 1
        if self.signals_seen < 3:
            self._captured_signals.append(sig)
            self.should_exit = True
            return
        super().handle_exit(sig, frame)

    async def startup(self, sockets: Any = None) -> None:
        """Guard the connections on the running loop, then start as uvicorn does."""
        self.guard.install(asyncio.get_running_loop())
        await super().startup(sockets)


def _loopback(host: str) -> bool:
    """Whether `host` is a loopback address (a name other than localhost counts as not)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
