"""Branch tests whose games run on Dask workers (issue 41: builds where the games run): each
worker builds both sides itself, in its own build cache, and benches them there; a bench that
differs between the service's host and a worker stops the test with both figures.

A real Dask cluster on loopback (a scheduler and one worker process, the worker given its own
build cache), the service connected to it (``runner serve --cluster``), and git repositories
made here: the bundled engine's two commits (tests/branch_repos.py) and a small engine whose
build depends on where it is built (as a compiler's ``-march=native`` does)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service extra (fastapi) is not installed")
pytest.importorskip("distributed", reason="the cluster extra (distributed) is not installed")

import distributed
from fastapi.testclient import TestClient

from runner.service.app import create_app
from runner.service.settings import ServiceSettings
from tests.branch_repos import (
    BUNDLED_RECIPE,
    PLACED_BUILD,
    bundled_branch_repo,
    fairymax_branch_repo,
    picky_build,
    script_repo,
)
from tests.conftest import shared_file

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

LOCAL_CLIENT = ("127.0.0.1", 50000)
TOKEN = "worker-builds-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
TOML = {"content-type": "application/toml", **AUTH}

@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled engine's base and dev commits, a machine-dependent engine, their recipes."""
    root = tmp_path_factory.mktemp("worker-builds")
    bundled_branch_repo(root)
    script_repo(root, "placed-repo", PLACED_BUILD, "an engine built for its machine")
    script_repo(root, "picky-repo", picky_build("worker's-own"),
                "an engine that builds on the host only")
    (root / "engines.toml").write_text(BUNDLED_RECIPE + f"""
[[recipes]]
name = "picky"
repository = "picky-repo"
build = ["{sys.executable}", "make.py"]
command = ["{sys.executable}", "engine.py"]
protocol = "cecp"
""" + f"""
[[recipes]]
name = "placed"
repository = "placed-repo"
build = ["{sys.executable}", "make.py"]
command = ["{sys.executable}", "engine.py"]
bench = ["bench"]
protocol = "cecp"
""")
    return root


@pytest.fixture(scope="module")
def cluster(repos: Path) -> Iterator[tuple[str, Path]]:
    """A Dask scheduler and one worker process on 127.0.0.1, the worker building in a cache
    of its own; its address and that cache."""
    cache = repos / "the-worker's-own-build-cache"
    made = distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=True, resources={"slots": 2},
        host="127.0.0.1", dashboard_address=None, env={"RUNNER_BUILD_CACHE": str(cache)})
    try:
        yield made.scheduler_address, cache
    finally:
        made.close()


def _test(name: str, recipe: str, branch: str) -> str:
    return f"""
name = "{name}"
rounds = 1
concurrency = 2

[adjudication]
maxmoves = 24

[branch]
recipe = "{recipe}"
stages = ["1+0.01"]
{branch}
"""


def _wait(client: TestClient, test_id: int, states: set[str], timeout: float = 240) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        found = client.get(f"/api/tests/{test_id}").json()
        if found["state"] in states:
            return found
        assert time.monotonic() < deadline, found
        time.sleep(0.3)


def _service(repos: Path, address: str, tmp_path: Path) -> TestClient:
    settings = ServiceSettings(db_url=f"sqlite:///{tmp_path / 'service.db'}", token=TOKEN,
                               engines_file=repos / "engines.toml", cluster=address,
                               build_cache=repos / "host-cache", max_concurrency=2)
    return TestClient(client=LOCAL_CLIENT, app=create_app(settings))


def test_a_workers_bench_differing_from_the_hosts_stops_the_test_with_both_figures(
        repos: Path, cluster: tuple[str, Path], tmp_path: Path) -> None:
    address, worker_cache = cluster
    with _service(repos, address, tmp_path) as client:
        made = client.post("/api/tests", headers=TOML, content=_test(
            "placed", "placed", 'base = "main"\ndev = "main"'))
        assert made.status_code == 201, made.text
        failed = _wait(client, made.json()["id"], {"finished", "failed"})
        assert failed["state"] == "failed", failed
        # Built and benched on the worker, in its own cache (not the host's build).
        (built,) = (worker_cache / "builds").glob("*/build.json")
        where = json.loads(built.read_text())["log"].split("built for ")[1].strip()
        assert where.startswith(str(worker_cache))
        worker_nodes = 1000 * len(where)
        worker = f"{socket.gethostname()}/0"
        # The builds kept with the test: each side on the host, then on the worker.
        machines = [(b["side"], b["machine"].split(" (")[0], b["nodes"]) for b in failed["builds"]]
        host_nodes = {nodes for _side, machine, nodes in machines if machine == "service host"}
        assert len(host_nodes) == 1 and len(machines) == 4
        assert sorted(m for m in machines if m[1] == worker) == [
            ("base", worker, worker_nodes), ("dev", worker, worker_nodes)]
        message = failed["message"]
        assert message.startswith("wrong bench: ") and message.endswith(f"{worker_nodes} on "
                                                                         f"{worker}")
        assert f"gives {host_nodes.pop()} nodes on service host (" in message
        assert "wrong bench" in client.get(f"/tests/{made.json()['id']}").text
        assert failed["stages"][0]["games"] == 0


