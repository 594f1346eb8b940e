"""The service's web page in a real browser: Playwright drives Debian's chromium against a real
``runner serve`` (its own process, a temporary SQLite database, the bundled engines at a fast
time control). The test submits through the page's form, follows the tournament page while the
games run (a board's position changes, the standings and plots fill in), downloads the PGN and
reads it with python-chess (the oracle), and leaves a screenshot for a human to look at.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the service extra is not installed (pip install '.[service]')")
pytest.importorskip("uvicorn", reason="the service extra is not installed (pip install '.[service]')")
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install playwright; the test "
                                  "drives the system chromium, no browser download needed)")
chess_pgn = pytest.importorskip("chess.pgn")

from runner.fleet import WIRE_VERSION  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
TOKEN = "browser-test-token"
SCREENSHOT_COPY = Path(os.environ.get("RUNNER_SCREENSHOT_COPY", "/work/service-page.png"))

# Four games of the bundled engine against its v1, two at a time: about 10 s on two cores
# (far too few for the SPRT to decide; it is there for the LLR plot).
# The name carries markup: the page must show it as text.
CONFIG = """\
name = "browser <b>test</b> & co"
format = "match"
engines = ["bundled", "bundled-v1"]
tc = "2+0.05"
rounds = 3
games = 2
concurrency = 2

[sprt]
elo0 = 0.0
elo1 = 10.0
"""
GAMES = 6
"""Three rounds of two games, two at once: about 18 s of play, so that a board is still
live when a loaded machine's browser reaches the page (with two rounds, CI once found
them all ended)."""

needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(),
                                    reason=f"{CHROMIUM} is absent (apt-get install chromium)")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_until_up(url: str, process: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"runner serve exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            time.sleep(0.2)
    raise RuntimeError(f"runner serve did not answer {url} within {timeout:.0f} s")


@contextlib.contextmanager
def _serve(tmp_path: Path, *options: str, port: int | None = None) -> Iterator[str]:
    """A real `runner serve` on a loopback port (a free one by default); its base URL.
    Stopped (and its engines with it) at the end."""
    port = port or _free_port()
    env = {**os.environ, "RUNNER_TOKEN": TOKEN,
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    log = open(tmp_path / "serve.log", "ab")  # noqa: SIM115 - closed below, after the process
    process = subprocess.Popen(
        [sys.executable, "-m", "runner", "serve", "--port", str(port),
         "--db", f"sqlite:///{tmp_path / 'service.db'}", "--engines",
         str(REPO / "configs" / "engines.toml"), "--max-concurrency", "2", *options],
        cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(base + "/", process)
        yield base
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log.close()
        # pytest shows this only when the test fails: the service's side of the story.
        print(f"runner serve exited with {process.returncode}; its log ends:")
        print((tmp_path / "serve.log").read_text(errors="replace")[-4000:])


@pytest.fixture
def service(tmp_path: Path) -> Iterator[str]:
    """The service with open reads."""
    with _serve(tmp_path) as base:
        yield base


@pytest.fixture
def protected_service(tmp_path: Path) -> Iterator[str]:
    """The service with reads behind the token as well (--protect-reads)."""
    with _serve(tmp_path, "--protect-reads") as base:
        yield base


@contextlib.contextmanager
def _browser() -> Iterator[Any]:
    """Debian's chromium, headless, under Playwright."""
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                             args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def test_example_config_is_accepted_by_the_allow_list() -> None:
    """The form's pre-filled example names engines of the engines file and passes the
    service's own submission checks (the same as a POST)."""
    from runner.service.page import _engine_names, example_config
    from runner.service.settings import ServiceSettings
    from runner.service.submission import check_submission

    engines_file = REPO / "configs" / "engines.toml"
    names = _engine_names(engines_file)
    example = example_config(names)
    assert 'engines = ["bundled", "bundled-v1"]' in example
    config = check_submission(tomllib.loads(example), ServiceSettings(
        db_url="sqlite://", engines_file=engines_file))
    assert [e.name for e in config.engines] == ["bundled", "bundled-v1"]
    # Without the bundled engines the example takes the file's first two names.
    assert 'engines = ["x", "y \\"q\\""]' in example_config(["x", 'y "q"', "z"])


