"""Schemathesis against the service's OpenAPI document: generated requests, never a 5xx.

The app runs in this process (schemathesis's ASGI transport, which also runs its lifespan:
the real manager on a temporary SQLite database, the repository's engines file). Before the
generated requests, the database gets one tournament of each kind a path id can meet: one
run by the CLI (not the service's: resume refuses it), one the service played to the end,
and one submitted and stopped before it began (resume plays it; stop stops it again). Path
ids are drawn from those and from unknown ones, so every operation is exercised on real rows
and on 404s alike.

Every operation is called with the right Bearer token and checked for: no server error, a
documented status code, content type and headers, and a body that fits the documented schema
(negative cases included: malformed ids, bodies, headers must get a 4xx, never a 5xx). The
write operations are called again without a token and with a wrong one: 401, never a 5xx.
The event stream is bounded: a stream that stays open (the stopped tournament's) is cut after
a short read timeout, keeping the events it sent; streams of finished tournaments end by
themselves.
"""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the service extra (fastapi) is not installed")
schemathesis = pytest.importorskip("schemathesis", reason="schemathesis is not installed")

from hypothesis import HealthCheck, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from schemathesis.python import asgi  # noqa: E402

from runner.config.parse import parse_config  # noqa: E402
from runner.service.app import create_app  # noqa: E402
from runner.service.payloads import event_kinds  # noqa: E402
from runner.service.settings import ServiceSettings  # noqa: E402
from runner.store import open_database  # noqa: E402
from runner.tournament.run import Tournament  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
ENGINES = REPO / "configs" / "engines.toml"
TOKEN = "schema-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
MAX_EXAMPLES = 30
STREAM_TIMEOUT = 2.0
"""Seconds an event stream is read before it is cut (the stopped tournament's never ends).

schemathesis's ASGI transport counts them from the request, not from the response's start:
a loaded CI machine once took more than 0.5 s to open a stream (two database reads in
threads), which read as a timeout of a stream that had not begun."""

SEEN: defaultdict[str, Counter[int]] = defaultdict(Counter)
"""Status codes each operation answered, with the token ("GET /api/...") and without
("no token: POST /api/..."), for the last test's account of what was covered."""

# Random engines, a few moves each: a game takes a fraction of a second.
QUICK = {
    "name": "quick", "engines": ["bundled-random", {"use": "bundled-random", "name": "random-b"}],
    "tc": "10+0.1", "rounds": 1, "games": 2, "concurrency": 1,
    "adjudication": {"maxmoves": 6},
}


def _cli_tournament(url: str) -> int:
    """A tournament created as `runner run` would (not owned by the service)."""
    table = {**QUICK, "name": "from the cli", "engines_file": str(ENGINES)}
    config = parse_config(table, source="test", base_dir=ENGINES.parent)
    database = open_database(url)
    try:
        return Tournament(config, database, new=True).prepare()
    finally:
        database.close()


def _wait_finished(client: Any, tournament_id: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = client.get(f"/api/tournaments/{tournament_id}").json()["status"]
        if status == "finished":
            return
        time.sleep(0.1)
    raise AssertionError(f"tournament {tournament_id} did not finish in {timeout} s")


def _on_loopback(app: Any) -> Any:
    """`app` as a client on this machine reaches it: a token over plain HTTP is refused from
    any other address, and schemathesis's client calls itself ``testclient``."""

    async def local(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            scope = {**scope, "client": ("127.0.0.1", 50000)}
        await app(scope, receive, send)

    return local


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, list[int]]]:
    """The app with its lifespan running, and the ids of the tournaments seeded into it."""
    url = f"sqlite:///{tmp_path_factory.mktemp('schema') / 'runner.db'}"
    cli_id = _cli_tournament(url)
    # No rate limit and no wrong-token throttle: the fuzzer is one client sending thousands
    # of requests, wrong tokens among them (both limits have tests of their own).
    settings_ = ServiceSettings(db_url=url, engines_file=ENGINES, token=TOKEN, submit_rate=0,
                                token_failures=0, max_concurrency=2)
    app = _on_loopback(create_app(settings_))
    try:
        with asgi.get_client(app) as client:  # starts the lifespan schemathesis then reuses
            finished = client.post("/api/tournaments", json=QUICK, headers=AUTH)
            assert finished.status_code == 201, finished.text
            finished_id = finished.json()["id"]
            _wait_finished(client, finished_id)
            stopped = client.post("/api/tournaments", json={**QUICK, "name": "stopped",
                                                            "rounds": 20}, headers=AUTH)
            assert stopped.status_code == 201, stopped.text
            stopped_id = stopped.json()["id"]
            response = client.post(f"/api/tournaments/{stopped_id}/stop?hard=true",
                                   headers=AUTH)
            assert response.status_code == 200, response.text
        yield app, [cli_id, finished_id, stopped_id]
    finally:
        asgi.shutdown_lifespans()  # the manager stops every run, the database is closed


