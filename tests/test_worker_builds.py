"""Branch tests whose games run on remote workers (issue 41: builds on remote workers): a
real ``runner serve --accept-workers`` and real ``runner worker join`` processes on
loopback. The worker allowed the test's repository (a recipe for it in its own engines file)
builds both sides in its own build cache, benches them, reports the benches and plays the
games; a worker whose allow-list lacks the repository gets none; a bench that differs from
the service host's stops the test with both figures; a build that fails on the worker fails
the test with its last lines. The repositories are made here (tests/branch_repos.py)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service extra (fastapi) is not installed")
httpx = pytest.importorskip("httpx", reason="the fleet extra (httpx) is not installed")

from runner.store.store import Store  # noqa: E402
from tests.branch_repos import (  # noqa: E402
    PLACED_BUILD,
    bundled_branch_repo,
    fairymax_branch_repo,
    picky_build,
    script_repo,
)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

SECRET = "do-not-leak-" + os.urandom(6).hex()
"""A secret in the worker's environment that no build may see."""

_ENV_DUMP = ("import json, os, pathlib; "
             "pathlib.Path('build-env.json').write_text(json.dumps(dict(os.environ)))")
def _recipes(root: Path) -> str:
    """The recipes of the repositories made here (absolute paths: the service's and the
    worker's files name the same repositories)."""
    python = json.dumps(sys.executable)
    return f"""
[[recipes]]
name = "bundled"
repository = "{root / 'engine-repo'}"
build = [{python}, "-c", {json.dumps(_ENV_DUMP)}]
command = ["python", "-m", "engine", "--level", "1"]
bench = ["bench", "1"]
protocol = "cecp"
""" + "".join(f"""
[[recipes]]
name = "{name}"
repository = "{root / (name + '-repo')}"
build = [{python}, "make.py"]
command = [{python}, "engine.py"]
bench = ["bench"]
protocol = "cecp"
""" for name in ("placed", "picky"))