def _submit_watch_download(page: Any, service: str, tmp_path: Path) -> None:
    """The browser test's steps, from the empty list to the downloaded PGN."""
    # The list page: empty, with an example in the form.
    page.goto(service + "/")
    assert "bundled" in page.input_value("#config")
    assert page.locator("#tournaments tbody tr").count() == 0

    # A wrong token: 401, said in the page.
    page.fill("#config", CONFIG)
    page.fill("#token", "wrong")
    page.click("#submit")
    page.wait_for_selector("#submit-status.error")
    assert "401" in page.inner_text("#submit-status")

    # A command line of our own: 422 with the key path, shown as text.
    page.fill("#token", TOKEN)
    page.fill("#config", CONFIG.replace(
        'engines = ["bundled", "bundled-v1"]',
        'engines = [{ name = "<i>x</i>", command = ["/bin/sh", "-c", "<b>boom</b>"] }, '
        '"bundled"]'))
    page.click("#submit")
    page.wait_for_selector("#problems li")
    problems = page.inner_text("#problems")
    assert "engines[0].command" in problems
    assert page.locator("#problems b, #problems i").count() == 0  # text, never markup
    assert "422" in page.inner_text("#submit-status")

    # The real submission: 201 and on to the tournament's page.
    page.fill("#config", CONFIG)
    page.click("#submit")
    page.wait_for_url("**/tournaments/*")
    tid = page.url.rsplit("/", 1)[1]
    page.wait_for_selector("#t-conn.live")
    assert page.inner_text("#t-name") == "browser <b>test</b> & co"

    # A board appears and its position changes as moves arrive. Every board's position is
    # watched from here on, not one board picked later: a board picked between its game's
    # last move and its end never moves again, and the four quick games could all end.
    page.evaluate("""() => {
        window.fenMoves = 0;
        new MutationObserver((changes) => {
            for (const change of changes) {
                if (change.oldValue && change.target.dataset.fen !== change.oldValue) {
                    window.fenMoves += 1;
                }
            }
        }).observe(document.body, {subtree: true, attributes: true,
                                   attributeFilter: ["data-fen"], attributeOldValue: true});
    }""")
    page.wait_for_selector(".board-card[data-fen]:not(.done)")
    page.wait_for_function("() => window.fenMoves > 0")
    assert page.locator(".board-card .sq .pc").count() > 0

    # The screenshot a human looks at: standings, plots and a board in play, at the first
    # moment all are there (or, when the last games ended first, without a board).
    with contextlib.suppress(sync_api.TimeoutError):
        page.wait_for_function(
            """() => document.querySelector('#elo-plot path.line') !== null
                && document.querySelector('.board-card:not(.done)') !== null""", timeout=15_000)
    shot = tmp_path / "service-page.png"
    page.screenshot(path=str(shot), full_page=True)
    if SCREENSHOT_COPY.parent.is_dir():
        shutil.copyfile(shot, SCREENSHOT_COPY)

    # The standings change when a game finishes; the Elo and LLR plots get a line.
    page.wait_for_function(
        """() => Array.from(document.querySelectorAll('#standings tbody tr'))
                .some((row) => Number(row.cells[2].textContent) > 0)""")
    page.wait_for_selector("#elo-plot path.line", state="attached")  # a flat line has no height
    page.wait_for_selector("#llr-plot path.line", state="attached")
    assert page.inner_text("#sprt").startswith("SPRT [0, 10]: LLR ")
    assert page.locator("#finished tbody tr").count() >= 1

    # The tournament ends; every game is in the finished list.
    page.wait_for_function(
        "() => document.getElementById('t-status').textContent === 'finished'",
        timeout=60_000)
    page.wait_for_function(
        f"() => document.querySelectorAll('#finished tbody tr').length === {GAMES}")
    assert page.inner_text("#t-games") == f"{GAMES} of {GAMES} games"
    # Each engine's search and clock figures and its faults, drawn from the live report
    # (issue 43): both engines, with their depth, speed and the least time left.
    page.wait_for_function("() => document.querySelectorAll('#search tbody tr').length === 2")
    for row in page.locator("#search tbody tr").all():
        cells = [cell.inner_text() for cell in row.locator("td").all()]
        assert cells[0] in ("bundled", "bundled-v1") and int(cells[1]) > 0
        assert float(cells[2]) > 0 and cells[7].endswith(" s")
    assert page.locator("#faults thead th").count() == 6

    # Stop needs the token: a wrong one is refused, and the page says so.
    page.fill("#token", "wrong")
    page.click("#stop")
    page.wait_for_selector("#action-status.error")
    assert "401" in page.inner_text("#action-status")

    # The PGN link downloads every game; python-chess replays each one.
    with page.expect_download() as download_info:
        page.click("#pgn-link")
    text = Path(download_info.value.path()).read_text(encoding="utf-8")
    games = []
    stream = io.StringIO(text)
    while (game := chess_pgn.read_game(stream)) is not None:
        assert not game.errors, game.errors
        games.append(game)
    assert len(games) == GAMES
    assert {g.headers["White"] for g in games} == {"bundled", "bundled-v1"}
    assert all(g.headers["Result"] in ("1-0", "0-1", "1/2-1/2") for g in games)
    assert all(len(list(g.mainline_moves())) > 0 for g in games)

    # The server-rendered list escapes the name (the script's refresh does too: textContent).
    with urllib.request.urlopen(service + "/", timeout=30) as response:
        assert "browser &lt;b&gt;test&lt;/b&gt; &amp; co" in response.read().decode()

    # The list page shows the tournament, finished; an unknown id gets the 404 page.
    page.goto(service + "/")
    row = page.locator(f'#tournaments tbody tr[data-id="{tid}"]')
    assert "finished" in row.inner_text()
    response = page.goto(service + "/tournaments/9999")
    assert response is not None and response.status == 404
    assert "9999" in page.inner_text("#not-found")


