"""``runner worker join``: a machine that pulls games from a ``runner serve`` and plays them.

Outbound requests only (behind NAT or a proxy it works as a browser does): register what this
machine is and which engines its owner's allow-list permits, ask for a batch, play it on local
game slots (the in-process scheduler every local run uses), upload each game as it ends, and
heartbeat the batch while it plays. A job's engines are started from this machine's own
allow-list by name, never from a command the service sent (the service sends none). An
engine built where it plays (a branch test's side) is built here from the batch's order:
the commit and repository the service names, built with this machine's own recipe for that
repository (its owner's allow-list: a repository without one is never offered), in its own
build cache; the builds and their benches are reported before the games. The
server away or with nothing to give: wait, doubling up to a minute, with jitter. A refused
token (revoked) ends the worker with one line. A first stop request finishes the running
games and hands the rest back; a second hands everything back at once. The service winds a
batch down the same way when its run stops (the answers to heartbeats and uploads say
`WindDown.FINISH` or `CUT`), and the worker then asks for new work as usual. Each game it
starts is told in its next heartbeat, sent at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import platform
import random
import socket
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from runner import __version__
from runner.build.placed import BuiltHere, WorkerBuilds, read_orders_data
from runner.build.recipe import load_recipes
from runner.config.engines import BenchDeclaration, load_bench_declarations, load_engines_file
from runner.config.recipes import BuildOrder, Recipe
from runner.fleet import WIRE_VERSION
from runner.fleet.batches import WindDown
from runner.fleet.speed import BENCH_ARGV, EngineBenches, MachineSpeed, bench_speed
from runner.fleet.uploads import upload_body
from runner.game.job import GameJob
from runner.protocol.engine import EngineConfig
from runner.tournament.runtime import engine_config
from runner.tournament.scheduler import JobFinished, JobStarted, LocalScheduler

__all__ = ["JoinRefused", "JoinSettings", "WorkerClient", "own_benches", "own_engines", "own_recipes",
           "plain_http_refused"]

LONGEST_WAIT = 60.0
"""The longest wait between two asks when the server is away or idle (seconds)."""
FIRST_WAIT = 1.0
"""The first wait after an empty or failed ask."""
STARTS_GATHERED = 0.05
"""Seconds the heartbeat that tells of a started game waits for more starts to tell with it
(the slots of a batch start together)."""


class JoinRefused(Exception):
    """The worker cannot go on (its token refused, its engines file wrong): one line."""


@dataclass(frozen=True)
class JoinSettings:
    """What ``runner worker join`` was told."""

    server: str
    token: str
    concurrency: int
    engines: Mapping[str, EngineConfig]
    """This machine's allow-list, by engine name."""
    name: str = dataclasses.field(default_factory=lambda: f"{socket.gethostname()}/{os.getpid()}")
    syzygy: tuple[Path, ...] = ()
    first_wait: float = FIRST_WAIT
    longest_wait: float = LONGEST_WAIT
    bench: tuple[str, ...] | None = BENCH_ARGV
    """The fixed search run at start to measure this machine (None: none, speed unknown)."""
    recipes: Mapping[str, Recipe] = dataclasses.field(default_factory=dict)
    """This machine's recipes by repository: the only repositories it builds, and how."""
    build_cache: Path | None = None
    """Where it keeps its builds (None: $RUNNER_BUILD_CACHE, else the user's cache)."""
    benches: Mapping[str, BenchDeclaration] = dataclasses.field(default_factory=dict)
    """The engines of its allow-list with a bench of their own (its words), by name: each
    is benched at start and its speed registered, to scale its games' clocks."""


def own_engines(path: Path) -> dict[str, EngineConfig]:
    """The engines the owner's file allows, by name (ConfigError names the file and key)."""
    return {spec.name: engine_config(spec) for spec in load_engines_file(path)}


def own_benches(path: Path) -> dict[str, BenchDeclaration]:
    """The benches the owner's file declares, by engine name (ConfigError names the file,
    key and value)."""
    return load_bench_declarations(path)


def own_recipes(path: Path) -> dict[str, Recipe]:
    """The recipes of the owner's engines file by repository (the first of each), the
    repositories this machine may build; ConfigError names the file and key."""
    found: dict[str, Recipe] = {}
    for recipe in load_recipes(path).values():
        found.setdefault(recipe.repository, recipe)
    return found