@pytest.fixture(scope="module")
def api_schema(service: tuple[Any, list[int]]) -> Any:
    """The app's OpenAPI document, its path ids drawn from the seeded tournaments too."""
    app, ids = service
    # The token by the document's own scheme, so that schemathesis knows which requests it
    # sends without one (its negative cases, its ignored-auth check). No config file is read.
    config = schemathesis.config.SchemathesisConfig.from_dict(
        {"auth": {"openapi": {"HTTPBearer": {"bearer": TOKEN}}}})
    loaded = schemathesis.openapi.from_asgi("/openapi.json", app, config=config)

    @loaded.hook
    def flatmap_path_parameters(context: Any, parameters: dict[str, Any]) -> Any:
        generated = parameters.get("tournament_id") if isinstance(parameters, dict) else None
        if not isinstance(generated, int) or not 1 <= generated < 2**31:
            return st.just(parameters)  # a malformed id stays malformed (a negative case)
        return st.one_of(st.just(parameters), st.sampled_from(ids).map(
            lambda tournament_id: {**parameters, "tournament_id": tournament_id}))

    return loaded


@schemathesis.serializer("application/toml")
def _toml_text(context: Any, value: Any) -> bytes:
    """TOML bodies are text: a generated string as it is (anything else as its repr, which
    the service must refuse as TOML with a 422)."""
    return value.encode("utf-8", "surrogatepass") if isinstance(value, str) else repr(value).encode()


schema = schemathesis.pytest.from_fixture("api_schema")


def _timeout(case: Any) -> float:
    return STREAM_TIMEOUT if case.path.endswith("/events") else 30.0


def _excluded(case: Any) -> list[Any]:
    """Checks that do not apply, each for a reason that is not the service's fault."""
    from schemathesis import checks

    # Starlette answers a 405 from the first route of the path only: `Allow: POST` for
    # /api/tournaments, whose GET is another route (one route per method is how FastAPI
    # declares them). Clients get a 405 all the same.
    excluded = [checks.allow_header_conformance]
    if case.method.upper() == "POST" and case.path in ("/api/tournaments", "/api/tests",
                                                         "/api/tunes"):
        # The body's schema says "a TOML string or a JSON object": whether it is a tournament
        # (engines from the allow-list, a known format, a branch test's recipe and refs, a
        # tuning run's parameters...)
        # is the CLI's checking, which a
        # JSON schema cannot express; a schema-valid `{}` is rightly a 422 with its problems.
        excluded.append(checks.positive_data_acceptance)
    return excluded


@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
def test_every_operation_with_the_token(case: Any) -> None:
    """Generated requests (valid and invalid) with the token: no 5xx, responses as documented."""
    response = case.call_and_validate(timeout=_timeout(case), excluded_checks=_excluded(case))
    SEEN[f"{case.operation.method.upper()} {case.operation.path}"][response.status_code] += 1


@schema.include(method="POST").parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
def test_writes_without_the_token(case: Any) -> None:
    """Every write refused with 401 without a token or with a wrong one, never a 5xx."""
    for headers in ({}, {"Authorization": "Bearer not-the-token"},
                    {"Authorization": f"Basic {TOKEN}"}):
        case.headers = {k: v for k, v in (case.headers or {}).items()
                        if k.lower() != "authorization"} | headers
        response = case.call(timeout=30.0)
        assert response.status_code < 500, response.text
        if case.method.upper() == "POST":  # negative cases try other methods too: 405
            assert response.status_code == 401, (headers, response.status_code, response.text)
        SEEN[f"no token: {case.operation.path}"][response.status_code] += 1


