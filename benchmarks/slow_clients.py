"""Slow and greedy clients against a real ``runner serve``: are they closed, is the service
still there for everyone else, and what does it cost in descriptors and log?

Starts `runner serve` (a subprocess on a free loopback port, a fresh SQLite database, the
repository's engines file) with the interpreter given (``--python``: point it at another
checkout's venv to measure the code before a change), then from this process opens

- IDLE connections that send nothing,
- PARTIAL connections that send the start of a request head and stop,
- TRICKLE connections that send a head's bytes one every two seconds (slowloris: a deadline
  that each byte resets never fires),

and, in a second phase, FLOOD connections at once (more than the server's descriptors when
``--fd-limit`` is given: the server's limit of open files is set to that, soft and hard).

Figures: of each kind, how many were closed at once (refused), closed later (timed out) and
still open after HOLD seconds; whether a normal ``GET /api/tournaments`` succeeded during the
attack (and its latency) and after it; the server's open descriptors (/proc/PID/fd) before,
at the peak and at the end; the size of the server's log; the load average.

Run: python benchmarks/slow_clients.py [--idle 1000] [--partial 1000] [--trickle 100]
       [--hold 15] [--flood 1500 --fd-limit 1024] [--python /tmp/venv/bin/python]
       [-- SERVE-ARGS...]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"
ATTACKER = "127.0.0.2"
"""The attack comes from another loopback address than the normal GETs (limits per client
address would otherwise refuse the normal client with the attacker)."""


def free_port() -> int:
    """A TCP port free on loopback now."""
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def fds(pid: int) -> int:
    """Open descriptors of process `pid`."""
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return -1


def get(port: int, timeout: float = 10.0) -> tuple[str, float]:
    """One plain ``GET /api/tournaments``: its status line (or the error) and its seconds."""
    start = time.monotonic()
    try:
        with socket.create_connection((HOST, port), timeout=timeout) as conn:
            conn.sendall(b"GET /api/tournaments HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            data = b""
            while chunk := conn.recv(65536):
                data += chunk
        status = data.split(b"\r\n", 1)[0].decode(errors="replace") or "closed, no answer"
    except OSError as exc:
        status = f"error: {exc}"
    return status, time.monotonic() - start


def state(conn: socket.socket) -> str:
    """"open"; "refused" (answered 503, or reset: a refusal that could not wait for the
    client to read it); "timed out" (closed without a word: a deadline)."""
    data = b""
    try:
        while chunk := conn.recv(65536, socket.MSG_DONTWAIT):
            data += chunk
    except BlockingIOError:
        return "refused" if data.startswith(b"HTTP/1.1 503") else "open"
    except OSError:
        return "refused"
    return "refused" if data.startswith(b"HTTP/1.1 503") else "timed out"


def is_closed(conn: socket.socket) -> bool:
    """Whether the server has closed `conn`."""
    return state(conn) != "open"


def open_many(port: int, count: int, first: bytes) -> list[socket.socket]:
    """`count` connections from ATTACKER, each sent `first` (may be nothing)."""
    conns = []
    for _ in range(count):
        try:
            conn = socket.create_connection((HOST, port), timeout=5,
                                            source_address=(ATTACKER, 0))
            if first:
                conn.sendall(first)
            conn.setblocking(False)  # the checks below must not wait for the timeout
        except OSError:
            break
        conns.append(conn)
    return conns


def tally(conns: list[socket.socket]) -> tuple[int, int, int]:
    """(refused, timed out, still open) among `conns`."""
    seen = [state(c) for c in conns]
    return seen.count("refused"), seen.count("timed out"), seen.count("open")


def main() -> None:
    """Run the attack and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable,
                        help="The interpreter that runs `runner serve` (its venv's checkout).")
    parser.add_argument("--idle", type=int, default=1000)
    parser.add_argument("--partial", type=int, default=1000)
    parser.add_argument("--trickle", type=int, default=100)
    parser.add_argument("--hold", type=float, default=15.0,
                        help="Seconds the connections are held before they are counted.")
    parser.add_argument("--flood", type=int, default=0,
                        help="Then open this many connections at once (0: skip).")
    parser.add_argument("--fd-limit", type=int, default=0,
                        help="The server's limit of open files, soft and hard (0: inherited).")
    parser.add_argument("serve_args", nargs="*", help="More arguments for runner serve.")
    args = parser.parse_args()
    need = args.idle + args.partial + args.trickle + args.flood + 256
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, need)), hard))

    def limit() -> None:
        if args.fd_limit:
            resource.setrlimit(resource.RLIMIT_NOFILE, (args.fd_limit, args.fd_limit))

    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        log_path = Path(tmp) / "serve.log"
        with log_path.open("wb") as log:
            server = subprocess.Popen(
                [args.python, "-m", "runner", "serve", "--port", str(port),
                 "--db", str(Path(tmp) / "s.db"), "--engines",
                 str(REPO / "configs" / "engines.toml"), *args.serve_args],
                cwd=tmp, stdout=log, stderr=subprocess.STDOUT, preexec_fn=limit)
        try:
            run(args, port, server, log_path)
        finally:
            server.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                server.wait(20)
            if server.poll() is None:
                server.kill()