def plain_http_refused(server: str) -> str | None:
    """Why a token may not go to `server` (plain HTTP to another machine), or None."""
    parts = urlsplit(server)
    if parts.scheme == "https":
        return None
    if parts.scheme != "http":
        return f"--server {server}: give an http:// or https:// address"
    host = parts.hostname or ""
    if host in ("localhost", "127.0.0.1", "::1") or host.startswith("127."):
        return None
    return (f"--server {server}: a token is not sent over plain HTTP to another machine "
            "(use https://)")


def _syzygy(directories: tuple[Path, ...]) -> tuple[list[str], int]:
    """The tablebase directories and the most pieces their tables reach."""
    pieces = 0
    for directory in directories:
        for path in directory.glob("*.rtbw"):
            pieces = max(pieces, sum(1 for c in path.stem if c.isalpha() and c != "v"))
    return [str(d) for d in directories], pieces


def _memory_mb() -> int:
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // (1 << 20))
    except (ValueError, OSError, AttributeError):
        return 0


class _Playing:
    """One batch as this worker plays it: its heartbeats (telling the games started) and
    uploads, and what their answers say (the batch lost, the run winding down)."""

    def __init__(self, batch: int, base: str, scheduler: LocalScheduler,
                 post: Callable[..., Awaitable[httpx.Response]], settings: JoinSettings,
                 say: Callable[[str], None]) -> None:
        self.id = batch
        self.base = base
        """Its routes' common path."""
        self.scheduler = scheduler
        self._post = post
        self.settings = settings
        self.say = say
        self.max_upload = 1 << 22
        """The largest upload the service takes (bytes; told when the worker registers)."""
        self.lost = asyncio.Event()
        """The batch is no longer this worker's: its games count elsewhere, nothing is sent."""
        self.started: set[int] = set()
        """Games started and not told yet (sent with the next heartbeat)."""
        self.tell = asyncio.Event()
        """A start to tell: the heartbeat goes now."""
        self.wound = WindDown.NONE
        """What the service said of the batch's run (it winds down: finish or cut)."""
        self.refused: str | None = None
        """Why the service refused this worker's token meanwhile (revoked)."""

    def wind(self, how: WindDown) -> None:
        """The service winds the batch down (its run stopped): finish the running games
        (a soft stop, as a first Ctrl-C) or cut them (hard, as a second)."""
        if how is WindDown.NONE or how is self.wound or self.wound is WindDown.CUT:
            return
        self.wound = how
        self.scheduler.stop(hard=how is WindDown.CUT)
        self.say(f"batch {self.id}: its tournament stopped; "
                 + ("cutting the running games" if how is WindDown.CUT
                    else "finishing the running games, handing the rest back"))

    async def upload(self, event: JobFinished) -> bool:
        """Upload one game (again while the server is away); False when the batch is no
        longer this worker's."""
        body = upload_body(event.job.index, event.record, event.seconds,
                           limit=self.max_upload)
        wait = self.settings.first_wait
        while True:
            try:
                answer = await self._post(f"{self.base}/games", content=body,
                                          headers={"Content-Type": "application/json"})
            except httpx.TransportError:
                await asyncio.sleep(wait * random.uniform(0.5, 1.5))
                wait = min(wait * 2, self.settings.longest_wait)
                continue
            if answer.status_code in (409, 404):
                self.say(f"game {event.job.index + 1} refused: {_detail(answer)}")
                self.lost.set()
                return False
            if answer.status_code >= 500:
                await asyncio.sleep(wait * random.uniform(0.5, 1.5))
                wait = min(wait * 2, self.settings.longest_wait)
                continue
            if answer.status_code == 422:
                self.say(f"game {event.job.index + 1} refused: {_detail(answer)}")
                return True
            _refuse(answer)
            self.wind(_wind_down(answer))
            return True

    async def heartbeat(self, lease: float) -> None:
        """Keep the batch while it plays, telling the games started (at once, with those
        started within `STARTS_GATHERED`); a refused heartbeat stops its games, and its
        answer may wind the batch down."""
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.tell.wait(), max(0.2, lease / 3))
                await asyncio.sleep(STARTS_GATHERED)
            self.tell.clear()
            told = sorted(self.started)
            try:
                answer = await self._post(f"{self.base}/heartbeat",
                                          json={"started": told})
            except httpx.TransportError:
                continue
            if answer.status_code in (404, 409):
                self.say(f"batch no longer this worker's: {_detail(answer)}")
                self.lost.set()
                self.scheduler.stop(hard=True)
                return
            if answer.status_code in (401, 403):
                self.refused = (f"the service refused this worker ({answer.status_code}): "
                                 f"{_detail(answer)}")
                self.lost.set()
                self.scheduler.stop(hard=True)
                return
            if answer.status_code == 200:
                self.started.difference_update(told)
                self.wind(_wind_down(answer))


