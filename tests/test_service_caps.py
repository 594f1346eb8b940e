"""The service's caps hold whatever the spelling (issue 39): numbers given as text count as
the numbers they write, spin values are ASCII integers sent in the runner's own spelling, the
engines file names each engine's thread and memory options (memory counted together), and a
protocol the engine does not speak is refused at submission.

A real ``runner serve`` on loopback with the shipped engines file, real Debian engines
answering its probes; the spelling sent to an engine is read from a real stockfish's
declarations through the submission check itself.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, require_binary

httpx = pytest.importorskip("httpx", reason="httpx is not installed")
pytest.importorskip("uvicorn", reason="the service extra (uvicorn) is not installed")

AUTH = {"Authorization": "Bearer caps"}
MAX_HASH = 64
MAX_THREADS = 2
CEILING = 1.0
"""The service's ceiling on a move without a clock, in seconds (short: a test waits for it)."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Service:
    """A running ``runner serve``: its URL."""

    def __init__(self, base: str) -> None:
        self.base = base

    def submit(self, body: dict[str, Any]) -> httpx.Response:
        """POST a tournament as JSON."""
        return httpx.post(f"{self.base}/api/tournaments", json=body, headers=AUTH, timeout=60)

    def stop(self, response: httpx.Response) -> None:
        """Stop the tournament an accepted submission made (its games are not the point)."""
        httpx.post(f"{self.base}/api/tournaments/{response.json()['id']}/stop",
                   params={"hard": "true"}, headers=AUTH, timeout=30)

    def count(self) -> int:
        """The tournaments stored."""
        return len(httpx.get(f"{self.base}/api/tournaments", timeout=60).json()["tournaments"])


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    directory = tmp_path_factory.mktemp("caps")
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "runner", "serve", "--port", str(port),
         "--db", str(directory / "s.db"), "--engines", str(REPO / "configs" / "engines.toml"),
         "--max-hash", str(MAX_HASH), "--max-threads", str(MAX_THREADS),
         "--submit-rate", "1000", "--move-ceiling", str(CEILING)],
        cwd=directory, env={**os.environ, "RUNNER_TOKEN": "caps", "PYTHONPATH": str(REPO)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{base}/api/tournaments", timeout=1)
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, "serve did not start"
                time.sleep(0.05)
        yield Service(base)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _problems(response: httpx.Response) -> dict[str, str]:
    assert response.status_code == 422, response.text
    return {p["key"]: p["message"] for p in response.json()["detail"]}


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("name", "value", "expected"), [
    ("Hash", "33554432", f"at most {MAX_HASH} MB"),
    ("Hash", "1_000_000", "ASCII digits"),
    ("Threads", "1024", f"at most {MAX_THREADS} threads"),
    ("Threads", " 512 ", f"at most {MAX_THREADS} threads"),
    ("Hash", "\u0661\u0660\u0662\u0664\u0660", "ASCII digits"),  # Arabic-Indic 10240
    ("Skill Level", "\u0661\u0660", "ASCII digits"),  # Arabic-Indic 10: no cap, still refused
])
def test_a_number_written_as_text_does_not_pass_a_cap(service: Service, name: str,
                                                      value: str, expected: str) -> None:
    """Seen: all four of the first were accepted (201); stockfish reached 317 threads and
    died allocating 1,000,000 MB. A plain 4096 was refused."""
    require_binary("stockfish")
    before = service.count()
    problems = _problems(service.submit({
        "engines": [{"use": "stockfish", "options": {name: value}}, "bundled"],
        "tc": "5+0.05"}))
    assert expected in problems[f"engines[0].options.{name}"], problems
    assert service.count() == before


@pytest.mark.timeout(120)
def test_toga2s_own_thread_and_memory_options_are_capped(service: Service) -> None:
    """The engines file names Toga II's `Number of Threads` and its memory options (`Hash`
    and `Bitbases Cache Size`), whose sum is capped."""
    require_binary("toga2")
    threads = _problems(service.submit({
        "engines": [{"use": "toga2", "options": {"Number of Threads": 16}}, "bundled"],
        "tc": "5+0.05"}))
    assert f"at most {MAX_THREADS} threads" in threads["engines[0].options.Number of Threads"]
    memory = _problems(service.submit({
        "engines": [{"use": "toga2", "options": {"Hash": 48, "Bitbases Cache Size": 32}},
                    "bundled"], "tc": "5+0.05"}))
    message = memory["engines[0].options.Bitbases Cache Size"]
    assert f"at most {MAX_HASH} MB" in message and "= 80 MB" in message, message
    # Left alone, an option counts at its declared default (Toga II's Hash is 128 MB).
    default = _problems(service.submit({
        "engines": [{"use": "toga2", "options": {"Bitbases Cache Size": 16}}, "bundled"],
        "tc": "5+0.05"}))
    assert "Hash 128 + Bitbases Cache Size 16 = 144 MB" in \
        default["engines[0].options.Bitbases Cache Size"]
    within = service.submit({
        "engines": [{"use": "toga2", "options": {"Hash": "48", "Bitbases Cache Size": 16,
                                                 "Number of Threads": 2}}, "bundled"],
        "tc": "5+0.05", "games": 2})
    assert within.status_code == 201, within.text
    service.stop(within)


