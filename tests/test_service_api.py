"""The service's JSON API end to end: real app, real SQLite file, real bundled engines.

Submit -> run -> finished with its events, PGN and report; tokens; the allow-list and the
CLI's own problems as 422 with key paths (nothing stored); stop and resume; a restart of the
service resuming an unfinished tournament; Last-Event-ID catch-up; body and rate limits.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import io
import json
import time
from collections.abc import Iterator
from pathlib import Path

import chess.pgn
import pytest

pytest.importorskip("fastapi", reason="the service extra (fastapi) is not installed")

from fastapi.testclient import TestClient

from runner.service.app import create_app
from runner.service.settings import ServiceSettings

LOCAL_CLIENT = ("127.0.0.1", 50000)  # a client on this machine (tokens over plain HTTP)
REPO = Path(__file__).resolve().parent.parent
ENGINES = REPO / "configs" / "engines.toml"
TOKEN = "s3cret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
TOML = {"content-type": "application/toml", **AUTH}

QUICK = """
name = "quick <b>&amp;</b>"
format = "match"
engines = ["bundled", {use = "bundled-random", tc = "5+0.05"}]
tc = "5+0.05"
rounds = 2
games = 2
concurrency = 2
"""


def settings_for(tmp_path: Path, **changes: object) -> ServiceSettings:
    """Settings on a temp database with the repository's engines file as the allow-list."""
    values: dict[str, object] = {"db_url": f"sqlite:///{tmp_path / 'service.db'}",
                                 "token": TOKEN, "engines_file": ENGINES}
    values.update(changes)
    return ServiceSettings(**values)  # type: ignore[arg-type]


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(client=LOCAL_CLIENT, app=create_app(settings_for(tmp_path))) as test_client:
        yield test_client


def wait_for(client: TestClient, tournament_id: int, statuses: set[str],
             timeout: float = 60.0) -> dict:
    """Poll the detail until its status is one of `statuses`."""
    deadline = time.monotonic() + timeout
    while True:
        detail = client.get(f"/api/tournaments/{tournament_id}").json()
        if detail["status"] in statuses:
            return detail
        assert time.monotonic() < deadline, f"still {detail['status']}: {detail}"
        time.sleep(0.2)


def read_events(client: TestClient, tournament_id: int, *, last_id: str | None = None,
                stop_after: str | None = None, limit: int = 10_000) -> list[tuple[str, dict, str | None]]:
    """(type, data, id) of the stream's events until it ends (or `stop_after` is seen)."""
    headers = {"Last-Event-ID": last_id} if last_id else {}
    found: list[tuple[str, dict, str | None]] = []
    kind, data, event_id = None, None, None
    with client.stream("GET", f"/api/tournaments/{tournament_id}/events",
                       headers=headers) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                data = json.loads(line[6:])
            elif line.startswith("id: "):
                event_id = line[4:]
            elif line == "" and kind is not None:
                found.append((kind, data, event_id))
                if kind == stop_after or len(found) >= limit:
                    break
                kind, data, event_id = None, None, None
    return found


def submit(client: TestClient, text: str = QUICK) -> int:
    response = client.post("/api/tournaments", content=text, headers=TOML)
    assert response.status_code == 201, response.text
    return response.json()["id"]