def test_events_of_an_unknown_tournament_is_a_404(tmp_path: Path) -> None:
    """The stream's checks run before the response starts (schemathesis found a 200 with an
    empty stream and the 404 raised inside the generator); 503 the same way."""
    from fastapi.testclient import TestClient
    LOCAL_CLIENT = ("127.0.0.1", 50000)  # a client on this machine (tokens over plain HTTP)

    settings_ = ServiceSettings(db_url=f"sqlite:///{tmp_path / 'runner.db'}",
                                engines_file=ENGINES, token=TOKEN, max_streams=0)
    with TestClient(client=LOCAL_CLIENT, app=create_app(settings_),
                    raise_server_exceptions=True) as client:
        response = client.get("/api/tournaments/99/events")
        assert response.status_code == 404, response.text
        assert response.json() == {"detail": "no tournament 99"}
        created = client.post("/api/tournaments", json={**QUICK, "rounds": 50}, headers=AUTH)
        assert created.status_code == 201, created.text
        tournament_id = created.json()["id"]
        client.post(f"/api/tournaments/{tournament_id}/stop?hard=true", headers=AUTH)
        response = client.get(f"/api/tournaments/{tournament_id}/events")
        assert response.status_code == 503, response.text
        assert response.headers["retry-after"] == "5"


def test_a_valid_submission_conforms(api_schema: Any) -> None:
    """The one request generation cannot make (a tournament the allow-list accepts), TOML and
    JSON: 201 and every check; the games it plays are the cheap ones of `QUICK`."""
    operation = api_schema["/api/tournaments"]["POST"]
    toml = "\n".join([
        'name = "as toml"', 'engines = ["bundled-random", {use = "bundled-random", name = "b"}]',
        'tc = "10+0.1"', "rounds = 1", "[adjudication]", "maxmoves = 4"])
    for body, media_type in ((QUICK, "application/json"), (toml, "application/toml")):
        case = operation.Case(body=body, media_type=media_type, headers=AUTH)  # not generated:
        response = case.call_and_validate(timeout=30.0)  # the auth config is not applied
        assert response.status_code == 201, response.text
        SEEN["POST /api/tournaments"][201] += 1


def test_generated_requests_reached_every_outcome() -> None:
    """The generated requests met real rows and unknown ids on every operation (a run where
    every id was a 404 would prove little); the counts are printed for the record (-s)."""
    if not SEEN:
        pytest.skip("run with the generated tests (the whole file)")
    for operation, codes in sorted(SEEN.items()):
        print(f"{operation}: {sum(codes.values())} requests, {dict(sorted(codes.items()))}")
    api = {"GET /api/tournaments", "POST /api/tournaments"} | {
        f"{method} /api/tournaments/{{tournament_id}}{tail}" for method, tail in (
            ("GET", ""), ("POST", "/stop"), ("POST", "/resume"), ("GET", "/events"),
            ("GET", "/pgn"), ("GET", "/report.html"))}
    assert api <= set(SEEN), sorted(api - set(SEEN))  # the page's routes may come on top
    for operation in sorted(api):
        codes = SEEN[operation]
        assert any(200 <= code < 300 or code == 409 for code in codes), (operation, codes)
        if operation != "GET /api/tournaments":  # the one without parameters or body
            assert 422 in codes, (operation, codes)
        if "{tournament_id}" in operation:
            assert 404 in codes, (operation, codes)
    for operation in ("/stop", "/resume"):  # the finished tournament's answer at least
        assert 409 in SEEN[f"POST /api/tournaments/{{tournament_id}}{operation}"]
    without = [f"no token: /api/tournaments{tail}"
               for tail in ("", "/{tournament_id}/stop", "/{tournament_id}/resume")]
    assert all(401 in SEEN[op] for op in without), {op: SEEN[op] for op in without}


def _document() -> dict[str, Any]:
    """The OpenAPI document of an app that is not started (the document needs no database)."""
    return create_app(ServiceSettings(db_url="sqlite://", engines_file=ENGINES)).openapi()


def _validator(document: dict[str, Any], schema: dict[str, Any]) -> Any:
    """A JSON Schema validator for `schema`, its references resolved in `document`."""
    import jsonschema_rs

    return jsonschema_rs.validator_for({**schema, "components": document["components"]})


