"""The service against anonymous and careless clients (issue 26), on a real ``runner serve``.

Each test starts the service as users do (its own process, a temporary SQLite database, an
engines file and a books directory of the test's making) and talks HTTP to it:

- a submission is bounded by what can finish: engines, games, time controls, depth, nodes,
  memory and threads options are refused with the key, the value and the limit;
- odd input (lone surrogates, NUL, huge integers in JSON and TOML, over-long paths, deep
  nesting, non-finite numbers) gets a 422 in one line, never a 500 or a traceback in the log;
- a file in the books directory that is not a book is not disclosed line by line: its 422
  quotes at most a 40-character excerpt;
- a run that fails (an engine that cannot start) says why in the API, in the event stream and
  on the page (a real browser), and the reason is stored;
- names with direction controls (right-to-left override) do not spoof the page, its script's
  tables or the HTML report (a real browser reads the text the page shows).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("uvicorn", reason="the service extra (uvicorn) is not installed")
httpx = pytest.importorskip("httpx", reason="httpx is not installed")

REPO = Path(__file__).resolve().parent.parent
TOKEN = "guard-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: what follows it is shown backwards
SECRET = "SECRET-" + "s" * 33 + "-THE-REST-OF-THE-LINE-" + "r" * 40

ENGINES = """\
[[engines]]
name = "bundled"
command = ["{python}", "-m", "engine"]
dir = "{repo}"

[[engines]]
name = "bundled-v1"
command = ["{python}", "-m", "engine", "--version", "v1"]
dir = "{repo}"

[[engines]]
name = "broken"
command = ["sh", "-c", "echo the engine cannot start >&2; exit 3"]
"""


@dataclass
class Served:
    """A running service: its base URL, database file and log file."""

    base: str
    db: Path
    log: Path

    def submit(self, body: Any, content_type: str = "application/json") -> httpx.Response:
        """POST a submission (a dict as JSON, text or bytes as they are) with the token."""
        content = json.dumps(body) if isinstance(body, dict) else body
        return httpx.post(f"{self.base}/api/tournaments", content=content, timeout=30,
                          headers={**AUTH, "Content-Type": content_type})


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def _serve(workdir: Path, db_url: str | None = None, *flags: str) -> Iterator[Served]:
    """`runner serve` over `workdir`/service.db (or `db_url`) with `workdir`/engines.toml and
    its books, and any further `flags`."""
    engines = workdir / "engines.toml"
    if not engines.exists():
        engines.write_text(ENGINES.format(python=sys.executable, repo=REPO))
    books = workdir / "books"
    books.mkdir(exist_ok=True)
    (books / "notes.txt").write_text(f"{SECRET} w KQkq - 0 1\nsecond line\n")
    port = _free_port()
    env = {**os.environ, "RUNNER_TOKEN": TOKEN,
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    env.pop("RUNNER_DB", None)
    log_path = workdir / "serve.log"
    log = log_path.open("ab")
    process = subprocess.Popen(
        [sys.executable, "-m", "runner", "serve", "--port", str(port), "--db",
         db_url or f"sqlite:///{workdir / 'service.db'}", "--engines", str(engines), "--books", str(books),
         "--submit-rate", "100000", "--max-concurrency", "2", *flags],
        cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"runner serve exited: {log_path.read_text()[-2000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(base + "/api/tournaments", timeout=5).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("runner serve did not answer in 60 s")
            time.sleep(0.2)
        yield Served(base, workdir / "service.db", log_path)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log.close()
        print(f"runner serve's log ends:\n{log_path.read_text(errors='replace')[-3000:]}")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One service for the tests that only submit."""
    with _serve(tmp_path_factory.mktemp("guard")) as found:
        yield found


BASE: dict[str, Any] = {"engines": ["bundled", "bundled-v1"], "tc": "5+0.05"}


def _problems(response: httpx.Response) -> list[dict[str, str]]:
    assert response.status_code == 422, (response.status_code, response.text[:500])
    problems: list[dict[str, str]] = response.json()["detail"]
    assert problems
    return problems