@pytest.mark.slow  # two benches on each machine and a stage's games: the fast case above
def test_a_test_on_a_dask_worker_plays_the_sides_the_worker_built(
        repos: Path, cluster: tuple[str, Path], tmp_path: Path) -> None:
    address, worker_cache = cluster
    with _service(repos, address, tmp_path) as client:
        made = client.post("/api/tests", headers=TOML, content=_test(
            "on-workers", "bundled", 'base = "main"\ndev = "deeper"'))
        assert made.status_code == 201, made.text
        test = _wait(client, made.json()["id"], {"finished", "failed"})
        assert test["state"] == "finished", test["message"]
        (stage,) = test["stages"]
        assert stage["games"] == 2
        assert [m["games"] for m in stage["machines"]] == [2]  # one worker played both
        # Both sides built on the worker, in its own cache: the same keys as the host's
        # (the same recipe, commit and compiler), not the host's files.
        keys = {p.parent.name for p in (worker_cache / "builds").glob("*/build.json")}
        hosts = {p.parent.name for p in (repos / "host-cache" / "builds").glob(
            "*/build.json")}
        assert len(hosts) >= 2 and {b for b in hosts if b in keys} == hosts & keys
        assert len(hosts & keys) >= 2


@pytest.mark.slow  # a C build on the host and again on the worker, and a stage's games
def test_fairymax_from_debian_sources_is_built_on_the_worker_that_plays_it(
        cluster: tuple[str, Path], tmp_path: Path) -> None:
    """Debian's fairymax 5.0b in a repository made here, and a dev commit on it: the worker
    compiles both with the recipe's make in its own cache, and plays the stage with its own
    binaries."""
    tarball = shared_file("engine-sources", "fairymax_5.0b.orig.tar.gz")
    if shutil.which("make") is None or shutil.which("cc") is None:
        pytest.skip("make or a C compiler is not installed")
    address, worker_cache = cluster
    fairymax_branch_repo(tarball, tmp_path)  # as "fairymax", beside the engines file
    (tmp_path / "engines.toml").write_text("""
[[recipes]]
name = "fairymax"
repository = "fairymax"
build = ["make", "fairymax", "fairydir=data"]
command = ["./fairymax"]
protocol = "cecp"
init_strings = ["sd 2"]
""")
    settings = ServiceSettings(db_url=f"sqlite:///{tmp_path / 'service.db'}", token=TOKEN,
                               engines_file=tmp_path / "engines.toml", cluster=address,
                               build_cache=tmp_path / "host-cache", max_concurrency=2)
    with TestClient(client=LOCAL_CLIENT, app=create_app(settings)) as client:
        made = client.post("/api/tests", headers=TOML, content=_test(
            "fairymax", "fairymax", 'base = "main"\ndev = "dev"'))
        assert made.status_code == 201, made.text
        test = _wait(client, made.json()["id"], {"finished", "failed"}, timeout=400)
        assert test["state"] == "finished", test["message"]
        assert test["stages"][0]["games"] == 2
    built = [json.loads(p.read_text()) for p in (worker_cache / "builds").glob("*/build.json")]
    mine = [b for b in built if b["commit"] in (test["base_sha"], test["dev_sha"])]
    assert len(mine) == 2 and all("fairymax" in b["log"] for b in mine)
    for record in (worker_cache / "builds").glob("*/build.json"):
        binary = record.parent / "tree" / "fairymax"
        if json.loads(record.read_text())["commit"] in (test["base_sha"], test["dev_sha"]):
            assert binary.is_file() and os.access(binary, os.X_OK)


@pytest.mark.slow  # a cluster of its own, and a worker started after the stage
def test_a_worker_joining_after_the_start_builds_at_its_first_game_and_its_bench_is_compared(
        repos: Path, tmp_path: Path) -> None:
    cache = tmp_path / "a-late-worker's-build-cache"
    made = distributed.LocalCluster(
        n_workers=0, threads_per_worker=2, processes=True, resources={"slots": 2},
        host="127.0.0.1", dashboard_address=None, env={"RUNNER_BUILD_CACHE": str(cache)})
    try:
        with _service(repos, made.scheduler_address, tmp_path) as client:
            test_id = client.post("/api/tests", headers=TOML, content=_test(
                "late", "placed", 'base = "main"\ndev = "main"')).json()["id"]
            _wait(client, test_id, {"running"})
            made.scale(1)
            failed = _wait(client, test_id, {"finished", "failed"})
    finally:
        made.close()
    assert failed["state"] == "failed", failed
    assert failed["message"].startswith("wrong bench: ") and "service host (" in failed["message"]
    late = [b for b in failed["builds"] if not b["machine"].startswith("service host")]
    assert late and all(b["nodes"] != failed["builds"][0]["nodes"] for b in late)
    assert list((cache / "builds").glob("*/build.json"))


@pytest.mark.slow  # the fast case above shows a worker's build; this one a build failing there
def test_a_build_failing_on_every_worker_fails_the_test_with_its_last_lines(
        repos: Path, cluster: tuple[str, Path], tmp_path: Path) -> None:
    address, _cache = cluster
    with _service(repos, address, tmp_path) as client:
        test_id = client.post("/api/tests", headers=TOML, content=_test(
            "picky", "picky", 'base = "main"\ndev = "main"')).json()["id"]
        failed = _wait(client, test_id, {"finished", "failed"})
    assert failed["state"] == "failed", failed
    message = failed["message"]
    assert message.startswith("no worker could build ") and "build failed" in message
    assert "search.c:7: error: this machine lacks the header it needs" in message
