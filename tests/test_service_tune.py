"""Tuning runs through the real service (issue 42): a tuning file submitted to the API from
loopback, checked as a submission is (an undeclared parameter and an engine command of the
client's own refused with their keys), played with real bundled engines, stopped and resumed
by an admin, read back with its iterations, and its page drawing the report's theta graph.
A token over plain HTTP from another machine is refused."""

from __future__ import annotations

import asyncio
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service extra (fastapi) is not installed")

from fastapi.testclient import TestClient

from runner.app.tune import tune
from runner.config.tune import parse_tune
from runner.service.app import create_app
from runner.store.store import Store
from tests.test_service_api import AUTH, ENGINES, LOCAL_CLIENT, TOML, settings_for

TUNE = """
name = "service <tune>"
engine = "bundled"
iterations = 3
seed = 7
tc = "depth=1"
concurrency = 2
maxmoves = 8

[parameters.Skew]
start = 140
min = 0
max = 200
c_end = 8
r_end = 0.05
"""


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(client=LOCAL_CLIENT, app=create_app(settings_for(tmp_path))) as test_client:
        yield test_client


def _wait(client: TestClient, tune_id: int, done: int | None = None,
          states: frozenset[str] = frozenset(), timeout: float = 120.0) -> dict:
    """Poll the run until it has `done` iterations or is in one of `states`."""
    deadline = time.monotonic() + timeout
    while True:
        found = client.get(f"/api/tunes/{tune_id}").json()
        if (done is not None and found["done"] >= done) or found["state"] in states:
            return found
        assert time.monotonic() < deadline, found
        time.sleep(0.1)


def test_a_tuning_run_through_the_service(client: TestClient) -> None:
    """Refusals name their keys; a run plays, stops, resumes with the same draws to its end;
    the API gives every iteration and the option words, the page draws theta."""
    bad = TUNE.replace("[parameters.Skew]", "[parameters.Nope]").replace(
        'engine = "bundled"', 'engine = { use = "bundled", command = ["sh"] }')
    refused = client.post("/api/tunes", content=bad, headers=TOML)
    assert refused.status_code == 422, refused.text
    keys = {p["key"] for p in refused.json()["detail"]}
    assert any(k.endswith("command") for k in keys), keys
    undeclared = client.post("/api/tunes", content=TUNE.replace("Skew", "Nope"), headers=TOML)
    assert undeclared.status_code == 422
    assert [p["key"] for p in undeclared.json()["detail"]] == ["parameters.Nope"]
    assert client.get("/api/tunes").json() == {"tunes": []}

    # Six iterations, stopped after the first: a soft stop ends the pair then playing, and
    # four more pairs stand between the stop and the run's end, so the stop cannot lose the
    # race to it even on a loaded machine (each pair takes about 0.15 s here).
    text = TUNE.replace("iterations = 3", "iterations = 6")
    response = client.post("/api/tunes", content=text, headers=TOML)
    assert response.status_code == 201, response.text
    tune_id = response.json()["id"]
    assert response.json()["url"] == f"/api/tunes/{tune_id}"
    assert client.post("/api/tunes", content=text, headers=TOML).status_code == 409
    _wait(client, tune_id, done=1)
    stop = client.post(f"/api/tunes/{tune_id}/stop", headers=AUTH)
    # "stopped" when the run ended its pair while the stop was being stored (a loaded machine)
    assert stop.status_code == 200 and stop.json()["status"] in ("stopping", "stopped")
    stopped = _wait(client, tune_id, states=frozenset({"stopped", "finished", "failed"}))
    assert stopped["state"] == "stopped" and stopped["done"] < 6, stopped
    resumed = client.post(f"/api/tunes/{tune_id}/resume", headers=AUTH)
    assert resumed.status_code == 200 and resumed.json()["status"] == "running"
    final = _wait(client, tune_id, states=frozenset({"finished", "failed"}))
    assert final["state"] == "finished" and final["done"] == 6, final
    assert [i["k"] for i in final["iterations"]] == [1, 2, 3, 4, 5, 6]
    assert final["theta"] == final["iterations"][-1]["theta"]
    assert final["values"] == f"option.Skew={round(final['theta'][0])}"
    for iteration in final["iterations"]:
        assert abs(iteration["plus"][0] - iteration["minus"][0]) >= 8
        assert iteration["tournament_id"] is not None
    assert client.post(f"/api/tunes/{tune_id}/resume", headers=AUTH).status_code == 409
    listed = client.get("/api/tunes").json()["tunes"]
    assert [(t["id"], t["state"], t["iterations"]) for t in listed] == [(tune_id, "finished", None)]

    listing = client.get("/tunes")
    assert listing.status_code == 200 and f'href="/tunes/{tune_id}"' in listing.text
    assert 'option value="tunes"' in client.get("/").text  # the front page's form submits it
    page = client.get(f"/tunes/{tune_id}")
    assert page.status_code == 200
    assert "service &lt;tune&gt;" in page.text and "<tune>" not in page.text
    assert f'src="/tunes/{tune_id}/theta.svg"' in page.text
    plot = client.get(f"/tunes/{tune_id}/theta.svg")
    assert plot.headers["content-type"].startswith("image/svg+xml")
    assert 'data-plot="tuning"' in plot.text and "SPSA service &lt;tune&gt;" in plot.text
    assert client.get("/api/tunes/999").status_code == 404
    assert client.get("/tunes/999").status_code == 404