def test_tablebases_only_from_the_operators_directory(tmp_path: Path) -> None:
    """Tablebase directories are allow-listed as books are: without `--tablebases` a
    submission may name none; with it, only that directory or folders inside it (nothing
    outside is looked at), and an accepted tournament's games end by those tables."""
    syzygy = REPO.parent / "shared" / "data" / "syzygy"
    if not syzygy.is_dir():
        pytest.skip(f"Syzygy tables absent (expected {syzygy})")
    endgames = {**BASE, "tc": "depth=1", "rounds": 2,
                "openings": {"file": "endgames.epd", "order": "sequential"},
                "adjudication": {"maxmoves": 80, "tablebases": ["syzygy"], "tbpieces": 4}}
    (tmp_path / "books").mkdir()
    (tmp_path / "books" / "endgames.epd").write_bytes(
        (REPO / "tests" / "data" / "tb_endgames.epd").read_bytes())
    with _serve(tmp_path) as served:
        problems = _problems(served.submit(endgames))
        assert [p["key"] for p in problems] == ["adjudication.tablebases"], problems
        assert "no tablebases" in problems[0]["message"]
    with _serve(tmp_path, None, "--tablebases", str(syzygy.parent)) as served:
        for outside in (["../../etc"], ["/etc"], "syzygy:/tmp", [str(syzygy.parent.parent)]):
            body = {**endgames, "adjudication": {"tablebases": outside}}
            problems = _problems(served.submit(body))
            assert {p["key"] for p in problems} == {"adjudication.tablebases"}, problems
            assert all("tablebases directory" in p["message"] for p in problems), problems
        for inside, why in ((["no-such-folder"], "no such directory"),
                            (["books"], "no Syzygy WDL table")):
            problems = _problems(served.submit({**endgames, "adjudication": {"tablebases": inside}}))
            assert [p["key"] for p in problems] == ["adjudication.tablebases"], problems
            assert why in problems[0]["message"], problems
        created = served.submit(endgames)
        assert created.status_code == 201, created.text
        url = f"{served.base}/api/tournaments/{created.json()['id']}"
        _wait(lambda: httpx.get(url, timeout=30).json()["status"] == "finished", timeout=180,
              what="the endgame tournament to finish")
    with sqlite3.connect(served.db) as connection:
        endings = connection.execute("SELECT termination, reason FROM games").fetchall()
    judged = [reason for termination, reason in endings if termination == "tablebase"]
    assert judged and all(r.endswith("by adjudication: SyzygyTB") for r in judged), endings


def test_the_operator_sets_the_bounds_on_the_command_line(tmp_path: Path) -> None:
    """`runner serve --max-engines/--max-games/--max-hash/--max-threads` replace the
    defaults: what the defaults allow is refused under tighter ones."""
    with _serve(tmp_path, None, "--max-engines", "2", "--max-games", "10", "--max-hash", "8",
                "--max-threads", "1") as served:
        cases = [
            ({"engines": ["bundled", "bundled-v1", {"use": "bundled", "name": "third"}]},
             "engines", "at most 2"),
            ({"rounds": 6}, "rounds", "at most 10"),
            ({"engines": [{"use": "bundled", "options": {"Hash": 16}}, "bundled-v1"]},
             "engines[0].options.Hash", "at most 8 MB"),
        ]
        for change, key, limit in cases:
            problems = _problems(served.submit({**BASE, **change}))
            assert any(p["key"] == key and limit in p["message"] for p in problems), problems
        assert served.submit({**BASE, "rounds": 5}).status_code == 201


