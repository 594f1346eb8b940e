"""The fleet under load: simulated remote workers uploading games to one real `runner serve`.

Starts `runner serve --accept-workers` (a subprocess on a free loopback port) on a fresh SQLite
file or on a throw-away PostgreSQL server (Debian's binaries, tests/postgres_server.py), makes a
worker token, and submits a long match of the bundled engine against its v1 placed on the
workers. Two real games are played first, in this process, from the first batch's jobs (one
per colour order, through the scheduler every local run uses); then WORKERS simulated workers
register and loop: ask for a batch, upload each of its games (the real game of that colour
order, as the job asked for it: every upload is refereed again move by move, stored and
counted by the tournament, its events sent to the page's streams), heartbeat after every few
uploads, until SECONDS have passed. Each upload's body is encoded once before the clock starts,
and each simulated worker holds one keep-alive connection written and read by a few lines of
asyncio (not httpx, whose CPU per request was about the service's own, on the same cores),
so the client's cost is little more than the sockets'.

Figures per backend: uploads counted, sustained uploads per second (counted over the window
from the first upload to the last), upload latency (p50, p99, max), heartbeat and batch
request latency (p50, p99), every status code seen, the service's CPU seconds (and the part
of them on its event loop's thread: HTTP, the routes, the referee; the rest is its threads',
the store's reads and writes), and the load average before and after. The target (issue
40): 42 uploads/s, fishtest's published 2,464 games a minute, with p99 under 250 ms on
PostgreSQL on a 2-core machine.

With ``--rate R`` the workers together offer R uploads a second on a fixed schedule (as many
workers each uploading a game as it ends do), so the latency is the service's at that rate;
without it each worker uploads again as soon as it is answered, which measures the most the
service sustains (its latency then is the workers' count over that rate, by Little's law).

Run: python benchmarks/fleet_load.py [--backend sqlite|postgres|both] [--workers 16]
         [--seconds 30] [--beat-every 4] [--rate 42]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
ENGINES = REPO / "configs" / "engines.toml"
ADMIN = "fleet-load-admin-token"
HOST = "127.0.0.1"
TC = "10+0.1 depth=1"
"""Clocks the referee checks every move against, and a depth that makes the games quick."""
ENGINE_NAMES = ("bundled", "bundled-v1")


@dataclass
class Figures:
    """What one backend's run measured."""

    backend: str
    uploads: list[float] = field(default_factory=list)
    """Each counted upload's latency (seconds)."""
    beats: list[float] = field(default_factory=list)
    asks: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    first: float = 0.0
    last: float = 0.0
    cpu: float = 0.0
    loop_cpu: float = 0.0
    """The part of `cpu` spent by the service's main thread (its event loop: HTTP, the
    routes, the referee); the rest is its threads' (the store's writes and reads)."""
    client_cpu: float = 0.0
    """This process's CPU seconds while it loaded the service (the simulated workers)."""
    load: tuple[float, float] = (0.0, 0.0)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def _cpu_seconds(pid: int, task: int | None = None) -> float:
    """The CPU seconds of process `pid` (all its threads), or of its thread `task`."""
    where = f"/proc/{pid}" if task is None else f"/proc/{pid}/task/{task}"
    fields = Path(f"{where}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _runner(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "runner", *args], capture_output=True,
                          text=True, timeout=120, cwd=REPO, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"runner {' '.join(args[:2])}: {done.stderr.strip()}")
    return done.stdout


class Service:
    """`runner serve --accept-workers` on `url`, stopped to the end."""

    def __init__(self, url: str, workdir: Path) -> None:
        self.url = url
        self.port = _free_port()
        self.base = f"http://{HOST}:{self.port}"
        self.log = workdir / "service.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start it and wait until it answers."""
        env = {**os.environ, "RUNNER_TOKEN": ADMIN}
        env.pop("RUNNER_DB", None)
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "runner", "serve", "--host", HOST, "--port",
                 str(self.port), "--db", self.url, "--engines", str(ENGINES),
                 "--accept-workers", "--worker-lease", "60",
                 "--max-connections-per-client", "0"],
                cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("runner serve exited:\n"
                                   + self.log.read_text(errors="replace")[-3000:])
            with contextlib.suppress(httpx.TransportError):
                httpx.get(f"{self.base}/api/tournaments", timeout=2)
                return
            time.sleep(0.2)
        raise RuntimeError("runner serve did not answer in 90 s")

    def stop(self) -> None:
        """SIGTERM, then SIGKILL to its process group if it hangs."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)


class Games:
    """The two real games, and each job's upload body made from the one of its colours."""

    def __init__(self) -> None:
        self.by_colours: dict[tuple[str, str], Any] = {}

    def learn(self, jobs: list[Any]) -> None:
        """Play one job of each colour order not played yet."""
        from tests.fleet_uploads import play_here

        for job in jobs:
            if job.engines not in self.by_colours:
                self.by_colours[job.engines] = play_here(job)

    def body(self, job: Any) -> bytes:
        """The upload of `job`: the real game of its colours, under the job's own spec
        (encoded as ``runner worker join`` encodes it)."""
        from runner.fleet.uploads import upload_body

        record = dataclasses.replace(self.by_colours[job.engines], spec=job.spec)
        return upload_body(job.index, record, 1.0)