def test_submit_run_finish_with_events_pgn_and_report(client: TestClient) -> None:
    tournament_id = submit(client)
    events = read_events(client, tournament_id, stop_after="tournament_finished")
    kinds = [kind for kind, _, _ in events]
    assert kinds[0] == "snapshot"
    for kind in ("game_started", "move", "game_finished", "standings", "tournament_finished"):
        assert kind in kinds, kinds
    finished = {data["index"] for kind, data, _ in events if kind == "game_finished"}
    assert finished == {0, 1, 2, 3}
    moves = [data for kind, data, _ in events if kind == "move"]
    assert all(m["fen"].count("/") == 7 and m["san"] for m in moves)
    assert any(m["white_clock"] is not None and m["white_clock"] < 5.0 + 0.05 * 60 for m in moves)

    detail = wait_for(client, tournament_id, {"finished"})
    assert detail["done_games"] == detail["total_games"] == 4
    standings = detail["report"]["standings"]
    assert {s["engine"] for s in standings} == {"bundled", "bundled-random"}
    assert sum(s["games"] for s in standings) == 8
    assert detail["report"]["pairings"][0]["pentanomial"] is not None
    assert detail["games"] == []

    pgn = client.get(f"/api/tournaments/{tournament_id}/pgn")
    assert pgn.status_code == 200 and pgn.headers["content-type"].startswith(
        "application/x-chess-pgn")
    stream = io.StringIO(pgn.text)
    games = []
    while (game := chess.pgn.read_game(stream)) is not None:
        games.append(game)
    assert len(games) == 4
    assert all(not game.errors and game.headers["Event"] == "quick <b>&amp;</b>" for game in games)
    # An engine the tournament does not have is refused, as `runner export --engine` does
    # (it was a 200 with an empty body, as if the engine had played no game).
    only = client.get(f"/api/tournaments/{tournament_id}/pgn", params={"engine": "nobody"})
    assert only.status_code == 404
    assert "'nobody'" in only.json()["detail"] and "bundled-random" in only.json()["detail"]
    own = client.get(f"/api/tournaments/{tournament_id}/pgn", params={"engine": "bundled-random"})
    assert own.status_code == 200 and own.text.count("[Event ") == 4

    report = client.get(f"/api/tournaments/{tournament_id}/report.html")
    assert report.status_code == 200
    assert "quick <b>" not in report.text and "quick &lt;b&gt;" in report.text

    listed = client.get("/api/tournaments").json()["tournaments"]
    assert [(t["id"], t["status"], t["done_games"]) for t in listed] == [(tournament_id, "finished", 4)]
    assert client.post(f"/api/tournaments/{tournament_id}/resume", headers=AUTH).status_code == 409


def test_writes_need_the_right_token(client: TestClient) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
        response = client.post("/api/tournaments", content=QUICK,
                               headers={"content-type": "application/toml", **headers})
        assert response.status_code == 401, headers
        assert response.headers["www-authenticate"] == "Bearer"
    assert client.post("/api/tournaments/1/stop").status_code == 401
    assert client.post("/api/tournaments/1/resume").status_code == 401
    assert client.get("/api/tournaments").status_code == 200  # reads are open by default
    assert client.get("/api/tournaments").json() == {"tournaments": []}


def test_without_a_token_the_service_is_read_only(tmp_path: Path) -> None:
    with TestClient(client=LOCAL_CLIENT, app=create_app(settings_for(tmp_path, token=None))) as client:
        response = client.post("/api/tournaments", content=QUICK, headers=TOML)
        assert response.status_code == 401
        assert "writes are off" in response.json()["detail"]


def test_protected_reads(tmp_path: Path) -> None:
    with TestClient(client=LOCAL_CLIENT,
                    app=create_app(settings_for(tmp_path, read_token_required=True))) as client:
        assert client.get("/api/tournaments").status_code == 401
        assert client.get("/api/tournaments", headers=AUTH).status_code == 200


@pytest.mark.parametrize("key,value", [
    ("command", ["/bin/sh", "-c", "touch /tmp/pwned"]),
    ("dir", "/tmp"),
    ("env", {"LD_PRELOAD": "/tmp/x.so"}),
    ("init_strings", ["quit"]),
])
def test_an_engine_of_the_clients_own_is_refused(client: TestClient, key: str, value: object) -> None:
    body = {"engines": ["bundled", {"use": "bundled-random", key: value}], "tc": "5+0.05"}
    response = client.post("/api/tournaments", json=body, headers=AUTH)
    assert response.status_code == 422
    problems = response.json()["detail"]
    assert [p["key"] for p in problems] == [f"engines[1].{key}"]
    assert "engines file" in problems[0]["message"]
    assert client.get("/api/tournaments").json() == {"tournaments": []}


def test_a_bare_engine_table_and_string_options_are_refused(client: TestClient) -> None:
    body = {"engines": [{"name": "x", "protocol": "uci"},
                        {"use": "stockfish", "options": {"Debug Log File": "/etc/passwd",
                                                          "Hash": 16}}],
            "tc": "5+0.05"}
    response = client.post("/api/tournaments", json=body, headers=AUTH)
    assert response.status_code == 422
    keys = {p["key"] for p in response.json()["detail"]}
    assert {"engines[0]", "engines[1].options.Debug Log File"} <= keys
    assert "engines[1].options.Hash" not in keys