@pytest.mark.parametrize(("change", "key", "value", "limit"), [
    ({"tc": "depth=1000000000"}, "tc", "depth=1000000000", "at most 64"),
    ({"tc": "0.000001+0"}, "tc", "0.000001+0", "at least 1 s"),
    ({"tc": "st=0.000001"}, "tc", "st=0.000001", "from 0.05 s"),
    ({"tc": "nodes=99999999999"}, "tc", "nodes=99999999999", "at most 1000000000"),
    ({"engines": [{"use": "bundled", "name": f"e{i}"} for i in range(1000)]},
     "engines", "1000 engines", "at most 32"),
    ({"rounds": 100_000}, "rounds", "100000", "at most 100000"),
    ({"engines": [{"use": "bundled", "options": {"Hash": 1_000_000}}, "bundled-v1"]},
     "engines[0].options.Hash", "1000000", "at most 1024 MB"),
    ({"engines": [{"use": "bundled", "options": {"Threads": 4096}}, "bundled-v1"]},
     "engines[0].options.Threads", "4096", "threads per engine"),
])
def test_submissions_are_bounded_by_what_can_finish(served: Served, change: dict[str, Any],
                                                   key: str, value: str, limit: str) -> None:
    """Each bound is refused with its key, the value and the limit; nothing is stored."""
    problems = _problems(served.submit({**BASE, **change}))
    found = [p for p in problems if p["key"] == key]
    assert found, problems
    assert value in found[0]["value"] and limit in found[0]["message"], found[0]
    listed = httpx.get(served.base + "/api/tournaments", timeout=30).json()["tournaments"]
    assert listed == []


_PAIR = b'"engines": ["bundled", "bundled-v1"], "tc": "5+0.05"'
_TOML_PAIR = b'engines = ["bundled", "bundled-v1"]\ntc = "5+0.05"\n'

# (what, body, content type, the key its problem names: "" for the body as a whole)
ODD: list[tuple[str, bytes, str, str]] = [
    ("lone surrogate", b'{"name": "\\ud800", ' + _PAIR + b"}", "application/json", "name"),
    ("lone surrogate key", b'{"engines": [{"use": "bundled", "options": {"\\udfff": 1}}, '
                           b'"bundled-v1"], "tc": "5+0.05"}', "application/json",
     'engines[0].options."?"'),
    ("NUL in a name", b'{"name": "a\\u0000b", ' + _PAIR + b"}", "application/json", "name"),
    ("NUL in a TOML name", b'name = "a\\u0000b"\n' + _TOML_PAIR, "application/toml", "name"),
    ("NUL in a path", b'{' + _PAIR + b', "openings": {"file": "x\\u0000.epd"}}',
     "application/json", "openings.file"),
    ("huge JSON integer", b'{' + _PAIR + b', "rounds": 1' + b"0" * 400 + b"}",
     "application/json", "rounds"),
    ("huge TOML integer", _TOML_PAIR + b"rounds = 1" + b"0" * 400 + b"\n", "application/toml",
     "rounds"),
    ("huge SPRT bound", b'{' + _PAIR + b', "sprt": {"elo0": 0, "elo1": 1' + b"0" * 400
     + b"}}", "application/json", "sprt.elo1"),
    ("over-long path", json.dumps({**BASE, "openings": {"file": "x" * 300 + ".epd"}}).encode(),
     "application/json", "openings.file"),
    ("very long path", json.dumps({**BASE, "openings": {"file": "a/" * 2500 + "x.epd"}}).encode(),
     "application/json", "openings.file"),
    ("deep JSON", b'{' + _PAIR + b', "x": ' + b"[" * 20000 + b"]" * 20000 + b"}",
     "application/json", ""),
    ("deep TOML", _TOML_PAIR + b"x = " + b"[" * 5000 + b"]" * 5000 + b"\n", "application/toml",
     ""),
    ("NaN", b'{' + _PAIR + b', "rounds": NaN}', "application/json", "rounds"),
    ("surrogate bytes", b'{"name": "\xed\xa0\x80", ' + _PAIR + b"}", "application/json", ""),
]