def run(args: argparse.Namespace, port: int, server: subprocess.Popen[bytes],
        log_path: Path) -> None:
    """The attack itself, once the server answers."""
    deadline = time.monotonic() + 60
    while not get(port, 1.0)[0].startswith("HTTP/1.1 200"):
        if server.poll() is not None or time.monotonic() > deadline:
            sys.exit(f"the server did not start:\n{log_path.read_text()[-2000:]}")
        time.sleep(0.2)
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    print(f"server fds at rest: {fds(server.pid)}")
    start = time.monotonic()
    idle = open_many(port, args.idle, b"")
    partial = open_many(port, args.partial, b"GET /api/tournaments HTTP/1.1\r\nHost: x\r\n")
    trickle = open_many(port, args.trickle, b"G")
    peak = fds(server.pid)
    print(f"opened {len(idle)} idle, {len(partial)} partial-head, {len(trickle)} trickling "
          f"in {time.monotonic() - start:.1f} s; server fds now {peak}")
    start = time.monotonic()  # held HOLD seconds from the last one opened
    status, took = get(port)
    peak = max(peak, fds(server.pid))
    print(f"GET during the attack: {status} in {took:.2f} s")
    head = b"ET /api/tournaments HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 64
    sent = 0
    while time.monotonic() - start < args.hold:
        time.sleep(2.0)
        for conn in trickle:
            with contextlib.suppress(OSError):
                conn.send(head[sent:sent + 1])
        sent += 1
        peak = max(peak, fds(server.pid))
    for name, group in (("idle", idle), ("partial-head", partial), ("trickling", trickle)):
        refused, timed_out, still = tally(group)
        print(f"{name:>13}: {len(group)} opened, {refused} refused (503), {timed_out} closed "
              f"by a deadline, {still} still open {args.hold:.0f} s after")
    print(f"server fds: peak {peak}, after {args.hold:.0f} s {fds(server.pid)}")
    for conn in idle + partial + trickle:
        conn.close()
    if args.flood:
        time.sleep(1.0)
        flood = open_many(port, args.flood, b"")
        size_before = log_path.stat().st_size
        status, took = get(port, 5.0)
        time.sleep(5.0)
        closed = sum(is_closed(c) for c in flood)
        print(f"flood: {len(flood)} opened (server fd limit {args.fd_limit or 'inherited'}), "
              f"{closed} closed by the server, server fds {fds(server.pid)}; GET during it: "
              f"{status} in {took:.2f} s; log grew {log_path.stat().st_size - size_before} "
              f"bytes in 5 s")
        for conn in flood:
            conn.close()
        time.sleep(1.5)
    status, took = get(port)
    print(f"GET after: {status} in {took:.2f} s")
    print(f"server log: {log_path.stat().st_size} bytes; load average now "
          f"{os.getloadavg()[0]:.2f}; server alive: {server.poll() is None}")


if __name__ == "__main__":
    main()