class WorkerClient:
    """One worker's life: register, then batches until stopped or refused."""

    def __init__(self, settings: JoinSettings, *, say: Callable[[str], None],
                 progress: Callable[[str], None] | None = None) -> None:
        self.settings = settings
        self.say = say
        self.progress = progress
        self.stops = 0
        """Stop requests so far: 1 finishes the running games, 2 hands everything back."""
        self.uploaded = 0
        self._id: int | None = None
        self._http: httpx.AsyncClient | None = None
        self._scheduler: LocalScheduler | None = None
        self._wake = asyncio.Event()
        self.max_upload = 1 << 22
        """The largest upload the service takes (bytes; told when the worker registers)."""
        self.speed: MachineSpeed | None = None
        """What this machine's bench found (measured once, before it first registers)."""
        self.engine_benches = EngineBenches()
        """Its engines' own benches (each binary once per process)."""
        self.builds = WorkerBuilds(settings.build_cache)
        """The branch tests' sides built here (each once per process; on disk across)."""

    def stop(self) -> None:
        """A stop request (Ctrl-C): the first finishes the running games, the second cuts
        them; the games not played are handed back either way."""
        self.stops += 1
        if self._scheduler is not None:
            self._scheduler.stop(hard=self.stops > 1)
        self._wake.set()

    async def run(self) -> None:
        """Work until stopped; JoinRefused when the service refuses this worker."""
        headers = {"Authorization": f"Bearer {self.settings.token}"}
        async with httpx.AsyncClient(base_url=self.settings.server.rstrip("/"), headers=headers,
                                     timeout=httpx.Timeout(60.0, connect=10.0)) as http:
            self._http = http
            wait = self.settings.first_wait
            while not self.stops:
                try:
                    if self._id is None:
                        await self._register()
                    offer = await self._post(f"/api/workers/{self._id}/batch")
                except httpx.TransportError as exc:
                    self._show(f"the server is away ({type(exc).__name__}): asking again")
                    await self._pause(wait)
                    wait = min(wait * 2, self.settings.longest_wait)
                    continue
                if offer.status_code == 404:
                    self._id = None  # the service forgot this worker (another database)
                    continue
                if offer.status_code in (204, 503) or offer.status_code >= 500:
                    self._show("nothing to play now: asking again")
                    await self._pause(wait)
                    wait = min(wait * 2, self.settings.longest_wait)
                    continue
                self._check(offer)
                wait = self.settings.first_wait
                refused = await self._play(offer.json())
                if refused is not None:
                    raise JoinRefused(refused)

    # ----------------------------------------------------------------- requests

    async def _bench(self) -> MachineSpeed | None:
        """This machine's speed per game slot (once; JoinRefused when the bench fails)."""
        if self.speed is None and self.settings.bench is not None:
            try:
                self.speed = await bench_speed(self.settings.concurrency, self.settings.bench)
            except (RuntimeError, OSError) as exc:
                raise JoinRefused(f"the speed bench failed: {exc}") from None
            self.say(f"benched {self.speed.nps} nodes/s per game slot "
                     f"({self.speed.runs} at once)")
        return self.speed

    async def _register(self) -> None:
        syzygy, pieces = _syzygy(self.settings.syzygy)
        speed = await self._bench()
        engine_speeds = await self.engine_benches.measure_all(
            self.settings.engines, self.settings.benches, self.settings.concurrency, self.say)
        answer = await self._post("/api/workers", json={
            "nps": 0 if speed is None else speed.nps,
            "bench_nodes": 0 if speed is None else speed.nodes,
            "engine_speeds": [dataclasses.asdict(s) for s in engine_speeds],
            "name": self.settings.name, "concurrency": self.settings.concurrency,
            "cores": os.cpu_count() or 1, "memory_mb": _memory_mb(),
            "os": platform.platform(), "version": __version__, "wire": WIRE_VERSION,
            "engines": sorted(self.settings.engines),
            "repositories": sorted(self.settings.recipes), "syzygy": syzygy,
            "syzygy_pieces": pieces})
        if answer.status_code >= 500:
            raise httpx.TransportError(f"status {answer.status_code}")
        self._check(answer)
        body = answer.json()
        self._id = int(body["id"])
        self.max_upload = int(body["max_upload_bytes"])
        factor = float(body.get("factor", 1.0))
        scaled = "" if factor == 1.0 else f", clocks scaled by {factor:g}"
        own = dict(body.get("engine_factors") or {})
        if own:
            scaled += " (" + ", ".join(f"{name}'s games by {float(value):g}"
                                       for name, value in sorted(own.items())) + ")"
        self.say(f"joined {self.settings.server} as worker {self._id} "
                 f"({len(self.settings.engines)} engines, {self.settings.concurrency} slots"
                 f"{scaled})")
        for name in body.get("slow_engines") or ():
            self.say(f"{name} benches too slowly here for the service's reference: this "
                     "worker gets none of its games")

    async def _post(self, path: str, **kwargs: Any) -> httpx.Response:
        assert self._http is not None
        return await self._http.post(path, **kwargs)

    def _check(self, answer: httpx.Response) -> None:
        """JoinRefused when the service refuses the token or the worker itself."""
        _refuse(answer)

    async def _pause(self, seconds: float) -> None:
        """Wait about `seconds` (jittered), or less when stopped meanwhile."""
        self._wake.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), seconds * random.uniform(0.5, 1.5))

    # ----------------------------------------------------------------- a batch

    async def _play(self, offer: Mapping[str, Any]) -> str | None:
        """Play one batch: each game told as it starts and uploaded as it ends, heartbeats
        meanwhile, then end it (its games not played handed back); why the service refused
        this worker meanwhile (its token revoked), or None."""
        batch = int(offer["id"])
        names = {str(k): str(v) for k, v in dict(offer.get("names") or {}).items()}
        scheduler = LocalScheduler(self.settings.concurrency)
        playing = _Playing(batch, f"/api/workers/{self._id}/batches/{batch}", scheduler,
                           self._post, self.settings, self.say)
        playing.max_upload = self.max_upload
        self._scheduler = scheduler
        if self.stops:
            scheduler.stop(hard=self.stops > 1)
        # Heartbeats from the start: building the batch's engines may outlast a lease.
        beat = asyncio.create_task(playing.heartbeat(float(offer["lease_seconds"])))
        try:
            built = await self._build(playing.base, batch,
                                      read_orders_data(offer.get("builds") or {}))
        except BaseException:
            beat.cancel()
            self._scheduler = None
            raise
        if built is None:  # a failed build or a wrong bench: the service ended the run
            beat.cancel()
            self._scheduler = None
            return playing.refused
        jobs = [self._own_job(GameJob.from_json(text), names, built)
                for text in offer["jobs"]]
        scheduler.submit([job for job in jobs if job is not None])
        done = 0
        try:
            async with contextlib.aclosing(scheduler.events()) as events:
                async for event in events:
                    if isinstance(event, JobStarted) and not playing.lost.is_set():
                        playing.started.add(event.job.index)
                        playing.tell.set()
                    if not isinstance(event, JobFinished) or event.record.replay:
                        continue
                    if playing.lost.is_set() or playing.wound is WindDown.CUT:
                        continue
                    playing.started.discard(event.job.index)  # the upload tells it
                    if not await playing.upload(event):
                        scheduler.stop(hard=True)
                        continue
                    done += 1
                    self.uploaded += 1
                    self._show(f"batch {batch}: {done}/{len(jobs)} games uploaded "
                               f"({self.uploaded} in all)")
        finally:
            beat.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await beat
            self._scheduler = None
        if not playing.lost.is_set() and done < len(jobs):
            # Games not played (stopped, wound down, failed here) go back now, not at the
            # lease's end.
            with contextlib.suppress(httpx.TransportError):
                answer = await self._post(f"{playing.base}/end")
                if answer.status_code in (404, 409):
                    self.say(f"batch {batch} refused at its end: {_detail(answer)}")
                elif answer.status_code == 200 and playing.wound is not WindDown.NONE:
                    self.say(f"batch {batch} wound down: {done} games uploaded, "
                             f"{answer.json().get('returned', 0)} handed back")
        return playing.refused

    async def _build(self, base: str, batch: int,
                     orders: Mapping[str, BuildOrder]) -> dict[str, BuiltHere] | None:
        """Build the batch's ordered engines here and report them with their benches; the
        builds by engine name, or None when one failed or the service refused them (the
        batch is then not played)."""
        if not orders:
            return {}
        built: dict[str, BuiltHere] = {}
        reports: list[dict[str, Any]] = []
        for name, order in orders.items():
            mine = self.settings.recipes.get(order.recipe.repository)
            if mine is None:
                reports.append({"engine": name, "failed": "this worker's engines file has no "
                                f"recipe for {order.recipe.repository}"})
                continue
            own = dataclasses.replace(order, recipe=mine)
            self._show(f"batch {batch}: building {name} ({order.commit[:12]})")
            try:  # off the event loop: the heartbeats go on while it builds
                done = await asyncio.to_thread(self.builds.engine, own, name,
                                               self.settings.name)
            except RuntimeError as exc:
                reports.append({"engine": name, "failed": str(exc)})
                self.say(f"batch {batch}: {str(exc).splitlines()[0]}")
                continue
            built[name] = done
            reports.append({"engine": name, "build": done.record.to_json()})
        try:
            answer = await self._post(f"{base}/builds", json={"builds": reports})
        except httpx.TransportError as exc:  # its lease runs out: the games go elsewhere
            self.say(f"batch {batch} not played: the server is away ({type(exc).__name__})")
            return None
        if answer.status_code in (401, 403):
            self._check(answer)
        if answer.status_code != 200 or len(built) < len(orders):
            self.say(f"batch {batch} not played: {_detail(answer)}")
            if answer.status_code == 200:
                with contextlib.suppress(httpx.TransportError):
                    await self._post(f"{base}/end")
            return None
        return built

    def _own_job(self, job: GameJob, names: Mapping[str, str],
                 built: Mapping[str, BuiltHere] | None = None) -> GameJob | None:
        """The job with both engines as this machine's allow-list starts them (None: one
        is not in it; the service should not have sent it). An engine the job names
        otherwise (`names`: a tuning pair's sides) keeps the job's name, and its options are
        checked as a submitter's when it starts: only options it declares, spin, check and
        combo, each spin within its declared bounds (the tuned values included). An engine
        `built` here is started from its build."""
        sides = []
        built = built or {}
        for config in (job.white, job.black):
            if config.name in built:
                sides.append(built[config.name].started_from(config))
                continue
            listed = names.get(config.name, config.name)
            mine = self.settings.engines.get(listed)
            if mine is None:
                self.say(f"game {job.index + 1}: engine {listed!r} is not in this "
                         "worker's engines file: not played")
                return None
            checked = config.options_submitted or config.name in names
            sides.append(dataclasses.replace(config, argv=mine.argv,
                                             working_dir=mine.working_dir, env=mine.env,
                                             options_submitted=checked))
        return dataclasses.replace(job, white=sides[0], black=sides[1])

    def _show(self, text: str) -> None:
        if self.progress is not None:
            self.progress(text)