class _Connection:
    """One keep-alive HTTP/1.1 connection, as lean as a load generator's (httpx spent about
    as much CPU per request as the service did, on the same two cores)."""

    def __init__(self, base: str, token: str) -> None:
        host, port = base.removeprefix("http://").rsplit(":", 1)
        self.host, self.port = host, int(port)
        self.head = (f"Host: {host}:{port}\r\nAuthorization: Bearer {token}\r\n"
                     "Content-Type: application/json\r\n").encode()
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, body: bytes = b"") -> tuple[int, bytes]:
        """POST `body` to `path`; the status and the answer's body (sent again once on a new
        connection when the service had closed an idle one)."""
        for fresh in (self.writer is None, True):
            if self.writer is None:
                self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
            assert self.reader is not None
            self.writer.write(b"POST %s HTTP/1.1\r\n%sContent-Length: %d\r\n\r\n%s" % (
                path.encode(), self.head, len(body), body))
            first = await self.reader.readline()
            if first or fresh:
                break
            self.close()
        if not first or self.reader is None:
            raise RuntimeError(f"{path}: the service closed the connection without an answer")
        status = int(first.split()[1])
        length, close = 0, False
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            if name.lower() == "content-length":
                length = int(value)
            elif name.lower() == "connection" and "close" in value.lower():
                close = True
            elif name.lower() == "transfer-encoding":
                raise RuntimeError(f"{path}: a chunked answer, which this client does not read")
        answer = await self.reader.readexactly(length) if length else b""
        if close:
            self.close()
        return status, answer

    def close(self) -> None:
        """Close the connection (the next request opens another)."""
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


async def _worker(number: int, base: str, token: str, games: Games, until: float,
                  beat_every: int, figures: Figures, every: float = 0.0) -> None:
    """One simulated worker: register, then batches until `until`, an upload every `every`
    seconds (on a fixed schedule: one answered late is followed at once by the next; 0: each
    as soon as the last is answered)."""
    from runner.fleet import WIRE_VERSION
    from runner.game.job import GameJob

    http = _Connection(base, token)
    try:
        status, joined = await http.post("/api/workers", json.dumps({
            "name": f"sim-{number}", "concurrency": 4, "cores": 4, "memory_mb": 1024,
            "os": "simulated", "version": "bench", "wire": WIRE_VERSION,
            "engines": list(ENGINE_NAMES)}).encode())
        if status != 201:
            raise RuntimeError(f"register: {status} {joined[:300]!r}")
        me = f"/api/workers/{json.loads(joined)['id']}"
        due = time.monotonic() + every * random.random()  # the workers' uploads spread out
        while time.monotonic() < until:
            began = time.perf_counter()
            status, offer = await http.post(f"{me}/batch")
            figures.asks.append(time.perf_counter() - began)
            figures.statuses[status] += 1
            if status != 200:
                await asyncio.sleep(0.5)
                continue
            batch = json.loads(offer)
            path = f"{me}/batches/{batch['id']}"
            bodies = [games.body(GameJob.from_json(text)) for text in batch["jobs"]]
            for count, body in enumerate(bodies, 1):
                if every:
                    await asyncio.sleep(max(0.0, due - time.monotonic()))
                    due += every
                if time.monotonic() >= until:
                    break
                began = time.perf_counter()
                status, _answer = await http.post(f"{path}/games", body)
                ended = time.perf_counter()
                figures.statuses[status] += 1
                if status == 201:
                    figures.uploads.append(ended - began)
                    figures.first = figures.first or began
                    figures.last = ended
                if count % beat_every == 0 and count < len(bodies):  # a whole batch ends
                    began = time.perf_counter()
                    status, _answer = await http.post(f"{path}/heartbeat")
                    figures.beats.append(time.perf_counter() - began)
                    figures.statuses[status] += 1
            await http.post(f"{path}/end")
    finally:
        http.close()