def test_run_level_keys_and_files_outside_the_books_are_refused(client: TestClient) -> None:
    text = QUICK + """
pgnout = "/tmp/out.pgn"
database = "sqlite:////tmp/other.db"
engines_file = "/etc/engines.toml"
[openings]
file = "../../../etc/passwd"
format = "epd"
[cluster]
workers = 64
"""
    response = client.post("/api/tournaments", content=text, headers=TOML)
    assert response.status_code == 422
    keys = {p["key"] for p in response.json()["detail"]}
    assert {"pgnout", "database", "engines_file", "cluster", "openings.file"} <= keys


def test_a_bad_configuration_gets_every_problem_with_its_key_path(client: TestClient) -> None:
    text = """
engines = ["bundled", "no-such-engine"]
tc = "forty moves"
rounds = -1
concurrency = 1000
[adjudication.draw]
movecount = "eight"
"""
    response = client.post("/api/tournaments", content=text, headers=TOML)
    assert response.status_code == 422
    problems = {p["key"]: p for p in response.json()["detail"]}
    assert {"engines[1].use", "tc", "rounds", "adjudication.draw.movecount"} <= set(problems)
    assert problems["engines[1].use"]["value"] == '"no-such-engine"'
    assert all(p["text"].startswith("submitted configuration: ") for p in problems.values())
    assert client.post("/api/tournaments", content="engines = [", headers=TOML).status_code == 422
    assert client.post("/api/tournaments", json=[1, 2], headers=AUTH).status_code == 422
    assert client.post("/api/tournaments", content=b"\xff\xfe", headers=TOML).status_code == 422
    assert client.get("/api/tournaments").json() == {"tournaments": []}


def test_concurrency_beyond_the_service_limit_is_refused(tmp_path: Path) -> None:
    with TestClient(client=LOCAL_CLIENT, app=create_app(settings_for(tmp_path, max_concurrency=1))) as client:
        response = client.post("/api/tournaments", content=QUICK, headers=TOML)
        assert response.status_code == 422
        assert [p["key"] for p in response.json()["detail"]] == ["concurrency"]


LONG = QUICK.replace("rounds = 2", "rounds = 30").replace('"quick <b>&amp;</b>"', '"long"')


def test_stop_then_resume(client: TestClient) -> None:
    tournament_id = submit(client, LONG)
    wait_until_games(client, tournament_id, 1)
    response = client.post(f"/api/tournaments/{tournament_id}/stop", headers=AUTH)
    assert response.status_code == 200 and response.json()["status"] == "stopping"
    stopped = wait_for(client, tournament_id, {"stopped"})
    assert stopped["done_games"] < stopped["total_games"]
    assert client.post(f"/api/tournaments/{tournament_id}/stop", headers=AUTH).status_code == 200
    response = client.post(f"/api/tournaments/{tournament_id}/resume", headers=AUTH)
    assert response.status_code == 200 and response.json()["status"] == "queued"
    assert client.post(f"/api/tournaments/{tournament_id}/resume", headers=AUTH).status_code == 409
    wait_until_games(client, tournament_id, stopped["done_games"] + 1)
    response = client.post(f"/api/tournaments/{tournament_id}/stop", params={"hard": "true"},
                           headers=AUTH)
    assert response.status_code == 200
    final = wait_for(client, tournament_id, {"stopped"})
    assert final["games"] == []
    assert final["done_games"] == len(list_games(client, tournament_id))


def wait_until_games(client: TestClient, tournament_id: int, games: int) -> None:
    deadline = time.monotonic() + 60
    while client.get(f"/api/tournaments/{tournament_id}").json()["done_games"] < games:
        assert time.monotonic() < deadline
        time.sleep(0.2)


def list_games(client: TestClient, tournament_id: int) -> list[str]:
    text = client.get(f"/api/tournaments/{tournament_id}/pgn").text
    return [line for line in text.splitlines() if line.startswith("[Event ")]


