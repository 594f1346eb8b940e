"""The service under load: many clients watching and polling while games are played.

Starts the real service (`runner serve` as a subprocess on a free loopback port, a fresh
SQLite database, RUNNER_TOKEN set, the repository's engines file), submits a tournament of
the bundled engine against its v1 (two games at a time), then opens CLIENTS clients. Each
reads the tournament's event stream (`GET /api/tournaments/{id}/events`) and polls its
status (`GET /api/tournaments/{id}`) every POLL seconds until the tournament has finished.

The clients speak HTTP/1.1 over plain asyncio sockets (keep-alive for the polls, chunked
decoding for the stream): an HTTP library's per-request cost, times a few hundred clients,
would be measured instead of the service on two cores.

Figures:
- poll latency, request sent to body read (p50, p99, max) and every status code seen;
- event delay: from the move's time in the service (`moved_at` of each `move` event) to
  each client's receipt (p50, p99, max; one clock, the same machine);
- each client's `game_finished` events against the games stored (every client must get
  every game), and the streams that had to reconnect (a reader too slow is cut off and
  resumes from its Last-Event-ID);
- the games: terminations, time losses (from the database after the run), and the lowest
  clock any side had left after a move;
- the 1-minute load average before, at its highest during, and after the run; the
  service's CPU time (its process and its engines are separate: engines are not counted).

Run: python benchmarks/service_load.py [--clients 200] [--rounds 2] [--poll 1.0]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
ENGINES = REPO / "configs" / "engines.toml"
TOKEN = "load-test-token"
HOST = "127.0.0.1"


# ----------------------------------------------------------------------------- the service

def free_port() -> int:
    """A TCP port free on loopback now."""
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def descendants(pid: int) -> set[int]:
    """Every live process below `pid` (children, their children, ...), from /proc."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        parents.setdefault(ppid, []).append(int(entry.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pid: int) -> bool:
    """Whether a process is still there (a zombie counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of one process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Service:
    """`runner serve` in a subprocess: started, waited for, and always stopped to the end."""

    def __init__(self, workdir: Path, *, port: int | None = None, loop: str = "auto") -> None:
        """The database and the log go in `workdir`; `loop`: "auto" (the loop `runner serve`
        picks) or "asyncio" (uvloop hidden from it, RUNNER_LOOP=asyncio)."""
        self.workdir = workdir
        self.loop = loop
        self.port = port or free_port()
        self.db = workdir / "service.db"
        self.log_path = workdir / "service.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.seen_children: set[int] = set()

    @property
    def pid(self) -> int:
        """The service's process id (once started)."""
        assert self.process is not None, "the service is not started"
        return self.process.pid

    def start(self, timeout: float = 30.0) -> None:
        """Start the service and wait until it answers."""
        env = {**os.environ, "RUNNER_TOKEN": TOKEN, "PYTHONPATH": str(REPO)}
        env.pop("RUNNER_DB", None)
        hide = "import sys; sys.modules['uvloop'] = None; " if self.loop == "asyncio" else ""
        if self.loop == "asyncio":
            env["RUNNER_LOOP"] = "asyncio"
        command = [sys.executable, "-c", f"{hide}from runner.cli.app import main; main()", "serve",
                   "--host", HOST, "--port", str(self.port), "--db", str(self.db),
                   "--engines", str(ENGINES),
                   # every client comes from loopback: the limits per address would count
                   # them as one (they are measured in benchmarks/slow_clients.py)
                   "--max-connections-per-client", "0", "--max-streams-per-client", "0"]
        from runner.protocol.lifetime import death_signal

        with self.log_path.open("wb") as log:  # the service dies with us, even by kill -9
            self.process = subprocess.Popen(command, cwd=REPO, env=env, stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True,
                                            preexec_fn=death_signal())
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"runner serve exited with {self.process.returncode}:\n"
                                   + self.log_path.read_text(errors="replace")[-3000:])
            with contextlib.suppress(OSError), socket.create_connection((HOST, self.port), 1):
                return
            time.sleep(0.1)
        raise RuntimeError(f"runner serve did not listen on {self.port} in {timeout} s")

    def note_children(self) -> None:
        """Remember the service's processes (engines), to check later that none is left."""
        if self.process is not None:
            self.seen_children |= descendants(self.process.pid)

    def stop(self, timeout: float = 30.0) -> list[int]:
        """SIGTERM (the service stops its games and engines), then SIGKILL to its process
        group if it hangs; returns the pids of its processes still alive after that (none)."""
        process = self.process
        if process is None:
            return []
        self.note_children()
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)
        deadline = time.monotonic() + 10
        left = [pid for pid in self.seen_children if alive(pid)]
        while left and time.monotonic() < deadline:
            time.sleep(0.1)
            left = [pid for pid in left if alive(pid)]
        for pid in left:  # the last resort: nothing of ours outlives the run
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return left


