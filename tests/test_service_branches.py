"""Branch tests on the service (runner.service.branches, /api/tests): a repository of the
bundled engine made here, built and benched by the service, STC then LTC chained; wrong
benches, failing builds and unknown refs; the queue's order and shares."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service extra (fastapi) is not installed")

from fastapi.testclient import TestClient

from runner.service.app import create_app
from runner.service.branches import next_tests, stage_concurrency
from runner.service.settings import ServiceSettings
from runner.store.store import BranchTestRecord
from tests.branch_repos import BUNDLED_RECIPE, bundled_branch_repo, git

LOCAL_CLIENT = ("127.0.0.1", 50000)  # a client on this machine (tokens over plain HTTP)
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

TOKEN = "branch-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
TOML = {"content-type": "application/toml", **AUTH}
@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled engine's base and dev commits (tests/branch_repos.py), and a repository
    whose build fails."""
    root = tmp_path_factory.mktemp("service-branches")
    bundled_branch_repo(root)
    broken = root / "broken-repo"
    broken.mkdir()
    (broken / "make.py").write_text("import sys\nprint('cc -c search.c')\n"
                                    "sys.exit('search.c:12: error: expected expression')\n")
    git(broken, "init", "-q", "-b", "main")
    git(broken, "add", "-A")
    git(broken, "commit", "-q", "-m", "broken")
    (root / "engines.toml").write_text("""
[[engines]]
name = "bundled"
command = ["python", "-m", "engine"]
protocol = "cecp"
""" + BUNDLED_RECIPE + BUNDLED_RECIPE.replace('name = "bundled"', 'name = "unbenched"').replace(
        'bench = ["bench", "2"]\n', "") + f"""
[[recipes]]
name = "broken"
repository = "broken-repo"
build = ["{sys.executable}", "make.py"]
command = ["./engine"]
""")
    return root


@pytest.fixture
def client(repos: Path, tmp_path: Path) -> Iterator[TestClient]:
    settings = ServiceSettings(db_url=f"sqlite:///{tmp_path / 'service.db'}", token=TOKEN,
                               engines_file=repos / "engines.toml",
                               build_cache=repos / "cache", max_concurrency=2)
    with TestClient(client=LOCAL_CLIENT, app=create_app(settings)) as test_client:
        yield test_client


def _test(name: str, branch: str, *, extra: str = "") -> str:
    return f"""
name = "{name}"
rounds = 40
concurrency = 2
{extra}
[branch]
recipe = "bundled"
{branch}

[sprt]
elo0 = 0
elo1 = 150
"""


def _wait(client: TestClient, test_id: int, states: set[str], timeout: float = 240) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        found = client.get(f"/api/tests/{test_id}").json()
        if found["state"] in states:
            return found
        assert time.monotonic() < deadline, found
        time.sleep(0.3)