def _iterations(found: dict) -> list[tuple]:
    """Each iteration as the API gives it: k, flips, both sides' values, result, theta."""
    return [(i["k"], tuple(i["flips"]), tuple(i["plus"]), tuple(i["minus"]), i["result"],
             tuple(i["theta"])) for i in found["iterations"]]


def _local(text: str, directory: Path) -> list[tuple]:
    """The same tuning file played by the tune verb here, uninterrupted."""
    config = parse_tune({**tomllib.loads(text), "engines_file": str(ENGINES)},
                        base_dir=directory)
    with Store.open(f"sqlite:///{directory / 'local.db'}") as store:
        outcome = asyncio.run(tune(config, store))
        return [(i.k, i.flips, i.plus, i.minus, i.result, i.theta)
                for i in store.tunes.iterations(outcome.tune_id)]


def test_a_restart_of_the_service_resumes_a_running_tune(tmp_path: Path) -> None:
    """The service stops with a run playing (its pair cut) and one an admin stopped; started
    again on the same database, it resumes the first from its stored submission to the
    iterations an uninterrupted run gives, and leaves the second stopped until resumed."""
    settings = settings_for(tmp_path)
    # Cut after the first of five iterations: four pairs of margin against the service's
    # shutdown, so the run is always caught mid-way.
    text = TUNE.replace("iterations = 3", "iterations = 5")
    held = text.replace('name = "service <tune>"', 'name = "held"')
    with TestClient(client=LOCAL_CLIENT, app=create_app(settings)) as client:
        stopped_id = client.post("/api/tunes", content=held, headers=TOML).json()["id"]
        assert client.post(f"/api/tunes/{stopped_id}/stop?hard=true",
                           headers=AUTH).status_code == 200
        _wait(client, stopped_id, states=frozenset({"stopped"}))
        response = client.post("/api/tunes", content=text, headers=TOML)
        assert response.status_code == 201, response.text
        tune_id = response.json()["id"]
        _wait(client, tune_id, done=1)
    with Store.open(settings.db_url, migrate=False) as store:  # stopped mid-run
        assert len(store.tunes.iterations(tune_id)) < 5
    with TestClient(client=LOCAL_CLIENT, app=create_app(settings)) as client:
        left = client.get(f"/api/tunes/{stopped_id}").json()
        assert left["state"] == "stopped", left
        final = _wait(client, tune_id, states=frozenset({"finished", "failed"}))
        assert final["state"] == "finished" and final["done"] == 5, final
        assert client.get(f"/api/tunes/{stopped_id}").json()["done"] == left["done"]
        resumed = client.post(f"/api/tunes/{stopped_id}/resume", headers=AUTH)
        assert resumed.status_code == 200 and resumed.json()["status"] == "running"
        assert client.post(f"/api/tunes/{stopped_id}/stop?hard=true",
                           headers=AUTH).status_code == 200
    assert _iterations(final) == _local(text, tmp_path)


def test_a_token_over_plain_http_from_elsewhere_is_refused(tmp_path: Path) -> None:
    """The submit route refuses a token that crossed the network unencrypted."""
    with TestClient(client=("192.0.2.7", 50000), app=create_app(settings_for(tmp_path))) as far:
        response = far.post("/api/tunes", content=TUNE, headers=TOML)
        assert response.status_code == 403
        assert far.get("/api/tunes").json() == {"tunes": []}


def test_remote_workers_only_where_the_service_takes_them(tmp_path: Path) -> None:
    """A service that takes no remote workers refuses a tuning run placed on them, naming
    the placement (tests/test_tune_workers.py plays one on a service that takes them)."""
    with TestClient(client=LOCAL_CLIENT, app=create_app(settings_for(tmp_path))) as client:
        response = client.post("/api/tunes", json={**tomllib.loads(TUNE),
                                                   "placement": "workers"}, headers=AUTH)
        assert response.status_code == 422, response.text
        assert [p["key"] for p in response.json()["detail"]] == ["placement"]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_tuning_run_on_the_services_dask_cluster(tmp_path: Path) -> None:
    """Placed on the service's local Dask cluster, the pairs are played there to the end."""
    pytest.importorskip("distributed", reason="the cluster extra (distributed) is not installed")
    settings = settings_for(tmp_path, workers=1)
    with TestClient(client=LOCAL_CLIENT, app=create_app(settings)) as client:
        response = client.post("/api/tunes", content=TUNE.replace("iterations = 3",
                                                                  "iterations = 2"),
                               headers=TOML)
        assert response.status_code == 201, response.text
        final = _wait(client, response.json()["id"],
                      states=frozenset({"finished", "failed"}), timeout=240)
        assert final["state"] == "finished" and final["done"] == 2, final
        for iteration in final["iterations"]:
            pair = client.get(f"/api/tournaments/{iteration['tournament_id']}").json()
            assert pair["status"] == "finished" and pair["done_games"] == 2