# ----------------------------------------------------------------------------- HTTP/1.1

class HttpError(Exception):
    """The server closed the connection or sent something that is not HTTP."""


async def _head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    status_line = await reader.readline()
    if not status_line:
        raise HttpError("connection closed before the response")
    parts = status_line.decode("latin-1").split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/"):
        raise HttpError(f"not an HTTP response: {status_line[:80]!r}")
    headers: dict[str, str] = {}
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b"\n", b""):
            break
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(parts[1]), headers


async def _chunks(reader: asyncio.StreamReader, headers: dict[str, str]) -> AsyncIterator[bytes]:
    """The body as it arrives: chunked, by Content-Length, or up to the end."""
    if headers.get("transfer-encoding", "").lower() == "chunked":
        while True:
            size_line = await reader.readline()
            if not size_line:
                raise HttpError("connection closed inside a chunked body")
            size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                await reader.readline()  # the blank line after the last chunk (no trailers)
                return
            data = await reader.readexactly(size + 2)
            yield data[:-2]
    elif "content-length" in headers:
        yield await reader.readexactly(int(headers["content-length"]))
    else:
        while data := await reader.read(65536):
            yield data


def _request(method: str, path: str, port: int, headers: dict[str, str] | None = None,
             body: bytes = b"") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {HOST}:{port}"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    if body or method == "POST":
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


class Connection:
    """One keep-alive HTTP/1.1 connection (reopened when the server closes it)."""

    def __init__(self, port: int) -> None:
        """To the service on loopback `port`."""
        self.port = port
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def call(self, method: str, path: str, headers: dict[str, str] | None = None,
                   body: bytes = b"") -> tuple[int, bytes]:
        """Send one request, read the whole response: (status, body)."""
        for attempt in (1, 2):
            if self._streams is None:
                self._streams = await asyncio.open_connection(HOST, self.port)
            reader, writer = self._streams
            try:
                writer.write(_request(method, path, self.port, headers, body))
                await writer.drain()
                status, response_headers = await _head(reader)
                data = b"".join([chunk async for chunk in _chunks(reader, response_headers)])
            except (HttpError, ConnectionError, asyncio.IncompleteReadError):
                await self.close()
                if attempt == 2:
                    raise
                continue  # a keep-alive connection the server had closed: once more
            if response_headers.get("connection", "").lower() == "close":
                await self.close()
            return status, data
        raise AssertionError("unreachable")

    async def close(self) -> None:
        """Close the connection (if open)."""
        if self._streams is not None:
            writer = self._streams[1]
            self._streams = None
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()


# ----------------------------------------------------------------------------- clients

@dataclass
class StreamRecord:
    """What one event-stream client saw."""

    finished: set[int] = field(default_factory=set)
    """Indexes of the games whose `game_finished` came (live or replayed)."""
    delays: list[float] = field(default_factory=list)
    """Seconds from each move in the service to its receipt here."""
    moves: int = 0
    reconnects: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    tournament_finished: bool = False
    status: str | None = None
    """The last status event's (interrupted, stopped: the run ended without finishing)."""
    notices: list[str] = field(default_factory=list)
    lowest_clock: float | None = None
    errors: list[str] = field(default_factory=list)