async def _prime(base: str, token: str, games: Games) -> None:
    """Take one batch, play a real game of each colour order from it, hand it back."""
    from runner.fleet import WIRE_VERSION
    from runner.game.job import GameJob

    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=60) as http:
        joined = await http.post("/api/workers", json={
            "name": "primer", "concurrency": 1, "cores": 1, "memory_mb": 1, "os": "x",
            "version": "bench", "wire": WIRE_VERSION, "engines": list(ENGINE_NAMES)})
        joined.raise_for_status()
        me = f"/api/workers/{joined.json()['id']}"
        for _ in range(600):
            offer = await http.post(f"{me}/batch")
            if offer.status_code == 200:
                break
            await asyncio.sleep(0.1)
        offer.raise_for_status()
        jobs = [GameJob.from_json(text) for text in offer.json()["jobs"]]
        await asyncio.to_thread(games.learn, jobs)
        await http.post(f"{me}/batches/{offer.json()['id']}/end")


def run_backend(backend: str, workers: int, seconds: float, beat_every: int,
                rate: float = 0.0) -> Figures:
    """One service on `backend`, loaded for `seconds` (`rate` uploads a second offered in
    all; 0: as many as the service answers)."""
    figures = Figures(backend)
    top = Path(tempfile.mkdtemp(prefix="fleet-load-"))
    server = None
    if backend == "postgres":
        from tests.postgres_server import start_server

        server = start_server()
        url = server.new_database()
    else:
        url = f"sqlite:///{top / 'service.db'}"
    service = Service(url, top)
    try:
        token = _runner("token", "add", "sim", "--role", "worker", "--db", url).split()[0]
        service.start()
        answer = httpx.post(f"{service.base}/api/tournaments", headers={
            "Authorization": f"Bearer {ADMIN}"}, timeout=60, json={
            "name": "fleet-load", "format": "match", "engines": list(ENGINE_NAMES), "tc": TC,
            "rounds": 20_000, "games": 2, "concurrency": 1, "placement": "workers"})
        answer.raise_for_status()
        games = Games()
        asyncio.run(_prime(service.base, token, games))
        figures.load = (os.getloadavg()[0], 0.0)
        assert service.process is not None
        cpu = _cpu_seconds(service.process.pid)
        loop_cpu = _cpu_seconds(service.process.pid, service.process.pid)
        mine = time.process_time()

        async def load() -> None:
            until = time.monotonic() + seconds
            every = workers / rate if rate > 0 else 0.0
            await asyncio.gather(*(_worker(n, service.base, token, games, until, beat_every,
                                           figures, every) for n in range(workers)))

        asyncio.run(load())
        figures.cpu = _cpu_seconds(service.process.pid) - cpu
        figures.loop_cpu = _cpu_seconds(service.process.pid, service.process.pid) - loop_cpu
        figures.client_cpu = time.process_time() - mine
        figures.load = (figures.load[0], os.getloadavg()[0])
    finally:
        service.stop()
        if server is not None:
            server.stop()
        shutil.rmtree(top, ignore_errors=True)  # the database and logs: figures are kept
    return figures


def _q(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def report(figures: Figures) -> str:
    """One backend's figures, in a few lines."""
    window = max(figures.last - figures.first, 1e-9)
    rate = len(figures.uploads) / window
    return "\n".join([
        f"{figures.backend}: {len(figures.uploads)} uploads counted in {window:.1f} s = "
        f"{rate:.1f} uploads/s",
        f"  upload latency ms: p50 {_q(figures.uploads, 0.5):.0f}, "
        f"p99 {_q(figures.uploads, 0.99):.0f}, max {max(figures.uploads, default=0) * 1000:.0f}",
        f"  heartbeat ms: p50 {_q(figures.beats, 0.5):.0f}, p99 {_q(figures.beats, 0.99):.0f}; "
        f"batch request ms: p50 {_q(figures.asks, 0.5):.0f}, p99 {_q(figures.asks, 0.99):.0f}",
        f"  statuses: {dict(sorted(figures.statuses.items()))}; service CPU "
        f"{figures.cpu:.1f} s ({figures.cpu / window:.2f} cores, "
        f"{figures.cpu / max(1, len(figures.uploads)) * 1000:.1f} ms an upload, "
        f"{figures.loop_cpu / max(1, len(figures.uploads)) * 1000:.1f} ms of it on the event "
        "loop's thread), the simulated workers' "
        f"{figures.client_cpu:.1f} s; load average "
        f"{figures.load[0]:.1f} before, {figures.load[1]:.1f} after",
        f"  target 42 uploads/s with p99 < 250 ms: "
        f"{'met' if rate >= 42 and _q(figures.uploads, 0.99) < 250 else 'NOT met'}"])


def main() -> None:
    """Parse the options and run each backend."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--beat-every", type=int, default=4)
    parser.add_argument("--rate", type=float, default=0.0,
                        help="uploads a second offered by all the workers together (0: each "
                             "worker uploads as soon as its last upload is answered)")
    options = parser.parse_args()
    for backend in (("sqlite", "postgres") if options.backend == "both"
                    else (options.backend,)):
        figures = run_backend(backend, options.workers, options.seconds, options.beat_every,
                              options.rate)
        print(report(figures), flush=True)


if __name__ == "__main__":
    main()