def test_every_operation_documents_each_response_body() -> None:
    """Every answer of every operation has a body schema: JSON ones a declared model (a
    reference to an object with its properties, not "any object"), the stream the model of
    each event's data, PGN and HTML their media type. Before the typed payloads the JSON
    answers were "an object with anything in it" and the stream's data "a string"."""
    document = _document()
    components = document["components"]["schemas"]
    operations = [(method, path, operation) for path, item in document["paths"].items()
                  for method, operation in item.items()]
    assert len(operations) >= 8
    for method, path, operation in operations:
        for code, response in operation["responses"].items():
            where = f"{method.upper()} {path} {code}"
            content = response.get("content")
            assert content, f"{where}: no body documented"
            for media_type, body in content.items():
                if media_type == "text/event-stream":
                    data = body["itemSchema"]["properties"]["data"]
                    kinds = data["contentSchema"]["anyOf"]
                    assert {kind["$ref"].rsplit("/", 1)[1] for kind in kinds} == {
                        model.__name__ for model in event_kinds().values()}, where
                elif media_type == "application/json":
                    ref = body["schema"].get("$ref", "")
                    assert ref.startswith("#/components/schemas/"), (where, body)
                    assert components[ref.rsplit("/", 1)[1]].get("properties"), where
                else:
                    assert body["schema"] == {"type": "string"}, (where, media_type)


def _events(client: Any, tournament_id: int, last_event_id: str) -> list[tuple[str, str]]:
    """The (event, data) pairs of a stream that ends by itself (a finished tournament's)."""
    response = client.get(f"/api/tournaments/{tournament_id}/events",
                          headers={**AUTH, "Last-Event-ID": last_event_id}, timeout=30.0)
    assert response.status_code == 200, response.text
    found: list[tuple[str, str]] = []
    kind, data = "message", []
    for line in response.text.splitlines():
        if not line:
            if data:
                found.append((kind, "\n".join(data)))
            kind, data = "message", []
        elif line.startswith("event:"):
            kind = line.partition(":")[2].strip()
        elif line.startswith("data:"):
            data.append(line.partition(":")[2].lstrip(" "))
    return found


def test_each_stream_event_fits_its_documented_schema(tmp_path: Path) -> None:
    """Every event of a tournament the service plays (as its log keeps and sends them, moves
    included), the snapshot a new reader starts with, and the stored games a reader from
    another epoch is replayed: each valid against the schema the document gives its kind,
    and strict JSON (no bare Infinity or NaN)."""
    from fastapi.testclient import TestClient
    LOCAL_CLIENT = ("127.0.0.1", 50000)  # a client on this machine (tokens over plain HTTP)

    settings_ = ServiceSettings(db_url=f"sqlite:///{tmp_path / 'runner.db'}",
                                engines_file=ENGINES, token=TOKEN, render_workers=0)
    app = create_app(settings_)
    document = app.openapi()
    validators = {kind: _validator(document, {"$ref": f"#/components/schemas/{model.__name__}"})
                  for kind, model in event_kinds().items()}
    with TestClient(client=LOCAL_CLIENT, app=app, raise_server_exceptions=True) as client:
        created = client.post("/api/tournaments", json=QUICK, headers=AUTH)
        assert created.status_code == 201, created.text
        tournament_id = created.json()["id"]
        # The run's last events (standings, tournament_finished) follow its stored status.
        event_log = app.state.manager.log(tournament_id)
        deadline = time.monotonic() + 120
        while not any(e.kind == "tournament_finished" for e in event_log.since(0) or ()):
            assert time.monotonic() < deadline, "the run never published its end"
            time.sleep(0.1)
        # The text a stream sends is each kept event's own (encoded once); the test client
        # cuts a long stream short, so the live ones are read from the log.
        events = [(event.kind, event.text) for event in event_log.since(0) or ()]
        events += _events(client, tournament_id, "an-earlier-process-1")
        events += _events(client, tournament_id, "")
    kinds = Counter(kind for kind, _ in events)
    assert {"game_started", "move", "game_finished", "standings", "status", "snapshot",
            "tournament_finished"} <= set(kinds), kinds
    for kind, text in events:
        data = json.loads(text, parse_constant=_refuse_constant)
        errors = [str(error) for error in validators[kind].iter_errors(data)]
        assert not errors, (kind, errors[:3], text[:300])


def _refuse_constant(name: str) -> Any:
    raise AssertionError(f"{name} is not JSON")