def _parse_events(buffer: bytes) -> tuple[list[dict[str, str]], bytes]:
    """Complete events in `buffer` (fields by name) and the incomplete rest."""
    events = []
    text = buffer.replace(b"\r\n", b"\n")
    *complete, rest = text.split(b"\n\n")
    for block in complete:
        event: dict[str, str] = {}
        for line in block.decode("utf-8").split("\n"):
            if not line or line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            event[name] = event[name] + "\n" + value if name == "data" and name in event \
                else value
        if event:
            events.append(event)
    return events, rest


async def stream_client(port: int, tournament_id: int, record: StreamRecord,
                        stop: asyncio.Event) -> None:
    """Read the tournament's events until `tournament_finished` (reconnecting with the last
    id if the stream is cut before)."""
    last_id = ""
    path = f"/api/tournaments/{tournament_id}/events"
    while not record.tournament_finished and not stop.is_set():
        headers = {"Accept": "text/event-stream"}
        if last_id:
            headers["Last-Event-ID"] = last_id
        try:
            reader, writer = await asyncio.open_connection(HOST, port)
        except OSError as exc:
            record.errors.append(f"connect: {exc}")
            await asyncio.sleep(0.5)
            continue
        try:
            writer.write(_request("GET", path, port, headers))
            await writer.drain()
            status, response_headers = await _head(reader)
            record.statuses[status] += 1
            if status != 200:
                record.errors.append(f"events: HTTP {status}")
                await asyncio.sleep(1.0)
                continue
            buffer = b""
            async for chunk in _chunks(reader, response_headers):
                received = time.time()
                events, buffer = _parse_events(buffer + chunk)
                for event in events:
                    last_id = event.get("id", last_id)
                    _take(event, received, record)
        except (HttpError, ConnectionError, asyncio.IncompleteReadError) as exc:
            record.errors.append(f"events: {type(exc).__name__}: {exc}")
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
        if not record.tournament_finished and not stop.is_set():
            record.reconnects += 1


def _take(event: dict[str, str], received: float, record: StreamRecord) -> None:
    kind = event.get("event", "message")
    if kind not in ("move", "game_finished", "tournament_finished", "status", "notice"):
        return
    data = json.loads(event.get("data", "null"))
    if kind == "status":
        record.status = data["status"]
    elif kind == "notice":
        record.notices.append(data["text"])
    elif kind == "move":
        record.moves += 1
        record.delays.append(received - data["moved_at"])
        clocks = [c for c in (data.get("white_clock"), data.get("black_clock")) if c is not None]
        if clocks:
            low = min(clocks)
            record.lowest_clock = low if record.lowest_clock is None else min(low, record.lowest_clock)
    elif kind == "game_finished":
        record.finished.add(int(data["index"]))
    else:
        record.tournament_finished = True


async def poll_client(port: int, tournament_id: int, interval: float, latencies: list[float],
                      statuses: Counter[int], stop: asyncio.Event) -> None:
    """Poll the tournament's status every `interval` seconds (randomly phased) until `stop`."""
    connection = Connection(port)
    path = f"/api/tournaments/{tournament_id}"
    try:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stop.wait(), random.uniform(0, interval))
        while not stop.is_set():
            began = time.perf_counter()
            try:
                status, _ = await connection.call("GET", path)
            except (HttpError, OSError, asyncio.IncompleteReadError):
                status = 0  # no answer at all
            latencies.append(time.perf_counter() - began)
            statuses[status] += 1
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), interval)
    finally:
        await connection.close()


# ----------------------------------------------------------------------------- the run

@dataclass
class LoadResult:
    """Everything one run measured."""

    clients: int
    games_planned: int
    wall: float
    poll_latencies: list[float]
    poll_statuses: Counter[int]
    streams: list[StreamRecord]
    games: list[dict[str, Any]]
    """Stored games: index, white, black, result, termination, plies."""
    load_before: float
    load_max: float
    load_after: float
    service_cpu: float
    clients_cpu: float
    """This process's CPU time during the load (the clients share the two cores too)."""
    engines_left: list[int]

    @property
    def server_errors(self) -> int:
        """Responses with a 5xx status, polls and streams together."""
        streams = sum(n for r in self.streams for s, n in r.statuses.items() if s >= 500)
        return streams + sum(n for s, n in self.poll_statuses.items() if s >= 500)

    @property
    def time_losses(self) -> list[dict[str, Any]]:
        """Stored games lost on time."""
        return [g for g in self.games if g["termination"] == "time forfeit"]

    @property
    def missed(self) -> list[int]:
        """Per client that missed any, how many stored games' `game_finished` it lacks."""
        stored = {g["index"] for g in self.games}
        return [len(stored - r.finished) for r in self.streams if stored - r.finished]