def test_a_chain_passes_its_stc_then_plays_its_ltc(client: TestClient) -> None:
    made = client.post("/api/tests", headers=TOML, content=_test("chain", """
base = "main"
dev = "deeper"
stages = ["1+0.01", "1.5+0.015"]"""))
    assert made.status_code == 201, made.text
    test = _wait(client, made.json()["id"], {"finished", "failed"})
    assert test["state"] == "finished", test
    assert test["message"] == "1.5+0.015 passed"
    assert [s["tc"] for s in test["stages"]] == ["1+0.01", "1.5+0.015"]
    assert test["commits"] and test["commits"][0][1] == "level 2 searches two plies"
    assert test["base_sha"] != test["dev_sha"] and len(test["dev_sha"]) == 40
    for stage in test["stages"]:
        detail = client.get(stage["url"]).json()
        assert detail["status"] == "finished"
        assert detail["sprt_decision"] == "H1"
        assert {e["engine"] for e in detail["report"]["standings"]} == {
            f"dev-{test['dev_sha'][:8]}", f"base-{test['base_sha'][:8]}"}
    assert [t["id"] for t in client.get("/api/tests").json()["tests"]] == [test["id"]]
    # The ended stages' figures are kept with the test (the list reads no report for them),
    # with who submitted it and each side's build and bench on the service's host.
    assert test["result"] == "passed" and test["author"] == "service token"
    assert [s["decision"] for s in test["stages"]] == ["H1", "H1"]
    assert all(s["games"] > 0 and s["llr"] > s["upper"] - 1e-9 for s in test["stages"])
    # Pairs counted: a last game whose pair was not finished is in no pentanomial count.
    assert all(sum(s["pentanomial"]) == s["games"] // 2 for s in test["stages"])
    assert all(s["machines"] == [] for s in test["stages"])  # every game on the host
    builds = {b["side"]: b for b in test["builds"]}
    assert builds["dev"]["commit"] == test["dev_sha"] and builds["base"]["nodes"] > 0
    assert all(b["machine"].startswith("service host") for b in builds.values())


def test_a_wrong_bench_or_a_failing_build_fails_the_test_with_why(client: TestClient) -> None:
    wrong = client.post("/api/tests", headers=TOML, content=_test("wrong", """
base = "main"
dev = "deeper"
dev_bench = 12345""")).json()["id"]
    failed = _wait(client, wrong, {"finished", "failed"})
    assert failed["state"] == "failed" and failed["stages"][0]["tournament_id"] is None
    assert "wrong bench: dev" in failed["message"] and "declares 12345 nodes" in failed["message"]
    broken = client.post("/api/tests", headers=TOML, content=_test("broken", """
base = "main"
dev = "main\"""").replace('recipe = "bundled"', 'recipe = "broken"')).json()["id"]
    failed = _wait(client, broken, {"finished", "failed"})
    assert failed["state"] == "failed"
    assert "build failed: the build exited with status 1" in failed["message"]
    assert "search.c:12: error: expected expression" in failed["message"]


def test_submissions_are_checked_before_anything_is_stored(client: TestClient) -> None:
    refused = client.post("/api/tests", headers=TOML, content=_test("missing", """
base = "main"
dev = "no-such-branch\""""))
    assert refused.status_code == 422
    (problem,) = refused.json()["detail"]
    assert problem["key"] == "branch.dev" and "no-such-branch" in problem["message"]
    bad = client.post("/api/tests", headers=TOML, content=_test("bad", """
base = "main"
dev = "deeper"
stages = ["stc", "0.001+0"]""", extra='pgnout = "x.pgn"\nengines_file = "/etc/x"\n'))
    assert bad.status_code == 422
    keys = {p["key"] for p in bad.json()["detail"]}
    assert {"pgnout", "engines_file", "branch.stages[1]"} <= keys
    assert client.post("/api/tests", content=_test("t", 'base = "a"\ndev = "b"'),
                       headers={"content-type": "application/toml"}).status_code == 401
    assert client.get("/api/tests").json()["tests"] == []


def _record(test_id: int, state: str, priority: int = 0, share: float = 1.0) -> BranchTestRecord:
    now = datetime.now(UTC)
    return BranchTestRecord(id=test_id, name=f"t{test_id}", recipe="r", base_ref="a",
                            base_sha="0" * 40, dev_ref="b", dev_sha="1" * 40, spec={},
                            priority=priority, share=share, state=state, stage=0,
                            tournaments=(), message=None, created_at=now, updated_at=now)


def test_the_queue_starts_higher_priorities_first_then_older_tests() -> None:
    tests = [_record(1, "running"), _record(2, "pending"), _record(3, "pending", priority=5),
             _record(4, "pending", priority=5), _record(5, "paused", priority=9)]
    assert [t.id for t in next_tests(tests, 2)] == [3, 4]
    assert [t.id for t in next_tests(tests, 5)] == [3, 4, 2]
    assert next_tests(tests, 0) == []


def test_running_tests_share_the_games_by_their_shares() -> None:
    assert stage_concurrency(1.0, [], 8, 8) == 8
    assert stage_concurrency(1.0, [3.0], 8, 8) == 2
    assert stage_concurrency(3.0, [1.0], 8, 8) == 6
    assert stage_concurrency(3.0, [1.0], 8, 4) == 4   # never more than the test asked
    assert stage_concurrency(0.1, [10.0], 8, 8) == 1  # never less than one


def test_fleet_placed_stages_are_offered_workers_by_their_shares() -> None:
    """Remote workers honour resize: the hub offers a worker to the run with the fewest
    games out for its share; runs never resized (plain tournaments) first, oldest first."""
    from runner.fleet.batches import by_share
    from runner.fleet.scheduler import FleetScheduler

    # Shares 1 and 3 with 2 and 4 games out: 2/1 against 4/3, the second is served next.
    assert by_share([(2, 1.0), (4, 3.0)]) == [1, 0]
    assert by_share([(1, 1.0), (4, 3.0)]) == [0, 1]  # 1 against 1.33
    assert by_share([(0, 1.0), (9, None), (0, 3.0), (5, None)]) == [1, 3, 0, 2]
    run = FleetScheduler(store=None, lease_seconds=10)  # type: ignore[arg-type]
    assert run.share is None and run.out == 0
    run.resize(3)
    assert run.share == 3.0


def test_running_tests_are_re_divided_the_games_when_one_starts_or_pauses(
        repos: Path, tmp_path: Path) -> None:
    """Two tests at once on a service of 4 games: the first alone plays 4; when the second
    (share 3) starts, 1 and 3, and so again after a restart (the first was stored with 4);
    when the second is paused, the first plays 4 again."""
    settings = ServiceSettings(db_url=f"sqlite:///{tmp_path / 'service.db'}", token=TOKEN,
                               engines_file=repos / "engines.toml", max_running=2,
                               build_cache=repos / "cache", max_concurrency=4)
    text = _test("share", 'base = "main"\ndev = "deeper"').replace(
        "concurrency = 2", "concurrency = 4").replace("[sprt]\nelo0 = 0\nelo1 = 150\n", "").replace(
        "rounds = 40", "rounds = 400").replace(  # never over before it is stopped
        'recipe = "bundled"', 'recipe = "unbenched"')  # CI time: its shares, not benches

    def playing(client: TestClient, test_id: int, games: int) -> None:
        """Wait until the test's stage is played `games` at once (its scheduler's)."""
        manager = client.app.state.manager  # type: ignore[attr-defined]
        deadline = time.monotonic() + 120
        while True:
            test = client.get(f"/api/tests/{test_id}").json()
            tournament = test["stages"][0]["tournament_id"]
            run = manager._runs.get(tournament) if tournament else None  # white box
            found = None if run is None or run.tournament is None else \
                run.tournament.scheduler.concurrency
            if found == games:
                return
            assert time.monotonic() < deadline, (test["state"], found, games)
            time.sleep(0.1)

    with TestClient(client=LOCAL_CLIENT, app=create_app(settings)) as client:
        first = client.post("/api/tests", headers=TOML, content=text).json()["id"]
        playing(client, first, 4)
        second = client.post("/api/tests", headers=TOML, content=text.replace(
            "[branch]", "[branch]\nshare = 3")).json()["id"]
        playing(client, second, 3)
        playing(client, first, 1)
    with TestClient(client=LOCAL_CLIENT, app=create_app(settings)) as client:
        playing(client, first, 1)  # resumed at its share, not at the 4 it was stored with
        playing(client, second, 3)
        assert client.post(f"/api/tests/{second}/pause", headers=AUTH).status_code == 200
        playing(client, first, 4)
        for test_id in (first, second):
            client.post(f"/api/tests/{test_id}/stop", headers=AUTH)


@pytest.mark.slow  # a local Dask cluster's start; the host's case is in the chain test
def test_a_stage_on_dask_workers_shows_each_machines_games(repos: Path, tmp_path: Path) -> None:
    pytest.importorskip("distributed", reason="the cluster extra (distributed) is not installed")
    settings = ServiceSettings(db_url=f"sqlite:///{tmp_path / 'service.db'}", token=TOKEN,
                               engines_file=repos / "engines.toml", workers=2,
                               build_cache=repos / "cache", max_concurrency=2)
    text = _test("dask", 'base = "main"\ndev = "deeper"').replace(
        "rounds = 40", "rounds = 3").replace("[sprt]\nelo0 = 0\nelo1 = 150\n", "")
    with TestClient(client=LOCAL_CLIENT, app=create_app(settings)) as client:
        test_id = client.post("/api/tests", headers=TOML, content=text).json()["id"]
        test = _wait(client, test_id, {"finished", "failed"}, timeout=400)
        assert test["state"] == "finished", test["message"]
        (stage,) = test["stages"]
        machines = stage["machines"]
        assert sum(m["games"] for m in machines) == stage["games"] == 6
        assert all(m["worker"] and not m["flagged"] for m in machines)
        page = client.get(f"/tests/{test_id}").text
        assert 'id="machines"' in page and machines[0]["worker"] in page


def test_pause_resume_stop_and_priority(client: TestClient) -> None:
    slow = _test("slow", 'base = "main"\ndev = "deeper"', extra="").replace(
        "[sprt]\nelo0 = 0\nelo1 = 150\n", "").replace(
        'recipe = "bundled"', 'recipe = "unbenched"')  # CI time: the queue, not benches
    first = client.post("/api/tests", headers=TOML, content=slow).json()["id"]
    second = client.post("/api/tests", headers=TOML, content=slow.replace(
        'name = "slow"', 'name = "second"')).json()["id"]
    assert client.get(f"/api/tests/{second}").json()["state"] == "pending"  # one place
    raised = client.post(f"/api/tests/{second}/priority?value=3", headers=AUTH).json()
    assert raised["priority"] == 3
    paused = client.post(f"/api/tests/{second}/pause", headers=AUTH).json()
    assert paused["state"] == "paused"
    assert client.post(f"/api/tests/{second}/pause", headers=AUTH).status_code == 409
    assert client.post(f"/api/tests/{second}/resume", headers=AUTH).json()["state"] in (
        "pending", "building", "running")
    _wait(client, first, {"running"})
    stopped = client.post(f"/api/tests/{first}/stop", headers=AUTH).json()
    assert stopped["state"] == "stopped"
    # Its place goes to the next test at once.
    _wait(client, second, {"building", "running", "finished"})
    client.post(f"/api/tests/{second}/stop", headers=AUTH)
    assert client.post("/api/tests/999/stop", headers=AUTH).status_code == 404
    assert client.post(f"/api/tests/{second}/reboot", headers=AUTH).status_code == 422
    assert client.post(f"/api/tests/{second}/resume").status_code == 401


@pytest.mark.slow  # CI time: the queue's stored state is read back by the fast chain test
def test_a_restart_finds_the_test_where_it_was(repos: Path, tmp_path: Path) -> None:
    settings = ServiceSettings(db_url=f"sqlite:///{tmp_path / 'service.db'}", token=TOKEN,
                               engines_file=repos / "engines.toml",
                               build_cache=repos / "cache", max_concurrency=2)
    text = _test("restarted", 'base = "main"\ndev = "deeper"').replace(
        "rounds = 40", "rounds = 4").replace("[sprt]\nelo0 = 0\nelo1 = 150\n", "")
    with TestClient(client=LOCAL_CLIENT, app=create_app(settings)) as first:
        test_id = first.post("/api/tests", headers=TOML, content=text).json()["id"]
        running = _wait(first, test_id, {"running"})
        stage = running["stages"][0]["url"]
        deadline = time.monotonic() + 120
        while first.get(stage).json()["done_games"] < 1:
            assert time.monotonic() < deadline
            time.sleep(0.2)
    with TestClient(client=LOCAL_CLIENT, app=create_app(settings)) as second:
        done = _wait(second, test_id, {"finished", "failed"})
        assert done["state"] == "finished" and done["message"] == "STC played"
        detail = second.get(stage).json()
        assert detail["status"] == "finished" and detail["done_games"] == 8


@pytest.mark.slow  # CI time: the same tests through TestClient stay fast; this adds the CLI
def test_runner_test_submit_and_status_against_a_real_service(repos: Path,
                                                              tmp_path: Path) -> None:
    """`runner serve` and `runner test submit/status` as separate processes on loopback."""
    import socket

    import httpx

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    token = tmp_path / "token"
    token.write_text(TOKEN + "\n")
    serve = subprocess.Popen(
        [sys.executable, "-m", "runner", "serve", "--port", str(port), "--db",
         str(tmp_path / "s.db"), "--engines", str(repos / "engines.toml"), "--token-file",
         str(token), "--build-cache", str(repos / "cache"), "--max-concurrency", "2"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{base}/api/tests", timeout=1)
                break
            except httpx.TransportError:
                assert serve.poll() is None and time.monotonic() < deadline
                time.sleep(0.05)
        test_file = tmp_path / "t.toml"
        test_file.write_text('engines_file = "ignored.toml"\n' + _test("cli <b>x</b>", """
base = "main"
dev = "deeper"
stages = ["1+0.01", "1.5+0.015"]"""))

        def runner(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([sys.executable, "-m", "runner", "test", *args],
                                  capture_output=True, text=True, timeout=120,
                                  env={**os.environ, "COLUMNS": "200"})

        made = runner("submit", str(test_file), "--server", base, "--token-file", str(token))
        assert made.returncode == 0, made.stderr
        assert f"test 1 queued: {base}/api/tests/1" in made.stderr
        _wait_http(base, 1)
        status = runner("status", "1", "--server", base)
        assert status.returncode == 0, status.stderr
        assert "finished  cli <b>x</b>  deeper" in status.stdout
        assert ("  1+0.01: /api/tournaments/1\n  1.5+0.015: /api/tournaments/2\n"
                "1.5+0.015 passed") in status.stdout
        listed = runner("status", "--server", base)
        assert listed.stdout.count("\n") == 1 and listed.stdout.startswith("   1  finished")
        refused = runner("submit", str(test_file), "--server", base, "--token-file",
                         str(tmp_path / "missing"))
        assert refused.returncode == 2 and "cannot read a token" in refused.stderr
        remote = runner("submit", str(test_file), "--server", "http://192.0.2.1:8000",
                        "--token-file", str(token))
        assert remote.returncode == 2 and "over https only" in remote.stderr
        _check_pages(base)
    finally:
        serve.terminate()
        serve.wait(30)


def _wait_http(base: str, test_id: int) -> None:
    import httpx

    deadline = time.monotonic() + 240
    while httpx.get(f"{base}/api/tests/{test_id}").json()["state"] not in ("finished",
                                                                           "failed"):
        assert time.monotonic() < deadline
        time.sleep(0.3)



CHROMIUM = Path("/usr/bin/chromium")


def _check_pages(base: str) -> None:
    """The tests list and the chain's page as Debian's chromium shows them (skipped, with
    the reason, without chromium or Playwright)."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is absent (apt-get install chromium): the pages unchecked")
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="playwright is not installed (pip install playwright)")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                             args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page()
            page.goto(f"{base}/tests")
            rows = page.locator("#tests tbody tr")
            assert rows.count() == 1
            assert rows.nth(0).locator("a").inner_text() == "cli <b>x</b>"  # text, not markup
            assert rows.nth(0).locator(".status").inner_text() == "finished"
            # The chain as one line of work: both stages' LLR and decision side by side.
            assert rows.nth(0).locator("meter.llr").count() == 2
            assert rows.nth(0).locator(".decision").all_inner_texts() == ["H1", "H1"]
            assert rows.nth(0).locator(".result").inner_text() == "passed"
            rows.nth(0).locator("a").click()
            page.wait_for_url(f"{base}/tests/1")
            assert page.locator("h1 bdi").inner_text() == "cli <b>x</b>"
            stages = page.locator("#stages tbody tr")
            assert stages.count() == 2
            for index in range(2):
                cells = stages.nth(index).locator("td")
                assert cells.nth(5).inner_text() == "H1"
                assert cells.nth(6).inner_text().startswith("+")
                assert len(cells.nth(7).inner_text().split()) == 5
            assert "level 2 searches two plies" in page.locator("#commits").inner_text()
            # Each stage's Elo and LLR over games, drawn from its tournament's report.
            page.wait_for_function(
                "document.querySelectorAll('.stage-plots .llr-plot svg path.line').length == 2")
            assert page.locator(".stage-plots .elo-plot svg").count() == 2
            assert "service's host" in page.locator("#one-machine").inner_text()
            builds = page.locator("#builds tbody tr")
            assert builds.count() == 2
            assert builds.nth(0).locator("td").nth(3).inner_text().isdigit()  # the bench
            stages.nth(1).locator("a").click()  # the stage's own tournament page
            page.wait_for_url(f"{base}/tournaments/2")
            page.goto(f"{base}/tests?state=failed")
            assert page.locator("#tests tbody tr").count() == 0
            assert "No branch test matches" in page.locator("#no-tests").inner_text()
            # A test submitted from the front page's form opens its own page.
            page.goto(f"{base}/")
            page.fill("#token", TOKEN)
            page.select_option("#kind", "tests")
            page.fill("#config", _test("from the page", 'base = "main"\ndev = "deeper"')
                      .replace("rounds = 40", "rounds = 1").replace("[sprt]\nelo0 = 0\n"
                                                                     "elo1 = 150\n", ""))
            page.click("#submit-form button[type=submit]")
            page.wait_for_url(f"{base}/tests/2")
            assert page.locator("h1 bdi").inner_text() == "from the page"
            page.goto(f"{base}/tests")
            page.select_option("select[name=result]", "passed")
            page.select_option("select[name=author]", "service token")
            page.click(".filters button")
            page.wait_for_url("**result=passed**")
            assert page.locator("#tests tbody tr").count() == 1
            page.goto(f"{base}/tests?result=rejected")
            assert page.locator("#tests tbody tr").count() == 0
        finally:
            browser.close()


def test_with_approval_a_submitters_test_waits_for_an_admin(repos: Path, tmp_path: Path) -> None:
    from runner.store.store import Store

    url = f"sqlite:///{tmp_path / 'service.db'}"
    with Store.open(url) as store:
        submitter = store.tokens.add("carol", "submitter")
    settings = ServiceSettings(db_url=url, token=TOKEN, engines_file=repos / "engines.toml",
                               build_cache=repos / "cache", max_concurrency=2, approval=True)
    text = _test("approved", 'base = "main"\ndev = "deeper"').replace(
        "rounds = 40", "rounds = 1").replace("[sprt]\nelo0 = 0\nelo1 = 150\n", "")
    with TestClient(client=LOCAL_CLIENT, app=create_app(settings)) as client:
        mine = {"content-type": "application/toml", "Authorization": f"Bearer {submitter}"}
        test_id = client.post("/api/tests", headers=mine, content=text).json()["id"]
        waiting = client.get(f"/api/tests/{test_id}").json()
        assert waiting["state"] == "approval" and waiting["stages"][0]["tournament_id"] is None
        refused = client.post(f"/api/tests/{test_id}/approve",
                              headers={"Authorization": f"Bearer {submitter}"})
        assert refused.status_code == 403  # a submitter does not approve its own test
        assert client.post(f"/api/tests/{test_id}/approve", headers=AUTH).json()["state"] in (
            "pending", "building", "running")
        assert _wait(client, test_id, {"finished", "failed"})["state"] == "finished"
        # An admin's own test is queued at once.
        admin_test = client.post("/api/tests", headers=TOML, content=text).json()["id"]
        assert client.get(f"/api/tests/{admin_test}").json()["state"] != "approval"
        assert client.post(f"/api/tests/{admin_test}/approve", headers=AUTH).status_code == 409