@pytest.mark.timeout(120)
def test_a_protocol_the_engine_does_not_speak_is_refused(service: Service) -> None:
    """Seen: ``{"use": "fairymax", "protocol": "uci"}`` was accepted and failed when played."""
    require_binary("fairymax")
    before = service.count()
    problems = _problems(service.submit({
        "engines": [{"use": "fairymax", "protocol": "uci"}, "bundled"], "tc": "5+0.05"}))
    assert "speaks cecp" in problems["engines[0].protocol"]
    assert service.count() == before
    # Its own protocol, under another of its names, is no contradiction.
    same = service.submit({"engines": [{"use": "fairymax", "protocol": "xboard"}, "bundled"],
                           "tc": "5+0.05", "games": 2})
    assert same.status_code == 201, same.text
    service.stop(same)


def test_the_engine_is_sent_the_runners_spelling_of_the_number(tmp_path: Path) -> None:
    """A spin value given as text is stored (and so sent) as the number it writes."""
    require_binary("stockfish")
    from runner.service.declared import DeclaredOptions
    from runner.service.settings import ServiceSettings
    from runner.service.submission import check_submission
    from runner.tournament.runtime import engine_config

    settings = ServiceSettings(db_url=f"sqlite:///{tmp_path / 's.db'}",
                               engines_file=REPO / "configs" / "engines.toml")
    config = check_submission({
        "engines": [{"use": "stockfish", "options": {"Hash": " +8 ", "Skill Level": "07"}},
                    "bundled"], "tc": "5+0.05"}, settings, DeclaredOptions())
    assert config.engines[0].options == (("Hash", 8), ("Skill Level", 7))
    assert engine_config(config.engines[0]).options == {"Hash": 8, "Skill Level": 7}


@pytest.mark.slow  # CI time: about 13 s; the ceiling is tested fast in test_game_relay and test_game_faults
@pytest.mark.timeout(300)
def test_a_depth_that_never_ends_loses_on_time_at_the_ceiling(service: Service) -> None:
    """Seen: fairymax at depth=64 never finished its first move, and the tournament held the
    service's only place to run until stopped by hand. Each move is now lost on time at the
    service's ceiling, and the tournament ends."""
    require_binary("fairymax")
    response = service.submit({"engines": ["fairymax", {"use": "fairymax", "name": "fm2"}],
                               "tc": "depth=64", "games": 2})
    assert response.status_code == 201, response.text
    tournament_id = response.json()["id"]
    url = f"{service.base}/api/tournaments/{tournament_id}"

    def summary() -> dict[str, Any]:
        # The list, not the detail: the detail's report is built at a lower CPU priority,
        # slow on a loaded machine.
        listed = httpx.get(f"{service.base}/api/tournaments", timeout=120).json()
        return next(t for t in listed["tournaments"] if t["id"] == tournament_id)

    deadline = time.monotonic() + 240
    while summary()["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, "the tournament never ended"
        time.sleep(0.2)
    ended = summary()
    assert ended["status"] == "finished" and ended["done_games"] == 2, ended
    pgn = httpx.get(f"{url}/pgn", timeout=120).text
    assert pgn.count('[Termination "time forfeit"]') == 2, pgn
    assert pgn.count(f"no move within the ceiling of {CEILING:g} s a move") == 2, pgn


def test_a_run_standing_still_is_stopped_with_its_reason() -> None:
    """The watch behind the ceiling: progress keeps a run going; standing still past the
    ceiling and the grace stops it, with the reason the API shows."""
    import asyncio

    from runner.service.watchdog import ProgressWatch

    now = [0.0]
    watch = ProgressWatch(10.0, grace=5.0, clock=lambda: now[0])
    now[0] = 14.0
    assert watch.stalled() is None
    watch.progressed()
    now[0] = 28.0
    assert watch.stalled() is None
    now[0] = 29.5
    reason = watch.stalled()
    assert reason is not None and "no progress for 16 s" in reason and "10 s" in reason

    stopped: list[str] = []

    async def stop(why: str) -> None:
        stopped.append(why)

    async def main() -> None:
        real = ProgressWatch(0.05, grace=0.05)
        await asyncio.wait_for(real.guard(stop), 30)

    asyncio.run(main())
    assert len(stopped) == 1 and stopped[0].startswith("no progress for"), stopped