@needs_chromium
def test_submit_watch_and_download_in_a_browser(service: str, tmp_path: Path) -> None:
    """Submit through the form, watch a board move and the standings change, get the PGN."""
    errors: list[str] = []
    foreign: list[str] = []
    with _browser() as browser:
        context = browser.new_context(viewport={"width": 1280, "height": 1000},
                                      accept_downloads=True)
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("request", lambda request: None if request.url.startswith(service)
                else foreign.append(request.url))
        try:
            _submit_watch_download(page, service, tmp_path)
        except Exception:
            # What the page showed when a step failed: text here, a picture next to the log.
            page.screenshot(path=str(tmp_path / "failure.png"), full_page=True)
            print(f"the page at {page.url} (screenshot {tmp_path / 'failure.png'}):")
            print(page.inner_text("main"))
            raise
    assert errors == [], errors
    assert foreign == [], f"the page loaded something from elsewhere: {foreign}"


def _get(url: str) -> tuple[int, dict[str, str], str]:
    """Status, headers (lower-case names) and text of a GET (an HTTP error status too)."""
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, _lower(response.headers), response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, _lower(exc.headers), exc.read().decode()


def _lower(headers: Any) -> dict[str, str]:
    return {name.lower(): value for name, value in headers.items()}


def test_page_routes_headers_and_static_allow_list(service: str) -> None:
    """The pages carry a CSP that allows only this origin; the static route serves its listed
    files and nothing else; a malformed or unknown tournament id gets the HTML 404 page."""
    status, headers, text = _get(service + "/")
    assert status == 200 and headers["content-type"].startswith("text/html")
    csp = headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp and "http" not in csp
    assert "<script>" not in text  # no inline script: the CSP would refuse it anyway
    for name in ("page.js", "draw.js", "page.css", "workers.js"):
        status, headers, text = _get(f"{service}/static/{name}")
        assert status == 200 and len(text) > 100
        assert headers["content-type"].split("/")[1].startswith(("javascript", "css"))
    for name in ("page.py", "..%2Fpage.py", "..%2F..%2Fapp.py", "%2Fetc%2Fpasswd", "PAGE.JS"):
        assert _get(f"{service}/static/{name}")[0] == 404, name
    for tid in ("abc", "0", "-1", "1e3", "99999999999", "1" * 5000, "1"):
        status, headers, text = _get(f"{service}/tournaments/{tid}")
        assert status == 404 and headers["content-type"].startswith("text/html"), tid
        assert 'id="not-found"' in text