@pytest.mark.parametrize(("what", "body", "content_type", "key"), ODD, ids=[o[0] for o in ODD])
def test_odd_input_gets_one_line(served: Served, what: str, body: bytes, content_type: str,
                                 key: str) -> None:
    """422 naming what is odd, each problem one bounded line; never a 500, never a traceback
    in the log."""
    before = served.log.read_text(errors="replace")
    problems = _problems(served.submit(body, content_type))
    assert [p for p in problems if p["key"] == key], problems
    for problem in problems:
        for field in problem.values():
            assert "\n" not in field and len(field) <= 300, problem
    assert "Traceback" not in served.log.read_text(errors="replace")[len(before):]


def test_book_errors_quote_a_short_excerpt(served: Served) -> None:
    """A text file in the books directory named as an EPD book: the 422 quotes at most 40
    characters of its line, and does not name the service's own directories."""
    problems = _problems(served.submit({**BASE, "openings": {"file": "notes.txt",
                                                             "format": "epd"}}))
    text = json.dumps(problems)
    assert "notes.txt" in text  # the problem names the file and what went wrong
    assert SECRET[:20] in text  # a short excerpt, so the submitter sees which line
    assert "THE-REST-OF-THE-LINE" not in text, text  # never the whole line
    assert str(Path(served.db).parent) not in text, text


