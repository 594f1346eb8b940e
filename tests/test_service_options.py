"""A submission sets only what an engine declared, and only numbers, switches and choices
(issue 26): a real ``runner serve`` with the shipped engines file as its allow-list, started
in a scratch directory (engines write there), real Debian engines answering its probes.
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

AUTH = {"Authorization": "Bearer tok"}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Service:
    """A running ``runner serve`` and the directory it (and its engines) run in."""

    def __init__(self, base: str, directory: Path) -> None:
        self.base = base
        self.directory = directory

    def submit(self, body: dict[str, Any]) -> httpx.Response:
        """POST a tournament as JSON."""
        return httpx.post(f"{self.base}/api/tournaments", json=body, headers=AUTH, timeout=60)

    def tournaments(self) -> list[dict[str, Any]]:
        """Every stored tournament."""
        response = httpx.get(f"{self.base}/api/tournaments", timeout=30)
        return list(response.json()["tournaments"])


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    directory = tmp_path_factory.mktemp("serve")
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "runner", "serve", "--port", str(port),
         "--db", str(directory / "s.db"), "--engines", str(REPO / "configs" / "engines.toml")],
        cwd=directory, env={**os.environ, "RUNNER_TOKEN": "tok", "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{base}/api/tournaments", timeout=1)
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, "serve did not start"
                time.sleep(0.05)
        yield Service(base, directory)
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
def test_a_number_for_stockfishs_debug_log_file_is_refused(service: Service) -> None:
    """Seen: ``{"Debug Log File": 4242}`` made stockfish write a growing file named 4242."""
    require_binary("stockfish")
    before = len(service.tournaments())
    problems = _problems(service.submit({
        "engines": [{"use": "stockfish", "options": {"Debug Log File": 4242}}, "bundled"],
        "tc": "5+0.05"}))
    message = problems["engines[0].options.Debug Log File"]
    assert "string option" in message and "stockfish" in message
    assert not (service.directory / "4242").exists()
    assert len(service.tournaments()) == before


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("options", "expected"), [
    ({"Skill Level": 99}, "outside its declared range 0..20"),
    ({"Contempt": 10}, "declares no option 'Contempt'"),
    ({"Clear Hash": True}, "button option"),
])
def test_stockfish_options_are_held_to_its_declarations(
        service: Service, options: dict[str, object], expected: str) -> None:
    require_binary("stockfish")
    problems = _problems(service.submit({
        "engines": [{"use": "stockfish", "options": options}, "bundled"], "tc": "5+0.05"}))
    (name,) = options
    assert expected in problems[f"engines[0].options.{name}"]


@pytest.mark.timeout(120)
def test_a_combo_takes_only_its_declared_values(service: Service) -> None:
    """fairymax's ``Makruk rules`` is a combo: a string value of its choices is accepted."""
    require_binary("fairymax")
    problems = _problems(service.submit({
        "engines": [{"use": "fairymax", "options": {"Makruk rules": "Thai"}}, "bundled"],
        "tc": "5+0.05"}))
    assert "is not one of its declared values" in problems["engines[0].options.Makruk rules"]
    accepted = service.submit({
        "engines": [{"use": "fairymax", "options": {"Makruk rules": "Cambodian"}}, "bundled"],
        "tc": "5+0.05", "games": 2})
    assert accepted.status_code == 201, accepted.text
    httpx.post(f"{service.base}/api/tournaments/{accepted.json()['id']}/stop",
               params={"hard": "true"}, headers=AUTH, timeout=30)


@pytest.mark.timeout(120)
def test_an_option_name_with_line_breaks_reaches_no_engine(service: Service) -> None:
    """Seen: ``{"x\\npgnsave PATH\\nfoo": 1}`` made gnuchess save a game at PATH."""
    require_binary("gnuchess")
    target = service.directory / "injected.pgn"
    response = service.submit({
        "engines": [{"use": "gnuchess", "options": {f"x\npgnsave {target}\nfoo": 1}},
                    "bundled"], "tc": "5+0.05"})
    assert response.status_code == 422, response.text
    assert any("option" in message for message in _problems(response).values())
    time.sleep(1.0)  # anything sent to gnuchess would have been acted on by now
    assert not target.exists()


@pytest.mark.timeout(180)
def test_an_engine_name_with_a_line_break_reaches_no_engine(service: Service) -> None:
    """Seen: a ``name`` override ``"fm\\nsavegame PATH"`` made hoichess (told its opponent's
    name) save a game at PATH. Refused at submission, or when the game is set up."""
    require_binary("hoichess")
    require_binary("fairymax")
    target = service.directory / "injected.game"
    response = service.submit({
        "engines": [{"use": "fairymax", "name": f"fm\nsavegame {target}"}, "hoichess"],
        "tc": "5+0.05", "games": 2})
    if response.status_code == 201:
        url = f"{service.base}/api/tournaments/{response.json()['id']}"
        deadline = time.monotonic() + 120
        while httpx.get(url, timeout=30).json()["status"] in ("queued", "running"):
            assert time.monotonic() < deadline, "the tournament never ended"
            time.sleep(0.2)
        detail = httpx.get(url, timeout=30).json()
        assert detail["done_games"] == 0
    else:
        assert response.status_code == 422, response.text
    assert not target.exists()


def test_the_mark_on_submitted_options_is_kept_where_the_engine_starts(tmp_path: Path) -> None:
    """Only the engines whose options the submitter wrote are marked; the mark survives the
    stored configuration (resume) and the game job's JSON (Dask workers)."""
    from runner.config.model import TournamentConfig
    from runner.game.job import GameJob
    from runner.service.settings import ServiceSettings
    from runner.service.submission import check_submission
    from runner.tournament.pairing import pairing_for
    from runner.tournament.runtime import engine_config, game_job

    settings = ServiceSettings(db_url=f"sqlite:///{tmp_path / 's.db'}",
                               engines_file=REPO / "configs" / "engines.toml")
    config = check_submission({"engines": [{"use": "bundled", "options": {"Hash": 8}},
                                           "stockfish"], "tc": "5+0.05"}, settings)
    assert [e.options_submitted for e in config.engines] == [True, False]
    stored = TournamentConfig.from_json(config.to_json())
    assert [e.options_submitted for e in stored.engines] == [True, False]
    engines = {e.name: engine_config(e) for e in stored.engines}
    job = game_job(stored, pairing_for(stored).job(0), None, 2, engines)
    sent = GameJob.from_json(job.to_json())
    marks = {sent.white.name: sent.white.options_submitted,
             sent.black.name: sent.black.options_submitted}
    assert marks == {"bundled": True, "stockfish": False}