def _submit(base: str, config: str) -> int:
    """Submit a tournament through the JSON API (with the token); its id."""
    request = urllib.request.Request(
        base + "/api/tournaments", data=config.encode(), method="POST",
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/toml"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return int(json.loads(response.read())["id"])


@needs_chromium
def test_protected_reads_need_the_token_in_the_page(protected_service: str) -> None:
    """With --protect-reads the server renders no tournament data; the page's script reads
    the list and the event stream (fetch, since EventSource cannot send a header) with the
    token the user enters, and says so when there is none."""
    base = protected_service
    name = "secret <i>reads</i>"
    tid = _submit(base, CONFIG.replace('"browser <b>test</b> & co"', json.dumps(name))
                  .replace("rounds = 3", "rounds = 1"))
    with urllib.request.urlopen(f"{base}/tournaments/{tid}", timeout=30) as response:
        assert "secret" not in response.read().decode()  # nothing rendered without a token
    errors: list[str] = []
    with _browser() as browser:
        page = browser.new_context().new_page()
        page.set_default_timeout(30_000)
        page.on("pageerror", lambda exc: errors.append(str(exc)))

        # No token: the tournament page says what it needs.
        page.goto(f"{base}/tournaments/{tid}")
        page.wait_for_function(
            "() => document.getElementById('t-conn').textContent.includes('token')")

        # With the token (kept for the session) the stream flows: snapshot, then live events.
        page.fill("#token", TOKEN)
        page.dispatch_event("#token", "change")
        page.wait_for_function(
            f"() => document.getElementById('t-name').textContent === {json.dumps(name)}")
        page.wait_for_function(
            "() => document.querySelectorAll('.board-card').length > 0 "
            "|| document.querySelectorAll('#finished tbody tr').length > 0")
        page.wait_for_function(
            "() => Array.from(document.querySelectorAll('#standings tbody tr'))"
            ".some((row) => Number(row.cells[2].textContent) > 0)")

        # The list page reads the list with the token from the session.
        page.goto(base + "/")
        page.wait_for_selector(f'#tournaments tbody tr[data-id="{tid}"]')
        assert name in page.inner_text("#tournaments")
    assert errors == [], errors


@needs_chromium
@pytest.mark.slow
def test_page_follows_a_restarted_service(tmp_path: Path) -> None:
    """The service stops mid-tournament and starts again on the same database: the page's
    stream reconnects by itself (EventSource, with its Last-Event-ID from the old process),
    the snapshot replaces the state, and the resumed tournament's games reach the page."""
    port = _free_port()
    errors: list[str] = []
    with _browser() as browser:
        page = browser.new_context().new_page()
        page.set_default_timeout(30_000)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        received: list[str] = []  # what the page's EventSource got, for a failure's report
        cdp = page.context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.on("Network.eventSourceMessageReceived", lambda m: received.append(
            f"{time.monotonic():.2f} {m['eventName']} {m['eventId']} {m['data'][:80]}")
            if m["eventName"] != "move" else None)
        with _serve(tmp_path, port=port) as base:
            tid = _submit(base, CONFIG.replace("rounds = 3", "rounds = 1"))  # 2 games
            page.goto(f"{base}/tournaments/{tid}")
            page.wait_for_function(
                "() => Array.from(document.querySelectorAll('.board-card:not(.done)'))"
                ".some((card) => Number(card.dataset.ply) >= 4)")
        # The service is gone (its games cut short): the page keeps trying.
        page.wait_for_function(
            "() => document.getElementById('t-conn').textContent.startsWith('reconnecting')")
        with _serve(tmp_path, port=port) as base:
            try:
                page.wait_for_function(
                    "() => document.getElementById('t-conn').textContent === 'live'"
                    " || document.getElementById('t-status').textContent === 'finished'")
                page.wait_for_function(
                    "() => document.getElementById('t-status').textContent === 'finished'",
                    timeout=60_000)
                page.wait_for_function(
                    "() => document.querySelectorAll('#finished tbody tr').length === 2")
                assert page.inner_text("#t-games") == "2 of 2 games"
            except Exception:
                print("the page:", page.inner_text("main"))
                print("its events:", *received, sep="\n")
                print("its errors:", errors)
                print("the service:", _get(f"{base}/api/tournaments")[2])
                raise
    assert errors == [], errors


TUNE_FORM = """name = "browser tune"
engine = "bundled"
iterations = 2
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


@pytest.mark.slow
def test_a_tuning_run_submitted_from_the_page(service: str) -> None:
    """The front page's form, set to a tuning run, posts to /api/tunes and opens the run's
    page, which shows it finished with the report's theta graph loaded from this origin."""
    errors: list[str] = []
    with _browser() as browser:
        page = browser.new_context().new_page()
        page.set_default_timeout(60_000)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(service + "/")
        page.select_option("#kind", "tunes")
        page.fill("#config", TUNE_FORM)
        page.fill("#token", TOKEN)
        page.click("#submit")
        page.wait_for_url("**/tunes/*")
        tune_id = page.url.rsplit("/", 1)[1]
        deadline = time.monotonic() + 120
        while "finished" not in page.inner_text("h1"):
            assert time.monotonic() < deadline, page.inner_text("main")
            time.sleep(1)
            page.reload()
        assert page.inner_text("#values").startswith("option.Skew=")
        image = page.locator("#tuning img")
        assert image.get_attribute("src") == f"/tunes/{tune_id}/theta.svg"
        assert page.evaluate("document.querySelector('#tuning img').naturalWidth") > 0
    assert errors == [], errors


def _post_json(url: str, body: dict[str, Any], token: str) -> dict[str, Any]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        answer: dict[str, Any] = json.loads(response.read())
        return answer


@needs_chromium
@pytest.mark.slow  # 18 s on a loaded 2-core machine; the route is test_fleet's (fast) too
def test_an_admin_blocks_and_unblocks_a_worker_from_the_workers_page(tmp_path: Path) -> None:
    """The /workers page's button: the admin's token typed into the page (kept in the tab's
    sessionStorage) goes in the Authorization header of the block and unblock calls, never
    in a URL; a wrong token is refused with the service's reason; the worker's name, markup
    and all, is shown as text."""
    name = "laptop <b>x</b> & co"
    with _serve(tmp_path, "--accept-workers") as base:
        worker = _post_json(base + "/api/workers", {
            "name": name, "concurrency": 1, "cores": 1, "memory_mb": 1, "os": "test",
            "version": "test", "wire": WIRE_VERSION, "engines": ["bundled"]}, TOKEN)
        wid = worker["id"]
        urls: list[str] = []
        errors: list[str] = []
        with _browser() as browser:
            page = browser.new_context().new_page()
            page.set_default_timeout(30_000)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("request", lambda request: urls.append(request.url))
            page.goto(base + "/workers")
            row = f'#workers tr[data-id="{wid}"]'
            assert page.inner_text(f"{row} bdi") == name
            button = f"{row} button.block-worker"
            assert page.inner_text(button) == "Block"

            page.click(button)  # no token yet
            page.wait_for_function(
                "() => document.getElementById('w-status').textContent.includes('token')")

            page.fill("#token", "not-the-token")
            page.click(button)
            page.wait_for_function(
                "() => document.getElementById('w-status').textContent.includes('401')")
            assert page.inner_text(f"{row} td.blocked") == ""

            page.fill("#token", TOKEN)
            page.click(button)
            page.wait_for_function(
                f"() => document.querySelector('{row} td.blocked').textContent === 'blocked'")
            assert page.inner_text(button) == "Unblock"
            listed = json.loads(_get(base + "/api/workers")[2])["workers"]
            assert [w["blocked"] for w in listed if w["id"] == wid] == [True]
            assert page.evaluate("() => sessionStorage.getItem('cecp-runner-token')") == TOKEN

            page.reload()  # the token stays for the tab; the row is read again
            assert page.input_value("#token") == TOKEN
            page.click(button)
            page.wait_for_function(
                f"() => document.querySelector('{row} td.blocked').textContent === ''")
            listed = json.loads(_get(base + "/api/workers")[2])["workers"]
            assert [w["blocked"] for w in listed if w["id"] == wid] == [False]
        assert errors == [], errors
        assert not [url for url in urls if TOKEN in url or "not-the-token" in url], urls