def _wait(condition: Any, timeout: float = 90.0, what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def _events(base: str, tournament_id: int, until: Any, timeout: float = 60.0) -> list[dict[str, Any]]:
    """The event stream's events (kind and data) until `until(events)` holds."""
    events: list[dict[str, Any]] = []
    kind = ""
    with httpx.stream("GET", f"{base}/api/tournaments/{tournament_id}/events",
                      timeout=httpx.Timeout(timeout)) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("event:"):
                kind = line.split(":", 1)[1].strip()
            elif line.startswith("data:"):
                events.append({"kind": kind, "data": json.loads(line.split(":", 1)[1])})
                if until(events):
                    break
    return events


def _reason_in(events: list[dict[str, Any]]) -> str | None:
    for event in events:
        data = event["data"]
        if event["kind"] in ("snapshot", "status", "tournament_finished") and data.get("reason"):
            return str(data["reason"])
    return None


@contextlib.contextmanager
def _browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is absent (apt-get install chromium)")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                             args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def test_a_failed_run_says_why(tmp_path: Path) -> None:
    """An engine that cannot start: the API, the event stream and the page (a real browser)
    say so, not just "interrupted", and the reason is stored in the database."""
    with _serve(tmp_path) as service:
        created = service.submit({"name": "doomed", "engines": ["bundled", "broken"],
                                  "tc": "5+0.05", "rounds": 1, "games": 2})
        assert created.status_code == 201, created.text
        tid = created.json()["id"]
        url = f"{service.base}/api/tournaments/{tid}"
        detail = _wait(lambda: (lambda d: d if d["status"] == "interrupted" and d.get("reason")
                                else None)(httpx.get(url, timeout=30).json()),
                       what="the tournament to be interrupted with a reason")
        assert "broken" in detail["reason"] and "failed to start" in detail["reason"], detail
        listed = httpx.get(service.base + "/api/tournaments", timeout=30).json()["tournaments"]
        assert listed[0]["reason"] == detail["reason"]
        events = _events(service.base, tid, _reason_in)
        assert "failed to start" in (_reason_in(events) or "")
        with _browser() as browser:
            page = browser.new_page()
            page.set_default_timeout(30_000)
            page.goto(f"{service.base}/tournaments/{tid}")
            page.wait_for_selector("#t-reason:not([hidden])")
            assert "failed to start" in page.inner_text("#t-reason")
            assert page.inner_text("#t-status") == "interrupted"
    with sqlite3.connect(service.db) as connection:
        (stored,) = connection.execute("SELECT reason FROM tournaments WHERE id = ?",
                                       (tid,)).fetchone()
    assert stored == detail["reason"]


def _spoofing_database(db: Path) -> int:
    """A stored tournament whose names carry direction controls (as an older version, or a
    CLI run from a careless file, may have stored); its id."""
    from runner.store import EngineRowValues, create_tournament, open_database

    names = [f"good{RLO}0-1", "\u05d0\u05d1 hebrew", "plain"]
    database = open_database(f"sqlite:///{db}")
    try:
        with database.session() as session:
            return create_tournament(
                session, name=f"cup{RLO}evil", config={"name": "cup", "format": "round-robin"},
                fingerprint="spoof", engines=[EngineRowValues(n, ["x"]) for n in names],
                total_games=6).id
    finally:
        database.close()


def test_direction_controls_do_not_spoof_the_page(tmp_path: Path) -> None:
    """Names with a right-to-left override: the page (server-rendered and redrawn by its
    script), the list and the HTML report show them without the control, each name isolated
    in a <bdi>, so the text next to it reads as it is."""
    tid = _spoofing_database(tmp_path / "service.db")
    with _serve(tmp_path) as service:
        report = httpx.get(f"{service.base}/api/tournaments/{tid}/report.html", timeout=60)
        assert report.status_code == 200
        assert RLO not in report.text and "<bdi>cupevil</bdi>" in report.text
        index = httpx.get(service.base + "/", timeout=30).text
        assert RLO not in index and "<bdi>cupevil</bdi>" in index
        with _browser() as browser:
            page = browser.new_page()
            page.set_default_timeout(30_000)
            page.goto(f"{service.base}/tournaments/{tid}")
            # The script redraws the standings from the event stream's snapshot.
            page.wait_for_function(
                "() => document.querySelectorAll('#standings tbody tr td bdi').length === 3")
            shown = page.evaluate("() => document.body.textContent")
            assert RLO not in shown
            assert page.inner_text("#t-name") == "cupevil"
            assert page.evaluate("() => document.getElementById('t-name').tagName") == "BDI"
            engines = page.evaluate(
                "() => Array.from(document.querySelectorAll('#standings tbody td bdi'))"
                ".map((n) => n.textContent)")
            assert sorted(engines) == sorted(["good0-1", "\u05d0\u05d1 hebrew", "plain"])
            assert page.evaluate("() => document.title") == "cupevil - cecp-runner"


def test_nul_in_names_on_postgresql(tmp_path: Path, postgres_server: Any) -> None:
    """PostgreSQL cannot store a NUL in text: a name with one is a 422 naming the key, not a
    500 from the database; the service goes on accepting submissions."""
    with _serve(tmp_path, postgres_server.new_database()) as service:
        for body, key in [({**BASE, "name": "cup\u0000"}, "name"),
                          ({**BASE, "engines": [{"use": "bundled", "name": "a\u0000b"},
                                                "bundled-v1"]}, "engines[0].name")]:
            problems = _problems(service.submit(body))
            assert [p for p in problems if p["key"] == key], problems
        created = service.submit({**BASE, "name": "fine", "rounds": 1, "games": 2})
        assert created.status_code == 201, created.text
        httpx.post(f"{service.base}{created.json()['url']}/stop?hard=true", headers=AUTH,
                   timeout=10)
        assert "Traceback" not in service.log.read_text(errors="replace")


def _fuzzed_submissions() -> Any:
    """Tables shaped like submissions (the configuration's keys) whose values may be odd:
    lone surrogates, NUL, control characters, huge integers, non-finite floats, long text."""
    from hypothesis import strategies as st

    text = st.one_of(
        st.text(max_size=30),
        st.sampled_from(["\ud800", "a\udfffb", "x\x00y", "\x00", "\x1b[31m", "a\nb",
                         "x" * 300, "a/" * 2100, "../../etc/passwd", "openings/../../x",
                         "5+0.05", "0.000001+0", "depth=1000000000", "st=0", "inf",
                         "bundled", "bundled-v1", "stockfish", "notes.txt"]))
    number = st.one_of(st.integers(min_value=-(10**400), max_value=10**400),
                       st.sampled_from([0, -1, 2**31, 2**63, 2**64 + 1, 10**30]),
                       st.floats(allow_nan=True, allow_infinity=True))
    leaf = st.one_of(text, number, st.booleans(), st.none())
    engine = st.one_of(
        st.sampled_from(["bundled", "bundled-v1", "stockfish"]), leaf,
        st.fixed_dictionaries({"use": st.one_of(st.sampled_from(["bundled", "stockfish"]), leaf)},
                              optional={"name": leaf, "tc": leaf, "restart": leaf,
                                        "ponder": leaf,
                                        "options": st.dictionaries(text, leaf, max_size=3)}))
    return st.fixed_dictionaries({}, optional={
        "name": leaf, "format": st.one_of(st.sampled_from(["match", "round-robin"]), leaf),
        "engines": st.one_of(st.lists(engine, max_size=4), leaf),
        "tc": leaf, "rounds": leaf, "games": leaf, "concurrency": leaf, "variant": leaf,
        "openings": st.one_of(leaf, st.fixed_dictionaries({}, optional={
            "file": leaf, "format": leaf, "order": leaf, "start": leaf, "plies": leaf,
            "seed": leaf})),
        "adjudication": st.one_of(leaf, st.fixed_dictionaries({}, optional={
            "maxmoves": leaf, "draw": st.dictionaries(text, leaf, max_size=2),
            "resign": st.dictionaries(text, leaf, max_size=2)})),
        "sprt": st.one_of(leaf, st.fixed_dictionaries({}, optional={
            "elo0": leaf, "elo1": leaf, "alpha": leaf, "beta": leaf, "maxgames": leaf})),
        "x": st.recursive(leaf, lambda inner: st.lists(inner, max_size=3), max_leaves=8),
    })


def test_fuzzed_submissions_are_accepted_or_refused_never_crash() -> None:
    """Generated submissions, as JSON and as TOML where TOML can say them: every one is
    either a checked configuration or a ConfigError of one-line problems, nothing else."""
    hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is not installed")
    import tomllib

    from runner.config.check import ConfigError
    from runner.service.settings import ServiceSettings
    from runner.service.submission import check_submission, parse_body

    settings = ServiceSettings(db_url="sqlite://", engines_file=REPO / "configs" / "engines.toml")

    def checked(body: bytes, content_type: str) -> None:
        try:
            check_submission(parse_body(body, content_type), settings)
        except ConfigError as exc:
            assert exc.problems
            for problem in exc.problems:
                assert "\n" not in problem.message, problem

    @hypothesis.settings(max_examples=300, deadline=None, database=None,
                         suppress_health_check=list(hypothesis.HealthCheck))
    @hypothesis.given(_fuzzed_submissions())
    def run(table: dict[str, Any]) -> None:
        checked(json.dumps(table).encode(), "application/json")
        try:
            toml = _toml(table)
        except ValueError:
            return  # None, NaN or a surrogate: TOML has no way to say it
        tomllib.loads(toml)  # the generator's own TOML is valid
        checked(toml.encode(), "application/toml")

    run()


def _toml(table: dict[str, Any]) -> str:
    """`table` as TOML text (inline tables), ValueError for what TOML cannot hold."""
    import math

    def value(item: Any) -> str:
        if item is None or (isinstance(item, float) and math.isnan(item)):
            raise ValueError("no TOML for it")
        if isinstance(item, bool):
            return "true" if item else "false"
        if isinstance(item, int | float):
            return ("inf" if item > 0 else "-inf") if isinstance(item, float) and \
                math.isinf(item) else repr(item)
        if isinstance(item, str):
            return string(item)
        if isinstance(item, list):
            return "[" + ", ".join(value(i) for i in item) + "]"
        return "{" + ", ".join(f"{string(str(k))} = {value(v)}" for k, v in item.items()) + "}"

    def string(text: str) -> str:
        if any("\ud800" <= c <= "\udfff" for c in text):
            raise ValueError("no TOML for it")
        # Raw non-ASCII (JSON's ASCII escapes of it are surrogate pairs, which TOML refuses);
        # DEL escaped (TOML refuses it raw, JSON leaves it so).
        return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")

    return "".join(f"{string(key)} = {value(item)}\n" for key, item in table.items())