def submission(rounds: int, tc: str, maxmoves: int) -> dict[str, Any]:
    """The tournament the load runs against: two games at a time, bundled v2 against v1."""
    return {"name": "service load", "engines": ["bundled", "bundled-v1"], "tc": tc,
            "rounds": rounds, "games": 2, "concurrency": 2,
            "adjudication": {"maxmoves": maxmoves}}


async def _load(service: Service, clients: int, poll: float, config: dict[str, Any],
                timeout: float) -> tuple[int, list[float], Counter[int], list[StreamRecord],
                                         float, float]:
    connection = Connection(service.port)
    status, body = await connection.call(
        "POST", "/api/tournaments", {"Authorization": f"Bearer {TOKEN}",
                                     "Content-Type": "application/json"},
        json.dumps(config).encode())
    await connection.close()
    if status != 201:
        raise RuntimeError(f"submit: HTTP {status}: {body[:500]!r}")
    tournament_id = int(json.loads(body)["id"])
    stop = asyncio.Event()
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    records = [StreamRecord() for _ in range(clients)]
    load_max = os.getloadavg()[0]
    readers = [asyncio.create_task(stream_client(service.port, tournament_id, r, stop))
               for r in records]
    pollers = [asyncio.create_task(poll_client(service.port, tournament_id, poll, latencies,
                                               statuses, stop)) for _ in range(clients)]
    began = time.monotonic()
    try:
        pending = set(readers)
        while pending and time.monotonic() - began < timeout:
            done, pending = await asyncio.wait(pending, timeout=1.0)
            for task in done:
                task.result()  # a reader that failed (not the service: this script) says why
            load_max = max(load_max, os.getloadavg()[0])
            service.note_children()
            ended = next((r for r in records if r.status in ("interrupted", "stopped")), None)
            if ended is not None:
                raise RuntimeError(f"the tournament ended {ended.status}: "
                                   + "; ".join(ended.notices))
    finally:
        wall = time.monotonic() - began
        stop.set()
        await asyncio.gather(*pollers, return_exceptions=True)
        for task in readers:
            task.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
    if not all(r.tournament_finished for r in records):
        unfinished = sum(not r.tournament_finished for r in records)
        raise RuntimeError(f"{unfinished} streams had no tournament_finished after {timeout} s")
    return tournament_id, latencies, statuses, records, wall, load_max


def stored_games(db: Path, tournament_id: int) -> list[dict[str, Any]]:
    """The tournament's games as the database holds them."""
    from runner.store import GameFilter, open_database, stream_games

    database = open_database(f"sqlite:///{db}")
    try:
        with database.session() as session:
            return [{"index": g.job_index, "white": g.white, "black": g.black,
                     "result": g.result.value if g.result else None,
                     "termination": g.termination.value if g.termination else None,
                     "plies": g.plies}
                    for g in stream_games(session, GameFilter(tournament_id=tournament_id))]
    finally:
        database.close()