class Service:
    """runner serve --accept-workers, and two workers: one allowing the repositories made
    here, one allowing only an engine of its own."""

    def __init__(self, root: Path, extra: str = "") -> None:
        self.root = root
        self.extra = extra
        """More recipes, in the service's engines file and the building worker's."""
        bundled_branch_repo(root)
        script_repo(root, "placed-repo", PLACED_BUILD, "an engine built for its machine")
        script_repo(root, "picky-repo", picky_build("worker-cache"),
                    "an engine that builds on the host only")
        (root / "engines.toml").write_text(_recipes(root) + extra)
        self.db = root / "service.db"
        self.admin = "admin-" + os.urandom(8).hex()
        with Store.open(f"sqlite:///{self.db}") as store:  # as runner token add makes one
            self.worker_token = store.tokens.add("w", "worker")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.base = f"http://127.0.0.1:{port}"
        self.processes: list[subprocess.Popen[str]] = []
        self._start([sys.executable, "-m", "runner", "serve", "--port", str(port), "--db",
                     f"sqlite:///{self.db}", "--engines", str(root / "engines.toml"),
                     "--accept-workers", "--worker-lease", "20", "--build-cache",
                     str(root / "host-cache"), "--max-concurrency", "2"],
                    {"RUNNER_TOKEN": self.admin}, root)
        deadline = time.monotonic() + 90
        while True:
            try:
                httpx.get(f"{self.base}/api/tests", timeout=2)
                break
            except httpx.TransportError:
                assert self.processes[0].poll() is None, self.processes[0].communicate()[1]
                assert time.monotonic() < deadline, "runner serve did not answer in 90 s"
                time.sleep(0.1)
        self.builder = root / "builder" / "worker-cache"

    def join_workers(self) -> None:
        """Start the two workers (once): they ask at once, and back off while idle."""
        if len(self.processes) > 1:
            return
        self.join("builder", _recipes(self.root) + self.extra)
        self.join("other", '[[engines]]\nname = "bundled"\n'
                  'command = ["python", "-m", "engine"]\nprotocol = "cecp"\n', concurrency=1)

    def _start(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.processes.append(subprocess.Popen(
            argv, cwd=cwd, env={**os.environ, **env}, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True, start_new_session=True))

    def join(self, name: str, engines: str, concurrency: int = 2) -> Path:
        """A worker in its own directory with its own engines file and build cache; the
        worker's token is also in its environment, beside another secret."""
        home = self.root / name
        home.mkdir()
        (home / "token").write_text(self.worker_token + "\n")
        (home / "engines.toml").write_text(engines)
        self._start([sys.executable, "-m", "runner", "worker", "join", "--server", self.base,
                     "--token-file", str(home / "token"), "--engines",
                     str(home / "engines.toml"), "--build-cache", str(home / "worker-cache"),
                     "--concurrency", str(concurrency)],
                    {"RUNNER_TOKEN": self.worker_token, "MY_SECRET": SECRET}, home)
        return home / "worker-cache"

    def submit(self, name: str, recipe: str, dev: str) -> int:
        answer = httpx.post(f"{self.base}/api/tests", content=f"""
name = "{name}"
rounds = 1
concurrency = 2
placement = "workers"

[adjudication]
maxmoves = 24

[branch]
recipe = "{recipe}"
base = "main"
dev = "{dev}"
stages = ["1+0.01"]
""", headers={"content-type": "application/toml",
              "Authorization": f"Bearer {self.admin}"}, timeout=120)
        assert answer.status_code == 201, answer.text
        return int(answer.json()["id"])

    def ended(self, test_id: int, timeout: float = 240) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            found = httpx.get(f"{self.base}/api/tests/{test_id}", timeout=30).json()
            if found["state"] in ("finished", "failed"):
                return dict(found)
            assert time.monotonic() < deadline, found
            time.sleep(0.3)

    def stop(self) -> None:
        """End every process started here (each by its own process group)."""
        for process in self.processes:
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            try:
                process.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.communicate()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    made = Service(tmp_path_factory.mktemp("worker-builds"))
    try:
        yield made
    finally:
        made.stop()


def _workers(service: Service) -> dict[str, int]:
    """Games counted per worker name's first part (the worker's directory)."""
    with Store.open(f"sqlite:///{service.db}", migrate=False) as store:
        return {w.name: w.games for w in store.fleet.workers()}


def test_a_worker_allowed_the_repository_builds_benches_and_plays_the_sides(
        service: Service) -> None:
    test_id = service.submit("on-a-worker", "bundled", "deeper")
    service.join_workers()
    test = service.ended(test_id)
    assert test["state"] == "finished", test["message"]
    assert test["stages"][0]["games"] == 2
    # Each side on the host, then on the worker that played it, with the same bench.
    builds = [(b["side"], b["machine"].split(" ")[0], b["nodes"]) for b in test["builds"]]
    assert sorted(builds) == sorted([("base", "service", builds[0][2]),
                                     ("dev", "service", builds[1][2]),
                                     ("base", "remote", builds[0][2]),
                                     ("dev", "remote", builds[1][2])]), builds
    # Built in the worker's own cache (by the same key as the host's) ...
    mine = {p.parent.name for p in service.builder.glob("builds/*/build.json")}
    hosts = {p.parent.name for p in (service.root / "host-cache").glob("builds/*/build.json")}
    assert len(mine) == 2 and mine == hosts
    # ... with none of the worker's secrets in the build's environment.
    for dumped in service.builder.glob("builds/*/tree/build-env.json"):
        text = dumped.read_text()
        env = json.loads(text)
        assert SECRET not in text and service.worker_token not in text
        assert "RUNNER_TOKEN" not in env and "MY_SECRET" not in env
        assert env["HOME"].startswith(str(service.builder))
    # The worker whose allow-list lacks the repository got none of the games (it joined).
    deadline = time.monotonic() + 120
    while len(games := _workers(service)) < 2:
        assert time.monotonic() < deadline, games
        time.sleep(0.3)
    assert sorted(games.values()) == [0, 2], games


@pytest.mark.slow  # the same service again; the fast case above plays the builds' games
def test_a_workers_bench_differing_from_the_hosts_stops_the_test_with_both_figures(
        service: Service) -> None:
    test_id = service.submit("placed", "placed", "main")
    service.join_workers()
    failed = service.ended(test_id)
    assert failed["state"] == "failed", failed
    (log,) = [json.loads(p.read_text())["log"] for p in service.builder.glob("builds/*/build.json")
              if "built for " in p.read_text()]
    where = log.split("built for ")[1].strip()
    assert where.startswith(str(service.builder))
    host = [b["nodes"] for b in failed["builds"] if b["machine"].startswith("service host")]
    message = failed["message"]
    assert message.startswith("wrong bench: "), message
    assert f"gives {host[0]} nodes on service host (" in message
    assert message.endswith(f"{1000 * len(where)} on remote worker "
                            f"{socket.gethostname()}/{service.processes[1].pid}"), message
    assert failed["stages"][0]["games"] == 0
    assert "wrong bench" in httpx.get(f"{service.base}/tests/{test_id}", timeout=30).text


@pytest.mark.slow  # a third test on the same service: a build failing on the worker only
def test_a_build_failing_on_the_worker_fails_the_test_with_its_last_lines(
        service: Service) -> None:
    test_id = service.submit("picky", "picky", "main")
    service.join_workers()
    failed = service.ended(test_id)
    assert failed["state"] == "failed", failed
    message = failed["message"]
    assert message.startswith("remote worker ") and "could not build" in message, message
    assert "search.c:7: error: this machine lacks the header it needs" in message
    assert failed["stages"][0]["games"] == 0


def test_the_service_offers_built_engines_by_repository_and_checks_each_report() -> None:
    """The pure side of it: which engines a worker may play, and a worker's reports read
    (a wrong bench names both figures; a report of another commit is refused)."""
    from runner.build.benches import MachineBuild
    from runner.clock import TimeControl
    from runner.config.recipes import BuildOrder, Recipe
    from runner.fleet.batches import Batch
    from runner.fleet.builds import BogusReport, FleetBuilds, WorkerBuild
    from runner.game.job import GameJob
    from runner.game.record import GameSpec
    from runner.protocol.engine import EngineConfig

    recipe = Recipe("r", "https://example.org/engine.git", ("./engine",))
    builds = FleetBuilds({"dev-1": BuildOrder(recipe, "a" * 40, "dev", 500, "service host"),
                          "base-1": BuildOrder(recipe, "b" * 40, "base", None)})
    # Built engines only by repository; never an allow-listed engine of the same name.
    assert builds.playable({"dev-1", "x"}, ()) == {"x"}
    assert builds.playable({"x"}, {recipe.repository}) == {"x", "dev-1", "base-1"}
    tc = TimeControl.parse("1+0.01")
    job = GameJob(0, EngineConfig("dev-1", ("dev-1",)), EngineConfig("base-1", ("base-1",)),
                  GameSpec(tc, tc))
    batch = Batch(7, 1, {0: job}, 0.0)
    assert builds.unreported(1, job) is not None

    def made(side: str, commit: str, nodes: int) -> WorkerBuild:
        return WorkerBuild(f"{side}-1", MachineBuild(side, commit, "w", nodes, 10, False, 1.0,
                                                     "x" * 9000))

    with pytest.raises(BogusReport):
        builds.reported(1, "remote worker w", batch, [made("dev", "c" * 40, 500)])
    wrong = builds.reported(1, "remote worker w", batch, [made("dev", "a" * 40, 501)])
    assert wrong.failure == ("wrong bench: dev (aaaaaaaaaaaa) gives 500 nodes on service host "
                             "and 501 on remote worker w")
    right = builds.reported(1, "remote worker w", batch, [made("dev", "a" * 40, 500),
                                                        made("base", "b" * 40, 7)])
    assert right.failure is None and len(right.notices) == 2
    assert right.notices[0].record["machine"] == "remote worker w"
    assert len(right.notices[0].record["log"]) == 4000
    assert builds.unreported(1, job) is None and builds.unreported(2, job) is not None
    unbenched = builds.reported(3, "remote worker u", batch, [made("dev", "a" * 40, 500)])
    assert unbenched.failure is None
    unbenched = builds.reported(3, "remote worker u", batch, [WorkerBuild(
        "dev-1", MachineBuild("dev", "a" * 40, "u", None, None, True, 0.0, ""))])
    assert unbenched.failure == ("remote worker u measured no bench of dev-1 (its recipe has "
                                 "none) where 500 nodes are expected")
    failed = builds.reported(2, "remote worker v", batch, [WorkerBuild("dev-1", None, "boom")])
    assert failed.failure == "remote worker v could not build dev-1: boom"


@pytest.mark.slow  # a C build on the host and again on the worker, and a stage's games
def test_fairymax_from_debian_sources_is_built_and_played_on_the_remote_worker(
        tmp_path: Path) -> None:
    """Debian's fairymax 5.0b in a repository made here, and a dev commit on it: the remote
    worker compiles both with its own recipe's make in its own cache and plays the stage
    with its own binaries."""
    from tests.conftest import shared_file

    tarball = shared_file("engine-sources", "fairymax_5.0b.orig.tar.gz")
    if shutil.which("make") is None or shutil.which("cc") is None:
        pytest.skip("make or a C compiler is not installed")
    repo = fairymax_branch_repo(tarball, tmp_path)
    service = Service(tmp_path / "service", f"""
[[recipes]]
name = "fairymax"
repository = "{repo}"
build = ["make", "fairymax", "fairydir=data"]
command = ["./fairymax"]
protocol = "cecp"
init_strings = ["sd 2"]
""")
    try:
        test_id = service.submit("fairymax", "fairymax", "dev")
        service.join_workers()
        test = service.ended(test_id, timeout=400)
        assert test["state"] == "finished", test["message"]
        assert test["stages"][0]["games"] == 2
        assert {b["machine"].split(" ")[0] for b in test["builds"]} == {"service", "remote"}
    finally:
        service.stop()
    built = [json.loads(p.read_text()) for p in service.builder.glob("builds/*/build.json")]
    assert sorted(b["commit"] for b in built) == sorted((test["base_sha"], test["dev_sha"]))
    for record in service.builder.glob("builds/*/build.json"):
        binary = record.parent / "tree" / "fairymax"
        assert binary.is_file() and os.access(binary, os.X_OK)
        assert "fairymax" in json.loads(record.read_text())["log"]