def _refuse(answer: httpx.Response) -> None:
    """JoinRefused when the service refuses the token or the worker itself."""
    if answer.status_code in (401, 403):
        raise JoinRefused(f"the service refused this worker ({answer.status_code}): "
                          f"{_detail(answer)}")
    if answer.status_code >= 400:
        raise JoinRefused(f"the service answered {answer.status_code}: {_detail(answer)}")


def _wind_down(answer: httpx.Response) -> WindDown:
    """What an answer says of the batch's run (an answer without it: play on)."""
    try:
        return WindDown(answer.json().get("wind_down", WindDown.NONE))
    except (ValueError, AttributeError):
        return WindDown.NONE


def _detail(answer: httpx.Response) -> str:
    """The one line a refusal carries."""
    try:
        detail = answer.json().get("detail")
    except (ValueError, AttributeError):
        detail = None
    text = detail if isinstance(detail, str) else answer.text[:200]
    return " ".join("".join(c if c.isprintable() else " " for c in str(text)).split())


def stderr_progress(every: float = 60.0) -> Callable[[str], None]:
    """The worker's progress on stderr: one line rewritten in place on a terminal; otherwise
    (a service manager's log) a line when what the worker does changes, and at most one a
    minute while it stays the same, so a worker that cannot reach its server says so."""
    if sys.stderr.isatty():
        def rewrite(text: str) -> None:
            sys.stderr.write("\r\x1b[K" + text[:200])
            sys.stderr.flush()

        return rewrite
    last: list[tuple[str, float]] = []

    def log_line(text: str) -> None:
        kind = text.split(":", 1)[0]  # "the server is away (...)", "batch 3", "nothing ..."
        now = time.monotonic()
        if last and last[0][0] == kind and now - last[0][1] < every:
            return
        last[:] = [(kind, now)]
        sys.stderr.write(text[:200] + "\n")
        sys.stderr.flush()

    return log_line