def run_load(*, clients: int = 200, rounds: int = 2, tc: str = "10+0.1", poll: float = 1.0,
             maxmoves: int = 60, timeout: float = 300.0, loop: str = "auto",
             workdir: Path | None = None) -> LoadResult:
    """Start the service, run the load, stop the service (always); the figures."""
    with contextlib.ExitStack() as stack:
        if workdir is None:
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="svcload-")))
        service = Service(workdir, loop=loop)
        load_before = os.getloadavg()[0]
        service.start()
        try:
            cpu_before, own_before = cpu_seconds(service.pid), cpu_seconds(os.getpid())
            tournament_id, latencies, statuses, records, wall, load_max = asyncio.run(
                _load(service, clients, poll, submission(rounds, tc, maxmoves), timeout))
            service_cpu = cpu_seconds(service.pid) - cpu_before
            clients_cpu = cpu_seconds(os.getpid()) - own_before
        finally:
            left = service.stop()
        games = stored_games(service.db, tournament_id)
        return LoadResult(
            clients=clients, games_planned=rounds * 2, wall=wall, poll_latencies=latencies,
            poll_statuses=statuses, streams=records, games=games, load_before=load_before,
            load_max=load_max, load_after=os.getloadavg()[0], service_cpu=service_cpu,
            clients_cpu=clients_cpu, engines_left=left)
    raise AssertionError("unreachable")


def _quantiles(values: list[float]) -> tuple[float, float, float]:
    """p50, p99 and max of `values` (in the same unit)."""
    ordered = sorted(values)
    if not ordered:
        return (float("nan"),) * 3
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return statistics.median(ordered), p99, ordered[-1]


def report(result: LoadResult, *, tc: str, poll: float) -> Iterator[str]:
    """The figures as lines of text."""
    p50, p99, top = (1000 * v for v in _quantiles(result.poll_latencies))
    delays = [d for r in result.streams for d in r.delays]
    d50, d99, dtop = (1000 * v for v in _quantiles(delays))
    moves = [r.moves for r in result.streams]
    lowest = [r.lowest_clock for r in result.streams if r.lowest_clock is not None]
    terminations = Counter(g["termination"] for g in result.games)
    yield (f"{result.clients} clients, each reading the event stream and polling the status "
           f"every {poll:g} s; {result.games_planned} games bundled vs bundled-v1 at {tc}, "
           f"2 at a time; {os.cpu_count()} cores")
    yield (f"wall {result.wall:.1f} s; load average (1 min) {result.load_before:.2f} before, "
           f"{result.load_max:.2f} at most during, {result.load_after:.2f} after; "
           f"CPU: service {result.service_cpu:.1f} s (its process, engines apart), clients "
           f"{result.clients_cpu:.1f} s")
    yield (f"polls: {len(result.poll_latencies)} in all, p50 {p50:.1f} ms, p99 {p99:.1f} ms, "
           f"max {top:.1f} ms; statuses {dict(sorted(result.poll_statuses.items()))}")
    yield (f"events: {min(moves, default=0)}-{max(moves, default=0)} moves per client; "
           f"delay move -> client p50 {d50:.1f} ms, p99 {d99:.1f} ms, max {dtop:.1f} ms "
           f"({len(delays)} receipts); reconnects {sum(r.reconnects for r in result.streams)}; "
           f"clients missing a game_finished: {len(result.missed)}")
    yield (f"games: {len(result.games)} stored, terminations {dict(terminations)}, time "
           f"losses {len(result.time_losses)}; lowest clock left after a move "
           f"{min(lowest, default=float('nan')):.2f} s")
    yield (f"5xx responses: {result.server_errors}; service processes left after the stop: "
           f"{len(result.engines_left)}")


def main() -> None:
    """Run the load once and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2, help="2 games per round")
    parser.add_argument("--tc", default="10+0.1")
    parser.add_argument("--poll", type=float, default=1.0, help="seconds between two polls")
    parser.add_argument("--maxmoves", type=int, default=60,
                        help="a game is adjudicated a draw after this many moves each")
    parser.add_argument("--loop", choices=("auto", "asyncio"), default="auto",
                        help="the service's event loop: auto (as runner serve picks) or "
                             "asyncio (uvloop hidden from it)")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds the tournament may take")
    args = parser.parse_args()
    result = run_load(clients=args.clients, rounds=args.rounds, tc=args.tc, poll=args.poll,
                      maxmoves=args.maxmoves, loop=args.loop, timeout=args.timeout)
    for line in report(result, tc=args.tc, poll=args.poll):
        print(line)
    failed = result.server_errors or result.time_losses or result.missed or result.engines_left
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