def test_a_restart_of_the_service_resumes_the_unfinished_tournament(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    # Sixty games: however slow or fast the machine, the service stops long before the last.
    with TestClient(client=LOCAL_CLIENT, app=create_app(settings)) as client:
        tournament_id = submit(client, LONG)
        wait_until_games(client, tournament_id, 1)
    # The service stopped with games in flight: the tournament is interrupted, not stopped.
    with TestClient(client=LOCAL_CLIENT, app=create_app(settings)) as client:
        detail = client.get(f"/api/tournaments/{tournament_id}").json()
        assert detail["status"] in ("queued", "running"), detail
        before = detail["done_games"]
        assert before < detail["total_games"] == 60
        wait_until_games(client, tournament_id, before + 2)
        client.post(f"/api/tournaments/{tournament_id}/stop", params={"hard": "true"},
                    headers=AUTH)
        final = wait_for(client, tournament_id, {"stopped"})
        # Each game once: the games cut by the first stop were played again, not added twice.
        assert final["done_games"] == len(list_games(client, tournament_id)) >= before + 2


@pytest.mark.slow  # CI time: the restart that resumes a tournament stays in the fast run
def test_a_stopped_tournament_stays_stopped_after_a_restart(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    with TestClient(client=LOCAL_CLIENT, app=create_app(settings)) as client:
        tournament_id = submit(client, LONG)
        wait_until_games(client, tournament_id, 1)
        client.post(f"/api/tournaments/{tournament_id}/stop", params={"hard": "true"},
                    headers=AUTH)
        wait_for(client, tournament_id, {"stopped"})
    with TestClient(client=LOCAL_CLIENT, app=create_app(settings)) as client:
        assert client.get(f"/api/tournaments/{tournament_id}").json()["status"] == "stopped"


def test_a_reconnecting_reader_misses_no_finished_game(client: TestClient) -> None:
    tournament_id = submit(client, LONG.replace("rounds = 30", "rounds = 3"))
    first = read_events(client, tournament_id, stop_after="game_finished")
    last_id = next(event_id for _, _, event_id in reversed(first) if event_id)
    seen = {data["index"] for kind, data, _ in first if kind == "game_finished"}
    rest = read_events(client, tournament_id, last_id=last_id, stop_after="tournament_finished")
    assert rest[0][0] != "snapshot"  # caught up from the log, not a fresh start
    seen |= {data["index"] for kind, data, _ in rest if kind == "game_finished"}
    assert seen == set(range(6))
    # An id from an earlier run of the service: every stored game, then a snapshot.
    again = read_events(client, tournament_id, last_id="0badc0de-7")
    kinds = [kind for kind, _, _ in again]
    assert kinds == ["game_finished"] * 6 + ["snapshot"]
    assert again[-1][1]["status"] == "finished"


def test_a_reader_connecting_while_the_run_ends_closes_no_other_stream(
        client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    # The run is stored as finished a moment before its last events are published: a reader
    # connecting then must not end the stream of one already following.
    manager = client.app.state.manager  # type: ignore[attr-defined]
    publish = manager._feed.publish_standings

    async def slowly(tournament_id: int) -> None:
        await asyncio.sleep(1.0)  # widens the window between the stored end and the events
        await publish(tournament_id)

    monkeypatch.setattr(manager._feed, "publish_standings", slowly)
    tournament_id = submit(client)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        following = pool.submit(read_events, client, tournament_id)
        wait_for(client, tournament_id, {"finished"})
        late = read_events(client, tournament_id)
        early = following.result(timeout=120)
    assert early[-1][0] == "tournament_finished"
    assert late[-1][0] == "tournament_finished" or late[-1][1]["status"] == "finished"


def test_unknown_tournaments_are_404(client: TestClient) -> None:
    for path in ("", "/events", "/pgn", "/report.html"):
        assert client.get(f"/api/tournaments/999{path}").status_code == 404
    assert client.post("/api/tournaments/999/stop", headers=AUTH).status_code == 404
    assert client.get("/api/tournaments/0").status_code == 422


def test_body_size_and_submit_rate_limits(tmp_path: Path) -> None:
    with TestClient(client=LOCAL_CLIENT, app=create_app(settings_for(tmp_path, max_body_bytes=1000,
                                            submit_rate=2))) as client:
        big = "# " + "x" * 2000 + "\n" + QUICK
        assert client.post("/api/tournaments", content=big, headers=TOML).status_code == 413

        def chunks() -> Iterator[bytes]:
            yield big.encode()[:600]
            yield big.encode()[600:]

        assert client.post("/api/tournaments", content=chunks(), headers=TOML).status_code == 413
        bad = "engines = 3"
        codes = [client.post("/api/tournaments", content=bad, headers=TOML).status_code
                 for _ in range(3)]
        assert codes == [422, 422, 429]
        limited = client.post("/api/tournaments", content=bad, headers=TOML)
        assert int(limited.headers["retry-after"]) >= 1


def test_openapi_document_lists_the_api(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    paths = document["paths"]
    for path in ("/api/tournaments", "/api/tournaments/{tournament_id}",
                 "/api/tournaments/{tournament_id}/events", "/api/tournaments/{tournament_id}/pgn",
                 "/api/tournaments/{tournament_id}/report.html",
                 "/api/tournaments/{tournament_id}/stop",
                 "/api/tournaments/{tournament_id}/resume"):
        assert path in paths, path
    assert "application/toml" in paths["/api/tournaments"]["post"]["requestBody"]["content"]
    assert client.get("/docs").status_code == 200


@pytest.mark.slow  # CI time: branch tests end their stages by SPRT through the service fast
def test_an_sprt_decision_is_streamed_and_ends_the_tournament(client: TestClient) -> None:
    text = LONG.replace('"long"', '"sprt"') + """
[sprt]
elo0 = 0
elo1 = 200
alpha = 0.05
beta = 0.05
"""
    tournament_id = submit(client, text)
    events = read_events(client, tournament_id, stop_after="tournament_finished")
    sprt = [data for kind, data, _ in events if kind == "sprt"]
    assert sprt and sprt[-1]["decision"] == "H1"
    assert sprt[-1]["llr"] >= sprt[-1]["upper_bound"]
    finished = events[-1]
    assert finished[0] == "tournament_finished" and finished[1]["sprt_decision"] == "H1"
    detail = client.get(f"/api/tournaments/{tournament_id}").json()
    assert detail["status"] == "finished" and detail["done_games"] < detail["total_games"]
    assert detail["report"]["sprt"]["decision"] == "H1"


def test_a_book_with_an_illegal_position_is_a_422(tmp_path: Path) -> None:
    books = tmp_path / "books"
    books.mkdir()
    # White to move while Black's king is in check: refused when the openings are dealt.
    (books / "bad.epd").write_text("4k3/8/8/8/8/8/8/4KR2 w - - hmvc 0;\n4k3/4R3/8/8/8/8/8/4K3 w - -\n")
    text = QUICK + """
[openings]
file = "bad.epd"
format = "epd"
order = "sequential"
"""
    with TestClient(client=LOCAL_CLIENT, app=create_app(settings_for(tmp_path, books_dir=books))) as client:
        response = client.post("/api/tournaments", content=text, headers=TOML)
        assert response.status_code == 422, response.text
        assert "bad.epd" in response.json()["detail"][0]["message"]
        assert client.get("/api/tournaments").json() == {"tournaments": []}


def test_a_tournament_of_the_command_line_is_read_but_not_stopped_or_resumed(
        tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from runner.cli.app import app

    db = tmp_path / "service.db"
    config = tmp_path / "cli.toml"
    config.write_text('name = "cli"\nengines = [{name = "a", command = ["python", "-m", "engine",'
                      ' "--level", "random"]}, {name = "b", command = ["python", "-m", "engine",'
                      ' "--level", "random", "--seed", "2"]}]\ntc = "5+0.05"\nrounds = 1\n')
    result = CliRunner().invoke(app, ["run", str(config), "--db", str(db), "--quiet"])
    assert result.exit_code == 0, result.output
    from runner.store.db import open_database
    from runner.store.models import TournamentStatus
    from runner.store.origin import set_status

    with open_database(f"sqlite:///{db}") as database, database.session() as session:
        set_status(session, 1, TournamentStatus.INTERRUPTED)  # as a killed CLI run leaves it
    with TestClient(client=LOCAL_CLIENT, app=create_app(settings_for(tmp_path))) as client:
        detail = client.get("/api/tournaments/1").json()
        assert detail["status"] == "interrupted" and detail["done_games"] == 2
        for action in ("resume", "stop"):
            response = client.post(f"/api/tournaments/1/{action}", headers=AUTH)
            assert response.status_code == 409
            assert "not submitted to this service" in response.json()["detail"]
        assert client.get("/api/tournaments/1").json()["status"] == "interrupted"


@pytest.mark.timeout(120)
def test_a_service_on_a_local_dask_cluster_streams_moves(tmp_path: Path) -> None:
    pytest.importorskip("distributed", reason="the cluster extra (distributed) is not installed")
    with TestClient(client=LOCAL_CLIENT, app=create_app(settings_for(tmp_path, workers=2))) as client:
        tournament_id = submit(client)
        events = read_events(client, tournament_id, stop_after="tournament_finished")
        kinds = [kind for kind, _, _ in events]
        assert "move" in kinds and kinds[-1] == "tournament_finished"
        assert {data["index"] for kind, data, _ in events if kind == "game_finished"} == \
            {0, 1, 2, 3}
        assert wait_for(client, tournament_id, {"finished"})["done_games"] == 4


def test_a_finished_tournament_streams_a_snapshot_and_ends_after_a_restart(
        tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    with TestClient(client=LOCAL_CLIENT, app=create_app(settings)) as client:
        tournament_id = submit(client)
        wait_for(client, tournament_id, {"finished"})
    with TestClient(client=LOCAL_CLIENT, app=create_app(settings)) as client:
        events = read_events(client, tournament_id)  # returns only when the stream ends
        assert [kind for kind, _, _ in events] == ["snapshot"]
        snapshot = events[0][1]
        assert snapshot["status"] == "finished"
        assert [g["index"] for g in snapshot["finished_games"]] == [0, 1, 2, 3]


def test_boards_carry_the_last_move(client: TestClient) -> None:
    tournament_id = submit(client, LONG)
    deadline = time.monotonic() + 60
    while True:
        games = client.get(f"/api/tournaments/{tournament_id}").json()["games"]
        moved = [g for g in games if g["last_uci"]]
        if moved:
            break
        assert time.monotonic() < deadline
        time.sleep(0.1)
    board = moved[0]
    assert len(board["last_uci"]) in (4, 5) and board["last_move"] and board["fen"]
    client.post(f"/api/tournaments/{tournament_id}/stop", params={"hard": "true"}, headers=AUTH)
    wait_for(client, tournament_id, {"stopped"})


def test_a_finished_game_reads_with_its_moves_clocks_and_evals(client: TestClient) -> None:
    # Issue 31: finished games could not be opened; the page's game view reads this route.
    import chess

    tournament_id = submit(client)
    wait_for(client, tournament_id, {"finished"})
    seen = 0
    for index in range(4):
        response = client.get(f"/api/tournaments/{tournament_id}/games/{index}")
        assert response.status_code == 200, response.text
        game = response.json()
        assert game["index"] == index and game["moves"] and game["result"] in ("1-0", "0-1", "1/2-1/2")
        assert game["time_control"] == "5+0.05" and game["white_clock"] == 5.0
        board = chess.Board(game["start_fen"])
        for move in game["moves"]:
            board.push_uci(move["uci"])
            assert move["fen"] == board.fen(), move  # the position after each move, replayed
        thought = [m for m in game["moves"] if m["time_ms"] is not None]
        assert thought and all(m["white_clock"] <= 5.0 + 0.05 * len(game["moves"]) for m in thought)
        assert any(m["score_cp"] is not None or m["mate"] is not None for m in thought)
        # White's clock after White's first thought move: 5 s minus its time plus the increment.
        first = next(k for k, m in enumerate(game["moves"]) if m["time_ms"] is not None)
        mover = "white_clock" if chess.Board(game["start_fen"]).turn == (first % 2 == 0) \
            else "black_clock"
        assert game["moves"][first][mover] == pytest.approx(
            5.0 - game["moves"][first]["time_ms"] / 1000 + 0.05, abs=1e-9)
        single = client.get(f"/api/tournaments/{tournament_id}/games/{index}/pgn")
        assert single.status_code == 200 and single.text.count("[Event ") == 1
        assert single.headers["content-type"].startswith("application/x-chess-pgn")
        assert chess.pgn.read_game(io.StringIO(single.text)).end().board().fen() == board.fen()
        seen += 1
    assert seen == 4
    assert client.get(f"/api/tournaments/{tournament_id}/games/99").status_code == 404
    assert client.get(f"/api/tournaments/{tournament_id}/games/99/pgn").status_code == 404
    assert client.get("/api/tournaments/777/games/0").status_code == 404
    schema = client.get("/openapi.json").json()
    assert "GameView" in schema["components"]["schemas"]
